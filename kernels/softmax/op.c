/* softmax over each row and its backward (docs/reference/spec.md; its
 * references are reference.c and reference.cu, softmax_ref.h). */
#include "registry.h"
#include "softmax_ref.h"

KB_OP(KB_SOFTMAX_FWD, softmax_forward, .family = "softmax", .backward = 0,
      .x_dist = KB_X_LOGITS, .tensors = KB_T_X, .ref_reads = KB_T_X,
      .bytes = {.mn = 2}, .inputs = KB_KINDS_LOGITS, .sweep = KB_SWEEP_COMMON,
      .scale = KB_SCALE_ABS, .mutant = KB_MUTANT_SOFTMAX, .ref_cpu = kb_softmax_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);

/* x is there only for the saved y = softmax(x); the backward reads y */
KB_OP(KB_SOFTMAX_BWD, softmax_backward, .family = "softmax", .backward = 1,
      .x_dist = KB_X_LOGITS, .tensors = KB_T_X | KB_T_DY | KB_T_Y,
      .ref_reads = KB_T_DY | KB_T_Y, .bytes = {.mn = 3}, .inputs = KB_KINDS_LOGITS,
      .sweep = KB_SWEEP_COMMON, .scale = KB_SCALE_SOFTMAX_GRAD, .mutant = KB_MUTANT_NONE,
      .ref_cpu = kb_softmax_ref_cpu, .selftest = KB_SELFTEST_ROWS);
