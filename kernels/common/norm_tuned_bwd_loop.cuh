/* Backward kernels of the tuned RMSNorm / LayerNorm that re-read the row
 * (norm_tuned.cuh): bwd_loop (the tuner's reload 2, 4, 8; below) and the
 * fallback for any N (reload = 1): dx per row in two passes (bwd_dx_loop),
 * dw by a column-tiled kernel over 256-row chunks (x and dy read again,
 * dw_cols), then dw_reduce (norm_tuned_bwd.cuh, as bwd_reg's partials). */
#ifndef KB_NORM_TUNED_BWD_LOOP_CUH
#define KB_NORM_TUNED_BWD_LOOP_CUH

#include "norm_tuned_bwd.cuh"

namespace {

/* Fallback dx: one CTA per row, pass 1 reduces, pass 2 re-reads and writes. */
template <typename T, bool LN, bool AL> __global__ void bwd_dx_loop(const bwd_args a)
{
    constexpr int VEC = vec_of<T>();
    constexpr int V = LN ? 2 : 1;
    __shared__ red_smem<V> rsm;
    const int tpr = (int)blockDim.x;
    row_reducer<V> reduce(rsm, tpr, 1);
    const float n = (float)a.N;
    const bool w16 = kb_aligned16(a.w);
    for (int64_t row = blockIdx.x; row < a.M; row += gridDim.x) {
        const T *xr = static_cast<const T *>(a.x) + row * a.N;
        const T *dr = static_cast<const T *>(a.dy) + row * a.N;
        const row_stats m = ld_stats<LN>(a, row, true);
        float s[V], xf[VEC], df[VEC], wv[VEC];
#pragma unroll
        for (int k = 0; k < V; k++) s[k] = 0.f;
        /* x, dy and w of the pack at e (valid elements). */
        auto load = [&](int64_t e, int valid) {
            kb_unpack<T>(ld_pack<T, AL, false>(xr + e, valid), xf);
            kb_unpack<T>(ld_pack<T, AL, false>(dr + e, valid), df);
            ld_w<VEC, AL>(a.w + e, valid, w16, wv);
        };
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            load(e, valid);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const float xh = bwd_xh(m, xf[j]), gv = df[j] * wv[j];
                s[0] += gv * xh;
                if constexpr (LN) s[1] += gv;
            }
        }
        reduce(s);
        const float mgx = s[0] / n, mg = LN ? s[V - 1] / n : 0.f;
        T *ob = static_cast<T *>(a.dx) + row * a.N;
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            load(e, valid);
#pragma unroll
            for (int j = 0; j < VEC; j++) xf[j] = bwd_dx(m, xf[j], df[j], wv[j], mg, mgx);
            st_pack<T, AL>(ob + e, kb_pack<T>(xf), valid);
        }
    }
}

/* bwd_loop (the tuner's reload = U: 2, 4 or 8), 16-byte packs (aligned
 * rows, or SH: shifted slots). A persistent grid of S slots, each a CTA of
 * R row slots (blockDim (tpr, R)) or a cluster of cl CTAs (R = 1); slot s
 * owns row groups s, s+S, ... as bwd_reg's slots do, but holds nothing of a
 * row through its reduction:
 *   pass 1  reads x and dy, U packs per thread in flight per step, under an
 *           L2 evict-last policy, sums g*xh (and g), and adds dy*xh to the
 *           thread's dw accumulators;
 *   pass 2  (after the row's reduction) reads x and dy again, evict-first:
 *           L2 still holds them, it serves the re-read, and writes dx
 *           (evict-first stores with H = 0, plain with H = 1).
 * Why: softmax backward's loop, with the same 2:1 read:write traffic, runs
 * at copy speed where the register kernel (row held through the reduction,
 * one or two CTAs per SM) stops near 90 % (docs/dev/kernels/norm-backward.md): with few
 * registers, several CTAs per SM sit in different passes and keep loads in
 * flight. dw needs the thread to own the same columns on every row, hence
 * the persistent grid; its accumulators live in shared memory, float4
 * planes per (row slot, pack, quarter), conflict-free, the thread's own
 * (no barrier until the end): pack k of a row belongs to thread k % G of
 * the slot (G = tpr*cl, rank-major as bwd_reg's lane_map), its i-th,
 * i = k / G, at plane (r*K + i)*Q + q of row slot r, K = ceil(span /
 * (VEC*G)). A cluster's row sums cross it (row_reducer), so rows too long
 * for one CTA's shared memory still go. On aligned rows w comes through
 * the read-only path (L1: every CTA of the SM reads the same columns). The
 * slot's partial row is the R row slots summed in order (each CTA of a
 * cluster writing its own packs' columns), then dw_reduce, as bwd_reg's.
 * SH (16-bit types, N % VEC != 0): bwd_reg's shifted slots. Slot s serves
 * shift class s % P only (rows c, c+P, ...; its groups s/P, s/P + S/P,
 * ...), so its pack k holds columns k*VEC - sh + j on every row it sees, j
 * in [lo, hi) of the row's span; the thread's w at the class's column shift
 * sits in shared memory (one more plane of K packs), the row's first and
 * last slots (masked loads, the tensor's end, element stores) go through
 * their own path after the U-wide loop, and the partial row is written
 * element by element.
 * Limits: 16-byte aligned tensors, and N % VEC == 0 unless SH (the launch
 * refuses the rest: fp32 at odd N included); R*K*tpr*VEC floats of shared
 * memory a CTA (SH: (R+1)*K*tpr*VEC), K*G*VEC being the span rounded up to
 * VEC*G: at one row slot of one CTA N up to ~57K aligned, ~28K odd, a
 * cluster of cl CTAs cl times that. Registers capped at what the U raw
 * packs of x and dy need plus the rest (ptxas -v, CUDA 13.0: 56, 80, 112
 * for U = 2, 4, 8, the smallest without spills: 72 and 104 spilled 8 bytes
 * in some types; LayerNorm's 16-bit U = 8 spilled at 104 and 112, so 120;
 * SH: 96 at U = 4, 128 at U = 8, no U = 2 (norm_tuned_space.cuh,
 * bwd_loop_kernel)). */
template <bool LN, int U, bool SH> constexpr int bwd_loop_cap()
{
    if constexpr (SH) return U == 8 ? 128 : 96; /* U = 4: the edge slots' path needs ~90 */
    return kb_reg_cap(2 * U * 4, U == 2 ? 40 : LN && U == 8 ? 56 : 48);
}
template <typename T, bool LN, int U, int H, bool SH = false>
__global__ void __maxnreg__((bwd_loop_cap<LN, U, SH>())) bwd_loop(const bwd_args a)
{
    static_assert(!SH || (sizeof(T) == 2 && H == 0), "shifted slots: 16-bit types, hint 0");
    constexpr int VEC = vec_of<T>(), Q = VEC / 4, V = LN ? 2 : 1;
    extern __shared__ float4 dyn[];
    __shared__ red_smem<V> rsm;
    pdl_trigger(); /* dw_reduce may be scheduled; it waits for our completion */
    const int tpr = (int)blockDim.x, R = (int)blockDim.y, tx = (int)threadIdx.x,
              ty = (int)threadIdx.y;
    /* A cluster of cl CTAs is one slot: its CTAs split each row, slot k to
     * thread gt = k % G of the cluster (G = tpr*cl, rank-major, as lane_map). */
    const int cl = a.cl, rank = cl > 1 ? (int)nt_cluster_rank() : 0;
    const int G = tpr * cl, gt = rank * tpr + tx;
    const int64_t slot = blockIdx.x / cl;
    row_reducer<V> reduce(rsm, tpr, cl);
    /* SH: this slot's class and its rows' shift; the row's span N + sh from
     * the aligned start is cut into nsl slots. */
    const int per = SH ? a.per : 1, cls = SH ? (int)(slot % per) : 0;
    const int sh = SH ? (int)(((int64_t)cls * a.N) & (VEC - 1)) : 0, N = (int)a.N;
    const int nsl = (N + sh + VEC - 1) / VEC;
    const int K = (int)((a.N + (SH ? VEC - 1 : 0) + (int64_t)VEC * G - 1) / ((int64_t)VEC * G));
    const float n = (float)a.N;
    const int64_t total = a.M * a.N;
    const uint64_t pol = kb_policy_evict_last();
    const T *xg = static_cast<const T *>(a.x), *dg = static_cast<const T *>(a.dy);
    T *og = static_cast<T *>(a.dx);
    auto su = [&](int r, int i, int q) { return ((r * K + i) * Q + q) * tpr + tx; };
    for (int i = 0; i < K; i++)
#pragma unroll
        for (int q = 0; q < Q; q++) dyn[su(ty, i, q)] = make_float4(0.f, 0.f, 0.f, 0.f);
    /* SH: the thread's w at its slots' columns (0 outside the row), in the
     * plane after the accumulators (su(R, i, q)), filled once by row slot 0
     * for all R: a shifted w read per slot (ld_w_at) took 112-218 registers
     * against 56-104 aligned (ptxas -v, uncapped). */
    if constexpr (SH) {
        if (ty == 0)
            for (int i = 0; i < K; i++) {
                float wv[VEC];
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    const int c = (gt + i * G) * VEC - sh + j;
                    wv[j] = c >= 0 && c < N ? __ldg(a.w + c) : 0.f;
                }
#pragma unroll
                for (int q = 0; q < Q; q++)
                    dyn[su(R, i, q)] =
                        make_float4(wv[4 * q], wv[4 * q + 1], wv[4 * q + 2], wv[4 * q + 3]);
            }
        if (R > 1) __syncthreads();
    }
    /* Elements [lo(k), hi(k)) of slot k are the row's (SH: only its first
     * and last slots have fewer than VEC). */
    auto lo = [&](int k) { return SH && k * VEC < sh ? sh - k * VEC : 0; };
    auto hi = [&](int k) { return SH && N + sh - k * VEC < VEC ? N + sh - k * VEC : VEC; };
    /* Edge slot k of tensor g at flat index f (SH: a row's first and last
     * slots) under cache treatment C: the tensor's last slot may end early,
     * and the neighbouring rows' elements are zeroed. */
    auto ld_edge = [&](auto lp, const T *g, int64_t f, int k) -> uint4 {
        constexpr kb_cache C = decltype(lp)::value;
        uint4 r = f + VEC <= total ? kb_ld128_c<C>(g + f, pol)
                                   : ld_pack<T, false, false>(g + f, (int)(total - f));
        if (lo(k) > 0 || hi(k) < VEC) r = mask_pack<T>(r, lo(k), hi(k));
        return r;
    };
    /* The thread's slots k = gt + i*G < cnt of the row at flat index base
     * (SH: its aligned start), U loads of each tensor under cache treatment
     * lp issued before use: use(k, i, x, dy). SH: the row's first and last
     * slots go through ld_edge one by one after the others, so the U-wide
     * loop holds whole 16-byte slots only (masks and the tensor's end in it
     * took 72-120 registers plus spills, docs/dev/kernels/norm-backward.md). */
    auto each = [&](auto lp, int64_t base, int cnt, auto use) {
        constexpr kb_cache C = decltype(lp)::value;
        const int kb = SH ? 1 : 0, ke = SH ? cnt - 1 : cnt; /* the U-wide loop's slots */
        int i0 = gt >= kb ? 0 : 1;
#pragma unroll 1
        for (int k0 = gt + i0 * G; k0 < ke; k0 += G * U, i0 += U) {
            uint4 xr[U], dr[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * G;
                xr[u] = dr[u] = make_uint4(0u, 0u, 0u, 0u);
                if (k < ke) {
                    xr[u] = kb_ld128_c<C>(xg + base + (int64_t)k * VEC, pol);
                    dr[u] = kb_ld128_c<C>(dg + base + (int64_t)k * VEC, pol);
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + u * G < ke) use(k0 + u * G, i0 + u, xr[u], dr[u]);
        }
        if constexpr (SH) {
            if (cnt > 0 && gt == 0) use(0, 0, ld_edge(lp, xg, base, 0), ld_edge(lp, dg, base, 0));
            const int kl = cnt - 1;
            if (kl > 0 && kl % G == gt) {
                const int64_t f = base + (int64_t)kl * VEC;
                use(kl, kl / G, ld_edge(lp, xg, f, kl), ld_edge(lp, dg, f, kl));
            }
        }
    };
    auto get_w = [&](int k, int i, float(&wv)[VEC]) {
        if constexpr (SH) {
#pragma unroll
            for (int q = 0; q < Q; q++) {
                const float4 t = dyn[su(R, i, q)];
                wv[4 * q] = t.x;
                wv[4 * q + 1] = t.y;
                wv[4 * q + 2] = t.z;
                wv[4 * q + 3] = t.w;
            }
        } else {
            ld_w<VEC, true>(a.w + (int64_t)k * VEC, VEC, true, wv);
        }
    };
    using first_t = std::integral_constant<kb_cache, KB_LD_LAST>;
    using last_t = std::integral_constant<kb_cache, KB_LD_STREAM>;

    /* Slot k's x, dy and w as floats, the same in both passes. */
    auto operands = [&](int k, int i, uint4 xv, uint4 dv, float (&xf)[VEC], float (&df)[VEC],
                        float (&wv)[VEC]) {
        kb_unpack<T>(xv, xf);
        kb_unpack<T>(dv, df);
        get_w(k, i, wv);
    };

    /* Uniform over the cluster: every thread reduces once a group. */
    const int64_t slots = gridDim.x / cl / per; /* per class */
    for (int64_t g = slot / per; g < a.ngroups; g += slots) {
        const int64_t row = cls + per * (g * R + ty);
        const bool ok = row < a.M;
        const row_stats m = ld_stats<LN>(a, row, ok);
        const int64_t base = (ok ? row : 0) * a.N - sh;
        const int cnt = ok ? nsl : 0;
        float s[V];
#pragma unroll
        for (int k = 0; k < V; k++) s[k] = 0.f;
        each(first_t{}, base, cnt, [&](int k, int i, uint4 xv, uint4 dv) {
            float xf[VEC], df[VEC], wv[VEC];
            operands(k, i, xv, dv, xf, df, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const float xh = bwd_xh(m, xf[j]), gv = df[j] * wv[j];
                s[0] += gv * xh;
                if constexpr (LN) s[1] += gv;
                xf[j] = df[j] * xh; /* dw contribution (0 outside the row: dy masked) */
            }
#pragma unroll
            for (int q = 0; q < Q; q++) {
                float4 &t = dyn[su(ty, i, q)];
                t = make_float4(t.x + xf[4 * q], t.y + xf[4 * q + 1], t.z + xf[4 * q + 2],
                                t.w + xf[4 * q + 3]);
            }
        });
        reduce(s);
        const float mgx = s[0] / n, mg = LN ? s[V - 1] / n : 0.f;
        each(last_t{}, base, cnt, [&](int k, int i, uint4 xv, uint4 dv) {
            float xf[VEC], df[VEC], wv[VEC];
            operands(k, i, xv, dv, xf, df, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) xf[j] = bwd_dx(m, xf[j], df[j], wv[j], mg, mgx);
            T *dst = og + base + (int64_t)k * VEC;
            if (!SH || (lo(k) == 0 && hi(k) == VEC)) st_pack<T, true, H == 0>(dst, kb_pack<T>(xf), VEC);
            else st_range<T>(dst, kb_pack<T>(xf), lo(k), hi(k));
        });
    }

    /* The slot's partial row (each CTA of a cluster its own slots'
     * columns): the R row slots summed in slot order (SH: slot k's
     * elements [lo, hi) are columns k*VEC - sh + j). */
    if (R > 1) __syncthreads();
    if (ty == 0) {
        float *ws = a.ws + slot * a.N;
        for (int i = 0, k = gt; k < nsl; i++, k += G) {
            float v[VEC];
            NT_SUM_SLOTS(dyn, su, R, i, v)
            if constexpr (!SH) {
#pragma unroll
                for (int q = 0; q < Q; q++)
                    reinterpret_cast<float4 *>(ws)[k * Q + q] =
                        make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (j >= lo(k) && j < hi(k)) ws[k * VEC - sh + j] = v[j];
            }
        }
    }
    reduce.finish();
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
        const row_stats m = ld_stats<LN>(a, r, true);
        acc += kb_to_float(__ldg(dy + r * a.N + col)) *
               bwd_xh(m, kb_to_float(__ldg(x + r * a.N + col)));
    }
    a.ws[(int64_t)blockIdx.y * a.N + col] = acc;
}

} /* namespace */
#undef NT_SUM_SLOTS
#endif
