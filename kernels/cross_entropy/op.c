/* cross_entropy: per-row loss = logsumexp(x) - x[target] and its gradient
 * (docs/reference/spec.md has the byte models; its references are
 * reference.c and reference.cu, cross_entropy_ref.h). */
#include "cross_entropy_ref.h"
#include "registry.h"

/* loss[M] = lse - x[target]: (MN + 2M) s */
KB_OP(KB_CE_FWD, cross_entropy_forward, .family = "cross_entropy", .backward = 0,
      .x_dist = KB_X_LOGITS, .tensors = KB_T_X | KB_T_TARGET,
      .ref_reads = KB_T_X | KB_T_TARGET, .out_per_row = 1, .bytes = {.mn = 1, .m_dtype = 2},
      .inputs = KB_KINDS_LOGITS, .sweep = KB_SWEEP_COMMON, .scale = KB_SCALE_LOSS,
      .mutant = KB_MUTANT_LOSS, .ref_cpu = kb_cross_entropy_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);

/* dx[M,N]: 2MN s + 8M (target) + 4M (dloss) */
KB_OP(KB_CE_BWD, cross_entropy_backward, .family = "cross_entropy", .backward = 1,
      .x_dist = KB_X_LOGITS,
      .tensors = KB_T_X | KB_T_TARGET | KB_T_DLOSS | KB_T_LSE,
      .ref_reads = KB_T_X | KB_T_TARGET | KB_T_DLOSS | KB_T_LSE, .bytes = {.mn = 2, .m_bytes = 12},
      .inputs = KB_KINDS_LOGITS, .sweep = KB_SWEEP_COMMON, .scale = KB_SCALE_CE_GRAD,
      .mutant = KB_MUTANT_NONE, .ref_cpu = kb_cross_entropy_ref_cpu,
      .selftest = KB_SELFTEST_ROWS);
