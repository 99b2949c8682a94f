/* The reference's generic entry points and the types every op's reference
 * shares. Each op computes its own references in its folder: a plain CPU
 * implementation (kernels/<op>/reference.c, C, its descriptor's ref_cpu;
 * used by the unit tests and to validate the GPU one) and simple GPU kernels
 * (kernels/<op>/reference.cu, the kb_op_gpu its register.c lists; used by
 * every case for speed). Both accumulate in fp32 or wider; the GPU gold is
 * rounded to the output dtype as a last step. What several ops compute alike
 * is written once here, in building-block headers the folders include:
 * ref_rows.h (the CPU row reductions: lse, softmax, RMS and LayerNorm
 * statistics, the norm backward) and ref_rows.cuh / ref_norm.cuh (their GPU
 * counterparts, block sums, launch shapes and argument checks). This folder
 * itself holds no op's formulas: the entry points below call the
 * descriptor's ref_cpu or the registered kb_op_gpu, and the saved statistics
 * follow the descriptor's tensor bits.
 *
 * Definitions of the first ops (eps = KB_NORM_EPS, rows of length N,
 * reduction over N):
 *   lse[i]  = log(sum_j exp(x[i,j]))
 *   CE fwd  loss[i] = lse[i] - x[i, target[i]]
 *   CE bwd  dx[i,j] = dloss[i] * (exp(x[i,j] - lse[i]) - (j == target[i]))
 *   SM fwd  y = exp(x - max) / sum exp(x - max)
 *   SM bwd  dx = y * (dy - sum_j(dy*y))
 *   RMS fwd rstd = 1/sqrt(mean(x^2) + eps); y = x * rstd * w
 *   RMS bwd xh = x*rstd; g = dy*w; dx = rstd * (g - xh * mean(g*xh)); dw = sum_i dy*xh
 *   LN fwd  mean, rstd = 1/sqrt(var + eps) (biased var); y = (x-mean)*rstd*w
 *   LN bwd  xh = (x-mean)*rstd; g = dy*w;
 *           dx = rstd * (g - mean(g) - xh*mean(g*xh)); dw = sum_i dy*xh
 *   GLU fwd out = act(x) * up       (x is the gate; elementwise)
 *   GLU bwd dgate = dy * up * act'(x), dup = dy * act(x); out = [dgate; dup]
 *           act = GeGLU: gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *                 SwiGLU: silu(x) = x / (1 + exp(-x))
 *   MLP     kernels/mlp/mlp_math.h
 * Inputs read by the backward are the dtype-rounded tensors (x, dy, y) and
 * the fp32 saved statistics. */
#ifndef KB_REFERENCE_H
#define KB_REFERENCE_H

#include <stdio.h>

#include "buffers.h"
#include "kbench.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CPU (host arrays, fp32 in and out) ---------------------------------- */
/* The CPU reference's inputs: host fp32 arrays (targets int64), by name or
 * by kb_role (role[r]: the fields are in kb_role order; out, dw are
 * kb_ref_out's and left NULL here). */
typedef struct kb_ref_in {
    union {
        struct {
            const float *x, *up;
            const int64_t *target;
            const float *dloss, *dy, *w;
            const float *y;                 /* softmax output for SM bwd        */
            const float *lse, *mean, *rstd; /* saved stats for the backwards    */
            const float *out_unused, *dw_unused;
            const float *wts;
            const float *res, *dres, *cs;   /* add_rmsnorm, rope                */
        };
        const void *role[KB_NUM_ROLES];
    };
} kb_ref_in;

typedef struct kb_ref_out {
    float *out;                          /* loss[M], [M,N] or [2,M,N] */
    float *dw;                           /* [N] (norm backward)     */
    float *scale;                        /* out's error scale where the op's
                                            reference gives one (mlp; may be NULL) */
} kb_ref_out;

/* Saved statistics (lse / mean / rstd / softmax y) from x, as the
 * descriptor's tensor bits list them: lse, softmax's y, LayerNorm's mean and
 * rstd when MEAN is there, an rstd alone (RMSNorm's) when RSTD is. A forward
 * computes what the backward of its family (the registered benchmark of the
 * same family string with backward = 1) saves; NULL arrays are skipped. */
void kb_ref_cpu_saved(kb_bench_id b, int64_t M, int64_t N, const float *x,
                      float *lse, float *mean, float *rstd, float *y);
/* The CPU reference of p (K: the 3-D ops' third size, 0 otherwise): its
 * descriptor's ref_cpu; KB_ERR_ARG naming the benchmark if it has none. */
kb_status kb_ref_cpu3(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e);
/* The same for a 2-D problem M x N. */
kb_status kb_ref_cpu(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                     kb_ref_out *out, kb_err *e);
/* The arguments every CPU reference checks first: a known benchmark, M and
 * N >= 1, in, out and out->out non-NULL, each input its descriptor's
 * ref_reads lists (and dw) non-NULL, targets inside [0, N). */
kb_status kb_ref_cpu_check(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                           const kb_ref_out *out, kb_err *e);

/* Host copy of the generator (unit tests): x [M,N] of the input kind,
 * rounded to d and returned as float, and target [M] (either may be NULL). */
void kb_inputs_host(kb_inputs kind, kb_bench_id b, kb_dtype d, uint64_t seed, int64_t M,
                    int64_t N, float *x, int64_t *target);

/* ---- GPU (device buffers of a case) ---------------------------------------- */
/* Inputs from the fixed seed: x, target, dloss, dy, w as SPEC says; a
 * counter-based generator, so the same (seed, tensor, index) gives the same
 * value on every run and GPU. */
kb_status kb_inputs_generate(kb_buffers *b, uint64_t seed, cudaStream_t s, kb_err *e);
/* What the forward saves for the backward: the registered kb_op_gpu's saved
 * when it has one, else y, lse, mean, rstd from x as the case's tensor bits
 * list them (a forward case allocates none of them and saves nothing). */
kb_status kb_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e);
/* Gold outputs into b->gold (and b->gold_dw, b->gold_scale): the gold of
 * the kb_op_gpu registered for the benchmark; KB_ERR_ARG naming the
 * benchmark if none is. */
kb_status kb_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);
/* A case's buffers made ready: inputs from the fixed seed, then the saved
 * forward statistics, then the gold outputs; all on stream s, synchronised.
 * Here rather than in run/buffers.c so that the buffers (allocation,
 * poison, guards) do not depend on the reference that fills them. */
kb_status kb_buffers_prepare(kb_buffers *b, uint64_t seed, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
