/* softmax over each row and its backward (docs/reference/spec.md; the shared
 * reference in kernels/reference computes them). */
#include "registry.h"

KB_OP(KB_SOFTMAX_FWD, softmax_forward, .family = "softmax", .backward = 0,
      .x_dist = KB_X_LOGITS, .fam = KB_FAM_SOFTMAX, .tensors = KB_T_X, .ref_reads = KB_T_X,
      .bytes = {.mn = 2}, .inputs = KB_KINDS_LOGITS, .sweep = KB_SWEEP_COMMON,
      .scale = KB_SCALE_ABS, .mutant = KB_MUTANT_SOFTMAX);

/* x is there only for the saved y = softmax(x); the backward reads y */
KB_OP(KB_SOFTMAX_BWD, softmax_backward, .family = "softmax", .backward = 1,
      .x_dist = KB_X_LOGITS, .fam = KB_FAM_SOFTMAX, .tensors = KB_T_X | KB_T_DY | KB_T_Y,
      .ref_reads = KB_T_DY | KB_T_Y, .bytes = {.mn = 3}, .inputs = KB_KINDS_LOGITS,
      .sweep = KB_SWEEP_COMMON, .scale = KB_SCALE_SOFTMAX_GRAD, .mutant = KB_MUTANT_NONE);
