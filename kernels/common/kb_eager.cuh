/* What the eager backends share: PyTorch's unrolled elementwise kernel (the
 * norms' fp32 chains are made of it), the grid cap, the workspace layout of
 * [M,N] / [chunks,N] / [M] fp32 intermediates, and the kb_impl glue
 * (KB_EAGER_IMPLS). Everything in an anonymous namespace: each kernel file
 * gets its own instantiations, under the names it had before. */
#ifndef KB_EAGER_CUH
#define KB_EAGER_CUH

#include "kb_cuda.cuh"

namespace {

#define EW_THREADS 128
#define EW_UNROLL 8
#define MAX_BLOCKS (1 << 20) /* grid cap; rows and tiles are grid-strided beyond it */

inline size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

inline unsigned grid_for(int64_t items)
{
    return (unsigned)(items < MAX_BLOCKS ? items : MAX_BLOCKS);
}

/* Row of flat element i through a double reciprocal corrected by one step:
 * exact for i < 2^53, no 64-bit division per element. */
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

/* ---- elementwise: out[i] = f(i) ------------------------------------------------
 * PyTorch's unrolled elementwise kernel shape: 128 threads, tiles of 128 * 8
 * elements, all loads (and math) of a tile before its stores (memory-level
 * parallelism without assuming 16-byte alignment), FULL tiles without bounds
 * checks, grid-strided tiles, int64 indices. */
template <typename T> struct Load {
    const T *a;
    __device__ float operator()(int64_t i) const { return kb_to_float(a[i]); }
};

/* Where a tile's element i is stored: out[i] (Dense), or out[dst.at(i)] for
 * a strided view (rope's eager copies into one half of each head row, as
 * copy_ into a slice does). */
struct Dense {
    __device__ __forceinline__ int64_t at(int64_t i) const { return i; }
};

template <bool FULL, typename Out, typename F, typename DST = Dense>
__device__ __forceinline__ void ew_tile(Out *out, int64_t base, int64_t total, const F &f,
                                        const DST &dst = DST())
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
        if (FULL || i < total) out[dst.at(i)] = kb_from_float<Out>(v[k]);
    }
}

/* The grid-strided tiles of total elements, full tiles without bounds checks. */
template <typename Out, typename F, typename DST>
__device__ __forceinline__ void ew_tiles(Out *out, int64_t total, const F &f, const DST &dst)
{
    const int64_t tile = (int64_t)EW_THREADS * EW_UNROLL;
    for (int64_t base = (int64_t)blockIdx.x * tile; base < total; base += (int64_t)gridDim.x * tile) {
        if (base + tile <= total)
            ew_tile<true>(out, base, total, f, dst);
        else
            ew_tile<false>(out, base, total, f, dst);
    }
}

template <typename Out, typename F>
__global__ void __launch_bounds__(EW_THREADS) ew_kernel(Out *out, int64_t total, F f)
{
    ew_tiles(out, total, f, Dense());
}

/* ew_kernel storing through a view (DST: at(i) gives element i's index). */
template <typename Out, typename F, typename DST>
__global__ void __launch_bounds__(EW_THREADS) ew_to_kernel(Out *out, int64_t total, F f, DST dst)
{
    ew_tiles(out, total, f, dst);
}

template <typename Out, typename F>
kb_status ew(Out *out, int64_t total, F f, cudaStream_t s, kb_err *e)
{
    const unsigned grid = grid_for(kb_cdiv(total, (int64_t)EW_THREADS * EW_UNROLL));
    ew_kernel<Out, F><<<grid, EW_THREADS, 0, s>>>(out, total, f);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* Ordered sum over the 8 row lanes of a (32, 8) column-sum block: thread
 * (x, y) holds acc for column x; thread (x, 0) stores lanes 0..7 summed in
 * that order (deterministic) to *dst when ok. */
__device__ __forceinline__ void lanes_sum(float acc, bool ok, float *dst)
{
    __shared__ float lanes[8][33];
    lanes[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && ok) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < 8; k++) sum += lanes[k][threadIdx.x];
        *dst = sum;
    }
}

/* out[chunk, col] = sum over rows [chunk*rows_per_chunk, +rows_per_chunk) of
 * term(row, col); grid (cdiv(N, 32), chunks), block (32, 8), chunks <=
 * CHUNKS_MAX. */
template <typename F>
__global__ void __launch_bounds__(256)
colsum(F term, float *__restrict__ out, int64_t rows, int64_t N, int64_t rows_per_chunk)
{
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    float acc = 0.f;
    if (col < N) {
#pragma unroll 4
        for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) acc += term(r, col);
    }
    lanes_sum(acc, col < N, &out[(int64_t)blockIdx.y * N + col]);
}

/* colsum's term: a[row, col]. */
struct Elem {
    const float *__restrict__ a;
    int64_t N;
    __device__ float operator()(int64_t r, int64_t col) const { return a[r * N + col]; }
};

/* Block size of a one-block-per-row reduction: 32..512, ~4 elements a thread. */
inline unsigned row_threads(int64_t N)
{
    unsigned t = 32;
    while (t < 512 && (int64_t)t * 4 < N) t *= 2;
    return t;
}

/* ---- workspace: fp32 intermediates, each 256-byte aligned --------------------
 * nbig [M,N] tensors, then (part) the [chunks,N] partials of a column sum over
 * row chunks of at least CHUNK_ROWS_MIN rows (at most CHUNKS_MAX chunks),
 * then nrow [M] vectors. */
#define CHUNK_ROWS_MIN 64
#define CHUNKS_MAX 1024
struct layout {
    int64_t chunk_rows, chunks;
    size_t big[4], part, row[3], total; /* byte offsets */
};

inline layout make_layout(const kb_problem *p, int nbig, bool part, int nrow)
{
    layout L = {};
    const size_t mn = (size_t)p->M * (size_t)p->N * sizeof(float), m = (size_t)p->M * sizeof(float);
    int64_t chunks = kb_cdiv(p->M, CHUNK_ROWS_MIN);
    if (chunks > CHUNKS_MAX) chunks = CHUNKS_MAX;
    L.chunk_rows = kb_cdiv(p->M, chunks);
    L.chunks = kb_cdiv(p->M, L.chunk_rows);
    size_t off = 0;
    for (int i = 0; i < nbig; i++) { L.big[i] = off; off += align256(mn); }
    if (part) { L.part = off; off += align256((size_t)L.chunks * (size_t)p->N * sizeof(float)); }
    for (int i = 0; i < nrow; i++) { L.row[i] = off; off += align256(m); }
    L.total = off;
    return L;
}

/* KB_OK for a problem an eager backend can run (M, N >= 1, a known dtype). */
inline kb_status eager_check(const kb_problem *p, const char *op, kb_err *e)
{
    if (p->M < 1 || p->N < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "eager %s: bad problem %lldx%lld dtype %d", op,
                       (long long)p->M, (long long)p->N, (int)p->dtype);
    return KB_OK;
}

/* The eager norms' check: also N < 2^24, so that N (the mean's divisor) and
 * the Welford counts are exact in fp32. */
inline kb_status eager_norm_check(const kb_problem *p, const char *op, kb_err *e)
{
    KB_TRY(eager_check(p, op, e));
    if (p->N >= (1 << 24))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "eager %s: N=%lld >= 2^24", op, (long long)p->N);
    return KB_OK;
}

#define WS(L, t, field) ((float *)((char *)(t)->workspace + (L).field))

} /* namespace */

/* The kb_impl pair kb_<op>_eager_fwd / _bwd of an eager backend that launches
 * nk_fwd / nk_bwd kernels. The including file defines, in its anonymous
 * namespace: check(p, e) (KB_OK for a problem it runs, else the error),
 * workspace(p, bwd) (bytes) and fwd<T> / bwd<T> (p, t, s, e) (enqueue). */
#define KB_EAGER_IMPLS(op, fwd_id, bwd_id, nk_fwd, nk_bwd)                                    \
    namespace {                                                                              \
    template <bool BWD>                                                                      \
    kb_status eager_setup(const kb_problem *p, const kb_setup_ctx *, void **state,            \
                          size_t *workspace_bytes, kb_err *e)                                \
    {                                                                                        \
        *state = NULL;                                                                       \
        *workspace_bytes = 0;                                                                \
        KB_TRY(check(p, e));                                                                 \
        *workspace_bytes = workspace(p, BWD);                                                \
        return KB_OK;                                                                        \
    }                                                                                        \
    template <bool BWD>                                                                      \
    kb_status eager_run(const kb_problem *p, const kb_tensors *t, void *, cudaStream_t s,     \
                        kb_err *e)                                                           \
    {                                                                                        \
        KB_TRY(check(p, e));                                                                 \
        kb_status st = KB_OK;                                                                \
        KB_DISPATCH(p->dtype, T, st = BWD ? bwd<T>(p, t, s, e) : fwd<T>(p, t, s, e));         \
        return st;                                                                           \
    }                                                                                        \
    }                                                                                        \
    extern "C" const kb_impl kb_##op##_eager_fwd = {"eager",           fwd_id,               \
                                                    eager_setup<false>, eager_run<false>,    \
                                                    NULL,              NULL,                 \
                                                    kb_kernels_fixed<nk_fwd>};               \
    extern "C" const kb_impl kb_##op##_eager_bwd = {"eager",          bwd_id,                \
                                                    eager_setup<true>, eager_run<true>,      \
                                                    NULL,             NULL,                  \
                                                    kb_kernels_fixed<nk_bwd>};

#endif
