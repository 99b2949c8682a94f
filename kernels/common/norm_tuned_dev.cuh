/* Device helpers of the tuned RMSNorm / LayerNorm kernels (norm_tuned.cuh):
 * 16-byte packs of a row in registers, fp32 conversion, the row reduction
 * (shuffles, shared memory across warps, and across a thread-block cluster
 * the exchange of kb_cluster.cuh) and the thread -> columns map.
 *
 * Cluster rounds (kb_cluster.cuh: st.async pushes counted on per-parity
 * mbarriers, no cluster-wide barrier per round): lanes 0..cl-1 of warp 0
 * push the CTA's partial into slot [rank] of every peer's buffer; every warp
 * sums the cl slots with one butterfly. The parities alternate by round, and
 * round r+2 of a parity is safe because warp 0 pushes round r+1 only after a
 * point every thread of this CTA reaches only once it has read round r's
 * slots (the __syncthreads of round r+1 with more than one warp, the
 * shuffles of round r with one). The mbarriers are initialised, and made
 * visible to the cluster, once per kernel; the kernel ends with a relaxed
 * cluster barrier. */
#ifndef KB_NORM_TUNED_DEV_CUH
#define KB_NORM_TUNED_DEV_CUH

#include <cooperative_groups.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kb_cluster.cuh"
#include "kb_cuda.cuh"

namespace {
namespace cg = cooperative_groups;

/* This CTA's rank in its cluster, and a whole-cluster barrier. Clusters
 * exist from sm_90 on, and so does cg::this_cluster(); a build for an older
 * GPU (CMAKE_CUDA_ARCHITECTURES=80) compiles these to rank 0 and no
 * barrier. Nothing runs a cluster there: valid() asks the runtime whether a
 * cluster is schedulable (kb_active_clusters), which it is not below
 * sm_90, so only cluster = 1 configurations launch. */
__device__ __forceinline__ unsigned nt_cluster_rank()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cg::this_cluster().block_rank();
#else
    return 0;
#endif
}
__device__ __forceinline__ void nt_cluster_sync() { KB_SM90(cg::this_cluster().sync()); }

constexpr int kMaxCluster = KB_MAX_CLUSTER;

template <typename T> constexpr int vec_of() { return (int)(16 / sizeof(T)); }

/* ---- device helpers --------------------------------------------------------- */
/* How a kernel reaches a row's elements: one element per access (any
 * pointer), 128-bit packs (N % VEC == 0, 16-byte aligned pointers), or
 * 128-bit slots of a shifted row (aligned pointers, any N; below). */
enum { AM_ELEM = 0, AM_AL, AM_SHIFT };

/* A pack = VEC consecutive elements of a row (16 bytes), held in registers
 * as one raw uint4 (kb_cuda.cuh: half the registers of fp32 for 16-bit
 * types) and converted by kb_unpack / kb_pack when used. AL: the pack is
 * 16-byte aligned (one 128-bit access); otherwise element accesses, of
 * which only the first `valid` exist (the row's last pack may be partial).
 * STREAM: evict-first (.cs) accesses, else read-only-path loads and plain
 * write-back stores (the kernels' `hint`, docs/dev/kernels/norm-forward.md). */
template <typename T>
using bits_t = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;

template <typename T, bool AL, bool STREAM>
__device__ __forceinline__ uint4 ld_pack(const T *p, int valid)
{
    if constexpr (AL) {
        return STREAM ? kb_ld128_stream(p) : kb_ld128(p);
    } else {
        constexpr int VEC = vec_of<T>(), PER = 4 / sizeof(T);
        const bits_t<T> *q = reinterpret_cast<const bits_t<T> *>(p);
        uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int j = 0; j < VEC; j++)
            if (j < valid) {
                const uint32_t b = STREAM ? __ldcs(q + j) : __ldg(q + j);
                w[j / PER] |= b << (32 / PER * (j % PER));
            }
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
}

template <typename T, bool AL, bool STREAM = true>
__device__ __forceinline__ void st_pack(T *p, uint4 v, int valid)
{
    if constexpr (AL) {
        kb_st_op<STREAM>(reinterpret_cast<uint4 *>(p), v);
    } else {
        constexpr int VEC = vec_of<T>(), PER = 4 / sizeof(T);
        bits_t<T> *q = reinterpret_cast<bits_t<T> *>(p);
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < VEC; j++)
            if (j < valid) kb_st_op<STREAM>(q + j, (bits_t<T>)(w[j / PER] >> (32 / PER * (j % PER))));
    }
}

/* VEC fp32 weights of a pack. A pack starts at a multiple of VEC elements,
 * so w + start is 16-byte aligned whenever w is (always under AL, see the
 * launch checks; w16 otherwise); a partial pack is read element-wise. */
template <int VEC, bool AL>
__device__ __forceinline__ void ld_w(const float *p, int valid, bool w16, float (&o)[VEC])
{
    if (AL || (w16 && valid >= VEC)) {
#pragma unroll
        for (int q = 0; q < VEC / 4; q++) {
            const float4 f = __ldg(reinterpret_cast<const float4 *>(p) + q);
            o[4 * q] = f.x;
            o[4 * q + 1] = f.y;
            o[4 * q + 2] = f.z;
            o[4 * q + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; j++) o[j] = j < valid ? __ldg(p + j) : 0.f;
    }
}

/* ---- shifted slots (N % VEC != 0) -------------------------------------------
 * A row starting at flat index row*N sits sh = (row*N) % VEC elements past a
 * 16-byte boundary. Its slots are the aligned 16-byte runs from row*N - sh:
 * slot k holds columns k*VEC - sh + j, valid for j in [lo, hi) with
 * lo = sh - k*VEC, hi = lo + N. Loads and stores of x and y stay 128-bit
 * (the edge slots' neighbour elements are read, zeroed, and never written);
 * only w, small and L1-resident, is read at a per-row column shift. */

/* The slot at flat index f of a tensor of `total` elements: one 128-bit
 * load, or element loads where the tensor ends inside the slot. */
template <typename T, bool STREAM>
__device__ __forceinline__ uint4 ld_slot(const T *g, int64_t f, int64_t total)
{
    if (f + vec_of<T>() <= total) return ld_pack<T, true, STREAM>(g + f, vec_of<T>());
    return ld_pack<T, false, STREAM>(g + f, (int)(total - f));
}

/* Zero the elements of v outside [lo, hi). */
template <typename T> __device__ __forceinline__ uint4 mask_pack(uint4 v, int lo, int hi)
{
    constexpr int VEC = vec_of<T>(), PER = 4 / sizeof(T), BITS = 32 / PER;
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < VEC; j++)
        if (j < lo || j >= hi) w[j / PER] &= ~((0xffffffffu >> (32 - BITS)) << (BITS * (j % PER)));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* Store the elements [lo, hi) of a pack element by element (edge slots). */
template <typename T> __device__ __forceinline__ void st_range(T *p, uint4 v, int lo, int hi)
{
    constexpr int VEC = vec_of<T>(), PER = 4 / sizeof(T);
    bits_t<T> *q = reinterpret_cast<bits_t<T> *>(p);
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < VEC; j++)
        if (j >= lo && j < hi) __stcs(q + j, (bits_t<T>)(w[j / PER] >> (32 / PER * (j % PER))));
}

/* Weights of columns c0 .. c0+VEC-1 (0 outside [0, N)). Inside the row and
 * with an aligned w: VEC/4 + 1 aligned float4 loads from c0 rounded down to
 * a multiple of 4 and a select by c0 % 4 (uniform over a row); else one
 * load per element. */
template <int VEC>
__device__ __forceinline__ void ld_w_at(const float *w, int c0, int N, bool w16, float (&o)[VEC])
{
    const int r = c0 & 3, b = c0 - r;
    if (w16 && c0 >= 0 && b + VEC + 4 <= N) {
        float W[VEC + 4];
#pragma unroll
        for (int q = 0; q <= VEC / 4; q++) {
            const float4 f = __ldg(reinterpret_cast<const float4 *>(w + b) + q);
            W[4 * q] = f.x;
            W[4 * q + 1] = f.y;
            W[4 * q + 2] = f.z;
            W[4 * q + 3] = f.w;
        }
#pragma unroll
        for (int j = 0; j < VEC; j++)
            o[j] = r == 0 ? W[j] : r == 1 ? W[j + 1] : r == 2 ? W[j + 2] : W[j + 3];
    } else {
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            const int c = c0 + j;
            o[j] = c >= 0 && c < N ? __ldg(w + c) : 0.f;
        }
    }
}

__device__ __forceinline__ void pdl_wait()
{
    KB_SM90(asm volatile("griddepcontrol.wait;" ::: "memory"));
}

__device__ __forceinline__ void pdl_trigger()
{
    KB_SM90(asm volatile("griddepcontrol.launch_dependents;" ::: "memory"));
}

/* Sum over width lanes (a power of two), every lane the same bits; S float
 * or double. */
template <typename S> __device__ __forceinline__ S butterfly(S v, int width)
{
    for (int o = width >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* ---- row reduction ----------------------------------------------------------- */
/* Shared state of a reduction of V sums per row: cross-warp partials and,
 * with a cluster, the per-rank slots and their mbarriers, both per parity.
 * A double sum takes two words (V >= 2). */
template <int V> struct red_smem {
    float warp[2][32 * V];
    float slot[2][kMaxCluster * V];
    uint64_t bar[2];
};

/* Sum of v over the tpr threads of this row (and the cl CTAs of the
 * cluster); every participating thread receives the same bits. All threads
 * of the CTA (cluster) must construct it and call it the same number of
 * times; finish() before the kernel returns. A call sums K <= V floats, or
 * (sum_d) one value into a double. */
template <int V> struct row_reducer {
    red_smem<V> &sm;
    int tpr, cl, parity;
    unsigned phase; /* bit p: the phase of parity p to wait for */

    __device__ __forceinline__ row_reducer(red_smem<V> &s, int tpr_, int cl_)
        : sm(s), tpr(tpr_), cl(cl_), parity(0), phase(0)
    {
        if (cl > 1) {
            kb_cluster_init(sm.bar);
            nt_cluster_sync(); /* peers' mbarriers exist before any push */
        }
    }

    template <int K> __device__ __forceinline__ void operator()(float (&v)[K])
    {
        static_assert(K <= V, "more sums than red_smem holds");
#pragma unroll
        for (int k = 0; k < K; k++) v[k] = butterfly(v[k], tpr < 32 ? tpr : 32);
        const int lin = (int)(threadIdx.y * blockDim.x + threadIdx.x), lane = lin & 31;
        if (tpr > 32) {
            const int nw = tpr >> 5, first = (int)threadIdx.y * nw;
            float *b = sm.warp[parity];
            if (lane == 0)
#pragma unroll
                for (int k = 0; k < K; k++) b[(lin >> 5) * K + k] = v[k];
            __syncthreads();
#pragma unroll
            for (int k = 0; k < K; k++)
                v[k] = butterfly(lane < nw ? b[(first + lane) * K + k] : 0.f, 32);
        }
        if (cl > 1) {
            uint64_t *bar = &sm.bar[parity];
            float *slot = sm.slot[parity];
            if (lin < 32) {
                if (lin == 0) kb_cluster_expect<K>(bar, cl);
                if (lin < cl) {
                    const int rank = (int)nt_cluster_rank();
                    kb_cluster_push(bar, slot + rank * K, v, lin);
                }
            }
            kb_cluster_wait_round(bar, parity, phase);
#pragma unroll
            for (int k = 0; k < K; k++) v[k] = butterfly(lane < cl ? slot[lane * K + k] : 0.f, 32);
        }
        parity ^= 1;
    }

    /* One sum returned in double: within the warp in A (float or double),
     * across warps in double (in fp32 when the caller says cta_f32, i.e. fp32
     * is exact for what one CTA adds), across cluster ranks in double, whose
     * two words travel as two floats. LayerNorm's mean (norm_tuned_fwd.cuh
     * says when fp32 is exact). */
    template <typename A> __device__ __forceinline__ double sum_d(A v, bool cta_f32)
    {
        static_assert(V >= 2, "a double sum takes two words of red_smem");
        const A wsum = butterfly(v, tpr < 32 ? tpr : 32);
        double d = (double)wsum;
        const int lin = (int)(threadIdx.y * blockDim.x + threadIdx.x), lane = lin & 31;
        if (tpr > 32) {
            const int nw = tpr >> 5, first = (int)threadIdx.y * nw;
            /* The warps' partials in S (float or double) through shared memory. */
            auto across = [&](auto w) -> double {
                using S = decltype(w);
                S *b = reinterpret_cast<S *>(sm.warp[parity]);
                if (lane == 0) b[lin >> 5] = w;
                __syncthreads();
                return (double)butterfly(lane < nw ? b[first + lane] : S(0), 32);
            };
            /* the caller knows fp32 is exact here: half the shuffles */
            d = cta_f32 ? across((float)wsum) : across(d);
        }
        if (cl > 1) {
            uint64_t *bar = &sm.bar[parity];
            float *slot = sm.slot[parity];
            if (lin < 32) {
                if (lin == 0) kb_cluster_expect<2>(bar, cl);
                if (lin < cl) {
                    const int rank = (int)nt_cluster_rank();
                    const long long q = __double_as_longlong(d);
                    const float w[2] = {__int_as_float((int)q), __int_as_float((int)(q >> 32))};
                    kb_cluster_push(bar, slot + rank * 2, w, lin);
                }
            }
            kb_cluster_wait_round(bar, parity, phase);
            /* Over the next power of two of cl lanes only, every group of them
             * holding all cl partials: each lane still gets the same bits, in
             * fewer (double, so two-shuffle) levels than a full warp's five. */
            int wd = 1;
            while (wd < cl) wd <<= 1;
            const int r = lane & (wd - 1);
            d = butterfly(r < cl ? reinterpret_cast<const double *>(slot)[r] : 0.0, wd);
        }
        parity ^= 1;
        return d;
    }

    __device__ __forceinline__ void finish()
    {
        if (cl > 1) kb_cluster_exit_sync();
    }
};

/* This thread's packs in a row: pack i starts at element first + i*stride,
 * for i < mine; valid(i) >= VEC unless it is the row's final, partial pack. */
struct lane_map {
    int tpr, cl, first, stride, mine, N;
    __device__ __forceinline__ lane_map(int64_t N_, int vec, int cl_)
    {
        tpr = (int)blockDim.x;
        cl = cl_;
        N = (int)N_;
        const int rank = cl > 1 ? (int)nt_cluster_rank() : 0;
        const int G = tpr * cl, npk = (N + vec - 1) / vec, gt = rank * tpr + (int)threadIdx.x;
        first = gt * vec;
        stride = G * vec;
        mine = gt < npk ? (npk - 1 - gt) / G + 1 : 0;
    }
    __device__ __forceinline__ int at(int i) const { return first + i * stride; }
    __device__ __forceinline__ int valid(int i) const { return N - at(i); }
};

} /* namespace */
#endif
