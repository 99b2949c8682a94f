/* Forward kernels of the tuned RMSNorm / LayerNorm (norm_tuned.cuh).
 *
 * fwd_reg: a CTA (or cluster) loops over groups of R rows, g = its index,
 * g += the number of CTAs (clusters); the grid is either one CTA per group
 * or persistent (SMs x occupancy), see the launch; fwd_reg_one (below) runs
 * the first case without the prefetch where it can (aligned packs, NV <= 8,
 * no double buffer, the grid covering every group). A thread holds its NV
 * packs of the row raw in registers (128-bit loads); RMS: sum of squares;
 * LN: mean, then the centred sum of squares from the registers (exact
 * two-pass, the mean summed as below); rstd = 1/sqrt(s/N + eps);
 * y = (x - mean) * rstd * w stored
 * 128-bit, w (fp32) by 128-bit __ldg (L1). x's loads and y's stores take
 * the tuner's cache operators (`hint` = H, AL only: 0 evict-first loads and
 * stores, 1 evict-first loads, plain stores, 2 plain loads and stores; a
 * template parameter, since a run-time choice made the capped kernels spill).
 * The next group's packs are in flight while this one is reduced and
 * written, so a CTA always has loads outstanding (fwd_reg; fwd_reg_one has
 * no next group, and more resident CTAs instead):
 *   DB = false (rolling): pack i of the next group is loaded into pack i's
 *     registers right after pack i of this group is stored (no extra
 *     registers; the loads overlap the stores, not the reduction);
 *   DB = true (double buffer): the next group's packs are loaded into a
 *     second set of registers before this group's reduction starts (twice
 *     the registers; the reduction's barriers and DSMEM exchange are then
 *     hidden behind loads).
 * Reductions: row_reducer (norm_tuned_dev.cuh): shuffles within a warp,
 * one __syncthreads only when a row spans several warps, an mbarrier
 * exchange across a cluster.
 *
 * fwd_loop (any N): one CTA per row, the row re-read per pass (RMS 2,
 * LN 3, LN 2 in fwd_loop_long; L1/L2 serve the re-reads while rows in
 * flight fit in them), U slots per thread per step (below). Its loads
 * ignore the hint (U = 1: read-only path; U > 1: evict-last, the last pass
 * evict-first); y's stores follow it (H: 0 or 1, AM_AL only). Long shares
 * per thread run twins of their own (fwd_loop_long, at the end of this
 * file): fp32 RMSNorm adds the slots' squares with a compensated sum,
 * LayerNorm takes mean and M2 in one pass (Chan's merge), two passes over
 * the row. fwd_stage (reload = 8): the same body with the whole row first
 * copied into shared memory by per-thread cp.async (every byte in flight at
 * once, no registers held), every pass then reading shared memory: the row
 * crosses DRAM once however many rows are resident, which the loop's
 * re-reads only get while the rows in flight fit in the L2. Limits: 16-byte
 * aligned tensors (AM_AL or AM_SHIFT) and rows whose slots fit in the opt-in
 * shared memory (227 KB on sm_90: bf16 N <= ~116K, fp32 <= ~58K);
 * fwd_stage_cl splits the row over a cluster of CL CTAs, each staging its
 * share, the reductions crossing the cluster: rows up to CL times that.
 *
 * LayerNorm's mean is exact on a constant row (y = 0, as PyTorch's Welford
 * gives), which an fp32 sum of N equal values divided by N is not: the
 * rounding error d of the mean comes back as d * rstd with rstd up to
 * 1/sqrt(eps). k equal values of p significant bits sum exactly in fp32
 * while k <= 2^(24-p) (2^13 fp16, 2^16 bf16), and N times a 24-bit value is
 * exact in double for N <= 2^29 (beyond, within far less than half an fp32
 * ulp). So the register kernel sums 16-bit elements in fp32 as before
 * through the thread and the warp (at most 32 x NV x VEC = 4096 elements,
 * asserted below), and through the CTA while its share of the row is
 * within 2^(24-p), and fp32 ones in double; the loop adds each slot's sum
 * (at most VEC 16-bit values in fp32) into a double; warps (beyond that)
 * and cluster ranks add doubles (row_reducer::sum_d), and
 * mean = (float)(sum * (1/N)) is then the value itself; the centred sum is
 * exactly 0. Measured cost on the H200 (docs/dev/kernels/norm-forward.md): none on
 * single-CTA rows, 1-3 % on rows split over a cluster (the double cluster
 * round sits on their serial path), 6-7 % on the fp16 loop at 4096x50257.
 * Cheaper-looking cures cost more: an extra round only for rows that look
 * constant spilled the capped double-buffered kernels and, in the loop,
 * took 40 registers (-5 %); three that added work per element cost the
 * clustered rows 7-23 %. */
#ifndef KB_NORM_TUNED_FWD_CUH
#define KB_NORM_TUNED_FWD_CUH

#include "norm_tuned_dev.cuh"
#include "tolerance.h"

namespace {

struct fwd_args {
    const void *x;
    const float *w;
    void *y;
    int64_t M, N, ngroups; /* ngroups = ceil(M / R) (register kernel), M (fallback) */
    int cl;
};

/* The kernel body; fwd_reg below wraps it with or without a register cap,
 * fwd_reg_one with ONE = true (one group, no next-group state).
 * AL: N % VEC == 0, every row starts 16-byte aligned, a thread's packs are
 * the same columns on every row. !AL: shifted slots (norm_tuned_dev.cuh):
 * the thread's packs are memory slots, whose columns move with the row. */
template <typename T, bool LN, int NV, bool AL, bool DB, int H, bool ONE = false>
__device__ __forceinline__ void fwd_reg_body(const fwd_args &a)
{
    constexpr int VEC = vec_of<T>(), RV = LN ? 2 : 1;
    static_assert(!(ONE && DB), "one group per CTA has no next group to double-buffer");
    static_assert(sizeof(T) == 4 || 32 * NV * VEC <= KB_F32_EXACT_EQUAL_SUM_FP16,
                  "a warp's 16-bit share must stay exact in fp32 (header)");
    __shared__ red_smem<RV> rsm;
    const lane_map lm(a.N, VEC, a.cl);
    row_reducer<RV> reduce(rsm, lm.tpr, lm.cl);
    const float n = (float)a.N;
    const double inv_n = 1.0 / (double)a.N;
    /* What one CTA adds for a row (at most tpr x NV x VEC 16-bit values) is
     * exact in fp32 within 2^(24-p) elements (header). */
    const bool cta_f32 =
        sizeof(T) != 4 && (int64_t)lm.tpr * NV * VEC <= (std::is_same<T, kb_fp16>::value
                                                              ? KB_F32_EXACT_EQUAL_SUM_FP16
                                                              : KB_F32_EXACT_EQUAL_SUM_BF16);
    const int N = (int)a.N, G = lm.stride / VEC, gt = lm.first / VEC;
    const int64_t total = a.M * a.N;
    const float *wb = a.w + lm.first;
    const bool w16 = kb_aligned16(a.w);
    const T *x = static_cast<const T *>(a.x);
    T *y = static_cast<T *>(a.y);
    const int64_t step = gridDim.x / lm.cl, R = blockDim.y;
    int64_t g = blockIdx.x / lm.cl;

    /* Packs of group gg for this thread: count (0 past M), flat offset of
     * the first, and the row's shift. */
    auto locate = [&](int64_t gg, int &cnt, int64_t &off, int &sh) {
        const int64_t row = gg * R + threadIdx.y;
        const bool ok = gg < a.ngroups && row < a.M;
        const int64_t start = (ok ? row : 0) * a.N;
        if constexpr (AL) {
            sh = 0;
            cnt = ok ? lm.mine : 0;
        } else {
            sh = (int)(start & (VEC - 1));
            const int nsl = (N + sh + VEC - 1) / VEC;
            cnt = ok && gt < nsl ? (nsl - 1 - gt) / G + 1 : 0;
        }
        off = start - sh + lm.first;
    };
    /* Valid elements [lo, hi) of pack i (shifted slots). */
    auto lo_of = [&](int i, int sh) { return sh - lm.at(i); };
    auto load = [&](uint4 &dst, int i, int cnt, int64_t off, int sh) {
        if (i >= cnt) {
            dst = make_uint4(0u, 0u, 0u, 0u);
            return;
        }
        const int64_t f0 = off + (int64_t)i * lm.stride;
        if (AL || f0 + VEC <= total) dst = ld_pack<T, true, H != 2>(x + f0, VEC);
        else dst = ld_pack<T, false, true>(x + f0, (int)(total - f0)); /* end of x */
        if constexpr (!AL) {
            const int lo = lo_of(i, sh);
            if (lo > 0 || lo + N < VEC) dst = mask_pack<T>(dst, lo, lo + N);
        }
    };

    int cnt, sh;
    int64_t off;
    locate(g, cnt, off, sh);
    uint4 xv[NV], xn[DB ? NV : 1];
#pragma unroll
    for (int i = 0; i < NV; i++) load(xv[i], i, cnt, off, sh);

    for (; g < a.ngroups; g += step) {
        int cntn = 0, shn = 0;
        int64_t offn = 0;
        if constexpr (!ONE) locate(g + step, cntn, offn, shn);
        if constexpr (DB) {
#pragma unroll
            for (int i = 0; i < NV; i++) load(xn[i], i, cntn, offn, shn);
        }
        /* Masked elements are zero: they add nothing to the sums below
         * except (0 - mean)^2, which the centred pass skips. */
        float mean = 0.f, s[1] = {0.f}, f[VEC];
        if constexpr (LN) {
            double sd = 0.0; /* fp32 elements; 16-bit ones sum in s[0] */
#pragma unroll
            for (int i = 0; i < NV; i++) {
                kb_unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    if constexpr (sizeof(T) == 4) sd += (double)f[j];
                    else s[0] += f[j];
                }
            }
            if constexpr (sizeof(T) == 4) mean = (float)(reduce.sum_d(sd, false) * inv_n);
            else mean = (float)(reduce.sum_d(s[0], cta_f32) * inv_n);
            s[0] = 0.f;
#pragma unroll
            for (int i = 0; i < NV; i++)
                if (i < cnt) {
                    const int lo = AL ? 0 : lo_of(i, sh);
                    kb_unpack<T>(xv[i], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        if (AL || (j >= lo && j < lo + N)) s[0] += (f[j] - mean) * (f[j] - mean);
                }
        } else {
#pragma unroll
            for (int i = 0; i < NV; i++) {
                kb_unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j] * f[j];
            }
        }
        reduce(s);
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (i < cnt) {
                float wv[VEC];
                kb_unpack<T>(xv[i], f);
                const int lo = AL ? 0 : lo_of(i, sh);
                if constexpr (AL) ld_w<VEC, true>(wb + i * lm.stride, VEC, w16, wv);
                else ld_w_at<VEC>(a.w, -lo, N, w16, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
                T *dst = y + off + (int64_t)i * lm.stride;
                if (AL || (lo <= 0 && lo + N >= VEC)) st_pack<T, true, H == 0>(dst, kb_pack<T>(f), VEC);
                else st_range<T>(dst, kb_pack<T>(f), lo, lo + N);
            }
            if constexpr (DB) xv[i] = xn[i];
            else if constexpr (!ONE) load(xv[i], i, cntn, offn, shn);
        }
        if constexpr (ONE) break;
        cnt = cntn;
        off = offn;
        sh = shn;
    }
    reduce.finish();
}

/* NV <= 4 with 128-bit packs (double-buffered too) fits 64 registers:
 * capped, so 1024-thread blocks run; bigger or shifted-slot (AL = false:
 * masks and the w select cost registers) kernels are left uncapped (a cap
 * there makes ptxas trade registers for spills). */
template <int NV, bool AL> constexpr bool fwd_capped() { return AL && NV <= 4; }

template <typename T, bool LN, int NV, bool AL, bool DB, int H>
__global__ void __launch_bounds__(1024) fwd_reg_cap(const fwd_args a)
{
    fwd_reg_body<T, LN, NV, AL, DB, H>(a);
}

template <typename T, bool LN, int NV, bool AL, bool DB, int H>
__global__ void fwd_reg_free(const fwd_args a)
{
    fwd_reg_body<T, LN, NV, AL, DB, H>(a);
}

/* One row group per CTA (occ = 0: the grid covers every group): no next
 * group to locate or roll in, so fewer live registers, and a tighter cap
 * (32 registers: full occupancy) lets short-row CTAs of 128-256 threads
 * fill the SM: a tall matrix of short rows is then streamed by many small
 * resident CTAs, each with its packs in flight, rather than by fewer with a
 * prefetch that has nothing to fetch (Inductor's persistent-reduction
 * kernels for these shapes run 32 registers at ~94 % occupancy). The cap
 * is the packs' 4 x NV words plus 28 (32 at NV=1 ... 64 at NV=8), so that
 * no instantiation spills (ptxas: a flat 32 spilled 16-bit NV >= 2). AL
 * packs, NV <= 8. */
template <typename T, bool LN, int NV, int H>
__global__ void __maxnreg__(kb_reg_cap(4 * NV, 28)) fwd_reg_one(const fwd_args a)
{
    fwd_reg_body<T, LN, NV, true, false, H, true>(a);
}

typedef void (*fwd_fn)(const fwd_args);

template <typename T, bool LN, int NV, bool AL, bool DB, int H> constexpr fwd_fn fwd_reg()
{
    if constexpr (fwd_capped<NV, AL>()) return fwd_reg_cap<T, LN, NV, AL, DB, H>;
    else return fwd_reg_free<T, LN, NV, AL, DB, H>;
}

/* fwd_loop: one CTA per row (grid-stride), every pass re-reads the row (L1
 * and L2 serve the re-reads). Few registers, so full occupancy: the
 * tuner's pick for mid-length and odd rows. Access modes:
 *   AM_AL     N % VEC == 0, aligned pointers: plain 128-bit packs;
 *   AM_SHIFT  any N, aligned pointers: the shifted slots of
 *             norm_tuned_dev.cuh (128-bit x and y, masked edge slots);
 *   AM_ELEM   anything else: one element per access (U = 1 only).
 * U (the tuner's `reload`: 1, 2, 4) slots per thread per step: a thread
 * issues its U loads before it uses any, so U times the bytes in flight at
 * the same occupancy. U = 1 is the loop as it was (read-only-path loads in
 * every pass); U > 1 reads as the streaming softmax does: passes before
 * the last under an L2 evict-last policy (the last pass re-reads the row
 * from L2), the last pass evict-first. Unrolling the U = 1 loop by 4 without
 * holding the loads raw measured -5 to -16 % on shifted rows (H200, 2026-12-02:
 * the unpacked fp32 copies cost the occupancy the extra loads were for);
 * here the U slots are held raw (one uint4 each) until used. */

/* Chan's merge of (nb, mb, M2b) into (n, m, M2): counts, means, sums of
 * squared deviations. */
__device__ __forceinline__ void chan_merge(float &n, float &m, float &M2, float nb, float mb,
                                           float M2b)
{
    const float nn = n + nb;
    if (nn > 0.f) {
        const float d = mb - m, wb = nb / nn;
        m += d * wb;
        M2 += M2b + d * d * n * wb;
        n = nn;
    }
}

/* (n, m, M2) merged over the tpr threads of a one-CTA row (tpr a multiple
 * of 32, blockDim.y = 1): a butterfly within the warp, each pair merged low
 * lane first so both lanes hold the same bits, then the warps' results
 * through buf (3 x 32 floats) and the same butterfly in every warp. */
__device__ __forceinline__ void chan_row(float &n, float &m, float &M2, float *buf, int tpr)
{
    const int lane = (int)threadIdx.x & 31;
    auto warp_merge = [&]() {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float nb = __shfl_xor_sync(0xffffffffu, n, o);
            const float mb = __shfl_xor_sync(0xffffffffu, m, o);
            const float qb = __shfl_xor_sync(0xffffffffu, M2, o);
            if (lane & o) { /* the partner is the lower lane: merge into its state */
                float n0 = nb, m0 = mb, q0 = qb;
                chan_merge(n0, m0, q0, n, m, M2);
                n = n0, m = m0, M2 = q0;
            } else {
                chan_merge(n, m, M2, nb, mb, qb);
            }
        }
    };
    warp_merge();
    if (tpr > 32) {
        const int nw = tpr >> 5, w = (int)threadIdx.x >> 5;
        if (lane == 0) buf[w] = n, buf[32 + w] = m, buf[64 + w] = M2;
        __syncthreads();
        n = lane < nw ? buf[lane] : 0.f;
        m = lane < nw ? buf[32 + lane] : 0.f;
        M2 = lane < nw ? buf[64 + lane] : 0.f;
        warp_merge();
    }
}

template <typename T, bool LN, int MODE, int H, int U, bool LONG, bool STAGE = false,
          bool CLU = false>
__device__ __forceinline__ void fwd_loop_body(const fwd_args &a)
{
    static_assert(U == 1 || MODE != AM_ELEM, "element accesses run one slot per step");
    static_assert(!STAGE || (U == 1 && MODE != AM_ELEM && !(LN && LONG)),
                  "a staged row: 128-bit slots, one a step, LayerNorm's exact three passes");
    static_assert(!CLU || STAGE, "only the staged loop splits a row over a cluster");
    extern __shared__ uint4 stage[]; /* fwd_stage: the row's slots (dynamic) */
    constexpr int VEC = MODE == AM_ELEM ? 1 : vec_of<T>();
    constexpr int PV = vec_of<T>(), RV = LN ? 2 : 1;
    /* Policies of the passes: U = 1 keeps read-only-path loads throughout. */
    constexpr kb_cache FIRST = U > 1 ? KB_LD_LAST : KB_LD_KEEP, LAST = U > 1 ? KB_LD_STREAM : KB_LD_KEEP;
    __shared__ red_smem<RV> rsm;
    const int tpr = (int)blockDim.x, N = (int)a.N;
    /* fwd_stage_cl: the cl CTAs of a cluster share a row, slot k to CTA
     * rank (k / tpr) % cl as in the register kernels (lane_map); a thread's
     * i-th slot sits at stage[i * tpr + threadIdx.x] (k itself at cl = 1). */
    const int cl = CLU ? a.cl : 1;
    const int g0 = CLU ? (int)nt_cluster_rank() * tpr + (int)threadIdx.x : 0;
    row_reducer<RV> reduce(rsm, tpr, cl);
    constexpr bool CHAN = LN && LONG;
    __shared__ float cbuf[CHAN ? 2 : 1][CHAN ? 96 : 1]; /* chan_row's warp partials, per parity */
    int cpar = 0;
    const float n = (float)a.N;
    const double inv_n = 1.0 / (double)a.N;
    const int64_t total = a.M * a.N;
    const bool w16 = kb_aligned16(a.w);
    const uint64_t pol = U > 1 ? kb_policy_evict_last() : 0;
    const T *x = static_cast<const T *>(a.x);
    T *y = static_cast<T *>(a.y);
    for (int64_t row = CLU ? blockIdx.x / cl : blockIdx.x; row < a.M;
         row += CLU ? gridDim.x / cl : gridDim.x) {
        const int64_t start = row * a.N;
        const int sh = MODE == AM_SHIFT ? (int)(start & (VEC - 1)) : 0;
        const int nsl = (N + sh + VEC - 1) / VEC;
        const int64_t base = start - sh;
        if constexpr (STAGE) {
            /* The thread's own slots, all in flight at once; a thread reads
             * back only what it copied (no barrier), and it overwrites a
             * slot only after the previous row's last pass used it. The
             * last slot of the tensor copies only what is inside it. */
            for (int k = CLU ? g0 : (int)threadIdx.x, i = threadIdx.x; k < nsl;
                 k += tpr * cl, i += tpr) {
                const int64_t f0 = base + (int64_t)k * VEC;
                const int64_t left = total - f0;
                kb_cp_async16n(&stage[CLU ? i : k], x + f0,
                               left >= VEC ? 16 : (int)left * (int)sizeof(T));
            }
            kb_cp_async_commit();
            kb_cp_async_wait_all();
        }
        /* Staged slot k, read back from stage[i] (masked outside the row). */
        auto staged = [&](int k, int i) -> uint4 {
            uint4 r = stage[i];
            if constexpr (MODE == AM_SHIFT) {
                const int lo = sh - k * VEC;
                if (lo > 0 || lo + N < VEC) r = mask_pack<T>(r, lo, lo + N);
            }
            return r;
        };
        /* Slot k raw (zero outside the row), under cache treatment lp (a kb_cache tag). */
        auto slot = [&](int k, auto lp) -> uint4 {
            const int64_t f0 = base + (int64_t)k * VEC;
            if constexpr (STAGE) {
                (void)f0; /* copied in already */
                return staged(k, k);
            } else if constexpr (MODE == AM_AL) {
                return kb_ld128_c<decltype(lp)::value>(x + f0, pol);
            } else if constexpr (MODE == AM_SHIFT) {
                const int lo = sh - k * VEC;
                uint4 r = f0 + VEC <= total ? kb_ld128_c<decltype(lp)::value>(x + f0, pol)
                                            : ld_pack<T, false, false>(x + f0, (int)(total - f0));
                if (lo > 0 || lo + N < VEC) r = mask_pack<T>(r, lo, lo + N);
                return r;
            } else {
                return ld_pack<T, false, false>(x + f0, 1);
            }
        };
        /* Every slot k < nsl of this thread, U loads issued before use:
         * use(k, raw). */
        auto each = [&](auto lp, auto use) {
            if constexpr (CLU) { /* the CTA's share of the staged row */
                for (int k = g0, i = threadIdx.x; k < nsl; k += tpr * cl, i += tpr)
                    use(k, staged(k, i));
            } else {
                for (int k0 = threadIdx.x; k0 < nsl; k0 += tpr * U) {
                    uint4 r[U];
#pragma unroll
                    for (int u = 0; u < U; u++)
                        r[u] = k0 + u * tpr < nsl ? slot(k0 + u * tpr, lp)
                                                  : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
                    for (int u = 0; u < U; u++)
                        if (k0 + u * tpr < nsl) use(k0 + u * tpr, r[u]);
                }
            }
        };
        using first_t = std::integral_constant<kb_cache, FIRST>;
        float mean = 0.f, s[1] = {0.f};
        if constexpr (CHAN) {
            /* Long rows (fwd_loop_long): both statistics in one pass. Each
             * slot's count, mean and M2 of d = x - K (K = the row's first
             * element), merged into the thread's by Chan's formula, then
             * across the CTA (chan_row): two passes over the row instead of
             * three. On a constant row every d is 0, so mean = K and M2 = 0
             * exactly (y = 0, as the three-pass loop's exact mean gives). */
            float kf[PV];
            kb_unpack<T>(ld_pack<T, false, false>(x + start, 1), kf);
            const float K = kf[0];
            float cn = 0.f, cm = 0.f, cM2 = 0.f;
            each(first_t{}, [&](int k, uint4 r) {
                float f[PV];
                kb_unpack<T>(r, f);
                const int lo = sh - k * VEC;
                const bool whole = MODE == AM_AL || (lo <= 0 && lo + N >= VEC);
                float sd = 0.f;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (whole || (j >= lo && j < lo + N)) sd += f[j] - K;
                const float c = whole ? (float)VEC : (float)(min(lo + N, VEC) - max(lo, 0));
                const float ms = whole ? sd * (1.f / VEC) : sd / c;
                float m2 = 0.f;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (whole || (j >= lo && j < lo + N)) m2 += (f[j] - K - ms) * (f[j] - K - ms);
                chan_merge(cn, cm, cM2, c, ms, m2);
            });
            chan_row(cn, cm, cM2, cbuf[cpar], tpr);
            cpar ^= 1;
            mean = K + cm;
            s[0] = cM2;
        } else if constexpr (LN) {
            double sd = 0.0; /* the mean's sum, exact on a constant row (above) */
            each(first_t{}, [&](int, uint4 r) {
                float f[PV];
                kb_unpack<T>(r, f);
                float p = 0.f;
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    if constexpr (sizeof(T) == 4) sd += (double)f[j];
                    else p += f[j];
                }
                if constexpr (sizeof(T) != 4) sd += (double)p;
            });
            mean = (float)(reduce.sum_d(sd, false) * inv_n);
            /* The centred sum: the row read again, still to be read once more. */
            each(first_t{}, [&](int k, uint4 r) {
                float f[PV];
                kb_unpack<T>(r, f);
                const int lo = sh - k * VEC;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (MODE == AM_AL || (j >= lo && j < lo + N))
                        s[0] += (f[j] - mean) * (f[j] - mean);
            });
            reduce(s);
        } else if constexpr (LONG) {
            /* Long per-thread chains (fwd_loop_long, fp32 RMSNorm): a
             * slot's squares in fp32, the thread's slot sums added with a
             * compensated sum. */
            float c = 0.f;
            each(first_t{}, [&](int, uint4 r) {
                float f[PV], p = 0.f;
                kb_unpack<T>(r, f);
#pragma unroll
                for (int j = 0; j < VEC; j++) p += f[j] * f[j];
                const float yk = p - c, t = s[0] + yk;
                c = (t - s[0]) - yk;
                s[0] = t;
            });
            reduce(s);
        } else {
            each(first_t{}, [&](int, uint4 r) {
                float f[PV];
                kb_unpack<T>(r, f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j] * f[j];
            });
            reduce(s);
        }
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
        each(std::integral_constant<kb_cache, LAST>{}, [&](int k, uint4 r) {
            float f[PV], wv[PV];
            kb_unpack<T>(r, f);
            const int lo = sh - k * VEC;
            if constexpr (MODE == AM_AL) ld_w<PV, true>(a.w + (int64_t)k * VEC, VEC, w16, wv);
            else if constexpr (MODE == AM_SHIFT) ld_w_at<PV>(a.w, -lo, N, w16, wv);
            else wv[0] = __ldg(a.w + k);
#pragma unroll
            for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
            T *dst = y + base + (int64_t)k * VEC;
            if constexpr (MODE == AM_ELEM) st_pack<T, false>(dst, kb_pack<T>(f), 1);
            else if (MODE == AM_AL || (lo <= 0 && lo + N >= VEC))
                st_pack<T, true, H == 0>(dst, kb_pack<T>(f), VEC);
            else st_range<T>(dst, kb_pack<T>(f), lo, lo + N);
        });
    }
    if constexpr (CLU) reduce.finish(); /* no CTA leaves while a peer may push to it */
}

/* The loop kernels. fwd_loop_long: the twins of fwd_loop for long shares
 * per thread, kernels of their own because what they add costs registers
 * that short rows would pay for nothing.
 *
 * fp32 RMSNorm, a thread's share of the row longer than kFwdLoopPlainElems:
 * one fp32 chain of a thread's 1000s of squares drifts past fp32's
 * tolerance on a constant row (k equal terms: relative error up to ~k/2
 * ulp; 32-128 threads at 50257-151936 columns failed by 1.2-6.3x), a
 * compensated sum keeps it at ~2 ulp. In every loop kernel it took the
 * 1024-thread shifted U = 2 one from 32 to 39 registers (one CTA per SM),
 * and capping that at 32 spilled. Shares of <= 128 elements stay on the
 * plain chain: the H200 cache's fp32 loop entries (1024 threads, N <=
 * 65536) are there, and shares up to 148 elements passed on the plain chain
 * (1024 threads at 151936 columns, every input kind, before this split). A
 * row whose sum of squares overflows fp32 ends NaN here (inf - inf in the
 * compensation) where the plain chain gives inf (y = 0); that needs |x|
 * beyond ~1e19, which no input kind reaches.
 *
 * LayerNorm, rows of kFwdLoopChanBytes or more that take kFwdLoopChanPasses
 * or more steps of U x tpr slots: mean and M2 in one pass (Chan's merge
 * above), so the row is read twice, not three times. Per slot it costs a
 * division and the merge, per row a three-value butterfly, and U = 4 takes
 * 48 registers (40 in fwd_loop), the shifted 16-bit U = 4 ones 79 (64-72).
 * That is a loss where the third pass is cheap: rows of few steps, and
 * short rows, whose re-reads L1 serves. Measured on the H200 (kernels/
 * README.md, 2026-12-03), the two-pass loop gained 12-36 % on 32-300 KB
 * rows at 8-74 steps, lost 2-45 % at 2-3 steps and 24 % on 8 KB rows at 8
 * steps (32768x4095, 64 threads); at 6 steps -4 to +11 %. */
constexpr int kFwdLoopPlainElems = 128;
constexpr int kFwdLoopChanPasses = 6;
constexpr int64_t kFwdLoopChanBytes = 32768;

template <typename T, bool LN, int MODE, int H, int U> __global__ void fwd_loop(const fwd_args a)
{
    fwd_loop_body<T, LN, MODE, H, U, false>(a);
}

template <typename T, bool LN, int MODE, int H, int U> __global__ void fwd_loop_long(const fwd_args a)
{
    fwd_loop_body<T, LN, MODE, H, U, true>(a);
}

/* The staged loop (header); LONG as in fwd_loop_long, for fp32 RMSNorm only. */
template <typename T, bool LN, int MODE, int H, bool LONG> __global__ void fwd_stage(const fwd_args a)
{
    fwd_loop_body<T, LN, MODE, H, 1, LONG, true>(a);
}

/* The staged loop over a cluster of a.cl CTAs per row (a.cl > 1): each CTA
 * stages its share of the row, the reductions cross the cluster
 * (row_reducer), so a row may be up to cl times what one CTA's shared
 * memory holds (bf16 151936 columns: 2 CTAs), and a long row that one CTA
 * could hold is in flight over cl SMs at once. A kernel of its own: the
 * cluster's rank, row stride and exit barrier cost the one-CTA loop
 * nothing. */
template <typename T, bool LN, int MODE, int H, bool LONG>
__global__ void fwd_stage_cl(const fwd_args a)
{
    fwd_loop_body<T, LN, MODE, H, 1, LONG, true, true>(a);
}

/* The loop kernel for rows of N elements over tpr threads. Element accesses
 * (one element a slot) keep LayerNorm's three passes: a division per
 * element would cost more than the pass it saves. */
template <typename T, bool LN, int MODE, int H, int U> fwd_fn fwd_loop_fn(int64_t N, int tpr)
{
    if constexpr (sizeof(T) == 4 && !LN)
        if (N > (int64_t)kFwdLoopPlainElems * tpr) return fwd_loop_long<T, false, MODE, H, U>;
    if constexpr (LN && MODE != AM_ELEM)
        if (N * (int64_t)sizeof(T) >= kFwdLoopChanBytes &&
            N > (int64_t)(kFwdLoopChanPasses - 1) * U * tpr * vec_of<T>())
            return fwd_loop_long<T, true, MODE, H, U>;
    return fwd_loop<T, LN, MODE, H, U>;
}

template <typename T, bool LN, int MODE, int H> fwd_fn fwd_stage_fn(int64_t N, int tpr, int cl)
{
    if constexpr (sizeof(T) == 4 && !LN) {
        const bool lng = N > (int64_t)kFwdLoopPlainElems * tpr * cl; /* a thread's share */
        if (cl > 1) return lng ? fwd_stage_cl<T, LN, MODE, H, true> : fwd_stage_cl<T, LN, MODE, H, false>;
        return lng ? fwd_stage<T, LN, MODE, H, true> : fwd_stage<T, LN, MODE, H, false>;
    }
    return cl > 1 ? fwd_stage_cl<T, LN, MODE, H, false> : fwd_stage<T, LN, MODE, H, false>;
}

} /* namespace */
#endif
