/* Test-only knobs that make a backend worse on purpose, to measure the gate
 * (ci/gate-quality). Never set them in a real run.
 *
 *   KBENCH_TEST_EXTRA_BYTES=<backend>:<fraction>
 *       after each run of <backend>, write fraction x the case's byte model
 *       more bytes (a memset of a scratch buffer): a bandwidth regression of
 *       known size.
 *   KBENCH_TEST_EXTRA_TIME=<backend>:<fraction>
 *       after each timed run of <backend>, hold the stream for fraction x t0,
 *       t0 the backend's own median time measured by a 20-sample pilot just
 *       before the case is timed: a slowdown of known size in time, whatever
 *       the backend's distance from SOL (extra bytes barely cost a backend
 *       that is far from it). The hold is one thread spinning on
 *       %globaltimer (kb_spin_ns); its launch adds a kernel-to-kernel gap
 *       (of the order of 1 us) and the timer ticks coarsely, so on cases of
 *       a few us the real slowdown is larger than the fraction: read the
 *       measured GB/s change (ci/gate-quality prints it), not the knob.
 *       The hold is idle time: on a power-capped GPU under sustained load
 *       the SM clock rises during it, so a clock-bound backend (eager) can
 *       win back most of it (measured on the H200: docs/dev/gate-trust.md).
 *   KBENCH_TEST_PERTURB=<backend>:<kind>
 *       after each run of <backend>, damage its output:
 *         skip_last   the last element of every row is left unwritten (NaN
 *                     poison stays), as a tail-handling bug would
 *         scale:<f>   every output element (and dw) multiplied by 1+f, as a
 *                     wrong normaliser would
 *         write_past_end  one element written just past the end of the
 *                     output (the guard band after it must catch it)
 *       and mutants: planted bugs that change a kernel's arithmetic,
 *       emulated by overwriting the backend's output with what a kernel
 *       with the bug computes from the same inputs (testing/perturb.cu):
 *         no_max_subtraction  softmax / cross-entropy forward as
 *                     exp(x) / sum exp(x), log(sum exp(x)) - x[target]
 *         half_accumulation   softmax / RMSNorm / LayerNorm forward with
 *                     the row sums (sum of exp; mean, sum of squares)
 *                     accumulated in the dtype: per thread, then a tree
 *         eps_1e-5    RMSNorm / LayerNorm forward with eps 1e-5, not 1e-6
 *       A kind that does not apply to a case's benchmark (a forward
 *       mutant on a backward) makes the case SKIP, saying so.
 *   KBENCH_TEST_SPLIT=<backend>
 *       after each run of <backend> (timed runs and the kernel check's traced
 *       call), launch one extra empty kernel (split_noop_kernel) on the
 *       stream: a fusion come apart, in kernel count only (the empty kernel
 *       costs ~2 us), which the kernel check must flag FUSION_CHANGED
 *       (ci/fusion-check).
 *   KBENCH_TEST_FAULT=<backend>:<kind>
 *       after the run of <backend> whose output is checked, a fault of the
 *       GPU's, for the fault tests (tests/faults_check, docs/shared-hosts.md):
 *         hang             a one-thread kernel that spins for good: the
 *                          case never ends (CTest's TIMEOUT ends it)
 *         illegal_address  a kernel that stores to an address no allocation
 *                          has: a sticky CUDA error (every later CUDA call of
 *                          the process fails), as a kernel with a corrupt
 *                          pointer leaves
 * A malformed value, or a <backend> kbench does not have (kb_backend_index),
 * is an error (the run stops), never silently ignored. */
#ifndef KB_KNOBS_H
#define KB_KNOBS_H

#include "buffers.h"
#include "case_hooks.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KB_PERTURB_NONE = 0,
    KB_PERTURB_SKIP_LAST,
    KB_PERTURB_SCALE,
    KB_PERTURB_WRITE_PAST_END,
    KB_PERTURB_NO_MAX,
    KB_PERTURB_HALF_ACC,
    KB_PERTURB_EPS,
    KB_NUM_PERTURB
} kb_perturb;

typedef enum { KB_FAULT_NONE = 0, KB_FAULT_HANG, KB_FAULT_ILLEGAL_ADDRESS, KB_NUM_FAULTS } kb_fault;

typedef struct {
    char extra_backend[48];
    double extra_fraction;   /* 0: off */
    char slow_backend[48];
    double slow_fraction;    /* KBENCH_TEST_EXTRA_TIME; 0: off */
    char perturb_backend[48];
    kb_perturb perturb;
    double scale;            /* for KB_PERTURB_SCALE: the f in 1+f */
    char split_backend[48];  /* KBENCH_TEST_SPLIT; "": off */
    char fault_backend[48];  /* KBENCH_TEST_FAULT */
    kb_fault fault;          /* KB_FAULT_NONE: off */
} kb_knobs;

/* Pure parser (unit tested); NULL/empty values mean off. */
kb_status kb_knobs_parse(const char *extra_bytes, const char *extra_time, const char *perturb,
                         kb_knobs *k, kb_err *e);
/* KBENCH_TEST_SPLIT's value (NULL/empty: off) into k->split_backend: a
 * backend name (kb_backend_index), else KB_ERR_ARG. */
kb_status kb_knobs_parse_split(const char *split, kb_knobs *k, kb_err *e);
/* KBENCH_TEST_FAULT's value (NULL/empty: off) into k->fault_backend and
 * k->fault: <backend>:hang or <backend>:illegal_address, else KB_ERR_ARG. */
kb_status kb_knobs_parse_fault(const char *fault, kb_knobs *k, kb_err *e);
/* From the environment. */
kb_status kb_knobs_from_env(kb_knobs *k, kb_err *e);

/* Does the knob apply to this series ("tuned:x" matches "tuned")? */
int kb_knob_applies(const char *knob_backend, const char *series);

/* "scale", "no_max_subtraction", ... */
const char *kb_perturb_name(kb_perturb k);
/* Does the kind apply to the benchmark? */
int kb_perturb_applies(kb_perturb k, kb_bench_id b);
/* Enqueue the damage on s (KB_ERR_UNSUPPORTED where it does not apply). */
kb_status kb_perturb_output(const kb_knobs *k, kb_buffers *b, cudaStream_t s, kb_err *e);

/* ---- the knobs as a decorator of a backend's kb_impl (knob_impl.c) ------
 * The harness runs a case's impl for three uses and asks, for each, which
 * impl to run; the knobs that apply to the case's series wrap the backend's
 * impl in one whose run calls the real run, then adds the knob's effect:
 *   KB_USE_CHECKED  the run whose output is checked: KBENCH_TEST_PERTURB,
 *                   KBENCH_TEST_FAULT
 *   KB_USE_TIMED    the timed runs: KBENCH_TEST_SPLIT, KBENCH_TEST_EXTRA_BYTES,
 *                   KBENCH_TEST_EXTRA_TIME (its pilot timed on open)
 *   KB_USE_TRACED   the kernel check's traced call: KBENCH_TEST_SPLIT
 * Where no knob applies (every real run) the result is the backend's own
 * impl and state, untouched. The wrapper's other hooks: kernels forwards to
 * the backend's (NULL where it has none); setup, describe and teardown are
 * NULL (the harness calls the backend's on its own state). */
/* (kb_impl_use and kb_knob_timer, the timer of KBENCH_TEST_EXTRA_TIME's
 * pilot, are the run layer's: case_hooks.h.) */

/* Run impl->run(p, t, state, ...). The struct points into itself: open it
 * where it is used, never copy it. */
typedef struct {
    const kb_impl *impl;
    void *state;
    /* the decorator's own */
    kb_impl deco;
    const kb_impl *inner;
    void *inner_state;
    const kb_knobs *k;
    kb_buffers *b;
    int perturb, split, fault;
    void *extra; /* KBENCH_TEST_EXTRA_BYTES scratch, else NULL */
    size_t extra_bytes;
    uint64_t spin_ns; /* KBENCH_TEST_EXTRA_TIME hold, else 0 */
} kb_knobbed;

/* series: the result's backend ("tuned:wide" matches the knob "tuned");
 * b: the case's buffers (the perturbation damages them; the byte model is
 * b->p's); timer: KB_USE_TIMED only (else NULL). KB_ERR_UNSUPPORTED: the
 * perturbation does not apply to the benchmark (the case SKIPs, e says
 * why). */
kb_status kb_knobbed_open(const kb_knobs *k, kb_impl_use use, const kb_impl *inner,
                          void *inner_state, kb_buffers *b, const char *series,
                          const kb_knob_timer *timer, kb_knobbed *w, kb_err *e);
void kb_knobbed_close(kb_knobbed *w);

/* The knobs as the run layer's case hooks (case_hooks.h): a session's
 * knobs from the environment, each use of a case wrapped by
 * kb_knobbed_open. kbench hands them to its session. */
extern const kb_case_hooks kb_test_knob_hooks;

/* Enqueue on s the fault k->fault (KBENCH_TEST_FAULT). */
kb_status kb_test_fault(const kb_knobs *k, cudaStream_t s, kb_err *e);

/* Enqueue on s one empty kernel (KBENCH_TEST_SPLIT). */
kb_status kb_test_split_noop(cudaStream_t s, kb_err *e);

/* Enqueue on s a one-thread kernel that busy-waits ns nanoseconds of
 * %globaltimer (KBENCH_TEST_EXTRA_TIME); ns == 0 enqueues nothing. */
kb_status kb_spin_ns(uint64_t ns, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
