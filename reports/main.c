/* kbench-report: the command line is kb_report_main's (cli.c), a library
 * function so that the unit tests run it as a user would. The report knows
 * the benchmarks by their descriptors, registered first. */
#include <stdio.h>

#include "registry.h"
#include "report.h"

int main(int argc, char **argv)
{
    kb_err e = {{0}};
    if (kb_ops_register(&e) != KB_OK) {
        fprintf(stderr, "kbench-report: %s\n", kb_err_text(&e));
        return 1;
    }
    return kb_report_main(argc, argv, stdout, stderr);
}
