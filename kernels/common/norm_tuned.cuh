/* Tuned RMSNorm / LayerNorm kernels, shared by kernels/rmsnorm/tuned.cu and
 * kernels/layernorm/tuned.cu (LN = true adds the centring: mean, mean(g)).
 * Each .cu file instantiates these templates for its op and defines its
 * kb_tune_space with the initialisers below.
 *
 * Search space (kb_tune_space parameters):
 *   threads  tpr, threads per row in a CTA (power of two, 1..1024)
 *   rows     R, rows per CTA side by side (blockDim = (tpr, R)); tpr*R is
 *            a multiple of 32 and at most 1024
 *   cluster  CL, CTAs sharing a row (sm_90 thread-block cluster, 1..16;
 *            16 is a non-portable size); CL > 1 needs R == 1
 *   occ      backward: CTAs per SM the persistent grid may use (capped by
 *            the occupancy calculator)
 *   acc      backward: dw accumulators in registers (0) or shared memory (1:
 *            fewer registers, more CTAs per SM)
 *   reload   0: row held in registers; 1: fallback re-reading the row (one
 *            CTA of `threads` per row, rows == cluster == 1)
 * NV, the 16-byte packs a thread holds per tensor, is derived, not tuned:
 * the smallest compiled value >= ceil(N / (tpr*CL*VEC)), VEC = 16/sizeof(T).
 * Compiled: forward 1,2,3,4,6,8,12,16; backward 1,2,3,4,6,8.
 *
 * Layout: a row is cut into packs of VEC elements; thread t of CTA rank r
 * owns packs i*(tpr*CL) + r*tpr + t, i < NV: a warp touches consecutive
 * 16-byte packs (coalesced) and a thread owns the same columns on every
 * row (the backward's dw accumulators rely on it). Packs sit in registers
 * raw (one uint4: half the registers of fp32 for 16-bit types) and are
 * converted to fp32 where used. AL (N % VEC == 0 and 16-byte aligned base
 * pointers): one 128-bit access per pack; otherwise element accesses, the
 * row's last pack partial (correct for any N, not tuned for speed).
 *
 * Row reductions, every thread ending with the same bits (so all CTAs of a
 * cluster agree on the statistics): butterfly shuffles over min(tpr, 32)
 * lanes; tpr > 32: warp sums through shared memory, __syncthreads, each warp
 * re-reduces; CL > 1: CTA sums through distributed shared memory
 * (cluster.sync(), map_shared_rank), each warp re-reduces in rank order.
 * Buffers alternate by round parity: one is rewritten two rounds later,
 * behind a barrier that every reader of its last use has passed. Cluster
 * kernels end with a (relaxed) cluster barrier: no CTA exits while peers
 * may read its shared memory. Each cluster.sync() costs a GPU-scope fence
 * (release) and an L1 invalidation (acquire): the backward therefore keeps
 * w in shared memory, and the forward has one row per CTA.
 *
 * Forward (fwd_reg): one CTA or cluster per group of R rows (grid-stride
 * only past 2^30 CTAs). x is read once (__ldcs) into registers; RMS: sum of
 * squares; LN: mean, then the centred sum of squares from registers (exact
 * two-pass); rstd = 1/sqrt(s/N + eps); y = (x - mean) * rstd * w streamed
 * out (__stcs), w (fp32) from 128-bit __ldg loads (L1/L2).
 *
 * Backward (bwd_reg + dw_reduce): persistent grid of S slots (CTAs, or
 * clusters), S = min(row groups, SMs x occupancy), each owning a contiguous
 * range of row groups; the thread's w slice is copied to shared memory once.
 * Per row: x and dy in registers, saved rstd (mean), one reduction round of
 * sum(g*xh) (and sum(g)), dx streamed out. dy*xh accumulates per owned
 * column in fp32 (registers or shared memory) over
 * the slot's rows; the R row slots of a CTA are then summed in order and
 * the slot writes its partial row ws[slot, :] (with a cluster, each CTA its
 * column slice). dw_reduce sums the S partials per column in a fixed order,
 * launched with programmatic dependent launch to hide its launch latency:
 * the same bits on every run, no atomics.
 *
 * Fallback (reload = 1, any N): forward re-reads the row per pass (RMS 2,
 * LN 3); backward: dx per row in two passes, dw by a column-tiled kernel
 * over 256-row chunks (x and dy read again), then dw_reduce.
 *
 * Limits: registers hold up to tpr*CL*NV*VEC elements (~786K forward at
 * CL=16 x 512 threads x NV=12; 262K-524K backward); valid() asks the
 * runtime that the block fits the kernel's registers, nothing spills
 * (localSizeBytes == 0) and the cluster is schedulable. Any M, N >= 1;
 * 64-bit row offsets; N < 2^30 in the register kernels. sm_90 only. */
#ifndef KB_NORM_TUNED_CUH
#define KB_NORM_TUNED_CUH

#include <cooperative_groups.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kb_cuda.cuh"
#include "tuner.h"

namespace {
namespace cg = cooperative_groups;

/* ---- parameters ------------------------------------------------------------ */
enum { P_THREADS = 0, P_ROWS, P_CLUSTER, P_FWD_RELOAD, P_BWD_OCC = 3, P_BWD_ACC, P_BWD_RELOAD };

#define NT_THREADS_CHOICES {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
#define NT_ROWS_CHOICES {1, 2, 4, 8, 16, 32, 64, 128}
#define NT_CLUSTER_CHOICES {1, 2, 4, 8, 16}
#define NT_OCC_CHOICES {1, 2, 3, 4, 6, 8, 12, 16, 32}

/* kb_tune_space initialisers for the .cu files. */
#define KB_NORM_FWD_SPACE(opname, ln)                                                    \
    {opname, 4, {"threads", "rows", "cluster", "reload"}, {11, 8, 5, 2},                  \
     {NT_THREADS_CHOICES, NT_ROWS_CHOICES, NT_CLUSTER_CHOICES, {0, 1}},                   \
     nt_heuristic<ln, false>, nt_fwd_valid<ln>, nullptr, nt_fwd_launch<ln>}
#define KB_NORM_BWD_SPACE(opname, ln)                                                    \
    {opname, 6, {"threads", "rows", "cluster", "occ", "acc", "reload"}, {11, 8, 5, 9, 2, 2}, \
     {NT_THREADS_CHOICES, NT_ROWS_CHOICES, NT_CLUSTER_CHOICES, NT_OCC_CHOICES, {0, 1}, {0, 1}}, \
     nt_heuristic<ln, true>, nt_bwd_valid<ln>, nt_bwd_workspace<ln>, nt_bwd_launch<ln>}

constexpr int kFwdNV[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kBwdNV[] = {1, 2, 3, 4, 6, 8};
constexpr int kMaxCluster = 16;
constexpr int kReduceRows = 16;  /* dw_reduce: slot strides per column tile */
constexpr int kColsRows = 256;   /* dw_cols (fallback): rows per partial    */

template <typename T> constexpr int vec_of() { return (int)(16 / sizeof(T)); }

/* ---- device helpers --------------------------------------------------------- */
/* A pack = VEC consecutive elements of a row (16 bytes), held in registers
 * as one raw uint4 (half the registers of fp32 for 16-bit types) and
 * converted when used. AL: the pack is 16-byte aligned (one 128-bit
 * access); otherwise element accesses, of which only the first `valid`
 * exist (the row's last pack may be partial). */
template <typename T>
using bits_t = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;

template <typename T, bool AL, bool STREAM>
__device__ __forceinline__ uint4 ld_pack(const T *p, int valid)
{
    if constexpr (AL) {
        const uint4 *q = reinterpret_cast<const uint4 *>(p);
        return STREAM ? __ldcs(q) : __ldg(q);
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

template <typename T, bool AL> __device__ __forceinline__ void st_pack(T *p, uint4 v, int valid)
{
    if constexpr (AL) {
        __stcs(reinterpret_cast<uint4 *>(p), v);
    } else {
        constexpr int VEC = vec_of<T>(), PER = 4 / sizeof(T);
        bits_t<T> *q = reinterpret_cast<bits_t<T> *>(p);
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < VEC; j++)
            if (j < valid) __stcs(q + j, (bits_t<T>)(w[j / PER] >> (32 / PER * (j % PER))));
    }
}

/* Two 16-bit values of one 32-bit word <-> fp32 (low half = lower address). */
template <typename T> __device__ __forceinline__ void unpack2(uint32_t u, float &lo, float &hi)
{
    if constexpr (std::is_same<T, kb_bf16>::value) {
        lo = __uint_as_float(u << 16);
        hi = __uint_as_float(u & 0xffff0000u);
    } else {
        __half2 h;
        memcpy(&h, &u, 4);
        const float2 f = __half22float2(h);
        lo = f.x;
        hi = f.y;
    }
}

template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
    uint32_t u;
    if constexpr (std::is_same<T, kb_bf16>::value) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        memcpy(&u, &h, 4);
    } else {
        const __half2 h = __floats2half2_rn(lo, hi);
        memcpy(&u, &h, 4);
    }
    return u;
}

template <typename T> __device__ __forceinline__ void unpack(uint4 r, float (&f)[vec_of<T>()])
{
    if constexpr (std::is_same<T, float>::value) {
        f[0] = __uint_as_float(r.x);
        f[1] = __uint_as_float(r.y);
        f[2] = __uint_as_float(r.z);
        f[3] = __uint_as_float(r.w);
    } else {
        unpack2<T>(r.x, f[0], f[1]);
        unpack2<T>(r.y, f[2], f[3]);
        unpack2<T>(r.z, f[4], f[5]);
        unpack2<T>(r.w, f[6], f[7]);
    }
}

template <typename T> __device__ __forceinline__ uint4 repack(const float (&f)[vec_of<T>()])
{
    if constexpr (std::is_same<T, float>::value)
        return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                          __float_as_uint(f[3]));
    else
        return make_uint4(pack2<T>(f[0], f[1]), pack2<T>(f[2], f[3]), pack2<T>(f[4], f[5]),
                          pack2<T>(f[6], f[7]));
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

__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Last barrier of a cluster kernel: no CTA may exit while peers can still
 * read its shared memory. Their reads were consumed before they arrive, so
 * a relaxed arrive suffices (a release one would first wait for all our
 * outstanding global stores). */
__device__ __forceinline__ void cluster_exit_sync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ float butterfly(float v, int width)
{
    for (int o = width >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Sum of v over the tpr threads of this row (and the CL CTAs of the
 * cluster); every participating thread receives the same bits. All threads
 * of the CTA (cluster) must call it the same number of times. wbuf holds
 * 2*32*V floats, cbuf 2*V, both __shared__. */
template <int V>
__device__ __forceinline__ void row_allreduce(float (&v)[V], int tpr, int cl, float *wbuf,
                                              float *cbuf, int &parity)
{
#pragma unroll
    for (int k = 0; k < V; k++) v[k] = butterfly(v[k], tpr < 32 ? tpr : 32);
    const int lin = (int)(threadIdx.y * blockDim.x + threadIdx.x), lane = lin & 31;
    if (tpr > 32) {
        const int nw = tpr >> 5, first = (int)threadIdx.y * nw;
        float *b = wbuf + parity * 32 * V;
        if (lane == 0)
#pragma unroll
            for (int k = 0; k < V; k++) b[(lin >> 5) * V + k] = v[k];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = butterfly(lane < nw ? b[(first + lane) * V + k] : 0.f, 32);
    }
    if (cl > 1) {
        cg::cluster_group cluster = cg::this_cluster();
        float *b = cbuf + parity * V;
        if (lin == 0)
#pragma unroll
            for (int k = 0; k < V; k++) b[k] = v[k];
        cluster.sync();
        const float *peer = cluster.map_shared_rank(b, lane < cl ? lane : 0);
#pragma unroll
        for (int k = 0; k < V; k++) v[k] = butterfly(lane < cl ? peer[k] : 0.f, 32);
    }
    parity ^= 1;
}

/* This thread's packs in a row: pack i starts at element first + i*stride,
 * for i < mine; valid(i) >= VEC unless it is the row's final, partial pack. */
struct lane_map {
    int tpr, cl, first, stride, mine, N;
    __device__ __forceinline__ lane_map(int64_t N_, int vec, int cl_)
    {
        tpr = (int)blockDim.x;
        cl = cl_;
        N = (int)N_;
        const int rank = cl > 1 ? (int)cg::this_cluster().block_rank() : 0;
        const int G = tpr * cl, npk = (N + vec - 1) / vec, gt = rank * tpr + (int)threadIdx.x;
        first = gt * vec;
        stride = G * vec;
        mine = gt < npk ? (npk - 1 - gt) / G + 1 : 0;
    }
    __device__ __forceinline__ int at(int i) const { return first + i * stride; }
    __device__ __forceinline__ int valid(int i) const { return N - at(i); }
};

/* ---- forward ------------------------------------------------------------------ */
struct fwd_args {
    const void *x;
    const float *w;
    void *y;
    int64_t M, N, ngroups; /* ngroups = ceil(M / R) (register kernel), M (fallback) */
    int cl;
};

template <typename T, bool LN, int NV, bool AL> __global__ void fwd_reg(const fwd_args a)
{
    constexpr int VEC = vec_of<T>();
    __shared__ float wbuf[2 * 32], cbuf[2];
    const lane_map lm(a.N, VEC, a.cl);
    const float n = (float)a.N;
    const float *wb = a.w + lm.first;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    int parity = 0;
    for (int64_t g = blockIdx.x / lm.cl; g < a.ngroups; g += gridDim.x / lm.cl) {
        const int64_t row = g * blockDim.y + threadIdx.y;
        const int cnt = row < a.M ? lm.mine : 0;
        const int64_t off = (row < a.M ? row : 0) * a.N + lm.first;
        const T *xb = static_cast<const T *>(a.x) + off;
        uint4 xv[NV];
#pragma unroll
        for (int i = 0; i < NV; i++)
            xv[i] = i < cnt ? ld_pack<T, AL, true>(xb + i * lm.stride, lm.valid(i))
                            : make_uint4(0u, 0u, 0u, 0u);
        float mean = 0.f, s[1] = {0.f}, f[VEC];
        if constexpr (LN) {
#pragma unroll
            for (int i = 0; i < NV; i++) {
                unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j];
            }
            row_allreduce<1>(s, lm.tpr, lm.cl, wbuf, cbuf, parity);
            mean = s[0] / n;
            s[0] = 0.f;
#pragma unroll
            for (int i = 0; i < NV; i++)
                if (i < cnt) {
                    unpack<T>(xv[i], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        if (AL || j < lm.valid(i)) s[0] += (f[j] - mean) * (f[j] - mean);
                }
        } else {
#pragma unroll
            for (int i = 0; i < NV; i++) {
                unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j] * f[j];
            }
        }
        row_allreduce<1>(s, lm.tpr, lm.cl, wbuf, cbuf, parity);
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
        T *yb = static_cast<T *>(a.y) + off;
#pragma unroll
        for (int i = 0; i < NV; i++)
            if (i < cnt) {
                float wv[VEC];
                unpack<T>(xv[i], f);
                ld_w<VEC, AL>(wb + i * lm.stride, lm.valid(i), w16, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
                st_pack<T, AL>(yb + i * lm.stride, repack<T>(f), lm.valid(i));
            }
    }
    if (lm.cl > 1) cluster_exit_sync();
}

/* Fallback: one CTA per row, the row re-read per pass (L2 for rows that fit). */
template <typename T, bool LN, bool AL> __global__ void fwd_loop(const fwd_args a)
{
    constexpr int VEC = vec_of<T>();
    __shared__ float wbuf[2 * 32], cbuf[2];
    const int tpr = (int)blockDim.x;
    const float n = (float)a.N;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < a.M; row += gridDim.x) {
        const T *xr = static_cast<const T *>(a.x) + row * a.N;
        float mean = 0.f, s[1] = {0.f}, f[VEC];
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
#pragma unroll
            for (int j = 0; j < VEC; j++) s[0] += LN ? f[j] : f[j] * f[j];
        }
        row_allreduce<1>(s, tpr, 1, wbuf, cbuf, parity);
        if constexpr (LN) {
            mean = s[0] / n;
            s[0] = 0.f;
            for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
                const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
                unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (j < valid) s[0] += (f[j] - mean) * (f[j] - mean);
            }
            row_allreduce<1>(s, tpr, 1, wbuf, cbuf, parity);
        }
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
        T *yr = static_cast<T *>(a.y) + row * a.N;
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            float wv[VEC];
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
            ld_w<VEC, AL>(a.w + e, valid, w16, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
            st_pack<T, AL>(yr + e, repack<T>(f), valid);
        }
    }
}

/* ---- backward ------------------------------------------------------------------ */
struct bwd_args {
    const void *x, *dy;
    const float *w, *mean, *rstd;
    void *dx;
    float *ws;
    int64_t M, N, ngroups, nslots;
    int cl;
};

/* xh = (x - mean) * rstd; dx = rstd * (g - mean(g) - xh * mean(g*xh)). */
template <bool LN> struct bwd_math {
    float mu, rs;
    __device__ __forceinline__ bwd_math(const bwd_args &a, int64_t row, bool ok)
    {
        rs = ok ? __ldg(a.rstd + row) : 0.f; /* rows past M: zeros everywhere */
        mu = 0.f;
        if constexpr (LN) mu = ok ? __ldg(a.mean + row) : 0.f;
    }
    __device__ __forceinline__ float xh(float x) const { return (x - mu) * rs; }
    __device__ __forceinline__ float dx(float x, float d, float w, float mg, float mgx) const
    {
        return rs * (d * w - mg - xh(x) * mgx);
    }
};

/* SACC: the dw accumulators live in shared memory (float4 planes, one per
 * (row slot, pack, quarter), conflict-free) instead of registers: fewer
 * registers, more CTAs per SM, at one shared read-modify-write per pack and
 * row. Otherwise they are registers and, with R > 1, shared memory (N
 * floats) only serves the final in-order sum over the row slots.
 * The thread's w slice is copied to shared memory once (w is read twice per
 * row): with a cluster, each barrier's acquire invalidates L1 and would send
 * every w read to L2; without, it frees registers and L1 for the streams. */
template <typename T, bool LN, int NV, bool AL, bool SACC>
__global__ void bwd_reg(const bwd_args a)
{
    constexpr int VEC = vec_of<T>(), Q = VEC / 4;
    constexpr int V = LN ? 2 : 1;
    extern __shared__ float4 dyn[];
    __shared__ float wbuf[2 * 32 * V], cbuf[2 * V];
    pdl_trigger(); /* dw_reduce may be scheduled; it waits for our completion */
    const lane_map lm(a.N, VEC, a.cl);
    const float n = (float)a.N;
    const float *wb = a.w + lm.first;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    const int64_t slot = blockIdx.x / lm.cl;
    const int64_t g0 = slot * a.ngroups / a.nslots, g1 = (slot + 1) * a.ngroups / a.nslots;
    const int R = (int)blockDim.y;
    /* float4 index of quarter q of pack i of row slot r, this thread */
    auto su = [&](int r, int i, int q) {
        return ((r * NV + i) * Q + q) * lm.tpr + (int)threadIdx.x;
    };
    /* The thread's w slice, in shared memory after the accumulators; the R
     * row slots share it (row slot 0 fills it). */
    float4 *wsm = dyn + (SACC ? R * NV * Q * lm.tpr : 0);
    int parity = 0;
    float acc[SACC ? 1 : NV][VEC];
#pragma unroll
    for (int i = 0; i < NV; i++) {
#pragma unroll
        for (int q = 0; q < Q; q++) {
            if constexpr (SACC) dyn[su(threadIdx.y, i, q)] = make_float4(0.f, 0.f, 0.f, 0.f);
            else
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][4 * q + j] = 0.f;
        }
        if (threadIdx.y == 0) {
            float wv[VEC];
#pragma unroll
            for (int j = 0; j < VEC; j++) wv[j] = 0.f;
            if (i < lm.mine) ld_w<VEC, AL>(wb + i * lm.stride, lm.valid(i), w16, wv);
#pragma unroll
            for (int q = 0; q < Q; q++)
                wsm[su(0, i, q)] =
                    make_float4(wv[4 * q], wv[4 * q + 1], wv[4 * q + 2], wv[4 * q + 3]);
        }
    }
    if (R > 1) __syncthreads();
    auto get_w = [&](int i, float(&wv)[VEC]) {
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const float4 t = wsm[su(0, i, q)];
            wv[4 * q] = t.x;
            wv[4 * q + 1] = t.y;
            wv[4 * q + 2] = t.z;
            wv[4 * q + 3] = t.w;
        }
    };

    for (int64_t g = g0; g < g1; g++) {
        const int64_t row = g * R + threadIdx.y;
        const bool ok = row < a.M;
        const int cnt = ok ? lm.mine : 0;
        const int64_t off = (ok ? row : 0) * a.N + lm.first;
        const T *xb = static_cast<const T *>(a.x) + off, *db = static_cast<const T *>(a.dy) + off;
        uint4 xv[NV], dv[NV];
#pragma unroll
        for (int i = 0; i < NV; i++) {
            xv[i] = dv[i] = make_uint4(0u, 0u, 0u, 0u);
            if (i < cnt) {
                xv[i] = ld_pack<T, AL, true>(xb + i * lm.stride, lm.valid(i));
                dv[i] = ld_pack<T, AL, true>(db + i * lm.stride, lm.valid(i));
            }
        }
        const bwd_math<LN> m(a, row, ok);
        float s[V], xf[VEC], df[VEC], wv[VEC];
#pragma unroll
        for (int k = 0; k < V; k++) s[k] = 0.f;
#pragma unroll
        for (int i = 0; i < NV; i++)
            if (i < cnt) {
                unpack<T>(xv[i], xf);
                unpack<T>(dv[i], df);
                get_w(i, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    const float xh = m.xh(xf[j]), gv = df[j] * wv[j];
                    s[0] += gv * xh;
                    if constexpr (LN) s[1] += gv;
                    xf[j] = df[j] * xh; /* dw contribution */
                }
#pragma unroll
                for (int q = 0; q < Q; q++) {
                    if constexpr (SACC) {
                        float4 &t = dyn[su(threadIdx.y, i, q)];
                        t = make_float4(t.x + xf[4 * q], t.y + xf[4 * q + 1], t.z + xf[4 * q + 2],
                                        t.w + xf[4 * q + 3]);
                    } else {
#pragma unroll
                        for (int j = 0; j < 4; j++) acc[i][4 * q + j] += xf[4 * q + j];
                    }
                }
            }
        row_allreduce<V>(s, lm.tpr, lm.cl, wbuf, cbuf, parity);
        const float mgx = s[0] / n, mg = LN ? s[V - 1] / n : 0.f;
        T *ob = static_cast<T *>(a.dx) + off;
#pragma unroll
        for (int i = 0; i < NV; i++)
            if (i < cnt) {
                unpack<T>(xv[i], xf);
                unpack<T>(dv[i], df);
                get_w(i, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) xf[j] = m.dx(xf[j], df[j], wv[j], mg, mgx);
                st_pack<T, AL>(ob + i * lm.stride, repack<T>(xf), lm.valid(i));
            }
    }

    /* The slot's partial row: the R row slots summed in slot order. */
    float *ws = a.ws + slot * a.N;
    if constexpr (SACC) {
        if (R > 1) __syncthreads();
        if (threadIdx.y == 0)
#pragma unroll
            for (int i = 0; i < NV; i++)
                if (i < lm.mine) {
                    float v[VEC];
#pragma unroll
                    for (int q = 0; q < Q; q++) {
                        float4 t = dyn[su(0, i, q)];
                        for (int r = 1; r < R; r++) {
                            const float4 u = dyn[su(r, i, q)];
                            t = make_float4(t.x + u.x, t.y + u.y, t.z + u.z, t.w + u.w);
                        }
                        v[4 * q] = t.x;
                        v[4 * q + 1] = t.y;
                        v[4 * q + 2] = t.z;
                        v[4 * q + 3] = t.w;
                    }
                    float *d = ws + lm.at(i);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        if (AL || j < lm.valid(i)) d[j] = v[j];
                }
    } else {
        /* comb overlays the w slice: wait until every row slot is done with it */
        if (R > 1) __syncthreads();
        float *comb = reinterpret_cast<float *>(dyn), *dst = R == 1 ? ws : comb;
        for (int r = 0; r < R; r++) {
            if ((int)threadIdx.y == r)
#pragma unroll
                for (int i = 0; i < NV; i++)
                    if (i < lm.mine) {
                        float *d = dst + lm.at(i);
#pragma unroll
                        for (int j = 0; j < VEC; j++)
                            if (AL || j < lm.valid(i)) d[j] = r == 0 ? acc[i][j] : d[j] + acc[i][j];
                    }
            if (R > 1) __syncthreads();
        }
        if (R > 1)
            for (int c = (int)(threadIdx.y * blockDim.x + threadIdx.x); c < lm.N; c += R * lm.tpr)
                ws[c] = comb[c];
    }
    if (lm.cl > 1) cluster_exit_sync();
}

/* Fallback dx: one CTA per row, pass 1 reduces, pass 2 re-reads and writes. */
template <typename T, bool LN, bool AL> __global__ void bwd_dx_loop(const bwd_args a)
{
    constexpr int VEC = vec_of<T>();
    constexpr int V = LN ? 2 : 1;
    __shared__ float wbuf[2 * 32 * V], cbuf[2 * V];
    const int tpr = (int)blockDim.x;
    const float n = (float)a.N;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < a.M; row += gridDim.x) {
        const T *xr = static_cast<const T *>(a.x) + row * a.N;
        const T *dr = static_cast<const T *>(a.dy) + row * a.N;
        const bwd_math<LN> m(a, row, true);
        float s[V], xf[VEC], df[VEC], wv[VEC];
#pragma unroll
        for (int k = 0; k < V; k++) s[k] = 0.f;
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), xf);
            unpack<T>(ld_pack<T, AL, false>(dr + e, valid), df);
            ld_w<VEC, AL>(a.w + e, valid, w16, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const float xh = m.xh(xf[j]), gv = df[j] * wv[j];
                s[0] += gv * xh;
                if constexpr (LN) s[1] += gv;
            }
        }
        row_allreduce<V>(s, tpr, 1, wbuf, cbuf, parity);
        const float mgx = s[0] / n, mg = LN ? s[V - 1] / n : 0.f;
        T *ob = static_cast<T *>(a.dx) + row * a.N;
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), xf);
            unpack<T>(ld_pack<T, AL, false>(dr + e, valid), df);
            ld_w<VEC, AL>(a.w + e, valid, w16, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) xf[j] = m.dx(xf[j], df[j], wv[j], mg, mgx);
            st_pack<T, AL>(ob + e, repack<T>(xf), valid);
        }
    }
}

/* Fallback dw partials: thread = column, blockIdx.y = chunk of rps rows;
 * consecutive threads read consecutive columns of a row (coalesced). */
template <typename T, bool LN> __global__ void dw_cols(const bwd_args a, int64_t rps)
{
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= a.N) return;
    const int64_t r0 = (int64_t)blockIdx.y * rps, r1 = r0 + rps < a.M ? r0 + rps : a.M;
    const T *x = static_cast<const T *>(a.x), *dy = static_cast<const T *>(a.dy);
    float acc = 0.f;
    for (int64_t r = r0; r < r1; r++) {
        const bwd_math<LN> m(a, r, true);
        acc += kb_to_float(__ldg(dy + r * a.N + col)) * m.xh(kb_to_float(__ldg(x + r * a.N + col)));
    }
    a.ws[(int64_t)blockIdx.y * a.N + col] = acc;
}

/* dw[c] = sum over slots of ws[slot, c], in a fixed order: thread (x, y)
 * sums slots y, y+16, ... of column c, then row y == 0 adds the 16 in order. */
__global__ void dw_reduce(const float *ws, int64_t nslots, int64_t N, float *dw)
{
    __shared__ float part[kReduceRows][33];
    pdl_wait(); /* the partials come from the kernel launched before us */
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float s = 0.f;
    if (col < N)
        for (int64_t k = threadIdx.y; k < nslots; k += kReduceRows) s += ws[k * N + col];
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float t = 0.f;
#pragma unroll
        for (int k = 0; k < kReduceRows; k++) t += part[k][threadIdx.x];
        dw[col] = t;
    }
}

/* ---- kernel tables ------------------------------------------------------------------ */
typedef void (*fwd_fn)(const fwd_args);
typedef void (*bwd_fn)(const bwd_args);

template <typename T, bool LN, bool AL> fwd_fn fwd_reg_for(int nv)
{
    switch (nv) {
    case 1: return fwd_reg<T, LN, 1, AL>;
    case 2: return fwd_reg<T, LN, 2, AL>;
    case 3: return fwd_reg<T, LN, 3, AL>;
    case 4: return fwd_reg<T, LN, 4, AL>;
    case 6: return fwd_reg<T, LN, 6, AL>;
    case 8: return fwd_reg<T, LN, 8, AL>;
    case 12: return fwd_reg<T, LN, 12, AL>;
    case 16: return fwd_reg<T, LN, 16, AL>;
    default: return nullptr;
    }
}

template <typename T, bool LN, bool AL, bool SACC> bwd_fn bwd_reg_for(int nv)
{
    switch (nv) {
    case 1: return bwd_reg<T, LN, 1, AL, SACC>;
    case 2: return bwd_reg<T, LN, 2, AL, SACC>;
    case 3: return bwd_reg<T, LN, 3, AL, SACC>;
    case 4: return bwd_reg<T, LN, 4, AL, SACC>;
    case 6: return bwd_reg<T, LN, 6, AL, SACC>;
    case 8: return bwd_reg<T, LN, 8, AL, SACC>;
    default: return nullptr;
    }
}

template <bool LN> fwd_fn fwd_reg_kernel(kb_dtype d, int nv, bool vec)
{
    fwd_fn f = nullptr;
    KB_DISPATCH(d, T, {
        f = vec ? fwd_reg_for<T, LN, true>(nv) : fwd_reg_for<T, LN, false>(nv);
    });
    return f;
}

template <bool LN> bwd_fn bwd_reg_kernel(kb_dtype d, int nv, bool vec, bool sacc)
{
    bwd_fn f = nullptr;
    KB_DISPATCH(d, T, {
        if (vec)
            f = sacc ? bwd_reg_for<T, LN, true, true>(nv) : bwd_reg_for<T, LN, true, false>(nv);
        else
            f = sacc ? bwd_reg_for<T, LN, false, true>(nv) : bwd_reg_for<T, LN, false, false>(nv);
    });
    return f;
}

template <bool LN> fwd_fn fwd_loop_kernel(kb_dtype d, bool vec)
{
    fwd_fn f = nullptr;
    KB_DISPATCH(d, T, { f = vec ? fwd_loop<T, LN, true> : fwd_loop<T, LN, false>; });
    return f;
}

template <bool LN> bwd_fn bwd_dx_loop_kernel(kb_dtype d, bool vec)
{
    bwd_fn f = nullptr;
    KB_DISPATCH(d, T, { f = vec ? bwd_dx_loop<T, LN, true> : bwd_dx_loop<T, LN, false>; });
    return f;
}

/* ---- host helpers ---------------------------------------------------------------- */
inline int nt_vec(kb_dtype d) { return d == KB_FP32 ? 4 : 8; }

inline int64_t nt_pow2ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

/* Smallest instantiated NV holding ceil(N / (tpr*cl)) elements; 0 if none. */
inline int nt_pick_nv(int64_t N, int tpr, int cl, int vec, bool bwd)
{
    const int64_t need = kb_cdiv(kb_cdiv(N, (int64_t)tpr * cl), vec);
    const int *list = bwd ? kBwdNV : kFwdNV;
    const int cnt = bwd ? (int)(sizeof kBwdNV / sizeof kBwdNV[0])
                        : (int)(sizeof kFwdNV / sizeof kFwdNV[0]);
    for (int i = 0; i < cnt; i++)
        if (list[i] >= need) return list[i];
    return 0;
}

/* 128-bit packs need N % VEC == 0 and 16-byte aligned base pointers. */
inline bool nt_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Block shape that makes sense for the row-in-registers kernels. */
inline bool nt_shape_ok(const kb_problem *p, int tpr, int rows, int cl)
{
    const int block = tpr * rows;
    if (tpr < 1 || rows < 1 || cl < 1 || cl > kMaxCluster) return false;
    if (block > 1024 || block % 32 != 0) return false;
    if (cl > 1 && rows != 1) return false;
    /* Threads of a row beyond its vector count would only idle. */
    if ((int64_t)tpr * cl > nt_pow2ceil(kb_cdiv(p->N, nt_vec(p->dtype)))) return false;
    if (p->N > INT32_MAX / 2) return false;
    return true;
}

/* The runtime's view of the compiled kernel: block within its register
 * budget, no local memory (spills), shared memory within the opt-in limit.
 * A failed query clears the error so it cannot surface at a later launch. */
inline bool nt_kernel_fits(const void *fn, int block, size_t dyn_smem, size_t smem_optin)
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    if (fa.maxThreadsPerBlock < block || fa.localSizeBytes > 0) return false;
    if (smem_optin && fa.sharedSizeBytes + dyn_smem > smem_optin) return false;
    return true;
}

inline cudaError_t nt_prepare(const void *fn, int cl, size_t dyn_smem)
{
    cudaError_t rc = cudaSuccess;
    if (cl > 8) rc = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (rc == cudaSuccess && dyn_smem > 48 * 1024)
        rc = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn_smem);
    return rc;
}

/* Clusters of cl CTAs of this block that can be co-resident (0: none). */
inline int nt_active_clusters(const void *fn, dim3 block, size_t dyn_smem, int cl)
{
    if (nt_prepare(fn, cl, dyn_smem) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)cl);
    lc.blockDim = block;
    lc.dynamicSmemBytes = dyn_smem;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)cl;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, fn, &lc) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

inline const char *nt_op(bool bwd, bool ln)
{
    return ln ? (bwd ? "layernorm_backward" : "layernorm_forward")
              : (bwd ? "rmsnorm_backward" : "rmsnorm_forward");
}

#define NT_CUDA(e, p, what, call)                                                          \
    do {                                                                                   \
        cudaError_t nt_rc_ = (call);                                                       \
        if (nt_rc_ != cudaSuccess)                                                         \
            return KB_FAIL((e), KB_ERR_CUDA, "tuned %s %s %lldx%lld: %s: %s", (what),      \
                           kb_dtype_name((p)->dtype), (long long)(p)->M, (long long)(p)->N, \
                           #call, cudaGetErrorString(nt_rc_));                             \
    } while (0)

/* Every message names the backend, benchmark, dtype and shape. */
#define NT_FAIL(e, st, p, what, fmt, ...)                                                   \
    KB_FAIL((e), (st), "tuned %s %s %lldx%lld: " fmt, (what), kb_dtype_name((p)->dtype),    \
            (long long)(p)->M, (long long)(p)->N, __VA_ARGS__)

template <typename... Params, typename... Args>
kb_status nt_launch(const kb_problem *p, const char *what, kb_err *e, void (*fn)(Params...),
                    dim3 grid, dim3 block, size_t smem, int cl, bool pdl, cudaStream_t s,
                    const Args &...args)
{
    NT_CUDA(e, p, what, nt_prepare(reinterpret_cast<const void *>(fn), cl, smem));
    cudaLaunchConfig_t lc = {};
    lc.gridDim = grid;
    lc.blockDim = block;
    lc.dynamicSmemBytes = smem;
    lc.stream = s;
    cudaLaunchAttribute at[2];
    unsigned na = 0;
    if (cl > 1) {
        at[na].id = cudaLaunchAttributeClusterDimension;
        at[na].val.clusterDim.x = (unsigned)cl;
        at[na].val.clusterDim.y = 1;
        at[na].val.clusterDim.z = 1;
        na++;
    }
    if (pdl) {
        at[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[na].val.programmaticStreamSerializationAllowed = 1;
        na++;
    }
    lc.attrs = at;
    lc.numAttrs = na;
    NT_CUDA(e, p, what, cudaLaunchKernelEx(&lc, fn, args...));
    NT_CUDA(e, p, what, cudaGetLastError());
    return KB_OK;
}

inline unsigned nt_grid(int64_t groups, int cl)
{
    const int64_t cap = ((int64_t)1 << 30) / cl; /* grid-stride beyond */
    return (unsigned)((groups < cap ? groups : cap) * cl);
}

/* Threads per row and cluster for about nvt vectors per thread: whole rows
 * per CTA up to `longt` threads, clusters of `longt`-thread CTAs beyond. */
inline bool nt_shape_for(const kb_problem *p, int nvt, int longt, int *tpr, int *rows, int *cl)
{
    const int64_t total = nt_pow2ceil(kb_cdiv(kb_cdiv(p->N, nt_vec(p->dtype)), nvt));
    if (total <= longt) {
        *tpr = (int)total;
        *cl = 1;
        const int r = 256 / *tpr;
        *rows = r < 1 ? 1 : r > 128 ? 128 : r;
        return true;
    }
    if (total / longt > kMaxCluster) return false;
    *tpr = longt;
    *rows = 1;
    *cl = (int)(total / longt);
    return true;
}

template <bool LN> int nt_fwd_valid(const kb_problem *, const kb_setup_ctx *, const kb_tune_cfg *);
template <bool LN> int nt_bwd_valid(const kb_problem *, const kb_setup_ctx *, const kb_tune_cfg *);

/* The first valid of: about 8 packs per thread forward (the most bytes in
 * flight per SM for its registers), 4 backward (more warps to overlap the
 * per-row phases of the persistent loop), then the other sizes; whole rows
 * per CTA of up to 512/256/1024 threads (backward 256/512/1024), clusters
 * beyond; backward dw accumulators in shared memory, else in registers;
 * failing all, the reload fallback. */
template <bool LN, bool BWD>
void nt_heuristic(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    static const int fwd_nvt[] = {8, 4, 16}, bwd_nvt[] = {4, 8, 16};
    static const int fwd_long[] = {512, 256, 1024}, bwd_long[] = {256, 512, 1024};
    const int *nvts = BWD ? bwd_nvt : fwd_nvt, *longs = BWD ? bwd_long : fwd_long;
    kb_tune_cfg c = {};
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < 3; k++)
            for (int acc = 1; acc >= (BWD ? 0 : 1); acc--) {
                int tpr, rows, cl;
                if ((BWD && nvts[m] > 8) || !nt_shape_for(p, nvts[m], longs[k], &tpr, &rows, &cl))
                    continue;
                c.v[P_THREADS] = tpr;
                c.v[P_ROWS] = rows;
                c.v[P_CLUSTER] = cl;
                if (BWD) {
                    c.v[P_BWD_OCC] = 32;
                    c.v[P_BWD_ACC] = acc;
                    c.v[P_BWD_RELOAD] = 0;
                } else {
                    c.v[P_FWD_RELOAD] = 0;
                }
                if (BWD ? nt_bwd_valid<LN>(p, ctx, &c) : nt_fwd_valid<LN>(p, ctx, &c)) {
                    *out = c;
                    return;
                }
            }
    c.v[P_THREADS] = 512;
    c.v[P_ROWS] = c.v[P_CLUSTER] = 1;
    if (BWD) {
        c.v[P_BWD_OCC] = 32;
        c.v[P_BWD_ACC] = 0;
    }
    c.v[BWD ? P_BWD_RELOAD : P_FWD_RELOAD] = 1;
    *out = c;
}

/* ---- forward: valid / launch ------------------------------------------------ */
template <bool LN>
int nt_fwd_valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const size_t optin = ctx ? ctx->smem_optin : 0;
    if (p->M < 1 || p->N < 1) return 0;
    if (c->v[P_FWD_RELOAD])
        return tpr >= 32 && tpr <= 1024 && rows == 1 && cl == 1;
    if (!nt_shape_ok(p, tpr, rows, cl)) return 0;
    const int nv = nt_pick_nv(p->N, tpr, cl, nt_vec(p->dtype), false);
    if (!nv) return 0;
    const void *fn = reinterpret_cast<const void *>(
        fwd_reg_kernel<LN>(p->dtype, nv, p->N % nt_vec(p->dtype) == 0));
    if (!fn || !nt_kernel_fits(fn, tpr * rows, 0, optin)) return 0;
    if (cl > 1 && nt_active_clusters(fn, dim3((unsigned)tpr, 1), 0, cl) < 1) return 0;
    return 1;
}

template <bool LN>
kb_status nt_fwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e)
{
    const char *what = nt_op(false, LN);
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const int vec = nt_vec(p->dtype);
    if (!t->x || !t->w || !t->out)
        return NT_FAIL(e, KB_ERR_ARG, p, what, "%s", "x, w and out are required");
    const bool v16 = p->N % vec == 0 && nt_aligned(t->x) && nt_aligned(t->w) && nt_aligned(t->out);
    fwd_args a = {t->x, t->w, t->out, p->M, p->N, p->M, 1};
    if (c->v[P_FWD_RELOAD]) {
        if (tpr < 32 || tpr > 1024 || tpr % 32)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "reload needs 32..1024 threads, not %d", tpr);
        return nt_launch(p, what, e, fwd_loop_kernel<LN>(p->dtype, v16), dim3(nt_grid(p->M, 1)),
                         dim3((unsigned)tpr), 0, 1, false, s, a);
    }
    const int nv = nt_pick_nv(p->N, tpr, cl, vec, false);
    const fwd_fn fn = nv && nt_shape_ok(p, tpr, rows, cl) ? fwd_reg_kernel<LN>(p->dtype, nv, v16)
                                                          : nullptr;
    if (!fn)
        return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                       "threads=%d rows=%d cluster=%d cannot hold the row", tpr, rows, cl);
    a.ngroups = kb_cdiv(p->M, rows);
    a.cl = cl;
    return nt_launch(p, what, e, fn, dim3(nt_grid(a.ngroups, cl)),
                     dim3((unsigned)tpr, (unsigned)rows), 0, cl, false, s, a);
}

/* ---- backward: valid / workspace / launch ---------------------------------- */
/* Dynamic shared memory of bwd_reg: the dw accumulators (acc=1) or the
 * row-slot sum (acc=0, R > 1), plus the w slice with a cluster. */
inline size_t nt_bwd_smem(const kb_problem *p, const kb_tune_cfg *c, int nv)
{
    const size_t slice = (size_t)nv * nt_vec(p->dtype) * c->v[P_THREADS] * sizeof(float);
    if (c->v[P_BWD_ACC]) return (c->v[P_ROWS] + 1) * slice;
    const size_t comb = c->v[P_ROWS] > 1 ? (size_t)p->N * sizeof(float) : 0;
    return comb > slice ? comb : slice;
}

/* Fallback dw: partial rows of kColsRows rows, more per chunk past grid.y's limit. */
inline int64_t nt_cols_rps(int64_t M)
{
    const int64_t r = kb_cdiv(M, 65535);
    return r > kColsRows ? r : kColsRows;
}

template <bool LN>
int nt_bwd_valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const size_t optin = ctx ? ctx->smem_optin : 0;
    if (p->M < 1 || p->N < 1 || c->v[P_BWD_OCC] < 1) return 0;
    if (c->v[P_BWD_RELOAD])
        return tpr >= 32 && tpr <= 1024 && rows == 1 && cl == 1;
    if (!nt_shape_ok(p, tpr, rows, cl)) return 0;
    const int nv = nt_pick_nv(p->N, tpr, cl, nt_vec(p->dtype), true);
    if (!nv) return 0;
    const size_t smem = nt_bwd_smem(p, c, nv);
    const void *fn = reinterpret_cast<const void *>(
        bwd_reg_kernel<LN>(p->dtype, nv, p->N % nt_vec(p->dtype) == 0, c->v[P_BWD_ACC]));
    if (!fn || !nt_kernel_fits(fn, tpr * rows, smem, optin)) return 0;
    if (cl > 1 && nt_active_clusters(fn, dim3((unsigned)tpr, 1), smem, cl) < 1) return 0;
    return 1;
}

/* Upper bound of the persistent grid's slots, from hardware limits alone
 * (2048 threads and 32 CTAs per SM), so it needs no device query. */
inline int64_t nt_bwd_slots_bound(const kb_problem *p, int sms, const kb_tune_cfg *c)
{
    const int block = c->v[P_THREADS] * c->v[P_ROWS], cl = c->v[P_CLUSTER];
    int per_sm = 2048 / block;
    if (per_sm > 32) per_sm = 32;
    if (per_sm > c->v[P_BWD_OCC]) per_sm = c->v[P_BWD_OCC];
    if (per_sm < 1) per_sm = 1;
    int64_t slots = (int64_t)sms * per_sm / cl;
    if (slots < 1) slots = 1;
    const int64_t groups = kb_cdiv(p->M, c->v[P_ROWS]);
    return slots < groups ? slots : groups;
}

template <bool LN>
size_t nt_bwd_workspace(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    if (c->v[P_BWD_RELOAD])
        return (size_t)kb_cdiv(p->M, nt_cols_rps(p->M)) * (size_t)p->N * sizeof(float);
    const int sms = ctx && ctx->sm_count > 0 ? ctx->sm_count : 256;
    return (size_t)nt_bwd_slots_bound(p, sms, c) * (size_t)p->N * sizeof(float);
}

template <bool LN>
kb_status nt_bwd_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e)
{
    const char *what = nt_op(true, LN);
    const int tpr = c->v[P_THREADS], rows = c->v[P_ROWS], cl = c->v[P_CLUSTER];
    const int vec = nt_vec(p->dtype);
    if (!t->x || !t->dy || !t->w || !t->rstd || !t->out || !t->dw || (LN && !t->mean))
        return NT_FAIL(e, KB_ERR_ARG, p, what, "x, dy, w, rstd%s, out and dw are required",
                       LN ? ", mean" : "");
    const bool v16 = p->N % vec == 0 && nt_aligned(t->x) && nt_aligned(t->dy) &&
                     nt_aligned(t->w) && nt_aligned(t->out);
    const size_t row_bytes = (size_t)p->N * sizeof(float);
    const int64_t ws_rows = t->workspace ? (int64_t)(t->workspace_bytes / row_bytes) : 0;
    bwd_args a = {t->x, t->dy, t->w, t->mean, t->rstd, t->out, (float *)t->workspace,
                  p->M, p->N, 0, 0, 1};

    if (c->v[P_BWD_RELOAD]) {
        if (tpr < 32 || tpr > 1024 || tpr % 32)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "reload needs 32..1024 threads, not %d", tpr);
        const int64_t rps = nt_cols_rps(p->M), chunks = kb_cdiv(p->M, rps);
        if (chunks > ws_rows)
            return NT_FAIL(e, KB_ERR_ARG, p, what, "workspace of %zu bytes, %lld needed",
                           t->workspace_bytes, (long long)(chunks * (int64_t)row_bytes));
        a.ngroups = p->M;
        KB_TRY(nt_launch(p, what, e, bwd_dx_loop_kernel<LN>(p->dtype, v16),
                         dim3(nt_grid(p->M, 1)), dim3((unsigned)tpr), 0, 1, false, s, a));
        void (*cols)(const bwd_args, int64_t) = nullptr;
        KB_DISPATCH(p->dtype, T, { cols = dw_cols<T, LN>; });
        KB_TRY(nt_launch(p, what, e, cols, dim3((unsigned)kb_cdiv(p->N, 256), (unsigned)chunks),
                         dim3(256), 0, 1, false, s, a, rps));
        return nt_launch(p, what, e, dw_reduce, dim3((unsigned)kb_cdiv(p->N, 32)),
                         dim3(32, kReduceRows), 0, 1, true, s, (const float *)a.ws, chunks, p->N,
                         t->dw);
    }

    const int nv = nt_pick_nv(p->N, tpr, cl, vec, true);
    const bwd_fn fn = nv && nt_shape_ok(p, tpr, rows, cl)
                          ? bwd_reg_kernel<LN>(p->dtype, nv, v16, c->v[P_BWD_ACC])
                          : nullptr;
    if (!fn)
        return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                       "threads=%d rows=%d cluster=%d cannot hold the row", tpr, rows, cl);
    const size_t smem = nt_bwd_smem(p, c, nv);
    const void *fv = reinterpret_cast<const void *>(fn);
    const dim3 block((unsigned)tpr, (unsigned)rows);
    int dev = 0, sms = 0;
    NT_CUDA(e, p, what, cudaGetDevice(&dev));
    NT_CUDA(e, p, what, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    a.ngroups = kb_cdiv(p->M, rows);
    a.cl = cl;
    int64_t slots = nt_bwd_slots_bound(p, sms, c);
    if (cl == 1) {
        int per_sm = 0;
        NT_CUDA(e, p, what, nt_prepare(fv, cl, smem));
        NT_CUDA(e, p, what,
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fv, tpr * rows, smem));
        if (per_sm < 1)
            return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what, "threads=%d rows=%d do not fit an SM",
                           tpr, rows);
        if ((int64_t)sms * per_sm < slots) slots = (int64_t)sms * per_sm;
    } else {
        const int nc = nt_active_clusters(fv, block, smem, cl);
        if (nc < 1)
            return NT_FAIL(e, KB_ERR_UNSUPPORTED, p, what,
                           "clusters of %d CTAs of %d threads cannot be scheduled", cl, tpr);
        if (nc < slots) slots = nc;
    }
    if (slots > ws_rows) slots = ws_rows;
    if (slots < 1)
        return NT_FAIL(e, KB_ERR_ARG, p, what, "workspace of %zu bytes holds no dw partial row",
                       t->workspace_bytes);
    a.nslots = slots;
    KB_TRY(nt_launch(p, what, e, fn, dim3((unsigned)(slots * cl)), block, smem, cl, false, s, a));
    return nt_launch(p, what, e, dw_reduce, dim3((unsigned)kb_cdiv(p->N, 32)),
                     dim3(32, kReduceRows), 0, 1, true, s, (const float *)a.ws, slots, p->N,
                     t->dw);
}

} /* namespace */
#endif
