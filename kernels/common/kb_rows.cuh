/* Row machinery of the tuned kernels: how a row is cut into 16-byte slots,
 * slot loads/stores that stay correct for any N, group / CTA reductions
 * and the payloads of the cluster reduction (kb_cluster.cuh), and the
 * cluster launch.
 *
 * Slots and edges. A row of N elements starting at flat index row*N is cut
 * into "interior" slots: 16-byte aligned runs of V = 16/sizeof(T) elements,
 * each one 128-bit access, and "edge" elements: the < V elements before the
 * first aligned address (when N*sizeof(T) % 16 != 0 rows start misaligned)
 * and the < V after the last full slot, accessed one by one. Keeping the
 * edges out of the slot path keeps the hot loops free of per-element
 * branches (and registers). Requires the tensor base pointers to be 16-byte
 * aligned (kb_aligned16); the kernels run V = 1 instantiations otherwise.
 *
 * Registers. Occupancy, i.e. the bytes of loads in flight per SM, is what
 * these kernels live on. Slots are held raw (kb_raw: 32-bit words, two
 * 16-bit elements a word) and converted to fp32 where used (an fp32 or
 * per-element copy of a 16-bit row doubles the registers); kb_tie keeps
 * ptxas from converting a held row ahead of a reduction; offsets within a
 * CTA's chunk are 32-bit in the vector kernels (kb_chunk_index); and the
 * kernel files cap registers per instantiation (__maxnreg__).
 *
 * Groups. tpr threads (a power of two, 4..1024) work on one row; a CTA holds
 * rows such groups; a cluster of cs CTAs splits each of its rows into cs
 * contiguous chunks, and partial results are exchanged through distributed
 * shared memory (kb_cluster.cuh: st.async pushes counted on an mbarrier):
 * a row too long for one CTA's registers is still read from HBM once, and a
 * streaming CTA's chunk stays small enough for its second pass to find it
 * in L2. */
#ifndef KB_ROWS_CUH
#define KB_ROWS_CUH

#include <string.h>

#include <type_traits>

#include "hwfit.h"
#include "kb_cluster.cuh"
#include "kb_launch.cuh"

#define KB_LOG2E 1.4426950408889634f
#define KB_LN2 0.69314718055994531f
#define KB_MAX_TPR 1024
#define KB_MAX_ROWS 32

/* Slots [begin, end) of a row's interior handled by one CTA of a split. */
struct kb_chunk {
    int64_t begin, end;
};
__host__ __device__ __forceinline__ kb_chunk kb_split(int64_t nslots, int parts, int part, int tpr)
{
    const int64_t per = kb_cdiv(kb_cdiv(nslots, parts), tpr) * tpr;
    const int64_t b = part * per;
    return kb_chunk{b < nslots ? b : nslots, b + per < nslots ? b + per : nslots};
}

/* Index type for offsets within a CTA's chunk of a row: 32-bit for the
 * vector kernels (fewer registers; kb_chunk_fits32 must hold, their callers
 * check it), 64-bit for the scalar (V = 1) fallback, which must run any
 * shape. fits32: the chunk of a row of N split in `parts`, plus the two
 * steps of `step` slots its loop may run past the end, in elements. */
template <int V> using kb_chunk_index = typename std::conditional<V == 1, int64_t, int>::type;
static inline bool kb_chunk_fits32(int64_t N, int V, int parts, int step)
{
    return (kb_cdiv(N / V, parts) + 2 * (int64_t)step) * V <= INT32_MAX;
}

/* ---- thread coordinates ---------------------------------------------------
 * Thread t of row group g in a CTA of `rows` groups of tpr = 2^tpr_shift
 * threads; `parts` consecutive CTAs (a cluster, or independent CTAs) split
 * each row, this one being part `rank`. live: the row exists (row < M). */
struct kb_coords {
    int tpr, g, t, rank;
    int64_t row;
    bool live;
};

__device__ __forceinline__ kb_coords kb_coords_of(int64_t M, int tpr_shift, int rows, int parts)
{
    kb_coords c;
    c.tpr = 1 << tpr_shift;
    c.g = threadIdx.x >> tpr_shift;
    c.t = threadIdx.x & (c.tpr - 1);
    c.rank = blockIdx.x % parts;
    c.row = (int64_t)(blockIdx.x / parts) * rows + c.g;
    c.live = c.row < M;
    return c;
}

/* ---- slots and edges --------------------------------------------------- */
struct kb_rowgeo {
    int64_t start; /* flat index of the row's element 0                       */
    int64_t first; /* flat index of interior slot 0's first element (aligned) */
    int64_t n;     /* elements in the row; 0 for a row past M                  */
    int64_t nfull; /* full interior slots                                      */
    int64_t e1;    /* first tail edge element (row-relative)                   */
    int e0;        /* head edge elements [0, e0)                               */
    int nedge;     /* e0 + (n - e1) < 2V                                       */
};

template <int V>
__host__ __device__ __forceinline__ kb_rowgeo kb_row_geo(int64_t row, int64_t N, bool live)
{
    kb_rowgeo g;
    const int64_t start = live ? row * N : 0;
    g.start = start;
    g.n = live ? N : 0;
    const int a = (int)(start % V);
    g.e0 = a ? (int)(V - a < g.n ? V - a : g.n) : 0;
    g.nfull = (g.n - g.e0) / V;
    g.e1 = g.e0 + g.nfull * V;
    g.first = start + g.e0;
    g.nedge = (int)(g.e0 + (g.n - g.e1));
    return g;
}

/* Row-relative index of edge element i < nedge. */
__host__ __device__ __forceinline__ int64_t kb_edge_elem(const kb_rowgeo &g, int i)
{
    return i < g.e0 ? i : g.e1 + (i - g.e0);
}

/* Full slots a row of N elements can have, over all misalignments. */
static inline __host__ __device__ int64_t kb_max_slots(int64_t N, int V) { return N / V; }
/* Edge elements held per thread by the register kernels: 2(V-1) <= 14
 * elements over >= 4 threads. */
#define KB_EDGE_PER_THREAD 4

/* ---- raw slots ------------------------------------------------------------
 * A slot held in registers as its raw bytes in 32-bit words (two elements a
 * word for 16-bit types) and converted to fp32 where used. An array of T
 * would put every 16-bit element in a register of its own: twice the
 * registers, which is what limited occupancy before. V = 1 (scalar
 * fallback) keeps one element in the low bits of one word. */
template <typename T, int V> struct kb_raw {
    static constexpr int NW = (V * (int)sizeof(T) + 3) / 4;
    unsigned w[NW];
};

/* Element k (a compile-time constant after unrolling) as fp32. */
template <typename T, int V> __device__ __forceinline__ float kb_get(const kb_raw<T, V> &r, int k)
{
    if constexpr (sizeof(T) == 4) {
        return __uint_as_float(r.w[k]);
    } else if constexpr (std::is_same<T, kb_bf16>::value) {
        return __uint_as_float((k & 1) ? r.w[k >> 1] & 0xffff0000u : r.w[k >> 1] << 16);
    } else {
        const unsigned w = r.w[k >> 1];
        return __half2float(__ushort_as_half((unsigned short)((k & 1) ? w >> 16 : w & 0xffffu)));
    }
}

/* Bits of one element (rounded to nearest even), in the low bits. */
template <typename T> __device__ __forceinline__ unsigned kb_bits_of(float v)
{
    if constexpr (sizeof(T) == 4) {
        return __float_as_uint(v);
    } else {
        const T h = kb_from_float<T>(v);
        unsigned short u;
        memcpy(&u, &h, sizeof u);
        return u;
    }
}

template <typename T, int V> __device__ __forceinline__ kb_raw<T, V> kb_raw_of(const float (&f)[V])
{
    kb_raw<T, V> r;
    if constexpr (sizeof(T) == 4 || V == 1) {
#pragma unroll
        for (int k = 0; k < V; k++) r.w[k] = kb_bits_of<T>(f[k]);
    } else {
        /* One packing conversion per word (F2FP): low half = f[2i]. */
#pragma unroll
        for (int i = 0; i < V / 2; i++) {
            unsigned w;
            if constexpr (std::is_same<T, kb_bf16>::value) {
                const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
                memcpy(&w, &h, sizeof w);
            } else {
                const __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
                memcpy(&w, &h, sizeof w);
            }
            r.w[i] = w;
        }
    }
    return r;
}

/* Every element = v (v exactly representable in T: 0, -inf). */
template <typename T, int V> __device__ __forceinline__ kb_raw<T, V> kb_raw_splat(float v)
{
    kb_raw<T, V> r;
    const unsigned b = kb_bits_of<T>(v);
    const unsigned w = sizeof(T) == 4 || V == 1 ? b : b | b << 16;
#pragma unroll
    for (int i = 0; i < kb_raw<T, V>::NW; i++) r.w[i] = w;
    return r;
}

/* Cache treatments: kb_cache and kb_ld128_c (kb_cuda.cuh). */

template <typename T, int V, kb_cache C>
__device__ __forceinline__ kb_raw<T, V> kb_ld_raw(const T *p, uint64_t pol)
{
    kb_raw<T, V> r;
    if constexpr (V * sizeof(T) == 16) {
        const uint4 u = kb_ld128_c<C>(p, pol);
        r.w[0] = u.x;
        r.w[1] = u.y;
        r.w[2] = u.z;
        r.w[3] = u.w;
    } else {
        static_assert(V == 1, "a slot is 16 bytes or one element");
        if constexpr (sizeof(T) == 4) {
            const unsigned *q = reinterpret_cast<const unsigned *>(p);
            r.w[0] = C == KB_LD_STREAM ? __ldcs(q) : __ldg(q);
        } else {
            const unsigned short *q = reinterpret_cast<const unsigned short *>(p);
            r.w[0] = C == KB_LD_STREAM ? __ldcs(q) : __ldg(q);
        }
    }
    return r;
}

template <typename T, int V, bool STREAM = true>
__device__ __forceinline__ void kb_st_raw(T *p, const kb_raw<T, V> &r)
{
    if constexpr (V * sizeof(T) == 16) {
        kb_st_op<STREAM>(reinterpret_cast<uint4 *>(p), make_uint4(r.w[0], r.w[1], r.w[2], r.w[3]));
    } else if constexpr (sizeof(T) == 4) {
        kb_st_op<STREAM>(reinterpret_cast<unsigned *>(p), r.w[0]);
    } else {
        kb_st_op<STREAM>(reinterpret_cast<unsigned short *>(p), (unsigned short)r.w[0]);
    }
}
/* The store's cache operator chosen at run time: a tuning parameter (the
 * tuned softmax's `hint`: 0 evict-first, 1 plain), one kernel for both. */
template <typename T, int V>
__device__ __forceinline__ void kb_st_raw_hint(T *p, const kb_raw<T, V> &r, int hint)
{
    if (hint) kb_st_raw<T, V, false>(p, r);
    else kb_st_raw<T, V, true>(p, r);
}

/* Interior slot j of the row when ok, else every element = fill. */
template <typename T, int V, kb_cache C>
__device__ __forceinline__ kb_raw<T, V> kb_slot_raw(const T *__restrict__ base, const kb_rowgeo &g,
                                                    int64_t j, bool ok, float fill, uint64_t pol)
{
    return ok ? kb_ld_raw<T, V, C>(base + g.first + j * V, pol) : kb_raw_splat<T, V>(fill);
}

template <typename T, kb_cache C> __device__ __forceinline__ T kb_ld1(const T *p)
{
    return C == KB_LD_STREAM ? __ldcs(p) : __ldg(p);
}

/* Edge element i as fp32 when ok (i < nedge), else fill. */
template <typename T, kb_cache C>
__device__ __forceinline__ float kb_edge_load(const T *__restrict__ base, const kb_rowgeo &g, int i,
                                              bool ok, float fill)
{
    return ok ? kb_to_float(kb_ld1<T, C == KB_LD_LAST ? KB_LD_KEEP : C>(base + g.start +
                                                                        kb_edge_elem(g, i)))
              : fill;
}

template <typename T, bool STREAM = true>
__device__ __forceinline__ void kb_edge_store(T *__restrict__ base, const kb_rowgeo &g, int i, float v)
{
    kb_st_op<STREAM>(base + g.start + kb_edge_elem(g, i), kb_from_float<T>(v));
}

/* Ties r to v, the result of a reduction: r.w += isnan(v), so that nothing
 * computed from r moves above the reduction. Without it ptxas converts the
 * whole held row to fp32 while the reduction runs (an empty asm does not
 * stop it: it acts on PTX), doubling the registers. Harmless: when v is NaN
 * every output derived from it is NaN whatever r holds. */
template <typename T, int V> __device__ __forceinline__ void kb_tie(kb_raw<T, V> &r, float v)
{
    const unsigned z = isnan(v);
#pragma unroll
    for (int i = 0; i < kb_raw<T, V>::NW; i++) r.w[i] += z;
}
__device__ __forceinline__ void kb_tie(float &f, float v)
{
    f = __uint_as_float(__float_as_uint(f) + (unsigned)isnan(v));
}

/* ---- partial results and how they combine ---------------------------------
 * Every combine is commutative bit for bit (max, and a sum of two products),
 * so butterfly shuffles leave all lanes with identical values and every CTA
 * of a cluster, combining the same partials in rank order, gets the same. */
struct kb_ms {
    float m, s; /* running max, sum of exp(x - m) */
};

/* 2^x with one MUFU op. Arguments here are <= 0 (x - max); results below
 * 2^-126 flush to zero, far under every tolerance, which saves exp2f's
 * three-instruction denormal fix-up per element. */
__device__ __forceinline__ float kb_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* m * log2(e), rounded once and never fused into a neighbouring fma. Every
 * exp of a row is exp2(fmaf(x, log2e, -kb_mlog2e(m))) and every rescale
 * between two maxima takes the same rounded products (kb_rescale), so a row's
 * exps share one reference point exactly. (m_part - m) * log2e instead
 * differs from kb_mlog2e(m_part) - kb_mlog2e(m) by up to half an ulp of
 * m * log2e, an error common to one thread's exps but not to the row's: fp32
 * logits near 1000 (the `shifted` inputs) came out 4e-5 off. */
__device__ __forceinline__ float kb_mlog2e(float m)
{
    return m == -INFINITY ? 0.f : __fmul_rn(m, KB_LOG2E);
}
/* The sum's rounding offset: exps relative to kb_mlog2e(m) carry the factor
 * 2^kb_mlog2e_err(m) against exp(x - m), exactly (fma gives the product's
 * residual). log(sum exp(x - m)) = log(s) - kb_mlog2e_err(m) * ln 2. */
__device__ __forceinline__ float kb_mlog2e_err(float m)
{
    return m == -INFINITY ? 0.f : fmaf(m, KB_LOG2E, -kb_mlog2e(m));
}
__device__ __forceinline__ float kb_rescale(float m_part, float m)
{
    return m_part == -INFINITY ? 0.f : kb_exp2(kb_mlog2e(m_part) - kb_mlog2e(m));
}

/* One more element into a running (max, sum). */
__device__ __forceinline__ kb_ms kb_ms_add(kb_ms a, float x)
{
    const float m = fmaxf(a.m, x);
    const float mL = kb_mlog2e(m);
    return kb_ms{m, a.s * kb_rescale(a.m, m) + kb_exp2(fmaf(x, KB_LOG2E, -mL))};
}

__device__ __forceinline__ float kb_combine(float a, float b) { return a + b; }
__device__ __forceinline__ kb_ms kb_combine(kb_ms a, kb_ms b)
{
    const float m = fmaxf(a.m, b.m);
    return kb_ms{m, a.s * kb_rescale(a.m, m) + b.s * kb_rescale(b.m, m)};
}

/* The payloads of kb_cluster_reduce (kb_cluster.cuh). */
template <> struct kb_payload<float> {
    static constexpr int W = 1;
    static __device__ __forceinline__ void to_words(float v, float (&w)[1]) { w[0] = v; }
    static __device__ __forceinline__ float of_words(const float *s) { return s[0]; }
    static __device__ __forceinline__ float combine(float a, float b) { return kb_combine(a, b); }
};
template <> struct kb_payload<kb_ms> {
    static constexpr int W = 2;
    static __device__ __forceinline__ void to_words(kb_ms v, float (&w)[2])
    {
        w[0] = v.m;
        w[1] = v.s;
    }
    static __device__ __forceinline__ kb_ms of_words(const float *s) { return kb_ms{s[0], s[1]}; }
    static __device__ __forceinline__ kb_ms combine(kb_ms a, kb_ms b) { return kb_combine(a, b); }
};

__device__ __forceinline__ float kb_shfl_xor(float v, int o)
{
    return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ kb_ms kb_shfl_xor(kb_ms v, int o)
{
    return kb_ms{kb_shfl_xor(v.m, o), kb_shfl_xor(v.s, o)};
}

/* Reduce over the tpr threads of row group g; every thread gets the result.
 * Groups are aligned to tpr, so xor offsets below tpr stay inside a group.
 * Across warps (tpr > 32): the nw warp partials go through shared memory
 * and every warp combines them with the same log2(nw) butterfly (lane l
 * takes partial l % nw), so all warps agree bit for bit without a second
 * barrier; a serial loop over 32 partials would stall a 1024-thread CTA
 * that is alone on its SM. red: shared, blockDim/32 entries. All threads of
 * the block must call it (it may contain __syncthreads). */
template <typename P>
__device__ __forceinline__ P kb_group_reduce(P v, int tpr, int g, P *red)
{
    const int w = tpr < 32 ? tpr : 32;
    for (int o = w >> 1; o > 0; o >>= 1) v = kb_combine(v, kb_shfl_xor(v, o));
    if (tpr > 32) {
        const int nw = tpr >> 5, wig = (threadIdx.x & (tpr - 1)) >> 5;
        if ((threadIdx.x & 31) == 0) red[g * nw + wig] = v;
        __syncthreads();
        v = red[g * nw + (threadIdx.x & (nw - 1))];
        for (int o = nw >> 1; o > 0; o >>= 1) v = kb_combine(v, kb_shfl_xor(v, o));
    }
    return v;
}

/* The online (max, sum of exp) pass of softmax and cross entropy over this
 * thread's slots of a CTA's chunk: slots j = c.t, c.t + step, ... < n of xb
 * (step = c.tpr * U), U slots loaded (cache policy C, pol) before any math
 * and held raw; the max of the U slots first, then one rescale of the
 * running sum and the exps (exp2 with a log2(e) factor). Then the row's edge
 * elements (cache policy CE), by the chunk of rank 0. */
template <typename T, int V, int U, kb_cache C, kb_cache CE, typename I>
__device__ __forceinline__ kb_ms kb_max_sumexp(const T *__restrict__ x, const kb_rowgeo &geo,
                                               const kb_coords &c, const T *xb, I n, I step,
                                               uint64_t pol)
{
    kb_ms acc = {-INFINITY, 0.f};
#pragma unroll 1
    for (I j = c.t; j < n; j += step) {
        kb_raw<T, V> r[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            r[u] = j + u * c.tpr < n ? kb_ld_raw<T, V, C>(xb + (j + u * c.tpr) * V, pol)
                                     : kb_raw_splat<T, V>(-INFINITY);
        float m = acc.m;
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++) m = fmaxf(m, kb_get(r[u], k));
#pragma unroll
        for (int u = 0; u < U; u++) kb_tie(r[u], m); /* convert again below */
        const float mL = kb_mlog2e(m);
        float sum = acc.s * kb_rescale(acc.m, m);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++) sum += kb_exp2(fmaf(kb_get(r[u], k), KB_LOG2E, -mL));
        acc = kb_ms{m, sum};
    }
    if (c.rank == 0)
        for (int i = c.t; i < geo.nedge; i += c.tpr)
            acc = kb_ms_add(acc, kb_edge_load<T, CE>(x, geo, i, true, 0.f));
    return acc;
}

/* ---- launch ---------------------------------------------------------------- */
/* kernel<<<grid, block, 0, s>>>(args...), in clusters of cs CTAs when cs > 1. */
template <typename... KArgs, typename... Args>
static cudaError_t kb_launch_rows(void (*kernel)(KArgs...), int64_t grid, int block, int cs,
                                  cudaStream_t s, Args... args)
{
    return kb_launch(kernel, dim3((unsigned)grid), dim3((unsigned)block), 0, cs, false, s,
                     args...);
}

/* The kernel instantiated for `unroll` slots a step: 1, 2, 4 or 8; else none. */
template <typename F> static F kb_by_unroll(int unroll, F u1, F u2, F u4, F u8)
{
    switch (unroll) {
    case 1: return u1;
    case 2: return u2;
    case 4: return u4;
    case 8: return u8;
    default: return nullptr;
    }
}

/* The kb_tune_space entry points of both directions, fwd_/bwd_ valid,
 * heuristic and launch, from the including file's valid_dir, heuristic_dir
 * and launch_dir, which take the direction as their last argument. */
#define KB_ROWS_DIRECTIONS                                                                    \
    static int fwd_valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)     \
    {                                                                                         \
        return valid_dir(p, c, false);                                                        \
    }                                                                                         \
    static int bwd_valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)     \
    {                                                                                         \
        return valid_dir(p, c, true);                                                         \
    }                                                                                         \
    static void fwd_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out) \
    {                                                                                         \
        heuristic_dir(p, ctx, out, false);                                                    \
    }                                                                                         \
    static void bwd_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out) \
    {                                                                                         \
        heuristic_dir(p, ctx, out, true);                                                     \
    }                                                                                         \
    static kb_status fwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c, \
                                cudaStream_t s, kb_err *e)                                    \
    {                                                                                         \
        return launch_dir(p, t, c, s, e, false);                                              \
    }                                                                                         \
    static kb_status bwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c, \
                                cudaStream_t s, kb_err *e)                                    \
    {                                                                                         \
        return launch_dir(p, t, c, s, e, true);                                               \
    }

/* 1 if kernel can run blocks of `block` threads in clusters of cs (registers,
 * shared memory, cluster scheduling on this GPU). Host queries only. */
template <typename... KArgs>
static int kb_launchable(void (*kernel)(KArgs...), int block, int cs)
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    kb_launch_need need = kb_launch_need_init(block, cs, 0);
    need.max_threads = fa.maxThreadsPerBlock;
    need.local_bytes = fa.localSizeBytes;
    need.static_smem = fa.sharedSizeBytes;
    if (kb_launch_fits(&need)) return 0;
    if (cs <= 1) return 1;
    const int n = kb_active_clusters(reinterpret_cast<const void *>(kernel), dim3((unsigned)block),
                                     0, cs);
    need.active_clusters = n;
    return !kb_launch_fits(&need);
}

/* Resident CTAs of `block` threads per SM (registers, shared memory); 0 when
 * the kernel cannot run such blocks. Host query only. */
template <typename... KArgs> static int kb_blocks_per_sm(void (*kernel)(KArgs...), int block)
{
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

static inline int kb_log2i(int v)
{
    int l = 0;
    while ((1 << l) < v) l++;
    return l;
}

static inline int64_t kb_pow2_ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

#endif
