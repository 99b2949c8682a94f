/* softmax, eager backend: what PyTorch eager (2.x, CUDA) launches for
 * torch.softmax(x, -1) and its backward, with the same dispatch on N as
 * host_softmax / host_softmax_backward in aten/src/ATen/native/cuda/SoftMax.cu.
 * The speedups of the other backends are measured against these kernels, so
 * they copy PyTorch's strategy, not anything faster. V = 16 B / sizeof(T)
 * (PyTorch's ILP): 8 for bf16/fp16, 4 for fp32. fp32 math, output rounded to
 * the dtype once.
 *
 * Forward:
 *   N <= 2048          fwd_warp  softmax_warp_forward (PersistentSoftmax.cuh):
 *                      one warp per row, row in registers (lane l holds
 *                      elements l, l+32, ...; ITERS = next_pow2(N)/32 <= 64,
 *                      padded with -inf), scalar loads, warp-shuffle
 *                      reductions, 128-thread blocks. PyTorch packs 2 rows per
 *                      warp for N <= 128; we keep 1.
 *   N > 2048: one block of 1024 threads per row (SoftMaxForward_getBlockSize),
 *   reductions through warp shuffles + 32 floats of shared memory:
 *     ceil(N/1024) < 10  fwd_reg   cunn_SoftMaxForwardReg: the row in
 *                      registers, REG = ceil(N/1024) scalar strided loads per
 *                      thread; read once, written once.
 *     row fits 48 KB   fwd_smem  cunn_SoftMaxForwardSmem: 128-bit loads copy
 *                      the row into shared memory during the max pass; sum
 *                      and write passes read it from there. Needs N % V == 0
 *                      and 16-byte aligned x, y. 48 KB is sharedMemPerBlock,
 *                      what PyTorch tests; it does not opt in to more.
 *     otherwise        fwd_gmem  cunn_SoftMaxForward: three passes over the
 *                      row in global memory (max, sum of exp, write), which
 *                      L2 partly absorbs; 128-bit loads/stores for the
 *                      aligned interior of each row, scalar for its < V
 *                      leading/trailing elements (ilpReduce and
 *                      WriteFpropResultsVectorized's "shift").
 * Backward (dx = y * (dy - sum_j dy_j*y_j)):
 *   N <= 1024          bwd_warp  softmax_warp_backward: one warp per row.
 *   N > 1024: one block per row, SoftMax_getBlockSize threads:
 *     row fits 48 KB   bwd_smem  cunn_SoftMaxBackwardSmem: dy copied into
 *                      shared memory during the dot pass (y is read from
 *                      global memory in both passes); same conditions as
 *                      fwd_smem.
 *     otherwise        bwd_gmem  cunn_SoftMaxBackward: dot pass and write pass
 *                      over global memory, 128-bit interior as above.
 *   PyTorch first runs tmp = dy*y as a separate elementwise kernel, then this
 *   one on (tmp, y): 6 M*N element transfers where ours moves 3 (+ L2
 *   re-reads). SPEC counts softmax as one kernel, so the product is formed
 *   in place; a bf16 tmp would also break SPEC's element-wise tolerance for
 *   tiny N, where dx = tmp - y*sum(tmp) cancels.
 * Rows are grid-strided (any M >= 1), offsets int64; any N >= 1. Base
 * pointers that are not 16-byte aligned turn every 128-bit path scalar.    */
#include "kb_eager.cuh"

/* Internal linkage for every kernel and helper: other backends define
 * kernels and helpers of the same names in their own files. */
namespace {

#define WARP_ROWS 4           /* warps (= rows) per block on the warp path */
#define ROW_THREADS 1024      /* forward block size for every N > 2048      */
#define REG_MAX 9             /* fwd_reg while ceil(N / 1024) <= 9          */
#define SMEM_BYTES (48 * 1024) /* cudaDeviceProp::sharedMemPerBlock         */
#define SCRATCH_BYTES (32 * (int64_t)sizeof(float)) /* reduction scratch    */
/* Block kernels are held to 32 registers (__launch_bounds__(1024, 2): two
 * 1024-thread blocks per SM); at 33+ one block would fit and occupancy halve. */

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

/* 128-bit accesses as raw uint4, converted to / from V fp32 values by bit
 * operations. (A kb_vec<T> filled element by element is stored in 32-bit
 * pieces by nvcc, and read from shared memory in 16-bit loads.) */
template <typename T> struct Tag {};

__device__ __forceinline__ void unpack_(uint4 u, float *f, Tag<float>)
{
    f[0] = __uint_as_float(u.x), f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z), f[3] = __uint_as_float(u.w);
}
__device__ __forceinline__ void unpack_(uint4 u, float *f, Tag<kb_bf16>)
{
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++)
        f[2 * i] = __uint_as_float(w[i] << 16), f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
}
__device__ __forceinline__ void unpack_(uint4 u, float *f, Tag<kb_fp16>)
{
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++)
        f[2 * i] = __half2float(__ushort_as_half((unsigned short)(w[i] & 0xffffu))),
        f[2 * i + 1] = __half2float(__ushort_as_half((unsigned short)(w[i] >> 16)));
}

__device__ __forceinline__ uint4 pack_(const float *f, Tag<float>)
{
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                      __float_as_uint(f[3]));
}
__device__ __forceinline__ uint32_t pair(float a, float b, Tag<kb_bf16>)
{
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(a)) |
           (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(b)) << 16;
}
__device__ __forceinline__ uint32_t pair(float a, float b, Tag<kb_fp16>)
{
    return (uint32_t)__half_as_ushort(__float2half_rn(a)) |
           (uint32_t)__half_as_ushort(__float2half_rn(b)) << 16;
}
template <typename T> __device__ __forceinline__ uint4 pack_(const float *f, Tag<T> t)
{
    return make_uint4(pair(f[0], f[1], t), pair(f[2], f[3], t), pair(f[4], f[5], t),
                      pair(f[6], f[7], t));
}

template <typename T> __device__ __forceinline__ void unpack(uint4 u, float *f)
{
    unpack_(u, f, Tag<T>());
}
template <typename T> __device__ __forceinline__ uint4 pack(const float *f)
{
    return pack_(f, Tag<T>());
}
template <typename T> __device__ __forceinline__ uint4 ld128(const T *p)
{
    return __ldg(reinterpret_cast<const uint4 *>(p));
}
/* __stwb is a plain (write-back) store; a uint4 assignment here gets split
 * into four 32-bit stores by nvcc 13. */
template <typename T> __device__ __forceinline__ void st128(T *p, uint4 u)
{
    __stwb(reinterpret_cast<uint4 *>(p), u);
}

/* ---- N <= 2048 (fwd) / 1024 (bwd): one warp per row, row in registers -- */
template <typename T, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_fwd_warp(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float v[ITERS];
        float mx = -INFINITY;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            v[k] = j < N ? kb_to_float(xr[j]) : -INFINITY;
            mx = fmaxf(mx, v[k]);
        }
        mx = kb_warp_max(mx);
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            v[k] = expf(v[k] - mx); /* padding: exp(-inf) = 0 */
            sum += v[k];
        }
        sum = kb_warp_sum(sum);
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            if (j < N) yr[j] = kb_from_float<T>(v[k] / sum);
        }
    }
}

template <typename T, int ITERS>
__global__ void __launch_bounds__(WARP_ROWS * 32)
softmax_bwd_warp(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                 int64_t M, int N)
{
    const int lane = threadIdx.x & 31;
    for (int64_t row = (int64_t)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5); row < M;
         row += (int64_t)gridDim.x * WARP_ROWS) {
        const int64_t off = row * N;
        float yv[ITERS], gv[ITERS];
        float dot = 0.f;
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            yv[k] = j < N ? kb_to_float(y[off + j]) : 0.f;
            gv[k] = j < N ? kb_to_float(dy[off + j]) : 0.f;
            dot += yv[k] * gv[k];
        }
        dot = kb_warp_sum(dot);
#pragma unroll
        for (int k = 0; k < ITERS; k++) {
            const int j = lane + 32 * k;
            if (j < N) dx[off + j] = kb_from_float<T>(yv[k] * (gv[k] - dot));
        }
    }
}

/* ---- forward, N > 2048: one 1024-thread block per row --------------------- */
/* Row in registers: thread t holds elements t, t+1024, ... (REG of them). */
template <typename T, int REG>
__global__ void __launch_bounds__(ROW_THREADS, 2)
softmax_fwd_reg(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float v[REG];
        float mx = -INFINITY;
#pragma unroll
        for (int r = 0; r < REG; r++) {
            const int j = threadIdx.x + r * blockDim.x;
            v[r] = j < N ? kb_to_float(xr[j]) : -INFINITY;
            mx = fmaxf(mx, v[r]);
        }
        mx = kb_block_max(mx, scratch);
        float sum = 0.f;
#pragma unroll
        for (int r = 0; r < REG; r++) {
            v[r] = expf(v[r] - mx); /* padding: exp(-inf) = 0 */
            sum += v[r];
        }
        sum = kb_block_sum(sum, scratch);
#pragma unroll
        for (int r = 0; r < REG; r++) {
            const int j = threadIdx.x + r * blockDim.x;
            if (j < N) yr[j] = kb_from_float<T>(v[r] / sum);
        }
    }
}

/* Row cached in dynamic shared memory (N * sizeof(T) bytes), 128-bit
 * accesses only: the host guarantees N % V == 0 and aligned x, y. */
template <typename T>
__global__ void __launch_bounds__(ROW_THREADS, 2)
softmax_fwd_smem(const T *__restrict__ x, T *__restrict__ y, int64_t M, int N)
{
    constexpr int V = kb_vec<T>::n;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    uint4 *cache = reinterpret_cast<uint4 *>(smem_raw);
    __shared__ float scratch[32];
    const int nvec = N / V;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        float f[V];
        float mx = -INFINITY;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            const uint4 v = ld128(xr + k * V);
            cache[k] = v;
            unpack<T>(v, f);
#pragma unroll
            for (int i = 0; i < V; i++) mx = fmaxf(mx, f[i]);
        }
        mx = kb_block_max(mx, scratch); /* its barriers also publish cache */
        float sum = 0.f;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            unpack<T>(cache[k], f);
#pragma unroll
            for (int i = 0; i < V; i++) sum += expf(f[i] - mx);
        }
        sum = kb_block_sum(sum, scratch);
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            unpack<T>(cache[k], f);
#pragma unroll
            for (int i = 0; i < V; i++) f[i] = expf(f[i] - mx) / sum;
            st128(yr + k * V, pack<T>(f));
        }
        __syncthreads(); /* the next row overwrites cache */
    }
}

/* Three passes over global memory. */
template <typename T>
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
                unpack<T>(ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) mx = fmaxf(mx, f[i]);
            });
        mx = kb_block_max(mx, scratch);
        float sum = 0.f;
        row_visit<V>(
            s, N, [&](int64_t j) { sum += expf(kb_to_float(xr[j]) - mx); },
            [&](int64_t j) {
                float f[V];
                unpack<T>(ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) sum += expf(f[i] - mx);
            });
        sum = kb_block_sum(sum, scratch);
        row_visit<V>(
            s, N, [&](int64_t j) { yr[j] = kb_from_float<T>(expf(kb_to_float(xr[j]) - mx) / sum); },
            [&](int64_t j) {
                float f[V];
                unpack<T>(ld128(xr + j), f);
#pragma unroll
                for (int i = 0; i < V; i++) f[i] = expf(f[i] - mx) / sum;
                st128(yr + j, pack<T>(f));
            });
    }
}

/* ---- backward, N > 1024: one block per row --------------------------------- */
/* dy cached in dynamic shared memory; host guarantees N % V == 0, aligned. */
template <typename T>
__global__ void __launch_bounds__(1024, 2)
softmax_bwd_smem(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                 int64_t M, int N)
{
    constexpr int V = kb_vec<T>::n;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    uint4 *cache = reinterpret_cast<uint4 *>(smem_raw);
    __shared__ float scratch[32];
    const int nvec = N / V;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const int64_t off = row * N;
        float fy[V], fg[V];
        float dot = 0.f;
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            const uint4 g = ld128(dy + off + k * V);
            cache[k] = g;
            unpack<T>(g, fg);
            unpack<T>(ld128(y + off + k * V), fy);
#pragma unroll
            for (int i = 0; i < V; i++) dot += fy[i] * fg[i];
        }
        dot = kb_block_sum(dot, scratch); /* its barriers also publish cache */
        for (int k = threadIdx.x; k < nvec; k += blockDim.x) {
            unpack<T>(cache[k], fg);
            unpack<T>(ld128(y + off + k * V), fy);
#pragma unroll
            for (int i = 0; i < V; i++) fy[i] = fy[i] * (fg[i] - dot);
            st128(dx + off + k * V, pack<T>(fy));
        }
        __syncthreads(); /* the next row overwrites cache */
    }
}

template <typename T>
__global__ void __launch_bounds__(1024, 2)
softmax_bwd_gmem(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                 int64_t M, int64_t N, bool vec)
{
    constexpr int V = kb_vec<T>::n;
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *yr = y + row * N, *gr = dy + row * N;
        T *dr = dx + row * N;
        const RowSpan s = row_span<V>(row, N, vec);
        float dot = 0.f;
        row_visit<V>(
            s, N, [&](int64_t j) { dot += kb_to_float(yr[j]) * kb_to_float(gr[j]); },
            [&](int64_t j) {
                float fy[V], fg[V];
                unpack<T>(ld128(yr + j), fy);
                unpack<T>(ld128(gr + j), fg);
#pragma unroll
                for (int i = 0; i < V; i++) dot += fy[i] * fg[i];
            });
        dot = kb_block_sum(dot, scratch);
        row_visit<V>(
            s, N,
            [&](int64_t j) {
                dr[j] = kb_from_float<T>(kb_to_float(yr[j]) * (kb_to_float(gr[j]) - dot));
            },
            [&](int64_t j) {
                float fy[V], fg[V];
                unpack<T>(ld128(yr + j), fy);
                unpack<T>(ld128(gr + j), fg);
#pragma unroll
                for (int i = 0; i < V; i++) fy[i] = fy[i] * (fg[i] - dot);
                st128(dr + j, pack<T>(fy));
            });
    }
}

/* ---- host ----------------------------------------------------------------- */
/* PyTorch's SoftMax_getBlockSize (backward): ILP = 16 B / sizeof(T), keep at
 * least half the row vectorised, power of two in [32, 1024]. */
static unsigned block_threads(int64_t N, size_t elem)
{
    int64_t max_threads = N / (int64_t)(16 / elem) / 2;
    if (max_threads > 1024) max_threads = 1024;
    unsigned t = 32;
    while ((int64_t)t < max_threads) t *= 2;
    return t;
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* The Smem variants' test: whole row in the default 48 KB next to the
 * reduction scratch, every row 16-byte aligned. */
template <typename T> static bool row_fits_smem(int64_t N, bool vec)
{
    return vec && N % kb_vec<T>::n == 0 && N * (int64_t)sizeof(T) + SCRATCH_BYTES <= SMEM_BYTES;
}

/* Warp kernels instantiated for ITERS = next_pow2(N)/32, as PyTorch
 * templates on log2(N). */
#define WARP_CASES(X) X(1) X(2) X(4) X(8) X(16) X(32)
#define REG_CASES(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

template <typename T>
static kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const T *x = (const T *)t->x;
    T *y = (T *)t->out;
    const int64_t M = p->M, N = p->N;
    if (N <= 2048) {
        const unsigned grid = grid_for(kb_cdiv(M, WARP_ROWS));
#define X(it)                                                                 \
    if (N <= 32 * (it)) {                                                     \
        softmax_fwd_warp<T, it><<<grid, WARP_ROWS * 32, 0, s>>>(x, y, M, (int)N); \
        KB_LAUNCHED(e);                                                       \
        return KB_OK;                                                         \
    }
        WARP_CASES(X) X(64)
#undef X
    }
    const unsigned grid = grid_for(M);
    const int64_t reg = kb_cdiv(N, ROW_THREADS); /* >= 3 here */
    if (reg <= REG_MAX) {
#define X(r)                                                                  \
    if (reg == (r)) {                                                         \
        softmax_fwd_reg<T, r><<<grid, ROW_THREADS, 0, s>>>(x, y, M, (int)N);  \
        KB_LAUNCHED(e);                                                       \
        return KB_OK;                                                         \
    }
        REG_CASES(X)
#undef X
    }
    const bool vec = aligned16(x) && aligned16(y);
    if (row_fits_smem<T>(N, vec)) {
        softmax_fwd_smem<T><<<grid, ROW_THREADS, (size_t)N * sizeof(T), s>>>(x, y, M, (int)N);
        KB_LAUNCHED(e);
        return KB_OK;
    }
    softmax_fwd_gmem<T><<<grid, ROW_THREADS, 0, s>>>(x, y, M, N, vec);
    KB_LAUNCHED(e);
    return KB_OK;
}

template <typename T>
static kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    const T *y = (const T *)t->y, *dy = (const T *)t->dy;
    T *dx = (T *)t->out;
    const int64_t M = p->M, N = p->N;
    if (N <= 1024) {
        const unsigned grid = grid_for(kb_cdiv(M, WARP_ROWS));
#define X(it)                                                                 \
    if (N <= 32 * (it)) {                                                     \
        softmax_bwd_warp<T, it><<<grid, WARP_ROWS * 32, 0, s>>>(y, dy, dx, M, (int)N); \
        KB_LAUNCHED(e);                                                       \
        return KB_OK;                                                         \
    }
        WARP_CASES(X)
#undef X
    }
    const unsigned grid = grid_for(M), threads = block_threads(N, sizeof(T));
    const bool vec = aligned16(y) && aligned16(dy) && aligned16(dx);
    if (row_fits_smem<T>(N, vec)) {
        softmax_bwd_smem<T><<<grid, threads, (size_t)N * sizeof(T), s>>>(y, dy, dx, M, (int)N);
        KB_LAUNCHED(e);
        return KB_OK;
    }
    softmax_bwd_gmem<T><<<grid, threads, 0, s>>>(y, dy, dx, M, N, vec);
    KB_LAUNCHED(e);
    return KB_OK;
}

static kb_status check(const kb_problem *p, kb_err *e) { return eager_check(p, "softmax", e); }
static size_t workspace(const kb_problem *, bool) { return 0; }

} /* namespace */

KB_EAGER_IMPLS(softmax, KB_SOFTMAX_FWD, KB_SOFTMAX_BWD, 1, 1)
