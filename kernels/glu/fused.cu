/* GeGLU / SwiGLU forward and backward, fused backend: Liger-Kernel's
 * _geglu_tanh_forward_kernel / _swiglu_forward_kernel (and their backward
 * kernels) as hand-written CUDA C. One kernel per call.
 *
 * Strategy (Liger's): one program (CTA) per row, grid = M (rows are
 * grid-strided past 2^31 - 1); the launch parameters come from the row
 * width only (calculate_settings: BLOCK = next power of two of H capped at
 * 65536, 4 warps, 8 from BLOCK 2048, 16 from 8192, 32 from 32768), so one
 * compiled kernel serves every shape without recompiling. The CTA walks its
 * row in chunks of BLOCK (Liger loads the whole row as one masked block and
 * stops at 65536; we loop instead, so any H works); a thread takes
 * consecutive 16-byte vectors of each chunk when every row start is 16-byte
 * aligned (H * sizeof(T) % 16 == 0, ld_in likewise, aligned pointers: what
 * Triton's divisibility specialisation vectorises), scalars otherwise. Math
 * as Liger's: fp32, 0.5 x (1 + tanh(u)) with tanhf and x * sigmoid(x) with
 * expf (glu_math.cuh, torch_*). Backward recomputes act(gate) from gate
 * (Liger: "recomputation to save memory") and writes dgate, dup (Liger writes
 * them over its inputs; here into out = [2, M, H]).
 * Limits: any M, H >= 1, ld_in >= H, 64-bit offsets. */
#include <stdio.h>
#include <stdlib.h>

#include "fused_rows.cuh"
#include "glu_math.cuh"

namespace {

/* One CTA per row; W elements per access (1 or a 16-byte vector). */
template <typename T, int ACT, int W>
__global__ void __launch_bounds__(1024)
glu_fused_fwd(const T *__restrict__ g, const T *__restrict__ u, int64_t ldi, T *__restrict__ o,
              int64_t M, int64_t H)
{
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *gr = g + row * ldi, *ur = u + row * ldi;
        T *orow = o + row * H;
        for (int64_t col = (int64_t)threadIdx.x * W; col < H; col += (int64_t)blockDim.x * W) {
            float a[W], b[W], y[W];
            fused_ld<T, W, false>(gr + col, a);
            fused_ld<T, W, false>(ur + col, b);
#pragma unroll
            for (int i = 0; i < W; i++) y[i] = glu_torch_act<ACT>(a[i]) * b[i];
            fused_st<T, W, false>(orow + col, y);
        }
    }
}

template <typename T, int ACT, int W>
__global__ void __launch_bounds__(1024)
glu_fused_bwd(const T *__restrict__ g, const T *__restrict__ u, const T *__restrict__ dy,
              int64_t ldi, T *__restrict__ dg, T *__restrict__ du, int64_t M, int64_t H)
{
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const int64_t ri = row * ldi, ro = row * H;
        for (int64_t col = (int64_t)threadIdx.x * W; col < H; col += (int64_t)blockDim.x * W) {
            float a[W], b[W], d[W], y0[W], y1[W];
            fused_ld<T, W, false>(g + ri + col, a);
            fused_ld<T, W, false>(u + ri + col, b);
            fused_ld<T, W, false>(dy + ri + col, d);
#pragma unroll
            for (int i = 0; i < W; i++) {
                y0[i] = d[i] * b[i] * glu_torch_dact<ACT>(a[i]);
                y1[i] = d[i] * glu_torch_act<ACT>(a[i]);
            }
            fused_st<T, W, false>(dg + ro + col, y0);
            fused_st<T, W, false>(du + ro + col, y1);
        }
    }
}

static bool al16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Every row start of every pointer 16-byte aligned: rows of the vector
 * kernels. */
template <typename T>
static bool rows_aligned(int64_t ldi, int64_t H, std::initializer_list<const void *> ps)
{
    if ((ldi * (int64_t)sizeof(T)) % 16 || (H * (int64_t)sizeof(T)) % 16) return false;
    for (const void *p : ps)
        if (!al16(p)) return false;
    return true;
}

} /* namespace */

extern "C" kb_status kb_glu_fused_fwd(kb_dtype dt, kb_glu_act act, const void *gate,
                                      const void *up, int64_t ld_in, void *out, int64_t M,
                                      int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "fused glu forward";
    const fused_cfg c = fused_pick(H); /* Liger's calculate_settings */
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        constexpr int V = kb_vec<T>::n;
        const T *g = (const T *)gate, *u = (const T *)up;
        T *o = (T *)out;
        if (rows_aligned<T>(ld_in, H, {gate, up, out}))
            glu_fused_fwd<T, A, V><<<fused_grid(M), c.threads, 0, s>>>(g, u, ld_in, o, M, H);
        else
            glu_fused_fwd<T, A, 1><<<fused_grid(M), c.threads, 0, s>>>(g, u, ld_in, o, M, H);
    });
    return glu_launched(who, M, H, e);
}

extern "C" kb_status kb_glu_fused_bwd(kb_dtype dt, kb_glu_act act, const void *gate,
                                      const void *up, const void *dy, int64_t ld_in, void *dgate,
                                      void *dup, int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    static const char who[] = "fused glu backward";
    const fused_cfg c = fused_pick(H); /* Liger's calculate_settings */
    KB_GLU_DISPATCH(who, dt, act, ld_in, M, H, e, T, A, {
        constexpr int V = kb_vec<T>::n;
        const T *g = (const T *)gate, *u = (const T *)up, *d = (const T *)dy;
        T *dg = (T *)dgate, *du = (T *)dup;
        if (rows_aligned<T>(ld_in, H, {gate, up, dy, dgate, dup}))
            glu_fused_bwd<T, A, V><<<fused_grid(M), c.threads, 0, s>>>(g, u, d, ld_in, dg, du, M, H);
        else
            glu_fused_bwd<T, A, 1><<<fused_grid(M), c.threads, 0, s>>>(g, u, d, ld_in, dg, du, M, H);
    });
    return glu_launched(who, M, H, e);
}

/* ---- the kb_impls --------------------------------------------------------- */
/* glu_check's message names the activation and ld_in; the rest is the
 * fused backend's setup (state: fused_pick of the row width). */
static kb_status glu_fused_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                                 size_t *workspace_bytes, kb_err *e)
{
    KB_TRY(glu_check("fused glu", p->dtype, KB_ACT_GELU_TANH, p->N, p->M, p->N, e));
    fused_cfg *c = NULL;
    KB_TRY(fused_new(p, "glu", &c, e));
    *state = c;
    *workspace_bytes = 0;
    return KB_OK;
}

template <int ACT>
static kb_status fused_fwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                               cudaStream_t s, kb_err *e)
{
    return kb_glu_fused_fwd(p->dtype, (kb_glu_act)ACT, t->x, t->up, p->N, t->out, p->M, p->N, s,
                            e);
}

template <int ACT>
static kb_status fused_bwd_run(const kb_problem *p, const kb_tensors *t, void *state,
                               cudaStream_t s, kb_err *e)
{
    const size_t plane = (size_t)p->M * (size_t)p->N * kb_dtype_size(p->dtype);
    return kb_glu_fused_bwd(p->dtype, (kb_glu_act)ACT, t->x, t->up, t->dy, p->N, t->out,
                            (char *)t->out + plane, p->M, p->N, s, e);
}

#define FUSED_IMPL(sym, id, run)                                              \
    extern "C" const kb_impl sym = {"fused", id, glu_fused_setup, run, fused_describe, \
                                    fused_teardown, kb_kernels_fixed<1>};
FUSED_IMPL(kb_geglu_fused_fwd, KB_GEGLU_FWD, fused_fwd_run<KB_ACT_GELU_TANH>)
FUSED_IMPL(kb_geglu_fused_bwd, KB_GEGLU_BWD, fused_bwd_run<KB_ACT_GELU_TANH>)
FUSED_IMPL(kb_swiglu_fused_fwd, KB_SWIGLU_FWD, fused_fwd_run<KB_ACT_SILU>)
FUSED_IMPL(kb_swiglu_fused_bwd, KB_SWIGLU_BWD, fused_bwd_run<KB_ACT_SILU>)
