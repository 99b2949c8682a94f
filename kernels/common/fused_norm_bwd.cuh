/* The fused backend's RMSNorm / LayerNorm backward row loop, one body for
 * both (LN = true adds the centring). Strategy (Liger's layout): program
 * blockIdx.x owns the contiguous rows [b * rows_per_cta, ...) and partial
 * row b of the dw workspace. Per row, pass 1 reduces sum(g * xh) and, for
 * LayerNorm, sum(g) (g = dy * w, xh = (x - mean) * rstd or x * rstd from
 * the saved statistics); pass 2 writes
 *     dx = rstd * (g - mean(g) - xh * mean(g * xh))   (no mean(g) for RMSNorm)
 * and adds dy * xh into the program's dw partial (fused_dw_part,
 * fused_rows.cuh). add_rmsnorm's backward is RMSNorm's with the residual
 * stream's gradient added to dx (RES: dres, read once per element in pass
 * 2). Each op's __global__ keeps its own parameter list (RMSNorm saves no
 * mean) and calls this inlined, so the kernels compile to what they were
 * as separate copies (ci/sass-diff). Also the tile sizes and traits both
 * norms give fused_rows.cuh. */
#ifndef KB_FUSED_NORM_BWD_CUH
#define KB_FUSED_NORM_BWD_CUH

#include "fused_rows.cuh"

/* Elements per thread per tile and stream: what a thread holds in registers
 * at once (x, dy, w and the dw partial all live together in the backward). */
#define FUSED_NORM_TILE_ELEMS 8
/* Backward, scalar path: four 64-bit addresses per element (x, dy, dx, the
 * partial) stay live too; more than 4 elements spills at 1024 threads. */
#define FUSED_NORM_TILE_ELEMS_BWD1 4

/* The members of an op's fused_rows.cuh traits both norms share; each op's
 * struct adds its kernels and the backward's launch (whose arguments
 * differ: RMSNorm saves no mean). A macro, not a base class: a base
 * templated on the op's file-local name trips GCC's subobject-linkage
 * check in nvcc's generated host code. */
#define FUSED_NORM_TRAITS(opname)                                                          \
    static constexpr const char *name = opname;                                            \
    static constexpr int FWD_ELEMS = FUSED_NORM_TILE_ELEMS;                                \
    static constexpr int BWD_ELEMS1 = FUSED_NORM_TILE_ELEMS_BWD1,                          \
                         BWD_ELEMSV = FUSED_NORM_TILE_ELEMS;

template <bool LN, typename T, int W, int U, bool RES = false>
static __device__ __forceinline__ void
fused_norm_bwd_rows(const T *__restrict__ x, const T *__restrict__ dy,
                    const float *__restrict__ w, const float *__restrict__ mean,
                    const float *__restrict__ rstd, T *__restrict__ dx, float *part, int64_t M,
                    int64_t N, int64_t rows_per_cta, float *scratch,
                    const T *__restrict__ dres = nullptr)
{
    float acc[U][W];
    const fused_dw_part<W, U> dw(part, M, N, rows_per_cta, acc);
    for (int64_t row = dw.r0; row < dw.r1; row++) {
        const T *xr = x + row * N, *gr = dy + row * N, *rr = RES ? dres + row * N : nullptr;
        T *dr = dx + row * N;
        float mu = 0.f;
        if constexpr (LN) mu = mean[row];
        const float rs = rstd[row];
        /* pass 1: sum(g * xh), and sum(g) when centred */
        float sg = 0.f, sgx = 0.f;
        for (int64_t base = 0; base < N; base += dw.tile) {
            float xv[U][W], gv[U][W], wv[U][W];
            /* padding reads as mu: its xh is 0 */
            fused_load_xgw<T, W, U, false>(xr, gr, w, base, N, xv, gv, wv, mu);
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) {
                    const float g = gv[k][i] * wv[k][i];
                    if constexpr (LN) {
                        sg += g;
                        sgx += g * ((xv[k][i] - mu) * rs);
                    } else {
                        sgx += g * (xv[k][i] * rs);
                    }
                }
        }
        float mg = 0.f;
        if constexpr (LN) mg = kb_block_sum(sg, scratch) / (float)N;
        const float c = kb_block_sum(sgx, scratch) / (float)N;
        /* pass 2: dx, and dy * xh into the dw partial */
        for (int64_t base = 0; base < N; base += dw.tile) {
            float xv[U][W], gv[U][W], wv[U][W];
            fused_load_xgw<T, W, U, true>(xr, gr, w, base, N, xv, gv, wv);
            float o[W], d[W], pv[W];
            fused_tile_each<W, U>(base, N, [&](int k, int64_t col) {
                /* dres is read once, one access at a time (no tile of it held) */
                if constexpr (RES) fused_ld<T, W, true>(rr + col, o);
#pragma unroll
                for (int i = 0; i < W; i++) {
                    const float g = gv[k][i] * wv[k][i];
                    if constexpr (LN) {
                        const float xh = (xv[k][i] - mu) * rs;
                        o[i] = rs * (g - mg - xh * c);
                        d[i] = gv[k][i] * xh;
                    } else if constexpr (RES) {
                        const float xh = xv[k][i] * rs;
                        o[i] += rs * (g - xh * c);
                        d[i] = gv[k][i] * xh;
                    } else {
                        const float xh = xv[k][i] * rs;
                        o[i] = rs * (g - xh * c);
                        d[i] = gv[k][i] * xh;
                    }
                }
                fused_st<T, W>(dr + col, o);
                dw.add(acc, k, col, row, d, pv);
            });
        }
    }
    dw.flush(acc, N);
}

#endif
