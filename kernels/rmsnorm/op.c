/* RMSNorm forward and backward (docs/reference/spec.md; its references are
 * reference.c and reference.cu, rmsnorm_ref.h). */
#include "registry.h"
#include "rmsnorm_ref.h"

KB_OP(KB_RMSNORM_FWD, rmsnorm_forward, .family = "rmsnorm", .backward = 0,
      .x_dist = KB_X_NORM, .tensors = KB_T_X | KB_T_W,
      .ref_reads = KB_T_X | KB_T_W, .bytes = {.mn = 2, .n_bytes = 4}, .inputs = KB_KINDS_NORM,
      .sweep = KB_SWEEP_NORM, .scale = KB_SCALE_ABS, .mutant = KB_MUTANT_RMSNORM,
      .ref_cpu = kb_rmsnorm_ref_cpu, .selftest = KB_SELFTEST_ROWS);

KB_OP(KB_RMSNORM_BWD, rmsnorm_backward, .family = "rmsnorm", .backward = 1,
      .x_dist = KB_X_NORM,
      .tensors = KB_T_X | KB_T_W | KB_T_DY | KB_T_RSTD | KB_T_DW,
      .ref_reads = KB_T_X | KB_T_W | KB_T_DY | KB_T_RSTD | KB_T_DW,
      .bytes = {.mn = 3, .n_bytes = 8}, .inputs = KB_KINDS_NORM, .sweep = KB_SWEEP_NORM,
      .scale = KB_SCALE_NORM_GRAD, .mutant = KB_MUTANT_NONE, .ref_cpu = kb_rmsnorm_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);
