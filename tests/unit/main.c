/* Runs one Check suite by name (CTest registers one case per suite) or, with
 * no argument, every suite linked into this binary. Each
 * tests/unit/test_<name>.c defines kb_suite_<name>(). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"
#include "unit.h"
#ifdef KB_UNIT_CORE
#include "backends.h"
#endif

static const struct {
    const char *name;
    Suite *(*make)(void);
} suites[] = {
    {"registry", kb_suite_registry}, {"cli", kb_suite_cli},
    {"cli_checks", kb_suite_cli_checks},
    {"tolerance", kb_suite_tolerance}, {"stats", kb_suite_stats},
    {"reference", kb_suite_reference}, {"baseline", kb_suite_baseline},
    {"results", kb_suite_results}, {"npy", kb_suite_npy},
    {"report", kb_suite_report}, {"report_regressions", kb_suite_report_regressions},
    {"report_output", kb_suite_report_output}, {"report_index", kb_suite_report_index},
    {"report_cli", kb_suite_report_cli},
    {"gate", kb_suite_gate},
    {"gate_knobs", kb_suite_gate_knobs},
    {"tuner", kb_suite_tuner}, {"tuner_cache", kb_suite_tuner_cache},
    {"tuner_norm", kb_suite_tuner_norm}, {"resources", kb_suite_resources},
    {"accuracy", kb_suite_accuracy}, {"inputs", kb_suite_inputs},
    {"gpulock", kb_suite_gpulock}, {"gpuspec", kb_suite_gpuspec},
    {"plancache", kb_suite_plancache},
    {"server", kb_suite_server}, {"server_peer", kb_suite_server_peer},
    {"shared", kb_suite_shared}, {"baseline_writers", kb_suite_baseline_writers},
    {"kernels", kb_suite_kernels}, {"descriptor", kb_suite_descriptor},
    {"describe", kb_suite_describe}, {"sol", kb_suite_sol},
    {"glu", kb_suite_glu},
    {"mlp", kb_suite_mlp}, {"spec", kb_suite_spec},
};

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : NULL;
    kb_err re = {{0}};
#ifdef KB_UNIT_CORE
    /* The suites of kbench_unit_core see the registry kbench sees. */
    if (kb_kernels_register(&re) != KB_OK) {
        fprintf(stderr, "kbench_unit_core: %s\n", kb_err_text(&re));
        return 1;
    }
#else
    /* The CUDA-free suites see every op's descriptor, and no backend. */
    if (kb_ops_register(&re) != KB_OK) {
        fprintf(stderr, "kbench_unit: %s\n", kb_err_text(&re));
        return 1;
    }
#endif
    SRunner *sr = NULL;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (want && strcmp(want, suites[i].name) != 0) continue;
        /* Each binary links only its own suites (tests/CMakeLists.txt): the
         * others are passed over in a run of all, refused when named. */
        if (!suites[i].make && !want) continue;
        if (!suites[i].make) {
            fprintf(stderr, "kbench_unit: suite '%s' is not built\n", suites[i].name);
            return 1;
        }
        if (!sr)
            sr = srunner_create(suites[i].make());
        else
            srunner_add_suite(sr, suites[i].make());
    }
    if (!sr) {
        fprintf(stderr, "kbench_unit: no suite named '%s'\n", want);
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
