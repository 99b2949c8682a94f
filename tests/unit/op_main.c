/* Runs one op folder's Check suite (kernels/<op>/test_<op>.c, built with
 * KB_OP_SUITE = its kb_suite_<op>), with every op's descriptor registered
 * as kbench registers them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "registry.h"

Suite *KB_OP_SUITE(void);

int main(void)
{
    kb_err e = {{0}};
    if (kb_ops_register(&e) != KB_OK) {
        fprintf(stderr, "kbench_op_%s: %s\n", KB_OP_SUITE_NAME, kb_err_text(&e));
        return 1;
    }
    SRunner *sr = srunner_create(KB_OP_SUITE());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
