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
 *   colsum<DgammaTerm> + colsum   GammaBetaBackwardCUDAKernel's two stages:
 *                 [chunks, N] fp32 partials of dy*xh over row chunks (block =
 *                 32 columns x 8 row lanes, ordered sum of the lanes), then the
 *                 same block shape sums the chunks -> dw [N]. Deterministic,
 *                 parallel over rows (M up to 1.15M) and columns.
 *   ew Load<f32>  dx = cast(dx32)
 * ew: PyTorch's unrolled elementwise kernel shape: 128 threads, tiles of
 * 128 * 8 elements, loads of a tile before its stores, full tiles without
 * bounds checks, grid-strided, int64 indices; no alignment assumed.
 * Row kernels grid-stride over rows; all offsets int64; any M, N >= 1.     */
#include "kb_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

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

/* colsum's term of dw: dy * (x - mean) * rstd. */
struct DgammaTerm {
    const float *__restrict__ dy, *__restrict__ x, *__restrict__ mean, *__restrict__ rstd;
    int64_t N;
    __device__ float operator()(int64_t r, int64_t col) const
    {
        return dy[r * N + col] * ((x[r * N + col] - mean[r]) * rstd[r]);
    }
};


/* ---- host ----------------------------------------------------------------------- */
template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    const layout L = make_layout(p, 2, false, 2);
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
    const layout L = make_layout(p, 3, true, 0);
    float *dy32 = WS(L, t, big[0]), *x32 = WS(L, t, big[1]), *dx32 = WS(L, t, big[2]);
    float *part = WS(L, t, part);
    const unsigned cols = (unsigned)kb_cdiv(N, 32);

    KB_TRY(ew(dy32, M * N, Load<T>{(const T *)t->dy}, s, e));
    KB_TRY(ew(x32, M * N, Load<T>{(const T *)t->x}, s, e));
    ln_bwd_dx<<<grid_for(M), row_threads(N), 0, s>>>(dy32, x32, t->w, t->mean, t->rstd, dx32, M, N);
    KB_LAUNCHED(e);
    colsum<<<dim3(cols, (unsigned)L.chunks), dim3(32, 8), 0, s>>>(
        DgammaTerm{dy32, x32, t->mean, t->rstd, N}, part, M, N, L.chunk_rows);
    KB_LAUNCHED(e);
    colsum<<<cols, dim3(32, 8), 0, s>>>(Elem{part, N}, t->dw, L.chunks, N, L.chunks);
    KB_LAUNCHED(e);
    return ew((T *)t->out, M * N, Load<float>{dx32}, s, e);
}

static kb_status check(const kb_problem *p, kb_err *e) { return eager_norm_check(p, "layernorm", e); }

static size_t workspace(const kb_problem *p, bool bwd)
{
    return (bwd ? make_layout(p, 3, true, 0) : make_layout(p, 2, false, 2)).total;
}

} /* namespace */

KB_EAGER_IMPLS(layernorm, KB_LAYERNORM_FWD, KB_LAYERNORM_BWD, 3, 6)
