/* fp32 references: a plain CPU implementation (C, used by the unit tests and
 * to validate the GPU one) and simple GPU kernels (used by every case for
 * speed). Both accumulate in fp32 or wider; the GPU gold is rounded to the
 * output dtype as a last step.
 *
 * Definitions (eps = KB_NORM_EPS, rows of length N, reduction over N):
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
} kb_ref_out;

/* Saved statistics of the forward (lse / mean / rstd / softmax y) from x. */
void kb_ref_cpu_saved(kb_bench_id b, int64_t M, int64_t N, const float *x,
                      float *lse, float *mean, float *rstd, float *y);
/* The CPU reference of p (K: the 3-D ops' third size, 0 otherwise): the
 * op's own (its descriptor's ref_cpu) or the shared one by family. */
kb_status kb_ref_cpu3(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e);
kb_status kb_ref_cpu(kb_bench_id b, int64_t M, int64_t N, const kb_ref_in *in,
                     kb_ref_out *out, kb_err *e);
/* The GLU activations and their derivatives, in double (the unit tests
 * check them against closed forms); fam is KB_FAM_GEGLU or KB_FAM_SWIGLU. */
double kb_ref_glu_act(kb_family_id fam, double x);
double kb_ref_glu_dact(kb_family_id fam, double x);

/* mlp_forward (mlp_math.h), double throughout: y [T,D] and the error scale
 * sqrt(sum_k (h_k Wd_k)^2) [T,D] (may be NULL) from x [T,D] and wts
 * [3*H*D] as float arrays. For small shapes (the unit tests, --self-test). */
kb_status kb_ref_cpu_mlp(int act, int64_t T, int64_t D, int64_t H, const float *x,
                         const float *wts, float *y, float *scale, kb_err *e);

/* Host copy of the generator (unit tests): x [M,N] of the input kind,
 * rounded to d and returned as float, and target [M] (either may be NULL). */
void kb_inputs_host(kb_inputs kind, kb_bench_id b, kb_dtype d, uint64_t seed, int64_t M,
                    int64_t N, float *x, int64_t *target);

/* ---- GPU (device buffers of a case) ---------------------------------------- */
/* Inputs from the fixed seed: x, target, dloss, dy, w as SPEC says; a
 * counter-based generator, so the same (seed, tensor, index) gives the same
 * value on every run and GPU. */
kb_status kb_inputs_generate(kb_buffers *b, uint64_t seed, cudaStream_t s, kb_err *e);
/* What the forward saves for the backward: y, lse, mean, rstd. */
kb_status kb_ref_gpu_saved(kb_buffers *b, cudaStream_t s, kb_err *e);
/* mlp_forward's gold and b->gold_scale (mlp_reference.cu), act per
 * mlp_math.h: fp32 GEMMs (simple tiled kernels) over chunks of rows. */
kb_status kb_ref_gpu_mlp(kb_buffers *b, int act, cudaStream_t s, kb_err *e);
/* Gold outputs into b->gold (and b->gold_dw). */
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
