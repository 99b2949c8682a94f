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
 * deterministic, parallel over rows (M up to 1.15M) and columns.           */
#include "kb_cuda.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

#define EW_THREADS 128
#define EW_UNROLL 8
#define MAX_BLOCKS (1 << 20)
#define CHUNK_ROWS_MIN 64  /* rows per dw partial, at least            */
#define CHUNKS_MAX 1024    /* dw partials [chunks, N], at most          */

static size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

/* ---- elementwise ------------------------------------------------------------ */
struct RowOf {
    int64_t n;
    double inv;
    __device__ int64_t operator()(int64_t i) const
    {
        int64_t q = __double2ll_rz((double)i * inv);
        const int64_t r = i - q * n;
        return q + (r < 0 ? -1 : (r >= n ? 1 : 0));
    }
};

template <typename T> struct Load {
    const T *a;
    __device__ float operator()(int64_t i) const { return kb_to_float(a[i]); }
};
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

/* One tile: all loads (and math) first, then the stores. FULL tiles skip the
 * bounds checks so the loads issue back to back. */
template <bool FULL, typename Out, typename F>
__device__ __forceinline__ void ew_tile(Out *out, int64_t base, int64_t total, const F &f)
{
    float v[EW_UNROLL];
#pragma unroll
    for (int k = 0; k < EW_UNROLL; k++) {
        const int64_t i = base + k * EW_THREADS + threadIdx.x;
        v[k] = FULL || i < total ? f(i) : 0.f;
    }
#pragma unroll
    for (int k = 0; k < EW_UNROLL; k++) {
        const int64_t i = base + k * EW_THREADS + threadIdx.x;
        if (FULL || i < total) out[i] = kb_from_float<Out>(v[k]);
    }
}

template <typename Out, typename F>
__global__ void __launch_bounds__(EW_THREADS) ew_kernel(Out *out, int64_t total, F f)
{
    const int64_t tile = (int64_t)EW_THREADS * EW_UNROLL;
    for (int64_t base = (int64_t)blockIdx.x * tile; base < total; base += (int64_t)gridDim.x * tile) {
        if (base + tile <= total)
            ew_tile<true>(out, base, total, f);
        else
            ew_tile<false>(out, base, total, f);
    }
}

static unsigned grid_for(int64_t items)
{
    return (unsigned)(items < MAX_BLOCKS ? items : MAX_BLOCKS);
}

template <typename Out, typename F>
static kb_status ew(Out *out, int64_t total, F f, cudaStream_t s, kb_err *e)
{
    const unsigned grid = grid_for(kb_cdiv(total, (int64_t)EW_THREADS * EW_UNROLL));
    ew_kernel<Out, F><<<grid, EW_THREADS, 0, s>>>(out, total, f);
    KB_LAUNCHED(e);
    return KB_OK;
}

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

/* out[chunk, col] = sum over rows [chunk*rows_per_chunk, +rows_per_chunk) of
 * a[row, col]; grid (cdiv(N, 32), chunks), chunks <= CHUNKS_MAX. */
__global__ void __launch_bounds__(256)
colsum(const float *__restrict__ a, float *__restrict__ out, int64_t rows, int64_t N,
       int64_t rows_per_chunk)
{
    __shared__ float part[8][33];
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    float acc = 0.f;
    if (col < N) {
#pragma unroll 4
        for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) acc += a[r * N + col];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < 8; k++) sum += part[k][threadIdx.x];
        out[(int64_t)blockIdx.y * N + col] = sum;
    }
}

static unsigned reduce_threads(int64_t N)
{
    unsigned t = 32;
    while (t < 512 && (int64_t)t * 4 < N) t *= 2;
    return t;
}

/* ---- workspace layout ------------------------------------------------------- */
typedef struct {
    int64_t chunk_rows, chunks;
    size_t big[4], part, row[3], total; /* byte offsets */
} layout;

static layout make_layout(const kb_problem *p, int backward)
{
    layout L = {};
    const size_t mn = (size_t)p->M * (size_t)p->N * sizeof(float), m = (size_t)p->M * sizeof(float);
    int64_t chunks = kb_cdiv(p->M, CHUNK_ROWS_MIN);
    if (chunks > CHUNKS_MAX) chunks = CHUNKS_MAX;
    L.chunk_rows = kb_cdiv(p->M, chunks);
    L.chunks = kb_cdiv(p->M, L.chunk_rows);
    size_t off = 0;
    for (int i = 0; i < (backward ? 4 : 2); i++) { L.big[i] = off; off += align256(mn); }
    if (backward) { L.part = off; off += align256((size_t)L.chunks * (size_t)p->N * sizeof(float)); }
    for (int i = 0; i < (backward ? 2 : 3); i++) { L.row[i] = off; off += align256(m); }
    L.total = off;
    return L;
}

#define WS(L, t, field) ((float *)((char *)(t)->workspace + (L).field))

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N, MN = M * N;
    const layout L = make_layout(p, 0);
    float *A = WS(L, t, big[0]), *B = WS(L, t, big[1]);
    float *ms = WS(L, t, row[0]), *v = WS(L, t, row[1]), *r = WS(L, t, row[2]);
    const RowOf row = {N, 1.0 / (double)N};

    KB_TRY(ew(A, MN, Load<T>{(const T *)t->x}, s, e));
    KB_TRY(ew(B, MN, Square{A}, s, e));
    row_reduce<<<grid_for(M), reduce_threads(N), 0, s>>>(B, ms, M, N, (float)N);
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
    const layout L = make_layout(p, 1);
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
    colsum<<<dim3(cs_cols, (unsigned)L.chunks), cs_block, 0, s>>>(b3, part, M, N, L.chunk_rows);
    KB_LAUNCHED(e);
    colsum<<<dim3(cs_cols, 1), cs_block, 0, s>>>(part, t->dw, L.chunks, N, L.chunks);
    KB_LAUNCHED(e);
    KB_TRY(ew(b1, MN, MulCol{b2, t->w, row}, s, e)); /* gxh (xh is dead) */
    KB_TRY(ew(b2, MN, Mul{b1, x32}, s, e));          /* gxh * x32 (g32 is dead) */
    row_reduce<<<grid_for(M), reduce_threads(N), 0, s>>>(b2, gr, M, N, 1.f);
    KB_LAUNCHED(e);
    KB_TRY(ew(b3, MN, MulRow{b1, rstd, row}, s, e));       /* ga */
    KB_TRY(ew(gv, M, RsqrtBwd{gr, rstd}, s, e));
    KB_TRY(ew(b1, MN, MeanBwd{gv, row, (float)N}, s, e)); /* gsq (gxh is dead) */
    KB_TRY(ew(b2, MN, PowBwd{b1, x32}, s, e));            /* gb  */
    KB_TRY(ew(b1, MN, Add{b3, b2}, s, e));                /* gx  */
    return ew((T *)t->out, MN, Load<float>{b1}, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager rmsnorm: bad problem %lldx%lld dtype %d",
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    if (p->N >= (1 << 24)) /* N must be exact in fp32 (the mean's divisor) */
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "eager rmsnorm: N=%lld >= 2^24", (long long)p->N);
    return KB_OK;
}

static kb_status setup_fwd(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                           size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    KB_TRY(check(p, e));
    *workspace_bytes = make_layout(p, 0).total;
    return KB_OK;
}

static kb_status setup_bwd(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                           size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    KB_TRY(check(p, e));
    *workspace_bytes = make_layout(p, 1).total;
    return KB_OK;
}

static kb_status run_fwd(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                         kb_err *e)
{
    KB_TRY(check(p, e));
    kb_status st = KB_OK;
    KB_DISPATCH(p->dtype, T, st = fwd<T>(p, t, s, e));
    return st;
}

static kb_status run_bwd(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                         kb_err *e)
{
    KB_TRY(check(p, e));
    kb_status st = KB_OK;
    KB_DISPATCH(p->dtype, T, st = bwd<T>(p, t, s, e));
    return st;
}

} /* namespace */

extern "C" const kb_impl kb_rmsnorm_eager_fwd = {"eager", KB_RMSNORM_FWD, setup_fwd, run_fwd, NULL,
                                                 NULL, kb_kernels_fixed<8>};
extern "C" const kb_impl kb_rmsnorm_eager_bwd = {"eager", KB_RMSNORM_BWD, setup_bwd, run_bwd, NULL,
                                                 NULL, kb_kernels_fixed<15>};
