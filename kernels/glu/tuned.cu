/* GeGLU / SwiGLU forward and backward, tuned backend: the speed of light of
 * an elementwise op, every input read once and every output written once
 * with 128-bit accesses.
 *
 * Strategy:
 * - Flat kernel (the benchmarks: gate, up, dy and the outputs dense, ld_in ==
 *   H, every pointer at the same offset within 16 bytes): the [M, H] tensors
 *   are one array of M*H elements, so an odd H costs nothing (no per-row
 *   edges): at most V-1 scalar elements before the first 16-byte boundary and
 *   after the last, 16-byte vectors in between (V = 8 bf16/fp16, 4 fp32).
 *   Vectors stay raw 32-bit words in registers until used (bit operations
 *   unpack them), and each instantiation's registers are capped (__maxnreg__,
 *   spill-free per -Xptxas -v): bf16 forward at unroll 2 runs 2048 threads
 *   per SM with 128 KB of loads in flight.
 * - Row kernel (ld_in > H: the MLP's interleaved gate|up GEMM result; or
 *   pointers at different offsets): each of the M rows on its own, gridDim.y
 *   rows at a time, vectors where a row's pointers agree on the offset,
 *   scalars otherwise (correct, slower).
 * - Coalesced: step k of thread t of CTA b touches vector b*threads*unroll +
 *   k*threads + t; each thread issues `unroll` 16-byte loads per input stream
 *   before any math; streaming loads (__ldcs), plain write-back stores
 *   (evict-first stores were slower, see the heuristic).
 * - Math in fp32 from one sigmoid (glu_math.cuh: gelu_tanh(x) = x sigmoid(2u));
 *   ex2.approx and an approximate reciprocal for bf16/fp16, expf and an IEEE
 *   division for fp32. Saturates to 0 / x without inf/inf (wide inputs).
 * - Backward recomputes act(gate) (nothing saved) and writes dgate = dy * up *
 *   act'(gate) and dup = dy * act(gate); the benchmark's out holds [2, M, H]:
 *   dgate, then dup.
 * Launch parameters (kb_glu_cfg, from the tuner: heuristic, cache or search):
 *   threads {128..1024}, unroll {1,2,4,8} vectors per thread and stream per
 *   step, occ: 0 = one pass over the data (a CTA per threads*unroll
 *   vectors), else a persistent grid-stride grid of occ CTAs per SM;
 *   flat kernel only: hint, the cache operators (0: .cs loads and stores,
 *   1: .cs loads, plain stores, 2: plain loads and stores, as Inductor's
 *   Triton pointwise kernels), and uncap (0: the register cap below,
 *   1: nvcc's own register allocation). Which wins is the device's call:
 *   the tuner times them.
 *   Heuristic: 128 threads, unroll 1 (backward 2), one pass, hint 2, uncap
 *   0; valid() rejects what does not fit the registers or spills.
 * One kernel per call. Limits: any M, H >= 1, 64-bit offsets. */
#include <type_traits>

#include "glu_math.cuh"
#include "tuner.h"

namespace {


/* The element-wise op of a pass on fp32 values: NIN inputs (gate, up[, dy]),
 * NOUT outputs. */
template <int ACT, bool FAST> struct fwd_op {
    static constexpr int NIN = 2, NOUT = 1;
    __device__ __forceinline__ void operator()(const float (&in)[2], float (&o)[1]) const
    {
        o[0] = glu_sig_act<ACT, FAST>(in[0]) * in[1];
    }
};
template <int ACT, bool FAST> struct bwd_op {
    static constexpr int NIN = 3, NOUT = 2;
    __device__ __forceinline__ void operator()(const float (&in)[3], float (&o)[2]) const
    {
        float a, da;
        glu_sig_act_dact<ACT, FAST>(in[0], a, da);
        o[0] = in[2] * in[1] * da; /* dgate */
        o[1] = in[2] * a;          /* dup   */
    }
};

template <typename T, int NIN, int NOUT> struct ptrs {
    const T *in[NIN];
    T *out[NOUT];
};

template <typename T, typename OP>
__device__ __forceinline__ void one_elem(const ptrs<T, OP::NIN, OP::NOUT> &p, int64_t j)
{
    float in[OP::NIN], o[OP::NOUT];
#pragma unroll
    for (int i = 0; i < OP::NIN; i++) in[i] = kb_to_float(p.in[i][j]);
    OP()(in, o);
#pragma unroll
    for (int i = 0; i < OP::NOUT; i++) p.out[i][j] = kb_from_float<T>(o[i]);
}

/* A 32-bit word of a 16-byte vector as fp32 values and back: two bf16/fp16
 * or one fp32 (EW elements per word). Bit operations on the raw word, so the
 * vectors stay 4 registers each until used (a kb_vec's elements converted
 * one by one let nvcc unpack every vector to fp32 as it arrived: twice the
 * registers). */
template <typename T> struct word;
template <> struct word<float> {
    static constexpr int EW = 1;
    static __device__ __forceinline__ void get(uint32_t w, float (&f)[1]) { f[0] = __uint_as_float(w); }
    static __device__ __forceinline__ uint32_t put(const float (&f)[1]) { return __float_as_uint(f[0]); }
};
template <> struct word<kb_bf16> {
    static constexpr int EW = 2;
    static __device__ __forceinline__ void get(uint32_t w, float (&f)[2])
    {
        f[0] = __uint_as_float(w << 16);
        f[1] = __uint_as_float(w & 0xffff0000u);
    }
    static __device__ __forceinline__ uint32_t put(const float (&f)[2])
    {
        const __nv_bfloat162 h = __floats2bfloat162_rn(f[0], f[1]);
        return *reinterpret_cast<const uint32_t *>(&h);
    }
};
template <> struct word<kb_fp16> {
    static constexpr int EW = 2;
    static __device__ __forceinline__ void get(uint32_t w, float (&f)[2])
    {
        const __half2 h = *reinterpret_cast<const __half2 *>(&w);
        const float2 v = __half22float2(h);
        f[0] = v.x, f[1] = v.y;
    }
    static __device__ __forceinline__ uint32_t put(const float (&f)[2])
    {
        const __half2 h = __floats2half2_rn(f[0], f[1]);
        return *reinterpret_cast<const uint32_t *>(&h);
    }
};

__device__ __forceinline__ uint32_t &word_of(uint4 &u, int i)
{
    return i == 0 ? u.x : i == 1 ? u.y : i == 2 ? u.z : u.w;
}
__device__ __forceinline__ uint32_t word_of(const uint4 &u, int i)
{
    return i == 0 ? u.x : i == 1 ? u.y : i == 2 ? u.z : u.w;
}

/* OP on one 16-byte vector per stream: raw in, raw out. */
template <typename T, typename OP>
__device__ __forceinline__ void vec_apply(const uint4 (&raw)[OP::NIN], uint4 (&o)[OP::NOUT])
{
    constexpr int NIN = OP::NIN, NOUT = OP::NOUT, EW = word<T>::EW;
#pragma unroll
    for (int w = 0; w < 4; w++) {
        float x[NIN][EW], y[NOUT][EW];
#pragma unroll
        for (int i = 0; i < NIN; i++) word<T>::get(word_of(raw[i], w), x[i]);
#pragma unroll
        for (int e = 0; e < EW; e++) {
            float xe[NIN], ye[NOUT];
#pragma unroll
            for (int i = 0; i < NIN; i++) xe[i] = x[i][e];
            OP()(xe, ye);
#pragma unroll
            for (int i = 0; i < NOUT; i++) y[i][e] = ye[i];
        }
#pragma unroll
        for (int i = 0; i < NOUT; i++) word_of(o[i], w) = word<T>::put(y[i]);
    }
}

/* Register cap per instantiation of the flat kernel: the U x NIN raw 16-byte
 * vectors in flight (4 words each) plus the rest (pointers, indices, the
 * math), the smallest that is spill-free per -Xptxas -v for U <= 2 (16-bit
 * forward up to U = 4). bf16 forward U = 2 then fits 32 registers: 2048
 * resident threads, 128 KB of loads in flight per SM (the H200 wants
 * 100+); uncapped, nvcc took 56. */
template <typename T, typename OP, int HINT> constexpr int glu_reg_cap(int U)
{
    /* fp32 backward with plain loads or stores (hint 1, 2) keeps more live:
     * at the hint-0 cap it spilled at unroll 1 to 4, at +8 still at unroll 1
     * (cuobjdump -res-usage). */
    const int rest = sizeof(T) == 4 ? (OP::NIN == 3 && HINT ? 36 : 20) : OP::NIN == 2 ? 16 : 28;
    return (U * 4 * OP::NIN + rest + 7) / 8 * 8;
}

/* Rows r of M: in[i] + r * ldi, out[i] + r * ldo; H elements each. */
template <typename T, typename OP, int U>
__global__ void glu_tuned_kernel(ptrs<T, OP::NIN, OP::NOUT> p, int64_t ldi, int64_t ldo, int64_t M,
                                 int64_t H)
{
    constexpr int V = kb_vec<T>::n, NIN = OP::NIN, NOUT = OP::NOUT;
    const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    for (int64_t row = blockIdx.y; row < M; row += gridDim.y) {
        ptrs<T, NIN, NOUT> r;
#pragma unroll
        for (int i = 0; i < NIN; i++) r.in[i] = p.in[i] + row * ldi;
#pragma unroll
        for (int i = 0; i < NOUT; i++) r.out[i] = p.out[i] + row * ldo;
        /* Same offset within 16 bytes everywhere: vectors after `head`. */
        const unsigned mis = (unsigned)((uintptr_t)r.in[0] & 15u);
        bool vec = mis % sizeof(T) == 0;
#pragma unroll
        for (int i = 1; i < NIN; i++) vec = vec && ((uintptr_t)r.in[i] & 15u) == mis;
#pragma unroll
        for (int i = 0; i < NOUT; i++) vec = vec && ((uintptr_t)r.out[i] & 15u) == mis;
        int64_t head = 0, nvec = 0;
        if (vec) {
            head = (int64_t)(((16u - mis) & 15u) / sizeof(T));
            if (head > H) head = H;
            nvec = (H - head) / V;
        }
        const int64_t tail = head + nvec * V, nscalar = head + (H - tail);
        for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nscalar; k += nthreads)
            one_elem<T, OP>(r, k < head ? k : tail + (k - head));
        for (int64_t base = (int64_t)blockIdx.x * blockDim.x * U; base < nvec;
             base += nthreads * U) {
            uint4 raw[U][NIN];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t v = base + (int64_t)k * blockDim.x + threadIdx.x;
                if (v < nvec)
#pragma unroll
                    for (int i = 0; i < NIN; i++)
                        raw[k][i] = __ldcs(reinterpret_cast<const uint4 *>(r.in[i] + head) + v);
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const int64_t v = base + (int64_t)k * blockDim.x + threadIdx.x;
                if (v >= nvec) continue;
                uint4 o[NOUT];
                vec_apply<T, OP>(raw[k], o);
#pragma unroll
                for (int i = 0; i < NOUT; i++)
                    reinterpret_cast<uint4 *>(r.out[i] + head)[v] = o[i];
            }
        }
    }
}

/* Dense tensors whose pointers share one offset within 16 bytes: one flat
 * array of n elements, `head` scalar elements before the first 16-byte
 * boundary, nvec vectors, the rest scalar. Fewer live registers than the row
 * kernel (no per-row pointers), so more bytes in flight per SM. */
template <typename T, typename OP, int U, int HINT, int UNCAP>
__global__ void __maxnreg__((UNCAP ? 255 : glu_reg_cap<T, OP, HINT>(U)))
glu_flat_kernel(ptrs<T, OP::NIN, OP::NOUT> p, int64_t head, int64_t nvec, int64_t n)
{
    constexpr int V = kb_vec<T>::n, NIN = OP::NIN, NOUT = OP::NOUT;
    const int64_t tail = head + nvec * V;
    if (blockIdx.x == 0 && threadIdx.x < head + (n - tail)) {
        const int64_t k = threadIdx.x;
        one_elem<T, OP>(p, k < head ? k : tail + (k - head));
    }
    const uint4 *in[NIN];
    uint4 *out[NOUT];
#pragma unroll
    for (int i = 0; i < NIN; i++) in[i] = reinterpret_cast<const uint4 *>(p.in[i] + head);
#pragma unroll
    for (int i = 0; i < NOUT; i++) out[i] = reinterpret_cast<uint4 *>(p.out[i] + head);
    const int64_t step = (int64_t)gridDim.x * blockDim.x * U;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x * U + threadIdx.x; base < nvec;
         base += step) {
        uint4 raw[U][NIN];
#pragma unroll
        for (int k = 0; k < U; k++) {
            const int64_t v = base + (int64_t)k * blockDim.x;
            if (v < nvec)
#pragma unroll
                for (int i = 0; i < NIN; i++) raw[k][i] = kb_ld128_hint<HINT>(in[i] + v);
        }
#pragma unroll
        for (int k = 0; k < U; k++) {
            const int64_t v = base + (int64_t)k * blockDim.x;
            if (v >= nvec) continue;
            uint4 o[NOUT];
            vec_apply<T, OP>(raw[k], o);
#pragma unroll
            for (int i = 0; i < NOUT; i++) kb_st128_hint<HINT>(out[i] + v, o[i]);
        }
    }
}

/* The row (FLAT false) or flat kernel of an unroll choice; the flat kernel
 * also of a hint and uncap choice (the row kernel has neither: it runs with
 * .cs loads and plain stores, its own registers). NULL: no such instantiation. */
template <typename T, typename OP, bool FLAT> struct kernel_of {
    typedef void (*row_fn)(ptrs<T, OP::NIN, OP::NOUT>, int64_t, int64_t, int64_t, int64_t);
    typedef void (*flat_fn)(ptrs<T, OP::NIN, OP::NOUT>, int64_t, int64_t, int64_t);
    typedef typename std::conditional<FLAT, flat_fn, row_fn>::type fn;
    template <int U, int HINT, int UNCAP> static fn one()
    {
        if constexpr (FLAT)
            return glu_flat_kernel<T, OP, U, HINT, UNCAP>;
        else
            return glu_tuned_kernel<T, OP, U>;
    }
    template <int U, int HINT> static fn by_uncap(int uncap)
    {
        return uncap == 0 ? one<U, HINT, 0>() : uncap == 1 ? one<U, HINT, 1>() : NULL;
    }
    template <int U> static fn by_hint(int hint, int uncap)
    {
        switch (hint) {
        case 0: return by_uncap<U, 0>(uncap);
        case 1: return by_uncap<U, 1>(uncap);
        case 2: return by_uncap<U, 2>(uncap);
        default: return NULL;
        }
    }
    static fn get(int unroll, int hint, int uncap)
    {
        if constexpr (!FLAT) hint = 0, uncap = 0; /* one row kernel per unroll */
        switch (unroll) {
        case 1: return by_hint<1>(hint, uncap);
        case 2: return by_hint<2>(hint, uncap);
        case 4: return by_hint<4>(hint, uncap);
        case 8: return by_hint<8>(hint, uncap);
        default: return NULL;
        }
    }
};

static cudaError_t device_sms(int *sms)
{
    int dev = 0;
    cudaError_t rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    return rc;
}

/* One offset within 16 bytes for every pointer: the flat kernel's vectors. */
template <typename T, int NIN, int NOUT>
static bool same_offset(const ptrs<T, NIN, NOUT> &p, unsigned *mis)
{
    *mis = (unsigned)((uintptr_t)p.in[0] & 15u);
    bool ok = *mis % sizeof(T) == 0;
    for (int i = 1; i < NIN; i++) ok = ok && ((uintptr_t)p.in[i] & 15u) == *mis;
    for (int i = 0; i < NOUT; i++) ok = ok && ((uintptr_t)p.out[i] & 15u) == *mis;
    return ok;
}

/* CTAs: one per threads*unroll vectors, or a persistent grid of occ per SM. */
static kb_status grid_of(const kb_glu_cfg *c, int sms, int64_t work, int64_t *bx, kb_err *e)
{
    int64_t b = kb_cdiv(work, (int64_t)c->threads * c->unroll);
    if (b < 1) b = 1;
    if (c->occ > 0) {
        if (sms <= 0) KB_CUDA(e, device_sms(&sms));
        const int64_t cap = (int64_t)sms * c->occ;
        if (b > cap) b = cap;
    }
    *bx = b < 2147483647LL ? b : 2147483647LL;
    return KB_OK;
}

/* Enqueue OP over (M, H) with row strides ldi/ldo: dense tensors sharing one
 * 16-byte offset run the flat kernel, anything else the row kernel (dense
 * rows as one). */
template <typename T, typename OP>
static kb_status launch(const char *who, const kb_glu_cfg *c, int sms,
                        ptrs<T, OP::NIN, OP::NOUT> p, int64_t ldi, int64_t ldo, int64_t M,
                        int64_t H, cudaStream_t s, kb_err *e)
{
    typename kernel_of<T, OP, false>::fn k = kernel_of<T, OP, false>::get(c->unroll, 0, 0);
    typename kernel_of<T, OP, true>::fn kf =
        kernel_of<T, OP, true>::get(c->unroll, c->hint, c->uncap);
    if (!k || !kf || c->threads < 32 || c->threads > 1024 || c->threads % 32 || c->occ < 0)
        return KB_FAIL(e, KB_ERR_ARG,
                       "%s: bad configuration threads=%d,unroll=%d,occ=%d,hint=%d,uncap=%d", who,
                       c->threads, c->unroll, c->occ, c->hint, c->uncap);
    constexpr int V = kb_vec<T>::n;
    unsigned mis = 0;
    const bool dense = ldi == H && ldo == H;
    if (dense && same_offset(p, &mis)) {
        const int64_t n = M * H;
        int64_t head = (int64_t)(((16u - mis) & 15u) / sizeof(T));
        if (head > n) head = n;
        const int64_t nvec = (n - head) / V;
        int64_t bx = 0;
        KB_TRY(grid_of(c, sms, nvec, &bx, e));
        kf<<<(unsigned)bx, c->threads, 0, s>>>(p, head, nvec, n);
        return glu_launched(who, M, H, e);
    }
    if (dense) {
        H *= M;
        M = 1;
    }
    int64_t bx = 0, by = M < 65535 ? M : 65535;
    KB_TRY(grid_of(c, sms, kb_cdiv(H, V), &bx, e));
    if (c->occ > 0) {
        if (sms <= 0) KB_CUDA(e, device_sms(&sms));
        const int64_t ry = (int64_t)sms * c->occ / bx;
        if (by > ry) by = ry > 0 ? ry : 1;
    }
    k<<<dim3((unsigned)bx, (unsigned)by), c->threads, 0, s>>>(p, ldi, ldo, M, H);
    return glu_launched(who, M, H, e);
}

/* ---- the kb_impls: tuner spaces --------------------------------------------- */
enum { P_THREADS, P_UNROLL, P_OCC, P_HINT, P_UNCAP };

static kb_glu_cfg cfg_of(const kb_tune_cfg *c)
{
    return {c->v[P_THREADS], c->v[P_UNROLL], c->v[P_OCC], c->v[P_HINT], c->v[P_UNCAP]};
}

template <int BWD>
static void heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    const kb_glu_cfg g =
        kb_glu_tuned_heuristic(p->dtype, BWD, p->M, p->N, ctx ? ctx->sm_count : 0);
    kb_tune_cfg c = {};
    c.v[P_THREADS] = g.threads;
    c.v[P_UNROLL] = g.unroll;
    c.v[P_OCC] = g.occ;
    c.v[P_HINT] = g.hint;
    c.v[P_UNCAP] = g.uncap;
    *out = c;
}

/* The block size fits the kernel's registers and nothing spills. */
template <int BWD, int ACT>
static int valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    cudaFuncAttributes fa;
    cudaError_t rc = cudaErrorInvalidValue;
    KB_DISPATCH(p->dtype, T, {
        if (BWD) {
            auto k = kernel_of<T, bwd_op<ACT, sizeof(T) < 4>, true>::get(
                c->v[P_UNROLL], c->v[P_HINT], c->v[P_UNCAP]);
            if (k) rc = cudaFuncGetAttributes(&fa, k);
        } else {
            auto k = kernel_of<T, fwd_op<ACT, sizeof(T) < 4>, true>::get(
                c->v[P_UNROLL], c->v[P_HINT], c->v[P_UNCAP]);
            if (k) rc = cudaFuncGetAttributes(&fa, k);
        }
    });
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return c->v[P_THREADS] <= fa.maxThreadsPerBlock && fa.localSizeBytes == 0;
}

template <int ACT>
static kb_status fwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e)
{
    const kb_glu_cfg g = cfg_of(c);
    return kb_glu_tuned_fwd(&g, 0, p->dtype, (kb_glu_act)ACT, t->x, t->up, p->N, t->out, p->M,
                            p->N, s, e);
}

template <int ACT>
static kb_status bwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                            cudaStream_t s, kb_err *e)
{
    const kb_glu_cfg g = cfg_of(c);
    const size_t plane = (size_t)p->M * (size_t)p->N * kb_dtype_size(p->dtype);
    return kb_glu_tuned_bwd(&g, 0, p->dtype, (kb_glu_act)ACT, t->x, t->up, t->dy, p->N, t->out,
                            (char *)t->out + plane, p->M, p->N, s, e);
}

/* A cache entry that names only some keys takes the others from the
 * heuristic. */
#define GLU_SPACE(name, BWD, ACT)                                             \
    {name, 5, {"threads", "unroll", "occ", "hint", "uncap"}, {4, 4, 6, 3, 2}, \
     {{128, 256, 512, 1024}, {1, 2, 4, 8}, {0, 1, 2, 4, 8, 16}, {0, 1, 2}, {0, 1}}, \
     heuristic<BWD>, valid<BWD, ACT>, NULL,                                        \
     BWD ? bwd_launch<ACT> : fwd_launch<ACT>, NULL}

const kb_tune_space geglu_fwd_space = GLU_SPACE("geglu_forward", 0, KB_ACT_GELU_TANH);
const kb_tune_space geglu_bwd_space = GLU_SPACE("geglu_backward", 1, KB_ACT_GELU_TANH);
const kb_tune_space swiglu_fwd_space = GLU_SPACE("swiglu_forward", 0, KB_ACT_SILU);
const kb_tune_space swiglu_bwd_space = GLU_SPACE("swiglu_backward", 1, KB_ACT_SILU);

} /* namespace */

/* ---- C entry points (glu.h) -------------------------------------------------- */
extern "C" kb_glu_cfg kb_glu_tuned_heuristic(kb_dtype dt, int backward, int64_t M, int64_t H,
                                             int sm_count)
{
    (void)M, (void)H, (void)sm_count;
    /* Inductor's shape of work for a pointwise kernel: 128 threads, one
     * 16-byte vector per stream and thread and step (backward: two, it has
     * three streams to keep busy), one pass, plain write-back loads and
     * stores (hint 2). Evict-first (.cs) stores cost ~10 % of bandwidth on
     * the H200 against plain ones at every large shape the tuner timed
     * (docs/dev/kernels/glu.md); larger CTAs and deeper unrolling gained nothing. */
    kb_glu_cfg c = {128, backward ? 2 : 1, 0, 2, 0};
    return c;
}

extern "C" const struct kb_tune_space *kb_glu_tune_space(int backward, kb_glu_act act)
{
    if (act == KB_ACT_GELU_TANH) return backward ? &geglu_bwd_space : &geglu_fwd_space;
    return backward ? &swiglu_bwd_space : &swiglu_fwd_space;
}

extern "C" kb_status kb_glu_tuned_fwd(const kb_glu_cfg *c, int sm_count, kb_dtype dt,
                                      kb_glu_act act, const void *gate, const void *up,
                                      int64_t ld_in, void *out, int64_t M, int64_t H,
                                      cudaStream_t s, kb_err *e)
{
    static const char who[] = "tuned glu forward";
    kb_status st = KB_OK;
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        const ptrs<T, 2, 1> p = {{(const T *)gate, (const T *)up}, {(T *)out}};
        st = launch<T, fwd_op<A, sizeof(T) < 4>>(who, c, sm_count, p, ld_in, H, M, H, s, e);
    });
    return st;
}

extern "C" kb_status kb_glu_tuned_bwd(const kb_glu_cfg *c, int sm_count, kb_dtype dt,
                                      kb_glu_act act, const void *gate, const void *up,
                                      const void *dy, int64_t ld_in, void *dgate, void *dup,
                                      int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "tuned glu backward";
    kb_status st = KB_OK;
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        const ptrs<T, 3, 2> p = {{(const T *)gate, (const T *)up, (const T *)dy},
                                 {(T *)dgate, (T *)dup}};
        st = launch<T, bwd_op<A, sizeof(T) < 4>>(who, c, sm_count, p, ld_in, H, M, H, s, e);
    });
    return st;
}


KB_TUNED_IMPL(kb_geglu_tuned_fwd, KB_GEGLU_FWD, geglu_fwd_space)
KB_TUNED_IMPL(kb_geglu_tuned_bwd, KB_GEGLU_BWD, geglu_bwd_space)
KB_TUNED_IMPL(kb_swiglu_tuned_fwd, KB_SWIGLU_FWD, swiglu_fwd_space)
KB_TUNED_IMPL(kb_swiglu_tuned_bwd, KB_SWIGLU_BWD, swiglu_bwd_space)
