/* kbench-report: the command line is kb_report_main's (cli.c), a library
 * function so that the unit tests run it as a user would. */
#include <stdio.h>

#include "report.h"

int main(int argc, char **argv)
{
    return kb_report_main(argc, argv, stdout, stderr);
}
