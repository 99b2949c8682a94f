/* PyTorch's host_softmax / host_softmax_backward (aten/src/ATen/native/cuda/
 * SoftMax.cu) for the eager backends of softmax and cross entropy (whose
 * forward is log_softmax): one set of kernels templated on the epilogue, as
 * PyTorch's are, and the same dispatch on N. The strategies and their
 * PyTorch names are in kernels/softmax/eager.cu and
 * kernels/cross_entropy/eager.cu. V = 16 B / sizeof(T) (PyTorch's ILP).
 *
 * A forward epilogue E (SoftmaxFwd, LogSoftmaxFwd) says what the sum pass
 * keeps and what is written:
 *   E::term(v, mx)      the sum pass's term exp(v - mx); may replace the held v
 *   E::total(sum)       from the row's sum to what the write pass needs
 *   E::held(v, mx, t)   output from a value held in registers since term()
 *   E::fresh(x, mx, t)  output from the input element re-read
 * A backward epilogue (SoftmaxBwd, LogSoftmaxBwd) over g (the gradient, type
 * T, cached in shared memory) and b (the saved output, type U):
 *   E::B_IN_SUM         whether the reduction reads b
 *   E::term(g, b)       the reduction's term
 *   E::grad(g, b, s)    dx from the row's reduction s
 * Rows are grid-strided (any M >= 1), offsets int64; any N >= 1. Base
 * pointers that are not 16-byte aligned turn every 128-bit path scalar. */
#ifndef KB_SOFTMAX_EAGER_CUH
#define KB_SOFTMAX_EAGER_CUH

#include "kb_eager.cuh"

namespace {

#define WARP_ROWS 4            /* warps (= rows) per block on the warp path */
#define ROW_THREADS 1024       /* forward block size for every N > 2048     */
#define REG_MAX 9              /* _reg while ceil(N / 1024) <= 9            */
#define SMEM_BYTES (48 * 1024) /* cudaDeviceProp::sharedMemPerBlock         */
#define SCRATCH_BYTES (32 * (int64_t)sizeof(float)) /* reduction scratch   */
/* Block kernels are held to 32 registers (__launch_bounds__(1024, 2): two
 * 1024-thread blocks per SM); at 33+ one block would fit and occupancy halve. */

struct SoftmaxFwd {
    static __device__ __forceinline__ float term(float &v, float mx)
    {
        v = expf(v - mx); /* padding: exp(-inf) = 0 */
        return v;
    }
    static __device__ __forceinline__ float total(float sum) { return sum; }
    static __device__ __forceinline__ float held(float v, float, float t) { return v / t; }
    static __device__ __forceinline__ float fresh(float x, float mx, float t)
    {
        return expf(x - mx) / t;
    }
};

struct LogSoftmaxFwd {
    static __device__ __forceinline__ float term(float &v, float mx) { return expf(v - mx); }
    static __device__ __forceinline__ float total(float sum) { return logf(sum); }
    static __device__ __forceinline__ float held(float v, float mx, float t) { return v - mx - t; }
    static __device__ __forceinline__ float fresh(float x, float mx, float t) { return x - mx - t; }
};

/* dx = y * (dy - sum_j dy_j*y_j); g = dy, b = y. */
struct SoftmaxBwd {
    static constexpr bool B_IN_SUM = true;
    static __device__ __forceinline__ float term(float g, float b) { return b * g; }
    static __device__ __forceinline__ float grad(float g, float b, float s) { return b * (g - s); }
};

/* dx = g - exp(logp) * sum_j g_j; b = logp. */
struct LogSoftmaxBwd {
    static constexpr bool B_IN_SUM = false;
    static __device__ __forceinline__ float term(float g, float) { return g; }
    static __device__ __forceinline__ float grad(float g, float b, float s)
    {
        return g - expf(b) * s;
    }
};

/* ---- row helpers ---------------------------------------------------------
 * A row is split into [0, head) scalar, nvec aligned groups of V elements
 * (one 128-bit access each), [tail, N) scalar. Row r starts at flat element
 * r*N of a 16-byte aligned base, so head counts the elements up to the next
 * multiple of V. With vec == false (unaligned bases) the whole row is tail. */
struct RowSpan {
    int head;
    int64_t nvec, tail;
};

template <int V>
__device__ __forceinline__ RowSpan row_span(int64_t row, int64_t N, bool vec)
{
    RowSpan s = {0, 0, 0};
    if (vec) {
        const int64_t h = (V - (row * N) % V) % V;
        s.head = (int)(h < N ? h : N);
        s.nvec = (N - s.head) / V;
        s.tail = s.head + s.nvec * V;
    }
    return s;
}

/* The block's threads visit a row: one(j) per scalar element, group(j) per
 * aligned group starting at element j. head < V <= 8 < blockDim.x. */
template <int V, typename One, typename Group>
__device__ __forceinline__ void row_visit(const RowSpan &s, int64_t N, const One &one,
                                          const Group &group)
{
    if ((int)threadIdx.x < s.head) one((int64_t)threadIdx.x);
    for (int64_t k = threadIdx.x; k < s.nvec; k += blockDim.x) group(s.head + k * V);
    for (int64_t j = s.tail + threadIdx.x; j < N; j += blockDim.x) one(j);
}

/* The row cache of the _smem kernels: dynamic shared memory, 16-byte slots. */
__device__ __forceinline__ uint4 *row_cache()
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    return reinterpret_cast<uint4 *>(smem_raw);
}

/* V elements of b (the dtype, or fp32) from a 16-byte aligned p, as fp32. */
template <typename U, int V> __device__ __forceinline__ void ld_b(const U *p, float (&f)[V])
{
    if constexpr (sizeof(U) == 4)
        kb_ld_f32<V>(reinterpret_cast<const float *>(p), f);
    else
        kb_unpack<U>(kb_ld128(p), f);
}
__device__ __forceinline__ float ld1(float v) { return v; }
template <typename U> __device__ __forceinline__ float ld1(U v) { return kb_to_float(v); }

/* ---- forward, row in registers ----------------------------------------------
 * This thread's R elements j0, j0 + stride, ... of the row (padded with -inf)
 * in registers; max and sum reduced over the row's threads by reduce_max /
 * reduce_sum. */
template <typename E, typename T, int R, typename RMax, typename RSum>
__device__ __forceinline__ void fwd_row_regs(const T *__restrict__ xr, T *__restrict__ yr, int N,
                                             int j0, int stride, const RMax &reduce_max,
                                             const RSum &reduce_sum)
{
    float v[R];
    float mx = -INFINITY;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int j = j0 + r * stride;
        v[r] = j < N ? kb_to_float(xr[j]) : -INFINITY;
        mx = fmaxf(mx, v[r]);
    }
    mx = reduce_max(mx);
    float sum = 0.f;
#pragma unroll
    for (int r = 0; r < R; r++) sum += E::term(v[r], mx);
    const float tot = E::total(reduce_sum(sum));
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int j = j0 + r * stride;
        if (j < N) yr[j] = kb_from_float<T>(E::held(v[r], mx, tot));
    }
}

/* N <= 2048: one warp per row, lane l holds elements l, l+32, ... (ITERS =
 * next_pow2(N)/32 <= 64), scalar loads, warp-shuffle reductions, 128-thread
 * blocks. */
template <typename E, typename T, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_fwd_warp(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS)
        fwd_row_regs<E, T, ITERS>(x + row * N, y + row * N, N, lane, 32,
                                  [](float v) { return kb_warp_max(v); },
                                  [](float v) { return kb_warp_sum(v); });
}

/* N > 2048: one 1024-thread block per row. Row in registers: thread t holds
 * elements t, t+1024, ... (REG of them). */
template <typename E, typename T, int REG>
__global__ void __launch_bounds__(ROW_THREADS, 2)
softmax_fwd_reg(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x)
        fwd_row_regs<E, T, REG>(x + row * N, y + row * N, N, threadIdx.x, blockDim.x,
                                [&](float v) { return kb_block_max(v, scratch); },
                                [&](float v) { return kb_block_sum(v, scratch); });
}

/* Row cached in dynamic shared memory (N * sizeof(T) bytes), 128-bit
 * accesses only: the host guarantees N % V == 0 and aligned x, y. */
template <typename E, typename T>
__global__ void __launch_bounds__(ROW_THREADS, 2)
softmax_fwd_smem(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    constexpr int V = kb_vec<T>::n;
    uint4 *cache = row_cache();
    __shared__ float scratch[32];
    const int nvec = N / V;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float f[V];
        float mx = -INFINITY;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            const uint4 v = kb_ld128(xr + k * V);
            cache[k] = v;
            kb_unpack<T>(v, f);
#pragma unroll
            for (int i = 0; i < V; i++) mx = fmaxf(mx, f[i]);
        }
        mx = kb_block_max(mx, scratch); /* its barriers also publish cache */
        float sum = 0.f;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            kb_unpack<T>(cache[k], f);
#pragma unroll
            for (int i = 0; i < V; i++) sum += expf(f[i] - mx);
        }
        const float tot = E::total(kb_block_sum(sum, scratch));
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            kb_unpack<T>(cache[k], f);
#pragma unroll
            for (int i = 0; i < V; i++) f[i] = E::fresh(f[i], mx, tot);
            kb_st128(yr + k * V, kb_pack<T>(f));
        }
        __syncthreads(); /* the next row overwrites cache */
    }
}

/* Three passes over global memory. */
template <typename E, typename T>
__global__ void __launch_bounds__(ROW_THREADS, 2)
softmax_fwd_gmem(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N, bool vec)
{
    constexpr int V = kb_vec<T>::n;
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        const RowSpan s = row_span<V>(row, N, vec);
        float mx = -INFINITY;
        row_visit<V>(
            s, N, [&](int64_t j) { mx = fmaxf(mx, kb_to_float(xr[j])); },
            [&](int64_t j) {
                float f[V];
                kb_unpack<T>(kb_ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) mx = fmaxf(mx, f[i]);
            });
        mx = kb_block_max(mx, scratch);
        float sum = 0.f;
        row_visit<V>(
            s, N, [&](int64_t j) { sum += expf(kb_to_float(xr[j]) - mx); },
            [&](int64_t j) {
                float f[V];
                kb_unpack<T>(kb_ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) sum += expf(f[i] - mx);
            });
        const float tot = E::total(kb_block_sum(sum, scratch));
        row_visit<V>(
            s, N, [&](int64_t j) { yr[j] = kb_from_float<T>(E::fresh(kb_to_float(xr[j]), mx, tot)); },
            [&](int64_t j) {
                float f[V];
                kb_unpack<T>(kb_ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) f[i] = E::fresh(f[i], mx, tot);
                kb_st128(yr + j, kb_pack<T>(f));
            });
    }
}

/* ---- backward, N <= 1024: one warp per row ---------------------------------- */
template <typename E, typename T, typename U, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_bwd_warp(const T *__restrict__ g, const U *__restrict__ b, T *__restrict__ dx, int64_t M,
                 int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS) {
        const int64_t off = row * N;
        float bv[ITERS], gv[ITERS];
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            bv[k] = j < N ? ld1(b[off + j]) : 0.f;
            gv[k] = j < N ? kb_to_float(g[off + j]) : 0.f;
            sum += E::term(gv[k], bv[k]);
        }
        sum = kb_warp_sum(sum);
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            if (j < N) dx[off + j] = kb_from_float<T>(E::grad(gv[k], bv[k], sum));
        }
    }
}

/* ---- backward, N > 1024: one block per row ---------------------------------- */
/* g cached in dynamic shared memory; host guarantees N % V == 0, aligned. */
template <typename E, typename T, typename U>
__global__ void __launch_bounds__(1024, 2)
softmax_bwd_smem(const T *__restrict__ g, const U *__restrict__ b, T *__restrict__ dx, int64_t M,
                 int N)
{
    constexpr int V = kb_vec<T>::n;
    uint4 *cache = row_cache();
    __shared__ float scratch[32];
    const int nvec = N / V;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const int64_t off = row * N;
        float fb[V], fg[V];
        float sum = 0.f;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            const uint4 v = kb_ld128(g + off + k * V);
            cache[k] = v;
            kb_unpack<T>(v, fg);
            if constexpr (E::B_IN_SUM) ld_b<U, V>(b + off + k * V, fb);
#pragma unroll
            for (int i = 0; i < V; i++) sum += E::term(fg[i], fb[i]);
        }
        sum = kb_block_sum(sum, scratch); /* its barriers also publish cache */
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            kb_unpack<T>(cache[k], fg);
            ld_b<U, V>(b + off + k * V, fb);
#pragma unroll
            for (int i = 0; i < V; i++) fg[i] = E::grad(fg[i], fb[i], sum);
            kb_st128(dx + off + k * V, kb_pack<T>(fg));
        }
        __syncthreads(); /* the next row overwrites cache */
    }
}

template <typename E, typename T, typename U>
__global__ void __launch_bounds__(1024, 2)
softmax_bwd_gmem(const T *__restrict__ g, const U *__restrict__ b, T *__restrict__ dx, int64_t M,
                 int64_t N, bool vec)
{
    constexpr int V = kb_vec<T>::n;
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *gr = g + row * N;
        const U *br = b + row * N;
        T *dr = dx + row * N;
        const RowSpan s = row_span<V>(row, N, vec);
        float sum = 0.f;
        row_visit<V>(
            s, N,
            [&](int64_t j) {
                const float bj = E::B_IN_SUM ? ld1(br[j]) : 0.f;
                sum += E::term(kb_to_float(gr[j]), bj);
            },
            [&](int64_t j) {
                float fb[V], fg[V];
                if constexpr (E::B_IN_SUM) ld_b<U, V>(br + j, fb);
                kb_unpack<T>(kb_ld128(gr + j), fg);
#pragma unroll
                for (int i = 0; i < V; i++) sum += E::term(fg[i], fb[i]);
            });
        sum = kb_block_sum(sum, scratch);
        row_visit<V>(
            s, N,
            [&](int64_t j) {
                const float bj = ld1(br[j]);
                dr[j] = kb_from_float<T>(E::grad(kb_to_float(gr[j]), bj, sum));
            },
            [&](int64_t j) {
                float fb[V], fg[V];
                ld_b<U, V>(br + j, fb);
                kb_unpack<T>(kb_ld128(gr + j), fg);
#pragma unroll
                for (int i = 0; i < V; i++) fg[i] = E::grad(fg[i], fb[i], sum);
                kb_st128(dr + j, kb_pack<T>(fg));
            });
    }
}

/* ---- host ----------------------------------------------------------------- */
/* PyTorch's SoftMax_getBlockSize (backward): ILP = 16 B / sizeof(T), keep at
 * least half the row vectorised, power of two in [32, 1024]. */
inline unsigned block_threads(int64_t N, size_t elem)
{
    int64_t max_threads = N / (int64_t)(16 / elem) / 2;
    if (max_threads > 1024) max_threads = 1024;
    unsigned t = 32;
    while ((int64_t)t < max_threads) t *= 2;
    return t;
}

/* The Smem variants' test: whole row in the default 48 KB next to the
 * reduction scratch, every row 16-byte aligned. */
template <typename T> bool row_fits_smem(int64_t N, bool vec)
{
    return vec && N % kb_vec<T>::n == 0 && N * (int64_t)sizeof(T) + SCRATCH_BYTES <= SMEM_BYTES;
}

/* Warp kernels instantiated for ITERS = next_pow2(N)/32, as PyTorch
 * templates on log2(N). */
#define WARP_CASES(X) X(1) X(2) X(4) X(8) X(16) X(32)
#define REG_CASES(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

/* y = softmax or log_softmax of each row of x [M, N] (E). */
template <typename E, typename T>
kb_status softmax_fwd(const T *x, T *y, int64_t M, int64_t N, cudaStream_t s, kb_err *e)
{
    if (N <= 2048) {
        const unsigned grid = grid_for(kb_cdiv(M, WARP_ROWS));
#define X(it)                                                                        \
    if (N <= 32 * (it)) {                                                            \
        softmax_fwd_warp<E, T, it><<<grid, WARP_ROWS * 32, 0, s>>>(x, y, M, (int)N); \
        KB_LAUNCHED(e);                                                              \
        return KB_OK;                                                                \
    }
        WARP_CASES(X) X(64)
#undef X
    }
    const unsigned grid = grid_for(M);
    const int64_t reg = kb_cdiv(N, ROW_THREADS); /* >= 3 here */
    if (reg <= REG_MAX) {
#define X(r)                                                                        \
    if (reg == (r)) {                                                               \
        softmax_fwd_reg<E, T, r><<<grid, ROW_THREADS, 0, s>>>(x, y, M, (int)N);     \
        KB_LAUNCHED(e);                                                             \
        return KB_OK;                                                               \
    }
        REG_CASES(X)
#undef X
    }
    const bool vec = kb_aligned16(x) && kb_aligned16(y);
    if (row_fits_smem<T>(N, vec)) {
        softmax_fwd_smem<E, T><<<grid, ROW_THREADS, (size_t)N * sizeof(T), s>>>(x, y, M, (int)N);
        KB_LAUNCHED(e);
        return KB_OK;
    }
    softmax_fwd_gmem<E, T><<<grid, ROW_THREADS, 0, s>>>(x, y, M, N, vec);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* dx of each row from the gradient g and the saved output b (E). */
template <typename E, typename T, typename U>
kb_status softmax_bwd(const T *g, const U *b, T *dx, int64_t M, int64_t N, cudaStream_t s,
                      kb_err *e)
{
    if (N <= 1024) {
        const unsigned grid = grid_for(kb_cdiv(M, WARP_ROWS));
#define X(it)                                                                              \
    if (N <= 32 * (it)) {                                                                  \
        softmax_bwd_warp<E, T, U, it><<<grid, WARP_ROWS * 32, 0, s>>>(g, b, dx, M, (int)N); \
        KB_LAUNCHED(e);                                                                    \
        return KB_OK;                                                                      \
    }
        WARP_CASES(X)
#undef X
    }
    const unsigned grid = grid_for(M), threads = block_threads(N, sizeof(T));
    const bool vec = kb_aligned16(g) && kb_aligned16(b) && kb_aligned16(dx);
    if (row_fits_smem<T>(N, vec)) {
        softmax_bwd_smem<E, T, U><<<grid, threads, (size_t)N * sizeof(T), s>>>(g, b, dx, M, (int)N);
        KB_LAUNCHED(e);
        return KB_OK;
    }
    softmax_bwd_gmem<E, T, U><<<grid, threads, 0, s>>>(g, b, dx, M, N, vec);
    KB_LAUNCHED(e);
    return KB_OK;
}

} /* namespace */
#endif
