/* Suite constructors, one per tests/unit/test_<name>.c. Weak so a suite still
 * being written does not break the link; main() fails loudly if asked for a
 * suite that is not built. */
#ifndef KB_UNIT_H
#define KB_UNIT_H
#include <check.h>

#define KB_SUITE(name) Suite *kb_suite_##name(void) __attribute__((weak));
KB_SUITE(registry)
KB_SUITE(cli)
KB_SUITE(cli_checks)
KB_SUITE(tolerance)
KB_SUITE(stats)
KB_SUITE(reference)
KB_SUITE(baseline)
KB_SUITE(results)
KB_SUITE(npy)
KB_SUITE(report)
KB_SUITE(report_regressions)
KB_SUITE(report_output)
KB_SUITE(report_index)
KB_SUITE(report_cli)
KB_SUITE(gate)
KB_SUITE(gate_knobs)
KB_SUITE(tuner)
KB_SUITE(tuner_cache)
KB_SUITE(tuner_norm)
KB_SUITE(resources)
KB_SUITE(accuracy)
KB_SUITE(gpulock)
KB_SUITE(gpuspec)
KB_SUITE(plancache)
KB_SUITE(server)
KB_SUITE(server_peer)
KB_SUITE(shared)
KB_SUITE(baseline_writers)
KB_SUITE(inputs)
KB_SUITE(kernels)
KB_SUITE(descriptor)
KB_SUITE(describe)
KB_SUITE(sol)
KB_SUITE(glu)
KB_SUITE(mlp)
KB_SUITE(spec)
#undef KB_SUITE

#endif
