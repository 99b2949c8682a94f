/* LayerNorm (no bias) forward and backward (docs/reference/spec.md; its
 * references are reference.c and reference.cu, layernorm_ref.h). */
#include "layernorm_ref.h"
#include "registry.h"

/* Measured on the H200 (docs/dev/kernels): cuDNN's constant-row output. */
static const kb_deviation ln_fwd_deviations[] = {
    {"cudnn", KB_INPUTS_CONSTANT,
     "cuDNN 9 LayerNorm forward returns |y| up to ~4e-3 instead of 0 on zero-variance rows "
     "(PyTorch returns 0)"},
    {NULL, 0, NULL},
};

KB_OP(KB_LAYERNORM_FWD, layernorm_forward, .family = "layernorm", .backward = 0,
      .x_dist = KB_X_NORM, .tensors = KB_T_X | KB_T_W,
      .ref_reads = KB_T_X | KB_T_W, .bytes = {.mn = 2, .n_bytes = 4}, .inputs = KB_KINDS_NORM,
      .sweep = KB_SWEEP_NORM, .scale = KB_SCALE_CENTERED, .mutant = KB_MUTANT_LAYERNORM,
      .deviations = ln_fwd_deviations, .ref_cpu = kb_layernorm_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);

KB_OP(KB_LAYERNORM_BWD, layernorm_backward, .family = "layernorm", .backward = 1,
      .x_dist = KB_X_NORM,
      .tensors = KB_T_X | KB_T_W | KB_T_DY | KB_T_MEAN | KB_T_RSTD | KB_T_DW,
      .ref_reads = KB_T_X | KB_T_W | KB_T_DY | KB_T_MEAN | KB_T_RSTD | KB_T_DW,
      .bytes = {.mn = 3, .n_bytes = 8}, .inputs = KB_KINDS_NORM, .sweep = KB_SWEEP_NORM,
      .scale = KB_SCALE_NORM_GRAD, .mutant = KB_MUTANT_NONE, .ref_cpu = kb_layernorm_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);
