/* The MLP block: GEMM, GeGLU or SwiGLU, GEMM (docs/reference/spec.md; its
 * references are reference.c and reference.cu, mlp_ref.h: the benchmark
 * says the activation). */
#include "mlp_ref.h"
#include "registry.h"

/* mlp_forward (GeGLU, tanh GELU): T = M tokens, D = N, H = K. The block's
 * own shapes: the blog's (8192, 768, 3072) and two LLM MLPs at T = 2048 and
 * 8192; small odd shapes (no multiple of 8 anywhere) for accuracy and
 * memcheck. Bytes: x read, y written, the three weights read once (the
 * minimum; intermediates are not counted: the avoided ones are the point,
 * shown in each backend's config). Flops: three GEMMs of 2*T*D*H. */
static const kb_shape mlp_default[] = {
    {8192, 768, 3072},   {2048, 4096, 11008}, {8192, 4096, 11008},
    {2048, 4096, 14336}, {8192, 4096, 14336},
};
static const kb_shape mlp_odd[] = {{3, 7, 5}, {100, 65, 257}, {257, 200, 1001}};
static const kb_shape_lists mlp_shapes = {{mlp_default, mlp_odd, NULL, NULL},
                                          {KB_COUNT(mlp_default), KB_COUNT(mlp_odd), 0, 0}};

#define MLP                                                                                   \
    .family = "mlp", .backward = 0, .x_dist = KB_X_NORM /* x = randn, a normed activation */, \
    .tensors = KB_T_X | KB_T_WTS, .ref_reads = KB_T_X | KB_T_WTS,                             \
    .bytes = {.mn = 2, .nk = 3}, .inputs = KB_IN(KB_INPUTS_RANDN),                            \
    .sweep = (int)KB_COUNT(mlp_default), .shapes = &mlp_shapes, .scale = KB_SCALE_GEMM,       \
    .mutant = KB_MUTANT_NONE, .dims = 3, .flops_mnk = 6, .ref_cpu = kb_mlp_ref_cpu,         \
    .selftest = KB_SELFTEST_GEMM

KB_OP(KB_MLP_FWD, mlp_forward, MLP);
/* The same block with SwiGLU (SiLU), Llama's MLP; no cublaslt_epilogue
 * (cuBLASLt has no SiLU epilogue). */
KB_OP(KB_MLP_SWIGLU_FWD, mlp_swiglu_forward, MLP);
