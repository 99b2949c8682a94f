/* The kernel check: does a case still launch the kernels it should?
 *
 * A fusion that comes apart (a refactor that splits one kernel in two, a
 * library that picks a two-pass plan) may stay inside the time noise band
 * for a while; the kernel count does not. After a case is timed, one more
 * call of it (untimed, L2 flushed first, as before every timed run) is traced
 * with CUPTI (kernel_trace.h). The kernels it launched on the case's stream
 * go into the result (kernels, kernel_names, kernel_us), and the count is
 * compared with
 *   - the count the backend declares (kb_impl.kernels; cuDNN declares none)
 *   - the count in the case's baseline row (when one was recorded).
 * Any difference fails the case with verdict FUSION_CHANGED (replacing the
 * time verdict, which the message keeps), both lists printed.
 * Without CUPTI (not installed, KBENCH_CUPTI_LIB=none) the check is skipped
 * with the reason, once on stderr and in each result's message; the rest of
 * the case runs as before. */
#ifndef KB_KERNEL_CHECK_H
#define KB_KERNEL_CHECK_H

#include "baseline.h"
#include "results.h"
#include "run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pure rule (unit tested). got: kernels traced (> 0); expected: declared by
 * the backend, 0 when not declared; base/base_names: the baseline row's, 0
 * when none recorded. Returns 1 when got differs from either; why (always
 * written) names every count compared and the baseline's kernel list. */
int kb_kernels_changed(int got, int expected, int base, const char *base_names, char *why,
                       size_t len);

/* run.c's hook, after timing (or after the accuracy check with --no-timing).
 * Checks only cases whose accuracy passed; returns the case's outcome: oc,
 * or KB_CASE_FAIL when the count changed or the traced call failed. */
kb_outcome kb_kernel_check(kb_session *s, const kb_case *c, void *state, const kb_tensors *t,
                           kb_outcome oc, kb_result *r);
void kb_kernel_checker_free(struct kb_kernel_checker *k);

/* --update-baseline: row gets r's kernel columns; when r has none (CUPTI
 * missing), those of the row already in old (may be NULL) are kept. */
void kb_kernels_to_row(const kb_baseline *old, const kb_result *r, kb_baseline_row *row);

/* --update-baseline-kernels: writes only the kernels/kernel_names of the
 * existing rows of path that res has a passing, traced result for; timing
 * columns are left as they are, rows are never added. *updated and *missing
 * (results with no row) may be NULL. */
kb_status kb_baseline_record_kernels(const char *path, const kb_results *res, size_t *updated,
                                     size_t *missing, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
