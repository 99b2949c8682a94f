/* LayerNorm, eager backend: what PyTorch eager runs for
 *   y = F.layer_norm(x.float(), (N,), w, eps=1e-6).to(dtype)      (no bias)
 * and its autograd backward: unfused, intermediates in HBM (the workspace).
 *
 * Forward (3 kernels):
 *   ew Load<T>    x32 = cast(x)  [M,N] fp32                      to_copy
 *   ln_fwd        one block per row (vectorized_layer_norm_kernel): pass 1
 *                 Welford per thread, merged across the warp by shuffles and
 *                 across warps through shared memory -> mean, rstd =
 *                 rsqrt(var + eps) (biased var); pass 2 y32 = (x-mean)*rstd*w.
 *                 Also writes mean/rstd [M] as native_layer_norm does.
 *   ew Load<f32>  y = cast(y32)                                  to_copy
 * Backward (5 kernels):
 *   ew Load<T>    dy32 = cast(dy); x32 = cast(x) (autograd would have kept
 *                 x32 from the forward; the harness saves only mean/rstd)
 *   ln_bwd_dx     one block per row (layer_norm_grad_input_kernel): pass 1
 *                 block sums of g = dy*w and g*xh, pass 2
 *                 dx32 = rstd * (g - mean(g) - xh*mean(g*xh)).
 *   ln_dgamma_partial + colsum   GammaBetaBackwardCUDAKernel's two stages:
 *                 [chunks, N] fp32 partials of dy*xh over row chunks (block =
 *                 32 columns x 8 row lanes, ordered sum of the lanes), then the
 *                 same block shape sums the chunks -> dw [N]. Deterministic,
 *                 parallel over rows (M up to 1.15M) and columns.
 *   ew Load<f32>  dx = cast(dx32)
 * ew: PyTorch's unrolled elementwise kernel shape: 128 threads, tiles of
 * 128 * 8 elements, loads of a tile before its stores, full tiles without
 * bounds checks, grid-strided, int64 indices; no alignment assumed.
 * Row kernels grid-stride over rows; all offsets int64; any M, N >= 1.     */
#include "kb_cuda.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

#define EW_THREADS 128
#define EW_UNROLL 8
#define MAX_BLOCKS (1 << 20)
#define CHUNK_ROWS_MIN 64
#define CHUNKS_MAX 1024

static size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

/* ---- elementwise casts ------------------------------------------------------ */
template <typename T> struct Load {
    const T *a;
    __device__ float operator()(int64_t i) const { return kb_to_float(a[i]); }
};

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

/* ---- forward ------------------------------------------------------------------ */
struct Welford {
    float n, mean, m2;
};

__device__ __forceinline__ Welford wf_merge(Welford a, Welford b)
{
    const float n = a.n + b.n;
    if (n == 0.f) return a;
    const float d = b.mean - a.mean, fb = b.n / n;
    return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
}

/* Lane 0 ends with the warp's merge (down-shuffles). */
__device__ __forceinline__ Welford wf_warp(Welford w)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const Welford other = {__shfl_down_sync(0xffffffffu, w.n, o),
                               __shfl_down_sync(0xffffffffu, w.mean, o),
                               __shfl_down_sync(0xffffffffu, w.m2, o)};
        w = wf_merge(w, other);
    }
    return w;
}

/* Every thread gets the block's merge. blockDim.x a multiple of 32. */
__device__ __forceinline__ Welford wf_block(Welford w, Welford *scratch /* [32] */)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    w = wf_warp(w);
    __syncthreads(); /* scratch may still be read from the previous row */
    if (lane == 0) scratch[warp] = w;
    __syncthreads();
    if (warp == 0) {
        w = lane < nwarps ? scratch[lane] : Welford{0.f, 0.f, 0.f};
        w = wf_warp(w);
        if (lane == 0) scratch[0] = w;
    }
    __syncthreads();
    return scratch[0];
}

__global__ void __launch_bounds__(512)
ln_fwd(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
       float *__restrict__ mean_out, float *__restrict__ rstd_out, int64_t M, int64_t N)
{
    __shared__ Welford scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const float *xr = x + row * N;
        float *yr = y + row * N;
        Welford acc = {0.f, 0.f, 0.f};
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const float v = xr[j];
            acc.n += 1.f;
            const float d = v - acc.mean;
            acc.mean += d / acc.n;
            acc.m2 += d * (v - acc.mean);
        }
        acc = wf_block(acc, scratch);
        const float mu = acc.mean, rs = rsqrtf(fmaxf(acc.m2 / (float)N, 0.f) + KB_NORM_EPS);
        if (threadIdx.x == 0) {
            mean_out[row] = mu;
            rstd_out[row] = rs;
        }
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) yr[j] = (xr[j] - mu) * rs * w[j];
    }
}

/* ---- backward ----------------------------------------------------------------- */
__global__ void __launch_bounds__(512)
ln_bwd_dx(const float *__restrict__ dy, const float *__restrict__ x, const float *__restrict__ w,
          const float *__restrict__ mean, const float *__restrict__ rstd, float *__restrict__ dx,
          int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const int64_t off = row * N;
        const float mu = mean[row], rs = rstd[row];
        float sg = 0.f, sgx = 0.f;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const float g = dy[off + j] * w[j];
            sg += g;
            sgx += g * ((x[off + j] - mu) * rs);
        }
        const float mg = kb_block_sum(sg, scratch) / (float)N;
        const float mgx = kb_block_sum(sgx, scratch) / (float)N;
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const float g = dy[off + j] * w[j], xh = (x[off + j] - mu) * rs;
            dx[off + j] = rs * (g - mg - xh * mgx);
        }
    }
}

/* part[chunk, col] = sum over the chunk's rows of dy * (x - mean) * rstd;
 * grid (cdiv(N, 32), chunks), block (32, 8). */
__global__ void __launch_bounds__(256)
ln_dgamma_partial(const float *__restrict__ dy, const float *__restrict__ x,
                  const float *__restrict__ mean, const float *__restrict__ rstd,
                  float *__restrict__ part, int64_t M, int64_t N, int64_t rows_per_chunk)
{
    __shared__ float lanes[8][33];
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < M ? r0 + rows_per_chunk : M;
    float acc = 0.f;
    if (col < N) {
#pragma unroll 4
        for (int64_t r = r0 + threadIdx.y; r < r1; r += 8)
            acc += dy[r * N + col] * ((x[r * N + col] - mean[r]) * rstd[r]);
    }
    lanes[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < 8; k++) sum += lanes[k][threadIdx.x];
        part[(int64_t)blockIdx.y * N + col] = sum;
    }
}

/* out[col] = sum_r a[r, col] over all rows; grid cdiv(N, 32), block (32, 8). */
__global__ void __launch_bounds__(256)
colsum(const float *__restrict__ a, float *__restrict__ out, int64_t rows, int64_t N)
{
    __shared__ float lanes[8][33];
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float acc = 0.f;
    if (col < N) {
#pragma unroll 4
        for (int64_t r = threadIdx.y; r < rows; r += 8) acc += a[r * N + col];
    }
    lanes[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < 8; k++) sum += lanes[k][threadIdx.x];
        out[col] = sum;
    }
}

/* ---- host ----------------------------------------------------------------------- */
static unsigned row_threads(int64_t N)
{
    unsigned t = 32;
    while (t < 512 && (int64_t)t * 4 < N) t *= 2;
    return t;
}

typedef struct {
    int64_t chunk_rows, chunks;
    size_t big[3], part, row[2], total; /* byte offsets */
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
    for (int i = 0; i < (backward ? 3 : 2); i++) { L.big[i] = off; off += align256(mn); }
    if (backward) {
        L.part = off;
        off += align256((size_t)L.chunks * (size_t)p->N * sizeof(float));
    } else {
        for (int i = 0; i < 2; i++) { L.row[i] = off; off += align256(m); }
    }
    L.total = off;
    return L;
}

#define WS(L, t, field) ((float *)((char *)(t)->workspace + (L).field))

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    const layout L = make_layout(p, 0);
    float *x32 = WS(L, t, big[0]), *y32 = WS(L, t, big[1]);
    KB_TRY(ew(x32, M * N, Load<T>{(const T *)t->x}, s, e));
    ln_fwd<<<grid_for(M), row_threads(N), 0, s>>>(x32, t->w, y32, WS(L, t, row[0]),
                                                   WS(L, t, row[1]), M, N);
    KB_LAUNCHED(e);
    return ew((T *)t->out, M * N, Load<float>{y32}, s, e);
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    const layout L = make_layout(p, 1);
    float *dy32 = WS(L, t, big[0]), *x32 = WS(L, t, big[1]), *dx32 = WS(L, t, big[2]);
    float *part = WS(L, t, part);
    const unsigned cols = (unsigned)kb_cdiv(N, 32);

    KB_TRY(ew(dy32, M * N, Load<T>{(const T *)t->dy}, s, e));
    KB_TRY(ew(x32, M * N, Load<T>{(const T *)t->x}, s, e));
    ln_bwd_dx<<<grid_for(M), row_threads(N), 0, s>>>(dy32, x32, t->w, t->mean, t->rstd, dx32, M, N);
    KB_LAUNCHED(e);
    ln_dgamma_partial<<<dim3(cols, (unsigned)L.chunks), dim3(32, 8), 0, s>>>(
        dy32, x32, t->mean, t->rstd, part, M, N, L.chunk_rows);
    KB_LAUNCHED(e);
    colsum<<<cols, dim3(32, 8), 0, s>>>(part, t->dw, L.chunks, N);
    KB_LAUNCHED(e);
    return ew((T *)t->out, M * N, Load<float>{dx32}, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager layernorm: bad problem %lldx%lld dtype %d",
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    if (p->N >= (1 << 24)) /* N and the Welford counts must be exact in fp32 */
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "eager layernorm: N=%lld >= 2^24", (long long)p->N);
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

extern "C" const kb_impl kb_layernorm_eager_fwd = {"eager", KB_LAYERNORM_FWD, setup_fwd, run_fwd,
                                                   NULL, NULL, kb_kernels_fixed<3>};
extern "C" const kb_impl kb_layernorm_eager_bwd = {"eager", KB_LAYERNORM_BWD, setup_bwd, run_bwd,
                                                   NULL, NULL, kb_kernels_fixed<6>};
