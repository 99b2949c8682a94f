/* kb_cli_parse on an argument list written inline, for the CLI suites
 * (test_cli*.c): PARSE(&o, &e, "--all", "--csv", "r.csv") parses
 * "kbench --all --csv r.csv". */
#ifndef KB_CLI_UTIL_H
#define KB_CLI_UTIL_H

#include "cli.h"

static inline kb_status parse(kb_options *o, kb_err *e, const char *const *args, int n)
{
    char *argv[32];
    argv[0] = (char *)"kbench";
    for (int i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
    return kb_cli_parse(n + 1, argv, o, e);
}
#define PARSE(o, e, ...)                                                      \
    parse(o, e, (const char *const[]){__VA_ARGS__},                           \
          (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)))

#endif
