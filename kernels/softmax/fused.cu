/* Softmax over the last dimension, fused backend: the Liger-Kernel / Unsloth
 * design as a hand-written CUDA C kernel.
 *
 * Strategy: one CTA per row (grid-stride over rows past the grid limit). The
 * row is walked in chunks of BLOCK = next power of two of N, capped at 65536
 * (Liger's MAX_FUSED_SIZE); threads scale with BLOCK as in Liger's
 * calculate_settings (4 warps, 8 from 2048, 16 from 8192, 32 from 32768).
 * A thread's share of a chunk is loaded into registers before it is used: one
 * 128-bit vector per load when every row start is 16-byte aligned
 * (N * sizeof(T) % 16 == 0 and aligned base pointers), scalars otherwise. At
 * most 16 elements per thread and stream are in registers at once (8 for
 * scalar read-and-write passes), so a chunk whose share is larger is walked
 * as several tiles. All math is fp32. Two passes over the row, the second
 * re-reading its inputs from global memory (mostly L2 hits):
 *   forward : pass 1 online max/sum-of-exp per thread (rescaled once per
 *             tile), combined across the CTA by a max then a sum reduction;
 *             pass 2 writes y = exp(x - max) / sum.
 *   backward: pass 1 dot = sum(dy * y) by a CTA sum reduction; pass 2 writes
 *             dx = y * (dy - dot).
 * Limits: any M >= 1, N >= 1 (no cap at 65536, unlike Liger), 64-bit
 * indexing. exp is the fast __expf (ex2.approx), as Triton's tl.exp; the
 * per-row rescale uses the accurate expf. */
#include "fused_rows.cuh"

/* Elements per thread per tile and stream: what a thread holds in registers
 * at once. 16 for one input stream; 8 with two input streams, and on the
 * scalar path of a pass that also writes (the 64-bit addresses of its loads
 * and stores stay live); more spills at 1024 threads (64 registers). */
#define FUSED_TILE_ELEMS 16
#define FUSED_TILE_ELEMS_SCALAR_RW 8
#define FUSED_TILE_ELEMS_TWO_IN 8

static constexpr char softmax_name[] = "softmax"; /* as errors name the op */

/* ---- kernels ------------------------------------------------------------- */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
softmax_fwd_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        /* pass 1: online max and sum of exp */
        float rmax, rsum;
        fused_row_max_sumexp<T, W, U>(xr, N, tile, scratch, rmax, rsum);
        const float inv = 1.f / rsum;
        /* pass 2: normalise */
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W], o[W];
            fused_load_tile<T, W, U, true>(xr, base, N, v);
            fused_store_tile<T, W, U>(yr, base, N, o, [&](int k, int64_t, int i) {
                return __expf(v[k][i] - rmax) * inv;
            });
        }
    }
}

template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
softmax_bwd_kernel(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx,
                   int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *yr = y + row * N, *gr = dy + row * N;
        T *dr = dx + row * N;
        /* pass 1: dot = sum(dy * y) */
        float dot = 0.f;
        for (int64_t base = 0; base < N; base += tile) {
            float a[U][W], b[U][W];
            fused_tile_each<W, U>(
                base, N,
                [&](int k, int64_t col) {
                    fused_ld<T, W, false>(yr + col, a[k]);
                    fused_ld<T, W, false>(gr + col, b[k]);
                },
                [&](int k) {
#pragma unroll
                    for (int i = 0; i < W; i++) a[k][i] = b[k][i] = 0.f;
                });
#pragma unroll
            for (int k = 0; k < U; k++)
#pragma unroll
                for (int i = 0; i < W; i++) dot += a[k][i] * b[k][i];
        }
        dot = kb_block_sum(dot, scratch);
        /* pass 2: dx = y * (dy - dot) */
        for (int64_t base = 0; base < N; base += tile) {
            float a[U][W], b[U][W];
            fused_tile_each<W, U>(base, N, [&](int k, int64_t col) {
                fused_ld<T, W, true>(yr + col, a[k]);
                fused_ld<T, W, true>(gr + col, b[k]);
            });
            float o[W];
            fused_store_tile<T, W, U>(dr, base, N, o, [&](int k, int64_t, int i) {
                return a[k][i] * (b[k][i] - dot);
            });
        }
    }
}

/* ---- host ------------------------------------------------------------------ */
static kb_status softmax_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                 cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    fused_dispatch<FUSED_TILE_ELEMS_SCALAR_RW, FUSED_TILE_ELEMS>(
        p, c, kb_aligned16(t->x) && kb_aligned16(t->out), [&](auto k) {
            typedef decltype(k) K;
            typedef typename K::T T;
            softmax_fwd_kernel<T, K::W, K::U><<<fused_grid(p->M), c->threads, 0, s>>>(
                (const T *)t->x, (T *)t->out, p->M, p->N);
        });
    return fused_check_launch(p, softmax_name, "forward", e);
}

static kb_status softmax_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                                 cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    const bool aligned = kb_aligned16(t->y) && kb_aligned16(t->dy) && kb_aligned16(t->out);
    /* two input streams */
    fused_dispatch<FUSED_TILE_ELEMS_TWO_IN, FUSED_TILE_ELEMS_TWO_IN>(p, c, aligned, [&](auto k) {
        typedef decltype(k) K;
        typedef typename K::T T;
        softmax_bwd_kernel<T, K::W, K::U><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->y, (const T *)t->dy, (T *)t->out, p->M, p->N);
    });
    return fused_check_launch(p, softmax_name, "backward", e);
}

extern "C" const kb_impl kb_softmax_fused_fwd = {
    "fused", KB_SOFTMAX_FWD, fused_setup<softmax_name>, softmax_fwd_run, fused_describe,
    fused_teardown, kb_kernels_fixed<1>};
extern "C" const kb_impl kb_softmax_fused_bwd = {
    "fused", KB_SOFTMAX_BWD, fused_setup<softmax_name>, softmax_bwd_run, fused_describe,
    fused_teardown, kb_kernels_fixed<1>};
