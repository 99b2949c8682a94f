/* RMSNorm, eager backend: the fp32 chain PyTorch eager runs for
 *   x32 = x.float(); y = (x32 * rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w).to(dtype)
 * and its autograd backward, one kernel per op, every intermediate in HBM
 * (the workspace). Buffers are reused the way PyTorch's caching allocator
 * would once a tensor dies, so the workspace holds 2 (fwd) / 4 (bwd) [M,N]
 * fp32 tensors.
 *
 * Forward (8 kernels):
 *   ew Load<T>   x32 = cast(x)                 [M,N]  to_copy (elementwise)
 *   ew Square    sq = x32 * x32                [M,N]  pow_tensor_scalar(2)
 *   row_reduce   ms = sum_j sq / N             [M]    reduce_kernel<MeanOps>
 *   ew AddC      v = ms + eps                  [M]    add (scalar)
 *   ew Rsqrt     r = rsqrt(v)                  [M]    rsqrt
 *   ew MulRow    xh = x32 * r[row]             [M,N]  mul (broadcast)
 *   ew MulCol    y32 = xh * w[col]             [M,N]  mul (broadcast)
 *   ew Load<f32> y = cast(y32)                 [M,N]  to_copy
 * Backward (autograd nodes in reverse; 2 recompute kernels first, since only
 * rstd [M] is saved by the harness while autograd would have kept x32, xh):
 *   ew Load<T>   x32 = cast(x); ew MulRow xh = x32 * rstd       (recompute)
 *   ew Load<T>   g32 = cast(dy)                                 ToCopyBackward
 *   ew Mul       t = g32 * xh;  colsum t -> [chunks,N] partials; colsum
 *                partials -> dw [N]                  MulBackward0 (w), sum_to_size
 *   ew MulCol    gxh = g32 * w[col]                             MulBackward0 (xh)
 *   ew Mul       t = gxh * x32; row_reduce -> gr [M] MulBackward0 (r), sum_to_size
 *   ew MulRow    ga = gxh * r[row]                              MulBackward0 (x32)
 *   ew RsqrtBwd  gv = -0.5 * gr * r^3            [M]            RsqrtBackward0
 *                (AddBackward0 passes the gradient through: no kernel)
 *   ew MeanBwd   gsq = gv[row] / N               [M,N]          MeanBackward1
 *   ew PowBwd    gb = gsq * (2 * x32)            [M,N]          PowBackward0
 *   ew Add       gx = ga + gb                    [M,N]          gradient accumulation
 *   ew Load<f32> dx = cast(gx)                                  ToCopyBackward
 *
 * ew: PyTorch's unrolled elementwise kernel shape: 128 threads, tiles of
 * 128 * 8 elements, all loads of a tile issued before its stores (memory-level
 * parallelism without assuming 16-byte alignment), grid-strided tiles, int64
 * indices. Broadcasts find row = i / N through a double reciprocal corrected
 * by one step (exact for i < 2^53): no 64-bit division per element.
 * row_reduce: one block per row, block sum through shared memory.
 * colsum: [rows, N] -> [chunks, N]; block = 32 columns x 8 row lanes, each
 * lane strides over the chunk's rows, then an ordered sum of the 8 lanes:
 * deterministic, parallel over rows (M up to 1.15M) and columns.
 * Limits: any M, N >= 1; int64 offsets; rows grid-strided past the grid
 * cap, colsum's grid cdiv(N, 32) x chunks. The workspace holds the chain's
 * fp32 [M, N] intermediates (up to four, as PyTorch's autograd keeps
 * them), so memory, not the kernels, bounds M * N.                        */
#include "kb_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
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


template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, MN = M * N;
    const layout L = make_layout(p, 2, false, 3);
    float *A = WS(L, t, big[0]), *B = WS(L, t, big[1]);
    float *ms = WS(L, t, row[0]), *v = WS(L, t, row[1]), *r = WS(L, t, row[2]);
    const RowOf row = {N, 1.0 / (double)N};

    KB_TRY(ew(A, MN, Load<T>{(const T *)t->x}, s, e));
    KB_TRY(ew(B, MN, Square{A}, s, e));
    row_reduce<<<grid_for(M), row_threads(N), 0, s>>>(B, ms, M, N, (float)N);
    KB_LAUNCHED(e);
    KB_TRY(ew(v, M, AddC{ms, KB_NORM_EPS}, s, e));
    KB_TRY(ew(r, M, Rsqrt{v}, s, e));
    KB_TRY(ew(B, MN, MulRow{A, r, row}, s, e));   /* xh  (sq is dead) */
    KB_TRY(ew(A, MN, MulCol{B, t->w, row}, s, e)); /* y32 (x32 is dead) */
    return ew((T *)t->out, MN, Load<float>{A}, s, e);
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, MN = M * N;
    const layout L = make_layout(p, 4, true, 2);
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
    return ew((T *)t->out, MN, Load<float>{b1}, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e) { return eager_norm_check(p, "rmsnorm", e); }

static size_t workspace(const kb_problem *p, bool bwd)
{
    return (bwd ? make_layout(p, 4, true, 2) : make_layout(p, 2, false, 3)).total;
}

} /* namespace */

KB_EAGER_IMPLS(rmsnorm, KB_RMSNORM_FWD, KB_RMSNORM_BWD, 8, 15)
