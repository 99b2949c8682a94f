/* GeGLU / SwiGLU: out = act(gate) * up, and its backward, as launchers the
 * GLU benchmarks (kernels/glu/{eager,fused,tuned}.cu) and the MLP block
 * (mlp_forward) share. C-callable; included by .c and .cu files.
 *
 * act is GELU's tanh approximation (torch gelu(approximate="tanh")) or SiLU:
 *   gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *   silu(x)      = x / (1 + exp(-x))
 * Math in fp32, results rounded to the dtype once per kernel.
 *
 * Layout: element j < H of row m of gate/up (and dy) is at m*ld_in + j
 * (ld_in >= H, elements); outputs are [M, H] rows of stride H. ld_in = 2H
 * with up = gate + H reads the interleaved result of one GEMM against the
 * concatenated [2H, D] weight. Any M, H >= 1 and any alignment: where a
 * pointer or row stride is not 16-byte aligned the kernels fall back to
 * narrower accesses. The launchers only enqueue work on s (no allocation,
 * no synchronisation). */
#ifndef KB_GLU_H
#define KB_GLU_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KB_ACT_GELU_TANH = 0, KB_ACT_SILU = 1 } kb_glu_act;

/* out[m, j] = act(gate[m*ld_in + j]) * up[m*ld_in + j], j < H; out row
 * stride H. backend "fused" (one kernel, Liger's design: launch parameters
 * from the row width) or "tuned" (one kernel, 128-bit accesses, the tuned
 * backend's heuristic launch configuration). */
kb_status kb_glu_fwd_launch(const char *backend, kb_dtype dt, kb_glu_act act, const void *gate,
                            const void *up, int64_t ld_in, void *out, int64_t M, int64_t H,
                            cudaStream_t s, kb_err *e);

/* eager's two kernels, as PyTorch eager launches them: a = act(gate) (dtype
 * out), then out = a * up. a is caller-provided [M, H] scratch. */
kb_status kb_glu_eager_launch(kb_dtype dt, kb_glu_act act, const void *gate, const void *up,
                              int64_t ld_in, void *a, void *out, int64_t M, int64_t H,
                              cudaStream_t s, kb_err *e);

/* Backward, recomputing the activation: dgate = dy * up * act'(gate),
 * dup = dy * act(gate); gate, up, dy [M, H] of row stride ld_in, dgate and
 * dup of row stride H. One kernel; backend "fused" or "tuned". */
kb_status kb_glu_bwd_launch(const char *backend, kb_dtype dt, kb_glu_act act, const void *gate,
                            const void *up, const void *dy, int64_t ld_in, void *dgate,
                            void *dup, int64_t M, int64_t H, cudaStream_t s, kb_err *e);

/* ---- per-backend entry points (kb_glu_*_launch dispatch to these) -------- */
kb_status kb_glu_fused_fwd(kb_dtype dt, kb_glu_act act, const void *gate, const void *up,
                           int64_t ld_in, void *out, int64_t M, int64_t H, cudaStream_t s,
                           kb_err *e);
kb_status kb_glu_fused_bwd(kb_dtype dt, kb_glu_act act, const void *gate, const void *up,
                           const void *dy, int64_t ld_in, void *dgate, void *dup, int64_t M,
                           int64_t H, cudaStream_t s, kb_err *e);

/* The tuned kernels' launch configuration: threads per CTA, 16-byte vectors
 * per thread and stream per step (unroll), CTAs per SM (0: one pass, no
 * grid-stride loop; else a persistent grid of sm_count * occ CTAs); for the
 * flat kernel (dense tensors) the cache operators (hint 0: .cs loads and
 * stores, 1: .cs loads and plain stores, 2: plain loads and stores) and
 * uncap (0: registers capped for occupancy, 1: nvcc's allocation). Zero
 * hint and uncap are the kernel as first tuned. */
typedef struct {
    int threads, unroll, occ, hint, uncap;
} kb_glu_cfg;
/* The tuned backend's default for this problem (what runs without a tuning
 * cache entry); sm_count <= 0 asks the current device. */
kb_glu_cfg kb_glu_tuned_heuristic(kb_dtype dt, int backward, int64_t M, int64_t H, int sm_count);
kb_status kb_glu_tuned_fwd(const kb_glu_cfg *c, int sm_count, kb_dtype dt, kb_glu_act act,
                           const void *gate, const void *up, int64_t ld_in, void *out, int64_t M,
                           int64_t H, cudaStream_t s, kb_err *e);
kb_status kb_glu_tuned_bwd(const kb_glu_cfg *c, int sm_count, kb_dtype dt, kb_glu_act act,
                           const void *gate, const void *up, const void *dy, int64_t ld_in,
                           void *dgate, void *dup, int64_t M, int64_t H, cudaStream_t s,
                           kb_err *e);
/* The tuner's search space of a tuned GLU benchmark (tune/tuner.h),
 * for the unit tests. */
struct kb_tune_space;
const struct kb_tune_space *kb_glu_tune_space(int backward, kb_glu_act act);

#ifdef __cplusplus
}
#endif
#endif
