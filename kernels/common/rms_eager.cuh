/* RMSNorm as PyTorch eager runs it: the fp32 chain of F.rms_norm's
 * decomposition and autograd's backward of it, one kernel per op, each
 * intermediate an fp32 [M, N] (or [M]) tensor in the workspace (kb_eager.cuh:
 * the launcher, the layout, colsum). Shared by the backends that run it:
 * rmsnorm's eager backend, and add_rmsnorm's, which runs it on h = x + res.
 *   forward  (8 kernels): x32 = x; sq = x32^2; ms = mean(sq); v = ms + eps;
 *            r = rsqrt(v); xh = x32 * r; y32 = xh * w; y = y32 (dtype)
 *   backward (15 kernels): x32, xh, g32; dw = colsum(g32 * xh) (2 kernels);
 *            gxh = g32 * w; the rsqrt, mean and pow backwards; dx (dtype)
 * Internal linkage: every backend file including it gets its own copy. */
#ifndef KB_RMS_EAGER_CUH
#define KB_RMS_EAGER_CUH

#include "kb_eager.cuh"

namespace {

/* ---- elementwise ------------------------------------------------------------ */
struct Square {
    const float *a;
    __device__ float operator()(int64_t i) const { return a[i] * a[i]; }
};
struct AddC {
    const float *a;
    float c;
    __device__ float operator()(int64_t i) const { return a[i] + c; }
};
struct Rsqrt {
    const float *a;
    __device__ float operator()(int64_t i) const { return rsqrtf(a[i]); }
};
struct Mul {
    const float *a, *b;
    __device__ float operator()(int64_t i) const { return a[i] * b[i]; }
};
struct Add {
    const float *a, *b;
    __device__ float operator()(int64_t i) const { return a[i] + b[i]; }
};
struct MulRow { /* a[M,N] * r[M] */
    const float *a, *r;
    RowOf row;
    __device__ float operator()(int64_t i) const { return a[i] * r[row(i)]; }
};
struct MulCol { /* a[M,N] * w[N] */
    const float *a, *w;
    RowOf row;
    __device__ float operator()(int64_t i) const { return a[i] * w[i - row(i) * row.n]; }
};
struct RsqrtBwd { /* d rsqrt(v) = -0.5 * g * rsqrt(v)^3 */
    const float *g, *r;
    __device__ float operator()(int64_t i) const { return (-0.5f * g[i]) * (r[i] * r[i] * r[i]); }
};
struct MeanBwd { /* g[M] expanded to [M,N], / N */
    const float *g;
    RowOf row;
    float n;
    __device__ float operator()(int64_t i) const { return g[row(i)] / n; }
};
struct PowBwd { /* d x^2 = g * 2x */
    const float *g, *x;
    __device__ float operator()(int64_t i) const { return g[i] * (2.f * x[i]); }
};

/* ---- reductions ------------------------------------------------------------- */
/* out[row] = sum_j a[row, j] / div */
__global__ void __launch_bounds__(512)
row_reduce(const float *__restrict__ a, float *__restrict__ out, int64_t M, int64_t N, float div)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const float *ar = a + row * N;
        float acc = 0.f;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) acc += ar[j];
        acc = kb_block_sum(acc, scratch);
        if (threadIdx.x == 0) out[row] = acc / div;
    }
}

/* Workspace of the chain: 2 (forward) or 4 (backward) fp32 [M, N] tensors,
 * the per-row ones and the backward's dw partials. */
inline layout rms_eager_layout(const kb_problem *p, bool bwd)
{
    return bwd ? make_layout(p, 4, true, 2) : make_layout(p, 2, false, 3);
}

/* y = rmsnorm(x) * w, x and y [M, N] in T (y may not alias x). */
template <typename T>
kb_status rms_eager_fwd(const kb_problem *p, const kb_tensors *t, const T *x, T *y,
                        cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, MN = M * N;
    const layout L = rms_eager_layout(p, false);
    float *A = WS(L, t, big[0]), *B = WS(L, t, big[1]);
    float *ms = WS(L, t, row[0]), *v = WS(L, t, row[1]), *r = WS(L, t, row[2]);
    const RowOf row = {N, 1.0 / (double)N};

    KB_TRY(ew(A, MN, Load<T>{x}, s, e));
    KB_TRY(ew(B, MN, Square{A}, s, e));
    row_reduce<<<grid_for(M), row_threads(N), 0, s>>>(B, ms, M, N, (float)N);
    KB_LAUNCHED(e);
    KB_TRY(ew(v, M, AddC{ms, KB_NORM_EPS}, s, e));
    KB_TRY(ew(r, M, Rsqrt{v}, s, e));
    KB_TRY(ew(B, MN, MulRow{A, r, row}, s, e));   /* xh  (sq is dead) */
    KB_TRY(ew(A, MN, MulCol{B, t->w, row}, s, e)); /* y32 (x32 is dead) */
    return ew(y, MN, Load<float>{A}, s, e);
}

/* dx and t->dw from x (t->x), t->dy, the saved t->rstd and t->w. */
template <typename T>
kb_status rms_eager_bwd(const kb_problem *p, const kb_tensors *t, T *dx, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, MN = M * N;
    const layout L = rms_eager_layout(p, true);
    float *x32 = WS(L, t, big[0]), *b1 = WS(L, t, big[1]), *b2 = WS(L, t, big[2]),
          *b3 = WS(L, t, big[3]), *part = WS(L, t, part);
    float *gr = WS(L, t, row[0]), *gv = WS(L, t, row[1]);
    const float *rstd = t->rstd;
    const RowOf row = {N, 1.0 / (double)N};
    const dim3 cs_block(32, 8);
    const unsigned cs_cols = (unsigned)kb_cdiv(N, 32);

    KB_TRY(ew(x32, MN, Load<T>{(const T *)t->x}, s, e));
    KB_TRY(ew(b1, MN, MulRow{x32, rstd, row}, s, e));    /* xh  */
    KB_TRY(ew(b2, MN, Load<T>{(const T *)t->dy}, s, e)); /* g32 */
    /* dw = sum_rows g32 * xh */
    KB_TRY(ew(b3, MN, Mul{b2, b1}, s, e));
    colsum<<<dim3(cs_cols, (unsigned)L.chunks), cs_block, 0, s>>>(Elem{b3, N}, part, M, N, L.chunk_rows);
    KB_LAUNCHED(e);
    colsum<<<dim3(cs_cols, 1), cs_block, 0, s>>>(Elem{part, N}, t->dw, L.chunks, N, L.chunks);
    KB_LAUNCHED(e);
    KB_TRY(ew(b1, MN, MulCol{b2, t->w, row}, s, e)); /* gxh (xh is dead) */
    KB_TRY(ew(b2, MN, Mul{b1, x32}, s, e));          /* gxh * x32 (g32 is dead) */
    row_reduce<<<grid_for(M), row_threads(N), 0, s>>>(b2, gr, M, N, 1.f);
    KB_LAUNCHED(e);
    KB_TRY(ew(b3, MN, MulRow{b1, rstd, row}, s, e));       /* ga */
    KB_TRY(ew(gv, M, RsqrtBwd{gr, rstd}, s, e));
    KB_TRY(ew(b1, MN, MeanBwd{gv, row, (float)N}, s, e)); /* gsq (gxh is dead) */
    KB_TRY(ew(b2, MN, PowBwd{b1, x32}, s, e));            /* gb  */
    KB_TRY(ew(b1, MN, Add{b3, b2}, s, e));                /* gx  */
    return ew(dx, MN, Load<float>{b1}, s, e);
}

} /* namespace */

#endif
