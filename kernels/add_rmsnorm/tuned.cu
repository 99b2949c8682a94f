/* Add + RMSNorm, tuned backend: out = [h; y], h = x + r rounded to T,
 * y = h_T * rstd * w; backward dx = rstd * (g - xh * mean(g * xh)) + dres,
 * dw = sum over rows of dy * xh (g = dy * w, xh = h * rstd).
 *
 * Strategy: a row is owned by a group of `tpr` threads (a CTA holds `rows`
 * groups, tpr * rows threads), each thread holding `vpt` 16-byte packs per
 * stream (raw, 4 registers each) of its columns: pack k of lane t at column
 * (k * tpr + t) * W, coalesced. All packs of a pass are loaded before any
 * math, so a thread has vpt loads per stream in flight.
 *   forward : x and r read once (streaming loads), h formed in fp32,
 *             rounded to T, stored, and held as T packs; sum of h_T^2 by
 *             warp shuffles (plus shared memory across the group's warps);
 *             y from the held packs and w (read-only path: L1/L2). Bytes
 *             moved: x, r, h, y and w once. One CTA per group of rows
 *             (occ = 0) or a persistent grid of occ CTAs per SM.
 *   backward: persistent grid (occ CTAs per SM, or as many as are resident
 *             for occ = 0); per row h and dy are read once into registers,
 *             sum(g * xh) reduced, dres streamed, dx written; dy * xh
 *             accumulates per owned column in fp32 registers over every row
 *             of the group, then one partial row per group goes to the
 *             workspace [P, N] and a second kernel sums the P partials per
 *             column in a fixed order (deterministic dw, no atomics).
 *   A row longer than tpr * vpt * W elements is walked tile by tile and
 *   re-read (forward: h from the out rows the same thread stored, coherent
 *   loads; backward: h and dy, and the dw partial read-modify-written per
 *   tile), correct at any N, slower.
 *   Vector packs (W = 16 / sizeof(T)) when N % W == 0 and every pointer is
 *   16-byte aligned; scalars otherwise (same kernels, W = 1).
 * Launch parameters (tuner: heuristic, cache or search): tpr (threads per
 * row, a multiple of 32), rows (groups per CTA), vpt (packs per thread and
 * stream: 1, 2, 4, 8), occ (0: forward one CTA per row group, backward the
 * resident maximum; else CTAs per SM). Heuristic: vpt 4 and the smallest tpr
 * that holds the row (N = 4096 bf16: 128, 5120: 160, 8192: 256), groups of
 * at least 128 threads per CTA for short rows, occ 0.
 * Launches: forward 1 kernel; backward 2 (rows, dw reduction).
 * Limits: any M, N >= 1 (bf16/fp16/fp32), 64-bit offsets; backward workspace
 * P * N * 4 bytes, P = CTAs * rows. Register caps from __launch_bounds__ by
 * vpt (forward 1024 threads up to vpt 4, 512 at 8; backward 1024 at vpt 1,
 * 512 at 2 and 4, 256 at 8), spill-free per -Xptxas -v; valid() rejects a CTA
 * larger than that or a kernel using local memory. */
#include <limits.h>

#include <type_traits>

#include "fused_rows.cuh" /* fused_dw_reduce_kernel, fused_shape */
#include "tuner.h"

namespace {

constexpr int fwd_maxt(int vpt) { return vpt <= 4 ? 1024 : 512; }
/* Largest CTA per vpt: its register cap (65536 / threads) holds the packs
 * without spilling (backward 16-bit at vpt 2 spills at 64 registers). */
constexpr int bwd_maxt(int vpt) { return vpt <= 1 ? 1024 : vpt <= 4 ? 512 : 256; }

/* ---- packs: W elements of T held raw (one 16-byte vector, or one scalar) --- */
template <typename T, int W> using held_t = typename std::conditional<W == 1, T, uint4>::type;

/* read once: evict-first */
template <typename T, int W> __device__ __forceinline__ held_t<T, W> ld_cs(const T *p)
{
    if constexpr (W == 1)
        return *p;
    else
        return __ldcs(reinterpret_cast<const uint4 *>(p));
}
/* read-only input (non-coherent path) */
template <typename T, int W> __device__ __forceinline__ held_t<T, W> ld_ro(const T *p)
{
    if constexpr (W == 1)
        return *p;
    else
        return __ldg(reinterpret_cast<const uint4 *>(p));
}
/* coherent: data this thread stored earlier in the kernel */
template <typename T, int W> __device__ __forceinline__ held_t<T, W> ld_co(const T *p)
{
    if constexpr (W == 1)
        return *p;
    else
        return *reinterpret_cast<const uint4 *>(p);
}
template <typename T, int W> __device__ __forceinline__ void st(T *p, held_t<T, W> v)
{
    if constexpr (W == 1)
        *p = v;
    else
        *reinterpret_cast<uint4 *>(p) = v;
}
template <typename T, int W> __device__ __forceinline__ void unpk(held_t<T, W> v, float (&f)[W])
{
    if constexpr (W == 1)
        f[0] = kb_to_float(v);
    else
        kb_unpack<T>(v, f);
}
template <typename T, int W> __device__ __forceinline__ held_t<T, W> pk(const float (&f)[W])
{
    if constexpr (W == 1)
        return kb_from_float<T>(f[0]);
    else
        return kb_pack<T>(f);
}
template <int W> __device__ __forceinline__ void ldw(const float *p, float (&f)[W])
{
    if constexpr (W == 1)
        f[0] = __ldg(p);
    else
        kb_ld_f32<W>(p, f);
}

/* Sum over the group of tpr threads (tpr a multiple of 32, the same for the
 * whole CTA, so every thread reaches the barriers); every thread of the
 * group gets it, warps added in a fixed order. */
__device__ __forceinline__ float group_sum(float v, float *scratch, int tpr)
{
    v = kb_warp_sum(v);
    if (tpr == 32) return v;
    __syncthreads(); /* scratch may still be read by the previous call */
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    const int wpg = tpr >> 5, g0 = (int)(threadIdx.x / tpr) * wpg;
    float s = 0.f;
    for (int i = 0; i < wpg; i++) s += scratch[g0 + i];
    return s;
}

/* ---- kernels ------------------------------------------------------------------- */
template <typename T, int W, int VPT>
__global__ void __launch_bounds__(fwd_maxt(VPT))
ar_tuned_fwd(const T *__restrict__ x, const T *__restrict__ r, const float *__restrict__ w,
             T *__restrict__ out, int64_t M, int64_t N, int tpr, int rows)
{
    __shared__ float scratch[32];
    const int grp = (int)threadIdx.x / tpr, lt = (int)threadIdx.x - grp * tpr;
    const int64_t tile = (int64_t)tpr * W * VPT;
    const bool one_tile = N <= tile;
    for (int64_t row0 = (int64_t)blockIdx.x * rows; row0 < M; row0 += (int64_t)gridDim.x * rows) {
        const int64_t row = row0 + grp;
        const bool live = row < M;
        const int64_t off = (live ? row : 0) * N;
        const T *xr = x + off, *rr = r + off;
        T *hr = out + off, *yr = out + M * N + off;
        held_t<T, W> a[VPT], b[VPT];
        float ss = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) a[k] = ld_cs<T, W>(xr + col), b[k] = ld_cs<T, W>(rr + col);
            }
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) {
                    float f[W], g[W];
                    unpk<T, W>(a[k], f);
                    unpk<T, W>(b[k], g);
#pragma unroll
                    for (int i = 0; i < W; i++) f[i] += g[i];
                    a[k] = pk<T, W>(f); /* h rounded to T: stored and held */
                    st<T, W>(hr + col, a[k]);
                    unpk<T, W>(a[k], f);
#pragma unroll
                    for (int i = 0; i < W; i++) ss += f[i] * f[i];
                }
            }
        }
        ss = group_sum(ss, scratch, tpr);
        const float rs = 1.f / sqrtf(ss / (float)N + KB_NORM_EPS);
        for (int64_t base = 0; base < N; base += tile) {
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) {
                    if (!one_tile) a[k] = ld_co<T, W>(hr + col);
                    float f[W], wv[W];
                    unpk<T, W>(a[k], f);
                    ldw<W>(w + col, wv);
#pragma unroll
                    for (int i = 0; i < W; i++) f[i] = f[i] * rs * wv[i];
                    st<T, W>(yr + col, pk<T, W>(f));
                }
            }
        }
    }
}

/* Group g of CTA b owns partial row b * rows + g of part [P, N]. */
template <typename T, int W, int VPT>
__global__ void __launch_bounds__(bwd_maxt(VPT))
ar_tuned_bwd(const T *__restrict__ h, const T *__restrict__ dy, const T *__restrict__ dres,
             const float *__restrict__ w, const float *__restrict__ rstd, T *__restrict__ dx,
             float *__restrict__ part, int64_t M, int64_t N, int tpr, int rows)
{
    __shared__ float scratch[32];
    const int grp = (int)threadIdx.x / tpr, lt = (int)threadIdx.x - grp * tpr;
    const int64_t tile = (int64_t)tpr * W * VPT;
    const bool one_tile = N <= tile;
    float *const pr = part + ((int64_t)blockIdx.x * rows + grp) * N;
    float acc[VPT][W];
#pragma unroll
    for (int k = 0; k < VPT; k++)
#pragma unroll
        for (int i = 0; i < W; i++) acc[k][i] = 0.f;
    bool first = true; /* no row of this group yet: the partial is unwritten */
    for (int64_t row0 = (int64_t)blockIdx.x * rows; row0 < M; row0 += (int64_t)gridDim.x * rows) {
        const int64_t row = row0 + grp;
        const bool live = row < M;
        const int64_t off = (live ? row : 0) * N;
        const T *hr = h + off, *gr = dy + off, *rr = dres + off;
        T *dr = dx + off;
        const float rs = live ? rstd[row] : 0.f;
        held_t<T, W> a[VPT], b[VPT];
        /* pass 1: sum(g * xh) */
        float sgx = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) a[k] = ld_ro<T, W>(hr + col), b[k] = ld_ro<T, W>(gr + col);
            }
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) {
                    float fh[W], fg[W], wv[W];
                    unpk<T, W>(a[k], fh);
                    unpk<T, W>(b[k], fg);
                    ldw<W>(w + col, wv);
#pragma unroll
                    for (int i = 0; i < W; i++) sgx += (fg[i] * wv[i]) * (fh[i] * rs);
                }
            }
        }
        const float c = group_sum(sgx, scratch, tpr) / (float)N;
        /* pass 2: dx = rstd * (g - xh * c) + dres; dy * xh into the partial */
        for (int64_t base = 0; base < N; base += tile) {
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (live && col < N) {
                    if (!one_tile) a[k] = ld_ro<T, W>(hr + col), b[k] = ld_ro<T, W>(gr + col);
                    float fh[W], fg[W], wv[W], o[W];
                    unpk<T, W>(a[k], fh);
                    unpk<T, W>(b[k], fg);
                    unpk<T, W>(ld_cs<T, W>(rr + col), o);
                    ldw<W>(w + col, wv);
#pragma unroll
                    for (int i = 0; i < W; i++) {
                        const float xh = fh[i] * rs;
                        o[i] += rs * (fg[i] * wv[i] - xh * c);
                        fh[i] = fg[i] * xh; /* this row's dw term */
                    }
                    st<T, W>(dr + col, pk<T, W>(o));
                    if (one_tile) {
#pragma unroll
                        for (int i = 0; i < W; i++) acc[k][i] += fh[i];
                    } else {
                        float pv[W];
                        if (!first) {
#pragma unroll
                            for (int i = 0; i < W; i++) pv[i] = pr[col + i];
#pragma unroll
                            for (int i = 0; i < W; i++) fh[i] += pv[i];
                        }
#pragma unroll
                        for (int i = 0; i < W; i++) pr[col + i] = fh[i];
                    }
                }
            }
        }
        if (live) first = false;
    }
    /* The partial row: the register sums, or zeros for a group that had no
     * row (the reduction sums every partial). */
    if (one_tile || first) {
        for (int64_t base = 0; base < N; base += tile) {
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                const int64_t col = base + ((int64_t)k * tpr + lt) * W;
                if (col < N)
#pragma unroll
                    for (int i = 0; i < W; i++) pr[col + i] = one_tile ? acc[k][i] : 0.f;
            }
        }
    }
}

/* ---- kernel selection ------------------------------------------------------------ */
template <bool BWD, typename T, int W, int VPT> static auto kern()
{
    if constexpr (BWD)
        return ar_tuned_bwd<T, W, VPT>;
    else
        return ar_tuned_fwd<T, W, VPT>;
}

template <bool BWD, typename T, int W, typename F> static bool with_vpt(int vpt, const F &f)
{
    switch (vpt) {
    case 1: f(kern<BWD, T, W, 1>(), fused_shape<T, W, 1>{}); return true;
    case 2: f(kern<BWD, T, W, 2>(), fused_shape<T, W, 2>{}); return true;
    case 4: f(kern<BWD, T, W, 4>(), fused_shape<T, W, 4>{}); return true;
    case 8: f(kern<BWD, T, W, 8>(), fused_shape<T, W, 8>{}); return true;
    default: return false;
    }
}

/* f(kernel, fused_shape<T, W, VPT>{}) for dtype dt, vector packs or
 * scalars, vpt; false when there is no such kernel. */
template <bool BWD, typename F> static bool with_kernel(kb_dtype dt, bool vec, int vpt, const F &f)
{
    bool found = false;
    KB_DISPATCH(dt, T, {
        constexpr int V = kb_vec<T>::n;
        found = vec ? with_vpt<BWD, T, V>(vpt, f) : with_vpt<BWD, T, 1>(vpt, f);
    });
    return found;
}

enum { P_TPR, P_ROWS, P_VPT, P_OCC };

#define AR_TPR_CHOICES {32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024}
static const int tpr_choices[12] = AR_TPR_CHOICES;

static int vec_width(kb_dtype dt) { return (int)(16 / kb_dtype_size(dt)); }

/* Vector packs by the shape alone (what the heuristic, occupancy and
 * workspace assume; the run also needs aligned pointers). */
static bool vec_by_shape(const kb_problem *p) { return p->N % vec_width(p->dtype) == 0; }

static cudaError_t device_sms(int *sms)
{
    int dev = 0;
    cudaError_t rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    return rc;
}

/* CTAs of a launch: forward occ 0 one per row group; else occ per SM, or
 * (backward occ 0) as many as are resident with the kernel the shape picks;
 * never more than the row groups. 0 when a query fails. */
template <bool BWD> static int64_t ctas(const kb_problem *p, const kb_tune_cfg *c)
{
    const int tpr = c->v[P_TPR], rows = c->v[P_ROWS], occ = c->v[P_OCC];
    const int64_t groups = kb_cdiv(p->M, rows);
    int64_t n = groups;
    if (occ > 0 || BWD) {
        int sms = 0;
        if (device_sms(&sms) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        int per_sm = occ;
        if (per_sm == 0) {
            cudaError_t rc = cudaErrorInvalidValue;
            with_kernel<BWD>(p->dtype, vec_by_shape(p), c->v[P_VPT], [&](auto k, auto) {
                rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, tpr * rows, 0);
            });
            if (rc != cudaSuccess) {
                (void)cudaGetLastError();
                return 0;
            }
            if (per_sm < 1) per_sm = 1;
        }
        n = (int64_t)sms * per_sm;
        if (n > groups) n = groups;
    }
    return n < INT_MAX ? n : INT_MAX;
}

template <bool BWD>
static size_t workspace(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    if (!BWD) return 0;
    return (size_t)ctas<true>(p, c) * (size_t)c->v[P_ROWS] * (size_t)p->N * sizeof(float);
}

template <bool BWD>
static kb_status launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                        cudaStream_t s, kb_err *e)
{
    const char *who = BWD ? "tuned add_rmsnorm_backward" : "tuned add_rmsnorm_forward";
    const int tpr = c->v[P_TPR], rows = c->v[P_ROWS], vpt = c->v[P_VPT], occ = c->v[P_OCC];
    if (p->M < 1 || p->N < 1 || tpr < 32 || tpr % 32 || rows < 1 || tpr * rows > 1024 || occ < 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s %lldx%lld: bad configuration tpr=%d,rows=%d,vpt=%d,occ=%d",
                       who, (long long)p->M, (long long)p->N, tpr, rows, vpt, occ);
    bool ptrs_ok, aligned;
    if (BWD) {
        ptrs_ok = t->x && t->dy && t->dres && t->w && t->rstd && t->out && t->dw;
        aligned = kb_aligned16(t->x) && kb_aligned16(t->dy) && kb_aligned16(t->dres) &&
                  kb_aligned16(t->w) && kb_aligned16(t->out) && kb_aligned16(t->workspace);
    } else {
        ptrs_ok = t->x && t->res && t->w && t->out;
        aligned = kb_aligned16(t->x) && kb_aligned16(t->res) && kb_aligned16(t->w) &&
                  kb_aligned16(t->out);
    }
    if (!ptrs_ok)
        return KB_FAIL(e, KB_ERR_ARG, "%s %lldx%lld: an input or output is NULL", who,
                       (long long)p->M, (long long)p->N);
    const int64_t grid = ctas<BWD>(p, c);
    if (grid < 1)
        return KB_FAIL(e, KB_ERR_CUDA, "%s %lldx%lld: device or occupancy query failed", who,
                       (long long)p->M, (long long)p->N);
    const int64_t P = grid * rows;
    if (BWD) {
        const size_t need = (size_t)P * (size_t)p->N * sizeof(float);
        if (!t->workspace || t->workspace_bytes < need)
            return KB_FAIL(e, KB_ERR_ARG, "%s %lldx%lld: needs %zu workspace bytes, got %zu", who,
                           (long long)p->M, (long long)p->N, need, t->workspace_bytes);
        if (kb_cdiv(p->N, FUSED_DW_COLS) > INT_MAX)
            return KB_FAIL(e, KB_ERR_UNSUPPORTED, "%s: N=%lld too long for the dw reduction grid",
                           who, (long long)p->N);
    }
    const bool found = with_kernel<BWD>(p->dtype, vec_by_shape(p) && aligned, vpt, [&](auto k, auto sh) {
        typedef typename decltype(sh)::T T;
        if constexpr (BWD)
            k<<<(unsigned)grid, tpr * rows, 0, s>>>((const T *)t->x, (const T *)t->dy,
                                                    (const T *)t->dres, t->w, t->rstd,
                                                    (T *)t->out, (float *)t->workspace, p->M,
                                                    p->N, tpr, rows);
        else
            k<<<(unsigned)grid, tpr * rows, 0, s>>>((const T *)t->x, (const T *)t->res, t->w,
                                                    (T *)t->out, p->M, p->N, tpr, rows);
    });
    if (!found)
        return KB_FAIL(e, KB_ERR_ARG, "%s %lldx%lld: bad configuration vpt=%d", who,
                       (long long)p->M, (long long)p->N, vpt);
    KB_LAUNCHED(e);
    if (BWD) {
        fused_dw_reduce_kernel<FUSED_DW_COLS>
            <<<(unsigned)kb_cdiv(p->N, FUSED_DW_COLS), FUSED_DW_COLS * FUSED_DW_COLS, 0, s>>>(
                (const float *)t->workspace, t->dw, P, p->N);
        KB_LAUNCHED(e);
    }
    return KB_OK;
}

/* The configuration's kernel exists, its CTA fits the kernel's register cap
 * and nothing spills. */
template <bool BWD>
static int valid(const kb_problem *p, const kb_setup_ctx *, const kb_tune_cfg *c)
{
    const int threads = c->v[P_TPR] * c->v[P_ROWS];
    if (c->v[P_TPR] % 32 || threads > 1024) return 0;
    cudaFuncAttributes fa;
    cudaError_t rc = cudaErrorInvalidValue;
    if (!with_kernel<BWD>(p->dtype, vec_by_shape(p), c->v[P_VPT],
                          [&](auto k, auto) { rc = cudaFuncGetAttributes(&fa, k); }))
        return 0;
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return threads <= fa.maxThreadsPerBlock && fa.localSizeBytes == 0;
}

/* vpt 4 (a thread keeps 4 loads per stream in flight, and the backward's
 * registers fit 512 threads) and the smallest tpr that holds the row; short
 * rows: tpr 32 and fewer packs, several rows per CTA; rows beyond 4 * the
 * register-capped CTA: that CTA, walking tiles. occ 0. */
template <bool BWD>
static void heuristic(const kb_problem *p, const kb_setup_ctx *, kb_tune_cfg *out)
{
    const int64_t W = vec_by_shape(p) ? vec_width(p->dtype) : 1, units = kb_cdiv(p->N, W);
    const int maxt4 = BWD ? bwd_maxt(4) : fwd_maxt(4);
    int vpt = 4, tpr = maxt4;
    if (units <= 32 * 4) {
        tpr = 32;
        vpt = 1;
        while ((int64_t)vpt * 32 < units) vpt *= 2;
    } else {
        const int64_t need = kb_cdiv(units, 4);
        for (int i = 0; i < 12; i++)
            if (tpr_choices[i] >= need && tpr_choices[i] <= maxt4) {
                tpr = tpr_choices[i];
                break;
            }
    }
    kb_tune_cfg c = {};
    c.v[P_TPR] = tpr;
    c.v[P_ROWS] = tpr >= 128 ? 1 : 128 / tpr;
    c.v[P_VPT] = vpt;
    c.v[P_OCC] = 0;
    *out = c;
}

static int bwd_kernels(const kb_problem *, const kb_tune_cfg *) { return 2; }

#define AR_SPACE(name, BWD)                                                                \
    {name, 4, {"tpr", "rows", "vpt", "occ"}, {12, 4, 4, 7},                                \
     {AR_TPR_CHOICES, {1, 2, 4, 8}, {1, 2, 4, 8}, {0, 1, 2, 3, 4, 6, 8}},                  \
     heuristic<BWD>, valid<BWD>, BWD ? workspace<BWD> : NULL, launch<BWD>,                 \
     BWD ? bwd_kernels : NULL, NULL}

const kb_tune_space ar_fwd_space = AR_SPACE("add_rmsnorm_forward", false);
const kb_tune_space ar_bwd_space = AR_SPACE("add_rmsnorm_backward", true);

} /* namespace */

KB_TUNED_IMPL(kb_add_rmsnorm_tuned_fwd, KB_ADD_RMSNORM_FWD, ar_fwd_space)
KB_TUNED_IMPL(kb_add_rmsnorm_tuned_bwd, KB_ADD_RMSNORM_BWD, ar_bwd_space)
