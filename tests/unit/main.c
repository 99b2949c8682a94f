/* Runs one Check suite by name (CTest registers one case per suite) or, with
 * no argument, every suite of this binary (unit.h: the list CMake generates
 * for it). */
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
#define KB_UNIT_SUITE(name) {#name, kb_suite_##name},
#include KB_UNIT_SUITES
#undef KB_UNIT_SUITE
};

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : NULL;
    kb_err re = {{0}};
#ifdef KB_UNIT_CORE
    /* The suites of kbench_unit_core see the registry kbench sees. */
    if (kb_kernels_register(&re) != KB_OK) {
        fprintf(stderr, "%s: %s\n", KB_UNIT_BINARY, kb_err_text(&re));
        return 1;
    }
#else
    /* The CUDA-free suites see every op's descriptor, and no backend. */
    if (kb_ops_register(&re) != KB_OK) {
        fprintf(stderr, "%s: %s\n", KB_UNIT_BINARY, kb_err_text(&re));
        return 1;
    }
#endif
    SRunner *sr = NULL;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (want && strcmp(want, suites[i].name) != 0) continue;
        if (!sr)
            sr = srunner_create(suites[i].make());
        else
            srunner_add_suite(sr, suites[i].make());
    }
    if (!sr) {
        fprintf(stderr, "%s: no suite named '%s' in this binary\n", KB_UNIT_BINARY, want);
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
