/* Rotary position embedding, forward and backward, tuned backend: the speed
 * of light of the op, every q/k element read once and written once with
 * 128-bit accesses, cos/sin (2 rows of D per position against N + K heads'
 * rows) read from HBM about once and from L2 a few times.
 *
 * Strategy:
 * - Work item = (tile of TP consecutive positions, group of `heads` heads).
 *   In the head-major layout (rope.h) a head's TP positions are one
 *   contiguous run of TP*D elements, so each head of the group is a dense
 *   TP*D*s-byte stream (8 KB for 32 bf16 positions); the CTA walks its heads
 *   in steps of `unroll`, issuing every 16-byte load of the step (2 per head
 *   and thread: the low and high half of its pair) before any math.
 * - Thread t of the CTA owns position tile_start + t / P and column
 *   (t % P) * V, P = D/2 / V vectors per half (V = 8 bf16/fp16, 4 fp32; D =
 *   128 bf16: P = 8, TP = threads / 8). Its cos/sin (low and high half of
 *   each: 4 vectors) are loaded once per work item (read-only path, default
 *   caching) and held raw in registers across the group's heads.
 * - Work items are numbered head group fastest: the CTAs that run together
 *   cover the same few position tiles, so the cos/sin rows a tile needs are
 *   read by all its head groups within a short window and stay in L2 (with
 *   the position tile fastest, a 32768-position bf16 table of 16 MB would be
 *   re-read from HBM by every head group).
 * - Vectors stay raw 32-bit words in registers until used; math in fp32
 *   (rope_math.cuh), one F2FP per output word for bf16/fp16.
 * - Unaligned pointers (never in the benchmark: its buffers are 256-byte
 *   aligned) or a head_dim whose half is not whole vectors: a scalar
 *   grid-stride kernel, one thread per pair (correct, slower).
 * Launch parameters (the tuner: heuristic, cache or search):
 *   threads {128, 256, 512, 1024}, heads per work item {1..64}, unroll
 *   {1, 2, 4} heads per step, occ 0 = one CTA per work item, else a
 *   persistent grid of occ CTAs per SM walking the items, hint (cache
 *   operators for q/k: 0 .cs loads and .cs stores, 1 .cs loads and plain
 *   stores, 2 plain loads and stores). valid() rejects an instantiation
 *   that spills or cannot run the block size.
 *   Heuristic: 256 threads, 64 heads per item (all of Llama's 32 + 8: one
 *   cos/sin load per position), unroll 4, one pass (occ 0), plain loads and
 *   stores (hint 2); with fewer 256-thread position tiles than half the SMs
 *   (M below ~2100 bf16 positions on the H100), 128 threads and 4 heads per
 *   item instead, so that every SM gets CTAs. Measured on the H100 (bf16,
 *   32 + 8 heads, against a device-to-device copy of q/k's bytes): 95-97 %
 *   of the copy's bandwidth for M = 4096..32768 in both directions (the
 *   fused backend 90-94 %); see heuristic().
 * One kernel per call. Limits: any M, N, K >= 1, 64-bit offsets; D =
 * KB_ROPE_HEAD_DIM, even. */
#include <stdio.h>

#include "rope_math.cuh"
#include "tuner.h"

namespace {

constexpr int kD = KB_ROPE_HEAD_DIM;

/* ---- raw 16-byte vectors ------------------------------------------------------ */
__device__ __forceinline__ uint32_t word_of(const uint4 &u, int i)
{
    return i == 0 ? u.x : i == 1 ? u.y : i == 2 ? u.z : u.w;
}
__device__ __forceinline__ uint32_t &word_of(uint4 &u, int i)
{
    return i == 0 ? u.x : i == 1 ? u.y : i == 2 ? u.z : u.w;
}

/* Elements of a 32-bit word as fp32 and back: 2 bf16/fp16 or 1 fp32. */
template <typename T> struct word {
    static constexpr int EW = 4 / sizeof(T);
    static __device__ __forceinline__ void get(uint32_t w, float (&f)[EW])
    {
        if constexpr (EW == 1) {
            f[0] = __uint_as_float(w);
        } else {
            f[0] = kb_word_lo<T>(w);
            f[1] = kb_word_hi<T>(w);
        }
    }
    static __device__ __forceinline__ uint32_t put(const float (&f)[EW])
    {
        if constexpr (EW == 1)
            return __float_as_uint(f[0]);
        else
            return kb_word_of<T>(f[0], f[1]);
    }
};

/* The rotation of one 16-byte vector pair (low half at d, high at d + D/2). */
template <typename T, bool BWD>
__device__ __forceinline__ void rot_vec(const uint4 &lo, const uint4 &hi, const uint4 (&cs)[4],
                                        uint4 &olo, uint4 &ohi)
{
    constexpr int EW = word<T>::EW;
#pragma unroll
    for (int w = 0; w < 4; w++) {
        float a[EW], b[EW], cl[EW], ch[EW], sl[EW], sh[EW], ol[EW], oh[EW];
        word<T>::get(word_of(lo, w), a);
        word<T>::get(word_of(hi, w), b);
        word<T>::get(word_of(cs[0], w), cl);
        word<T>::get(word_of(cs[1], w), ch);
        word<T>::get(word_of(cs[2], w), sl);
        word<T>::get(word_of(cs[3], w), sh);
#pragma unroll
        for (int e = 0; e < EW; e++) rope_pair<BWD>(a[e], b[e], cl[e], ch[e], sl[e], sh[e], ol[e], oh[e]);
        word_of(olo, w) = word<T>::put(ol);
        word_of(ohi, w) = word<T>::put(oh);
    }
}

/* Makes the held cos/sin words look changed to the compiler. Without it,
 * nvcc hoists their unpacking to fp32 out of the head loop: 32 live fp32
 * registers (16-bit types) instead of 16 raw words, 60+ registers per
 * thread and half the resident threads. The unpack is one shift or mask per
 * element, cheaper than the lost occupancy. */
__device__ __forceinline__ void opaque(uint4 (&c)[4])
{
#pragma unroll
    for (int i = 0; i < 4; i++)
        asm volatile("" : "+r"(c[i].x), "+r"(c[i].y), "+r"(c[i].z), "+r"(c[i].w));
}

/* Block size cap of the vector kernel: at unroll 4 the 16-bit kernels need
 * more than the 64 registers a 1024-thread block leaves (they spilled), so
 * those blocks stop at 512 (valid() then rejects 1024). */
constexpr int rope_max_threads(int U) { return U >= 4 ? 512 : 1024; }

/* The vector kernel. Work item w: head group w % groups, position tile
 * w / groups (TP positions); grid-strided over items (occ > 0 or more items
 * than a grid holds). */
template <typename T, int D, bool BWD, int U, int HINT>
__global__ void __launch_bounds__(rope_max_threads(U))
rope_tuned_kernel(const T *__restrict__ x, const T *__restrict__ cs, T *__restrict__ out,
                  int64_t M, int64_t heads, int64_t hpc, int64_t groups, int64_t items)
{
    /* Launched only when a half is whole vectors (H % V == 0); P >= 1 keeps
     * other instantiations compiling. */
    constexpr int V = kb_vec<T>::n, H = D / 2, P = H / V > 0 ? H / V : 1;
    const int TP = (int)blockDim.x / P; /* positions per tile */
    if ((int)threadIdx.x >= TP * P) return; /* D whose P does not divide the block */
    const int pos = (int)threadIdx.x / P, col = ((int)threadIdx.x - pos * P) * V;
    const int64_t hstride = M * D / V; /* one head, in vectors */
    for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
        const int64_t tile = w / groups, g = w - tile * groups;
        const int64_t m = tile * TP + pos;
        if (m >= M) continue;
        const int64_t h0 = g * hpc, h1 = h0 + hpc < heads ? h0 + hpc : heads;
        uint4 c[4]; /* cos lo, cos hi, sin lo, sin hi */
        const T *cr = cs + m * D + col, *sr = cs + M * D + m * D + col;
        c[0] = kb_ld128(cr);
        c[1] = kb_ld128(cr + H);
        c[2] = kb_ld128(sr);
        c[3] = kb_ld128(sr + H);
        /* One vector offset for input and output, a 32-bit head count: fewer
         * live registers than two pointers and 64-bit head bounds. */
        int64_t at = ((h0 * M + m) * D + col) / V;
        const int nh = (int)(h1 - h0);
        const uint4 *xi = reinterpret_cast<const uint4 *>(x);
        uint4 *xo = reinterpret_cast<uint4 *>(out);
        for (int k0 = 0; k0 < nh; k0 += U) {
            opaque(c); /* converted per step, not hoisted: see opaque */
            uint4 lo[U], hi[U];
#pragma unroll
            for (int k = 0; k < U; k++)
                if (k0 + k < nh) {
                    lo[k] = kb_ld128_hint<HINT>(xi + at + k * hstride);
                    hi[k] = kb_ld128_hint<HINT>(xi + at + k * hstride + H / V);
                }
#pragma unroll
            for (int k = 0; k < U; k++)
                if (k0 + k < nh) {
                    uint4 olo, ohi;
                    rot_vec<T, BWD>(lo[k], hi[k], c, olo, ohi);
                    kb_st128_hint<HINT>(xo + at + k * hstride, olo);
                    kb_st128_hint<HINT>(xo + at + k * hstride + H / V, ohi);
                }
            at += U * hstride;
        }
    }
}

/* Any alignment: one thread per pair (head, position, d < D/2), grid-strided. */
template <typename T, int D, bool BWD>
__global__ void __launch_bounds__(1024)
rope_tuned_scalar(const T *__restrict__ x, const T *__restrict__ cs, T *__restrict__ out,
                  int64_t M, int64_t pairs)
{
    constexpr int H = D / 2;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < pairs;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / H, d = i - row * H, m = row % M;
        const T *a = x + row * D, *c = cs + m * D, *s = cs + M * D + m * D;
        float lo, hi;
        rope_pair<BWD>(kb_to_float(a[d]), kb_to_float(a[d + H]), kb_to_float(c[d]),
                       kb_to_float(c[d + H]), kb_to_float(s[d]), kb_to_float(s[d + H]), lo, hi);
        out[row * D + d] = kb_from_float<T>(lo);
        out[row * D + d + H] = kb_from_float<T>(hi);
    }
}

/* The vector kernel of (unroll, hint); NULL: not instantiated. */
template <typename T, bool BWD> struct kernel_of {
    typedef void (*fn)(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t);
    template <int U> static fn by_hint(int hint)
    {
        switch (hint) {
        case 0: return rope_tuned_kernel<T, kD, BWD, U, 0>;
        case 1: return rope_tuned_kernel<T, kD, BWD, U, 1>;
        case 2: return rope_tuned_kernel<T, kD, BWD, U, 2>;
        default: return NULL;
        }
    }
    static fn get(int unroll, int hint)
    {
        switch (unroll) {
        case 1: return by_hint<1>(hint);
        case 2: return by_hint<2>(hint);
        case 4: return by_hint<4>(hint);
        default: return NULL;
        }
    }
};

/* ---- the tuner space ------------------------------------------------------------ */
enum { P_THREADS, P_HEADS, P_UNROLL, P_OCC, P_HINT };

static cudaError_t device_sms(int *sms)
{
    int dev = 0;
    cudaError_t rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    return rc;
}

/* Positions per CTA tile of the vector kernel. */
template <typename T> static int tile_positions(int threads)
{
    constexpr int P = kD / 2 / kb_vec<T>::n;
    return P > 0 ? threads / P : 0;
}

static int tile_positions_of(kb_dtype dt, int threads)
{
    int tp = 0;
    KB_DISPATCH(dt, T, tp = tile_positions<T>(threads));
    return tp;
}

template <bool BWD>
static kb_status rope_tuned_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                                   cudaStream_t s, kb_err *e)
{
    const char *who = BWD ? "tuned rope_backward" : "tuned rope_forward";
    KB_TRY(kb_rope_check(p, who, e));
    const void *src = BWD ? t->dy : t->x;
    if (!src || !t->cs || !t->out)
        return KB_FAIL(e, KB_ERR_ARG, "%s: missing %s, cs or out", who, BWD ? "dy" : "x");
    const int threads = c->v[P_THREADS], hpc = c->v[P_HEADS], unroll = c->v[P_UNROLL],
              occ = c->v[P_OCC], hint = c->v[P_HINT];
    if (threads < 32 || threads > 1024 || threads % 32 || hpc < 1 || occ < 0 ||
        tile_positions_of(p->dtype, threads) < 1)
        return KB_FAIL(e, KB_ERR_ARG,
                       "%s: bad configuration threads=%d,heads=%d,unroll=%d,occ=%d,hint=%d", who,
                       threads, hpc, unroll, occ, hint);
    const int64_t heads = kb_rope_heads(p), M = p->M;
    const bool aligned = kb_aligned16(src) && kb_aligned16(t->cs) && kb_aligned16(t->out);
    kb_status st = KB_OK;
    KB_DISPATCH(p->dtype, T, {
        constexpr bool vec_ok = (kD / 2) % kb_vec<T>::n == 0;
        typename kernel_of<T, BWD>::fn k = kernel_of<T, BWD>::get(unroll, hint);
        if (!k) { /* unroll or hint not among the choices */
            st = KB_FAIL(e, KB_ERR_ARG,
                         "%s: bad configuration threads=%d,heads=%d,unroll=%d,occ=%d,hint=%d", who,
                         threads, hpc, unroll, occ, hint);
        } else if (vec_ok && aligned) {
            const int64_t tp = tile_positions<T>(threads);
            const int64_t groups = kb_cdiv(heads, hpc), items = kb_cdiv(M, tp) * groups;
            int64_t grid = items;
            if (occ > 0) {
                int sms = 0;
                KB_CUDA(e, device_sms(&sms));
                if (grid > (int64_t)sms * occ) grid = (int64_t)sms * occ;
            }
            if (grid > 2147483647LL) grid = 2147483647LL;
            k<<<(unsigned)grid, threads, 0, s>>>((const T *)src, (const T *)t->cs, (T *)t->out,
                                                 M, heads, hpc, groups, items);
        } else {
            const int64_t pairs = heads * M * (kD / 2);
            int64_t grid = kb_cdiv(pairs, threads);
            if (grid > 2147483647LL) grid = 2147483647LL;
            rope_tuned_scalar<T, kD, BWD><<<(unsigned)grid, threads, 0, s>>>(
                (const T *)src, (const T *)t->cs, (T *)t->out, M, pairs);
        }
    });
    KB_TRY(st);
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess) {
        char shape[72];
        kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
        return KB_FAIL(e, KB_ERR_CUDA, "%s %s %s: launch: %s", who, kb_dtype_name(p->dtype), shape,
                       cudaGetErrorString(rc));
    }
    return KB_OK;
}

/* See the header: two regimes by the number of 256-thread position tiles.
 * Timed on the H100 (bf16, N = 32, K = 8, every configuration of the space
 * but occ 1, 2, 8): 256 threads, all 40 heads per item, unroll 4 was within
 * 0.5 % of the best at M = 4096 and 32768 (95-97 % of a device copy from
 * M = 4096 to 32768); at M = 1024 (32 tiles on 132 SMs) it left SMs idle
 * (87 %) where 128 threads, 4 heads per item, unroll 4 was the best
 * (98.6 %). */
template <bool BWD>
static void heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    kb_tune_cfg c = {};
    const int64_t sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 132;
    const int tp = tile_positions_of(p->dtype, 256);
    const int64_t tiles = tp > 0 && p->M > 0 ? kb_cdiv(p->M, tp) : 1;
    const bool small = tiles < sms / 2;
    c.v[P_THREADS] = small ? 128 : 256;
    c.v[P_HEADS] = small ? 4 : 64;
    c.v[P_UNROLL] = 4;
    c.v[P_OCC] = 0;
    c.v[P_HINT] = 2;
    *out = c;
}

/* The block size fits the kernel's registers and nothing spills. */
template <bool BWD>
static int valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    cudaFuncAttributes fa;
    cudaError_t rc = cudaErrorInvalidValue;
    KB_DISPATCH(p->dtype, T, {
        if (tile_positions<T>(c->v[P_THREADS]) < 1) return 0;
        typename kernel_of<T, BWD>::fn k = kernel_of<T, BWD>::get(c->v[P_UNROLL], c->v[P_HINT]);
        if (k) rc = cudaFuncGetAttributes(&fa, k);
    });
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return c->v[P_THREADS] <= fa.maxThreadsPerBlock && fa.localSizeBytes == 0;
}

#define ROPE_SPACE(name, BWD)                                                             \
    {name, 5, {"threads", "heads", "unroll", "occ", "hint"}, {4, 7, 3, 5, 3},             \
     {{128, 256, 512, 1024}, {1, 2, 4, 8, 16, 32, 64}, {1, 2, 4}, {0, 1, 2, 4, 8}, {0, 1, 2}}, \
     heuristic<BWD>, valid<BWD>, NULL, rope_tuned_launch<BWD>, NULL, NULL}

const kb_tune_space rope_fwd_space = ROPE_SPACE("rope_forward", false);
const kb_tune_space rope_bwd_space = ROPE_SPACE("rope_backward", true);

} /* namespace */

KB_TUNED_IMPL(kb_rope_tuned_fwd, KB_ROPE_FWD, rope_fwd_space)
KB_TUNED_IMPL(kb_rope_tuned_bwd, KB_ROPE_BWD, rope_bwd_space)
