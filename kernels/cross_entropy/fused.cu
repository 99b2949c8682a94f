/* Cross entropy (reduction none), fused backend: the Liger-Kernel / Unsloth
 * design as a hand-written CUDA C kernel.
 *
 * Strategy: one CTA per row (grid-stride over rows past the grid limit). The
 * row is walked in chunks of BLOCK = next power of two of N, capped at 65536
 * (Liger's MAX_FUSED_SIZE); threads scale with BLOCK as in Liger's
 * calculate_settings (4 warps, 8 from 2048, 16 from 8192, 32 from 32768).
 * A thread's share of a chunk is loaded into registers before it is used: one
 * 128-bit vector per load when every row start is 16-byte aligned
 * (N * sizeof(T) % 16 == 0 and aligned base pointers), scalars otherwise. At
 * most 16 elements per thread are in registers at once (8 on the backward's
 * scalar path), so a chunk whose share is larger (BLOCK / threads is 32 or
 * 64 from BLOCK 16384 on) is walked as several tiles.
 * All math is fp32.
 *   forward : one pass; per thread an online max/sum-of-exp (rescaled once
 *             per tile), combined across the CTA by a max then a sum
 *             reduction; thread 0 reads x[target] and writes lse - x[target].
 *   backward: one elementwise pass per row with the saved lse:
 *             dx = dloss * (exp(x - lse) - (j == target)).
 * Limits: any M >= 1, N >= 1 (no cap at 65536, unlike Liger), 64-bit
 * indexing. A target outside [0, N) gives a NaN loss (and no one-hot term in
 * the backward) instead of an out-of-bounds read. exp is the fast __expf
 * (ex2.approx), as Triton's tl.exp; the per-row rescale and the log use the
 * accurate expf/logf. */
#include "fused_rows.cuh"

/* Elements per thread per tile and stream: what a thread holds in registers
 * at once. 16 for one input stream; 8 on the scalar path of a pass that
 * also writes (the 64-bit addresses of its loads and stores stay live);
 * more spills at 1024 threads (64 registers). */
#define FUSED_TILE_ELEMS 16
#define FUSED_TILE_ELEMS_SCALAR_RW 8

static constexpr char ce_name[] = "cross_entropy"; /* as errors name the op */

/* ---- kernels ------------------------------------------------------------- */
template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ce_fwd_kernel(const T *__restrict__ x, const int64_t *__restrict__ target, T *__restrict__ loss,
              int64_t M, int64_t N)
{
    __shared__ float scratch[32];
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        float rmax, rsum;
        fused_row_max_sumexp<T, W, U>(xr, N, tile, scratch, rmax, rsum);
        if (threadIdx.x == 0) {
            const int64_t t = target[row];
            const float xt = (t >= 0 && t < N) ? kb_to_float(xr[t]) : NAN;
            loss[row] = kb_from_float<T>(rmax + logf(rsum) - xt);
        }
    }
}

template <typename T, int W, int U>
static __global__ void __launch_bounds__(1024)
ce_bwd_kernel(const T *__restrict__ x, const int64_t *__restrict__ target,
              const float *__restrict__ dloss, const float *__restrict__ lse, T *__restrict__ dx,
              int64_t M, int64_t N)
{
    const int64_t tile = fused_tile_len<W, U>();
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *dr = dx + row * N;
        const float l = lse[row], d = dloss[row];
        const int64_t t = target[row];
        for (int64_t base = 0; base < N; base += tile) {
            float v[U][W], g[W];
            fused_load_tile<T, W, U, true>(xr, base, N, v);
            fused_store_tile<T, W, U>(dr, base, N, g, [&](int k, int64_t col, int i) {
                return d * (__expf(v[k][i] - l) - (col + i == t ? 1.f : 0.f));
            });
        }
    }
}

/* ---- host ------------------------------------------------------------------ */
static kb_status ce_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                            cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    fused_dispatch<FUSED_TILE_ELEMS, FUSED_TILE_ELEMS>(p, c, kb_aligned16(t->x), [&](auto k) {
        typedef decltype(k) K;
        typedef typename K::T T;
        ce_fwd_kernel<T, K::W, K::U><<<fused_grid(p->M), c->threads, 0, s>>>(
            (const T *)t->x, t->target, (T *)t->out, p->M, p->N);
    });
    return fused_check_launch(p, ce_name, "forward", e);
}

static kb_status ce_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                            cudaStream_t s, kb_err *e)
{
    const fused_cfg *c = (const fused_cfg *)state;
    fused_dispatch<FUSED_TILE_ELEMS_SCALAR_RW, FUSED_TILE_ELEMS>(
        p, c, kb_aligned16(t->x) && kb_aligned16(t->out), [&](auto k) {
            typedef decltype(k) K;
            typedef typename K::T T;
            ce_bwd_kernel<T, K::W, K::U><<<fused_grid(p->M), c->threads, 0, s>>>(
                (const T *)t->x, t->target, t->dloss, t->lse, (T *)t->out, p->M, p->N);
        });
    return fused_check_launch(p, ce_name, "backward", e);
}

extern "C" const kb_impl kb_cross_entropy_fused_fwd = {
    "fused", KB_CE_FWD, fused_setup<ce_name>, ce_fwd_run, fused_describe, fused_teardown,
    kb_kernels_fixed<1>};
extern "C" const kb_impl kb_cross_entropy_fused_bwd = {
    "fused", KB_CE_BWD, fused_setup<ce_name>, ce_bwd_run, fused_describe, fused_teardown,
    kb_kernels_fixed<1>};
