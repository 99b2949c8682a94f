/* Backward kernels of the tuned RMSNorm / LayerNorm (norm_tuned.cuh).
 *
 * bwd_reg + dw_reduce: a persistent grid of S slots (CTAs, or clusters),
 * S = min(row groups, SMs x occupancy); slot s owns row groups s, s+S, ...
 * (slots running together touch neighbouring rows); with shifted rows
 * (below) S is whole classes, P x nslots, and slot s owns groups s/P,
 * s/P + nslots, ... of class s % P. The thread's w slice is
 * copied to shared memory once (w is read twice per row). Per group of R
 * rows: x and dy raw in registers (NV 16-byte packs each), the saved rstd
 * (and mean), one reduction round of sum(g*xh) (and sum(g)), dx streamed
 * out. Pack i of the next group (x, dy) is loaded into pack i's registers
 * right after pack i of dx is stored, and the next rows' statistics with
 * them, so the loads of one group overlap the stores of the previous one.
 * With DB (16-byte packs: aligned, or shifted slots) the next group's
 * packs are requested before this group's sums are taken, so they are in
 * flight through the reduction (its
 * barriers and, for a cluster, the DSMEM exchange) as well as through the
 * stores: a long row split over a cluster runs one CTA per SM, and without
 * it nothing is loading while the row is reduced. DB = 1: into a second set
 * of registers (NV <= 2: twice the pack registers); DB = 2: into shared
 * memory by per-thread cp.async (no pack registers; NV x 32 bytes of shared
 * memory per thread), each thread reading back only its own copies after
 * cp.async.wait_group, so no barrier.
 * dy*xh accumulates per owned column in fp32 (registers, or shared memory
 * with SACC) over the slot's rows; the R row slots of a CTA are then summed
 * in order and the slot writes its partial row ws[slot, :] (with a cluster,
 * each CTA its column slice). dw_reduce sums the S partials per column in a
 * fixed order, launched with programmatic dependent launch to hide its
 * launch latency: the same bits on every run, no atomics.
 *
 * N % VEC != 0, 16-bit types (AM_SHIFT): shifted slots, as the forward's,
 * with the rows dealt out by shift class. Row r starts (r*N) % VEC elements
 * past a 16-byte boundary; that shift repeats every P = VEC / gcd(N, VEC)
 * rows, so rows r, r+P, r+2P, ... (one class) cut into 16-byte slots at the
 * same columns. Slot s serves class s % P only (its R row slots too), so a
 * thread's slots hold the same columns on every row it sees: dw accumulates
 * per thread as in the aligned kernel, x, dy and dx move as whole 128-bit
 * slots (the two edge slots of a row masked on load, stored element by
 * element), and the thread's w slice is read once at its class's column
 * shift. The partial rows of the P classes are summed by dw_reduce like any
 * other slots.
 *
 * Class-crossing slots (XC, the tuner's db=3: shifted rows split over a
 * cluster, DB = 2's kernel otherwise).
 * Whole classes round the grid down to a multiple of P (30 clusters that
 * fit over 8 classes run 24: a fifth of the GPU idle). With XC every
 * cluster that fits is a slot: the groups in class-major order (class c's
 * group g is number c * ngroups + g) are cut into nslots contiguous shares,
 * and a slot runs its share as one pass per class it covers, each pass as
 * above (the class's shift, lane map and w slice, dw from zero) ending in
 * its own partial row, slot + class: distinct for every (slot, class)
 * pair, slots + P - 1 rows in all. A share covers at most two classes
 * while a class has more groups than a share (4096x50257: 512 against
 * 137); the rows are read in order within a share, so the slots running
 * together touch rows ngroups * P / nslots apart. Limit: a second pass
 * costs its w slice, its partial row and an empty pipeline at the
 * crossing, which short shares (few rows per slot) do not earn back
 * (docs/dev/kernels/norm-backward.md has the H200 figures), so it is the tuner's choice.
 *
 * The loop kernels (bwd_loop, the tuner's reload 2-8) and the fallback
 * (bwd_dx_loop and dw_cols, reload 1) are in norm_tuned_bwd_loop.cuh; they
 * share this file's arguments, row statistics, NT_SUM_SLOTS and
 * dw_reduce. */
#ifndef KB_NORM_TUNED_BWD_CUH
#define KB_NORM_TUNED_BWD_CUH

#include "norm_tuned_dev.cuh"

namespace {

constexpr int kReduceRows = 32; /* dw_reduce: slot lanes per column tile */
constexpr int kReduceUnroll = 8; /* dw_reduce: independent loads per lane */
constexpr int kColsRows = 256;   /* dw_cols (fallback): rows per partial  */

struct bwd_args {
    const void *x, *dy;
    const float *w, *mean, *rstd;
    void *dx;
    float *ws;
    int64_t M, N, ngroups, nslots; /* AM_SHIFT: groups and slots per class */
    int cl;
    int per;   /* AM_SHIFT: P, the rows' shift period (else 1) */
    int stage; /* DB = 2: float4 offset of the staging area in dynamic smem */
};

/* A row's saved statistics; rows past M get zeros (so does everything else). */
struct row_stats {
    float mu, rs;
};

template <bool LN> __device__ __forceinline__ row_stats ld_stats(const bwd_args &a, int64_t row, bool ok)
{
    row_stats st;
    st.rs = ok ? __ldg(a.rstd + row) : 0.f;
    st.mu = LN && ok ? __ldg(a.mean + row) : 0.f;
    return st;
}

/* xh = (x - mean) * rstd; dx = rstd * (g - mean(g) - xh * mean(g*xh)). */
__device__ __forceinline__ float bwd_xh(const row_stats &m, float x) { return (x - m.mu) * m.rs; }
__device__ __forceinline__ float bwd_dx(const row_stats &m, float x, float d, float w, float mg,
                                        float mgx)
{
    return m.rs * (d * w - mg - bwd_xh(m, x) * mgx);
}

/* v[VEC] = pack i's dw accumulators summed over the R row slots, su(r, i, q)
 * indexing their Q = VEC / 4 float4 planes in acc: in slot order, fixed so
 * that dw has the same bits on every run. A macro rather than a function:
 * every function form tried (2026-12-04) made ptxas reorder 168 of bwd_reg's
 * kernels, whose SASS the GPU runs verified; the macro expands to the code
 * they were built from. */
#define NT_SUM_SLOTS(acc, su, R, i, v)                                                         \
    _Pragma("unroll") for (int q = 0; q < Q; q++)                                              \
    {                                                                                          \
        float4 t = acc[su(0, i, q)];                                                           \
        for (int r = 1; r < R; r++) {                                                          \
            const float4 u = acc[su(r, i, q)];                                                 \
            t = make_float4(t.x + u.x, t.y + u.y, t.z + u.z, t.w + u.w);                       \
        }                                                                                      \
        v[4 * q] = t.x;                                                                        \
        v[4 * q + 1] = t.y;                                                                    \
        v[4 * q + 2] = t.z;                                                                    \
        v[4 * q + 3] = t.w;                                                                    \
    }

/* SACC: the dw accumulators live in shared memory (float4 planes, one per
 * (row slot, pack, quarter), conflict-free) instead of registers: fewer
 * registers, more CTAs per SM, at one shared read-modify-write per pack and
 * row. Otherwise they are registers and, with R > 1, shared memory (N
 * floats, overlaying the w slice at the end) serves the final in-order sum
 * over the row slots. H: dx's 16-byte stores (AM_AL only), 0 evict-first,
 * 1 plain (the tuner's `hint`). DB: how the next group's packs arrive
 * (0 rolled in behind the stores, 1 second register set, 2 staged in shared
 * memory at float4 offset a.stage; header above). XC: class-crossing slots
 * (header; a.nslots then counts all slots). This is the kernel body;
 * bwd_reg below wraps it with or without a register cap. */
template <typename T, bool LN, int NV, int AM, bool SACC, int H, int DB, bool XC = false>
__device__ __forceinline__ void bwd_reg_body(const bwd_args &a)
{
    static_assert(DB == 0 || (AM != AM_ELEM && (DB == 2 || NV <= 2)),
                  "double buffer: 16-byte packs (aligned or shifted); in registers NV <= 2");
    static_assert(!XC || AM == AM_SHIFT, "class-crossing slots: shifted rows only");
    constexpr bool AL = AM == AM_AL, SH = AM == AM_SHIFT;
    constexpr int VEC = vec_of<T>(), Q = VEC / 4;
    constexpr int V = LN ? 2 : 1;
    extern __shared__ float4 dyn[];
    __shared__ red_smem<V> rsm;
    pdl_trigger(); /* dw_reduce may be scheduled; it waits for our completion */
    const int64_t slot = blockIdx.x / a.cl, R = blockDim.y, total = a.M * a.N;
    /* XC (class-crossing slots, header): the slot's share [xu, xe) of the
     * class-major group order, run as one pass per class it covers: class
     * cls, groups [xg0, xgend), partial row slot + cls. a.ws holds
     * a.nslots + P - 1 rows and a.nslots <= P * a.ngroups (no empty share):
     * nt_bwd_launch clamps the slots to both. */
    int64_t xu = 0, xe = 0, xg0 = 0, xgend = 0;
    if constexpr (XC) {
        const int64_t W = (int64_t)a.per * a.ngroups;
        xu = slot * W / a.nslots;
        xe = (slot + 1) * W / a.nslots;
        xg0 = xu % a.ngroups;
        xgend = min(a.ngroups, xg0 + (xe - xu));
    }
    /* SH: this slot's class and its rows' shift; the thread's slots cover
     * the span N + sh from the aligned start, slot k = columns k*VEC - sh + j. */
    const int per = SH ? a.per : 1;
    int cls = XC ? (int)(xu / a.ngroups) : SH ? (int)(slot % per) : 0;
    int sh = SH ? (int)(((int64_t)cls * a.N) & (VEC - 1)) : 0;
    lane_map lm(a.N + sh, VEC, a.cl);
    row_reducer<V> reduce(rsm, lm.tpr, lm.cl);
    const float n = (float)a.N;
    const bool w16 = kb_aligned16(a.w);
    const T *xg = static_cast<const T *>(a.x), *dg = static_cast<const T *>(a.dy);
    T *og = static_cast<T *>(a.dx);
    /* Elements [lo(i), hi(i)) of pack i are columns of the row (SH: only a
     * row's first and last slots have fewer than VEC). */
    auto lo = [&](int i) { return SH && lm.at(i) < sh ? sh - lm.at(i) : 0; };
    auto hi = [&](int i) { return lm.valid(i) < VEC ? lm.valid(i) : VEC; };
    /* float4 index of quarter q of pack i of row slot r, this thread */
    auto su = [&](int r, int i, int q) {
        return ((r * NV + i) * Q + q) * lm.tpr + (int)threadIdx.x;
    };
    /* The thread's w slice, in shared memory after the accumulators; the R
     * row slots share it (row slot 0 fills it). */
    float4 *wsm = dyn + (SACC ? R * NV * Q * lm.tpr : 0);
    float acc[SACC ? 1 : NV][VEC];
    for (;;) { /* XC: one pass per class of the slot's share; otherwise once */
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
                if (i < lm.mine) {
                    if constexpr (SH) ld_w_at<VEC>(a.w, lm.at(i) - sh, (int)a.N, w16, wv);
                    else ld_w<VEC, AL>(a.w + lm.at(i), lm.valid(i), w16, wv);
                }
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

        /* Group gg of this slot's class for this thread: pack count (lm.mine
         * or 0), the flat offset of pack 0 (SH: of its slot) and the stats. */
        auto locate = [&](int64_t gg, int &cnt, int64_t &off, row_stats &st) {
            const int64_t row = cls + per * (gg * R + threadIdx.y);
            const bool ok = gg < (XC ? xgend : a.ngroups) && row < a.M;
            const int64_t start = (ok ? row : 0) * a.N;
            cnt = ok ? lm.mine : 0;
            off = (ok ? start - sh : 0) + lm.first;
            st = ld_stats<LN>(a, row, ok);
        };
        auto load = [&](uint4 &xd, uint4 &dd, int i, int cnt, int64_t off) {
            xd = dd = make_uint4(0u, 0u, 0u, 0u);
            if (i < cnt) {
                if constexpr (SH) {
                    const int64_t f = off + i * lm.stride;
                    xd = ld_slot<T, true>(xg, f, total);
                    dd = ld_slot<T, true>(dg, f, total);
                    if (lo(i) > 0 || hi(i) < VEC) { /* neighbouring rows' elements */
                        xd = mask_pack<T>(xd, lo(i), hi(i));
                        dd = mask_pack<T>(dd, lo(i), hi(i));
                    }
                } else {
                    xd = ld_pack<T, AL, true>(xg + off + i * lm.stride, lm.valid(i));
                    dd = ld_pack<T, AL, true>(dg + off + i * lm.stride, lm.valid(i));
                }
            }
        };

        int64_t g = XC ? xg0 : slot / per, off;
        int cnt;
        row_stats m;
        locate(g, cnt, off, m);
        uint4 xv[NV], dv[NV], xn[DB == 1 ? NV : 1], dn[DB == 1 ? NV : 1];
#pragma unroll
        for (int i = 0; i < NV; i++) load(xv[i], dv[i], i, cnt, off);
        /* DB = 2: pack i of tensor k (0 x, 1 dy) of this thread's row slot */
        uint4 *stg = reinterpret_cast<uint4 *>(dyn) + a.stage;
        auto si = [&](int i, int k) {
            return ((threadIdx.y * NV + i) * 2 + k) * lm.tpr + (int)threadIdx.x;
        };

        for (; g < (XC ? xgend : a.ngroups); g += XC ? 1 : a.nslots) {
            int cntn;
            int64_t offn;
            row_stats mn;
            locate(g + (XC ? 1 : a.nslots), cntn, offn, mn);
            if constexpr (DB == 1)
#pragma unroll
                for (int i = 0; i < NV; i++) load(xn[i], dn[i], i, cntn, offn);
            if constexpr (DB == 2) {
#pragma unroll
                for (int i = 0; i < NV; i++) {
                    const bool ok = i < cntn; /* else zero-filled, nothing read */
                    if constexpr (SH) { /* the tensor's last slot may hold fewer than VEC */
                        const int64_t f = ok ? offn + i * lm.stride : 0;
                        const int bytes = !ok ? 0
                                          : total - f < VEC ? (int)(total - f) * (int)sizeof(T)
                                                            : 16;
                        kb_cp_async16n(stg + si(i, 0), xg + f, bytes);
                        kb_cp_async16n(stg + si(i, 1), dg + f, bytes);
                    } else {
                        kb_cp_async16(stg + si(i, 0), ok ? xg + offn + i * lm.stride : xg, ok);
                        kb_cp_async16(stg + si(i, 1), ok ? dg + offn + i * lm.stride : dg, ok);
                    }
                }
                kb_cp_async_commit();
            }
            float s[V], xf[VEC], df[VEC], wv[VEC];
#pragma unroll
            for (int k = 0; k < V; k++) s[k] = 0.f;
#pragma unroll
            for (int i = 0; i < NV; i++)
                if (i < cnt) {
                    kb_unpack<T>(xv[i], xf);
                    kb_unpack<T>(dv[i], df);
                    get_w(i, wv);
#pragma unroll
                    for (int j = 0; j < VEC; j++) {
                        const float xh = bwd_xh(m, xf[j]), gv = df[j] * wv[j];
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
            reduce(s);
            const float mgx = s[0] / n, mg = LN ? s[V - 1] / n : 0.f;
#pragma unroll
            for (int i = 0; i < NV; i++) {
                if (i < cnt) {
                    kb_unpack<T>(xv[i], xf);
                    kb_unpack<T>(dv[i], df);
                    get_w(i, wv);
#pragma unroll
                    for (int j = 0; j < VEC; j++) xf[j] = bwd_dx(m, xf[j], df[j], wv[j], mg, mgx);
                    T *dst = og + off + i * lm.stride;
                    if (!SH || (lo(i) == 0 && hi(i) == VEC))
                        st_pack<T, AL || SH, H == 0>(dst, kb_pack<T>(xf), lm.valid(i));
                    else st_range<T>(dst, kb_pack<T>(xf), lo(i), hi(i));
                }
                if constexpr (DB == 1) {
                    xv[i] = xn[i];
                    dv[i] = dn[i];
                } else if constexpr (DB == 0) {
                    load(xv[i], dv[i], i, cntn, offn);
                }
            }
            if constexpr (DB == 2) {
                kb_cp_async_wait_all();
#pragma unroll
                for (int i = 0; i < NV; i++) {
                    xv[i] = stg[si(i, 0)];
                    dv[i] = stg[si(i, 1)];
                    if (SH && (lo(i) > 0 || hi(i) < VEC)) { /* as load(): neighbouring rows */
                        xv[i] = mask_pack<T>(xv[i], lo(i), hi(i));
                        dv[i] = mask_pack<T>(dv[i], lo(i), hi(i));
                    }
                }
            }
            cnt = cntn;
            off = offn;
            m = mn;
        }

        /* The slot's partial row: the R row slots summed in slot order. Pack i
         * holds columns at(i) - sh + j, j in [lo(i), hi(i)). */
        float *ws = a.ws + (XC ? slot + cls : slot) * a.N;
        if constexpr (SACC) {
            if (R > 1) __syncthreads();
            if (threadIdx.y == 0)
#pragma unroll
                for (int i = 0; i < NV; i++)
                    if (i < lm.mine) {
                        float v[VEC];
                        NT_SUM_SLOTS(dyn, su, R, i, v)
                        const int c0 = lm.at(i) - sh;
#pragma unroll
                        for (int j = 0; j < VEC; j++)
                            if (AL || (j >= lo(i) && j < hi(i))) ws[c0 + j] = v[j];
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
                            const int c0 = lm.at(i) - sh;
#pragma unroll
                            for (int j = 0; j < VEC; j++)
                                if (AL || (j >= lo(i) && j < hi(i)))
                                    dst[c0 + j] = r == 0 ? acc[i][j] : dst[c0 + j] + acc[i][j];
                        }
                if (R > 1) __syncthreads();
            }
            if (R > 1)
                for (int c = (int)(threadIdx.y * blockDim.x + threadIdx.x); c < a.N; c += R * lm.tpr)
                    ws[c] = comb[c];
        }
        if constexpr (!XC) {
            break;
        } else {
            xu += xgend - xg0;
            if (xu >= xe) {
                /* Partial rows slot + cls are unique, and every one of
                 * 0 .. slots + P - 2 is written once: a share that ends on a
                 * class boundary leaves slot + cls + 1 to nobody, so its slot
                 * writes that row as zeros. */
                if (xe % a.ngroups == 0 && slot < a.nslots - 1) {
                    float *z = a.ws + (slot + xe / a.ngroups) * a.N;
                    const int64_t nt = (int64_t)lm.tpr * R;
                    const int64_t rank = a.cl > 1 ? (int64_t)nt_cluster_rank() : 0;
                    for (int64_t c = rank * nt + threadIdx.y * lm.tpr + threadIdx.x; c < a.N;
                         c += nt * a.cl)
                        z[c] = 0.f;
                }
                break;
            }
            if (R > 1) __syncthreads(); /* the next pass rewrites w and the accumulators */
            cls = (int)(xu / a.ngroups);
            xg0 = 0;
            xgend = min(a.ngroups, xe - xu);
            sh = (int)(((int64_t)cls * a.N) & (VEC - 1));
            lm = lane_map(a.N + sh, VEC, a.cl);
        }
    } /* for (;;) */
    reduce.finish();
}

/* Block-size cap that fits the kernel without spills (ptxas -v). Aligned
 * packs: NV <= 2: 1024 threads (64 registers); NV = 3, or 4 with dw in
 * shared memory: 768 (80 registers, three 256-thread CTAs per SM). Shifted
 * slots (masks, edge stores, the class's shift: a few more registers): the
 * aligned cap spilled 8-32 bytes at NV = 2 and 3 with dw in registers and at
 * NV = 4 with dw in shared memory (CUDA 13.0), so those take one step lower
 * (768: 80 registers, 512: 128); NV = 1, and 2-3 with dw in shared memory,
 * keep the aligned cap. Double-buffered in registers (DB = 1, NV <= 2:
 * twice the pack registers): NV = 1 1024 (51-57 registers, shifted 59-62),
 * NV = 2 768 (77-80), except shifted slots with dw in registers: uncapped
 * (153-156 registers; LayerNorm spilled 4-32 bytes at 768, both 48-68 at
 * 512). Staged in shared memory (DB = 2): the caps of DB = 0, spill-free at
 * 0-6 more registers (shifted slots included). Otherwise (and element
 * accesses) uncapped: a cap there makes ptxas trade registers for spills. */
template <int NV, int AM, bool SACC, int DB> constexpr int bwd_cap()
{
    if constexpr (DB == 1) return NV == 1 ? 1024 : AM == AM_SHIFT && !SACC ? 0 : 768;
    else if constexpr (AM == AM_AL) return NV <= 2 ? 1024 : NV == 3 || (SACC && NV == 4) ? 768 : 0;
    else if constexpr (AM == AM_SHIFT)
        return NV == 1 || (SACC && NV == 2) ? 1024 : NV == 2 || (SACC && NV == 3) ? 768
                                                      : NV == 3 || (SACC && NV == 4) ? 512 : 0;
    else return 0;
}

template <int MAXT, typename T, bool LN, int NV, int AM, bool SACC, int H, int DB, bool XC>
__global__ void __launch_bounds__(MAXT) bwd_reg_cap(const bwd_args a)
{
    bwd_reg_body<T, LN, NV, AM, SACC, H, DB, XC>(a);
}

template <typename T, bool LN, int NV, int AM, bool SACC, int H, int DB, bool XC>
__global__ void bwd_reg_free(const bwd_args a)
{
    bwd_reg_body<T, LN, NV, AM, SACC, H, DB, XC>(a);
}

typedef void (*bwd_fn)(const bwd_args);

template <typename T, bool LN, int NV, int AM, bool SACC, int H, int DB = 0, bool XC = false>
constexpr bwd_fn bwd_reg()
{
    constexpr int cap = bwd_cap<NV, AM, SACC, DB>();
    if constexpr (cap > 0) return bwd_reg_cap<cap, T, LN, NV, AM, SACC, H, DB, XC>;
    else return bwd_reg_free<T, LN, NV, AM, SACC, H, DB, XC>;
}

/* dw[c] = sum over slots of ws[slot, c], in a fixed order: thread (x, y)
 * sums slots y, y+32, ... of column c into kReduceUnroll accumulators (that
 * many loads in flight: the partials are read once, latency-bound), then
 * row y == 0 adds the 32 lane sums in order. */
__global__ void __launch_bounds__(32 * kReduceRows)
    dw_reduce(const float *ws, int64_t nslots, int64_t N, float *dw)
{
    __shared__ float part[kReduceRows][33];
    pdl_wait(); /* the partials come from the kernel launched before us */
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float s = 0.f;
    if (col < N) {
        const float *p = ws + col;
        float u[kReduceUnroll];
#pragma unroll
        for (int j = 0; j < kReduceUnroll; j++) u[j] = 0.f;
        int64_t k = threadIdx.y;
        constexpr int64_t S = kReduceRows;
        for (; k + (kReduceUnroll - 1) * S < nslots; k += kReduceUnroll * S)
#pragma unroll
            for (int j = 0; j < kReduceUnroll; j++) u[j] += p[(k + j * S) * N];
        for (; k < nslots; k += S) u[0] += p[k * N];
#pragma unroll
        for (int j = 0; j < kReduceUnroll; j++) s += u[j];
    }
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float t = 0.f;
#pragma unroll
        for (int k = 0; k < kReduceRows; k++) t += part[k][threadIdx.x];
        dw[col] = t;
    }
}

} /* namespace */
/* NT_SUM_SLOTS stays defined for norm_tuned_bwd_loop.cuh, which undefines
 * it. */
#endif
