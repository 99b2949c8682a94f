/* kbench-report: results CSVs (ours and peers') -> speedup lines on stdout,
 * report.md, summary.csv and plots. See report.h for what each holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kbench-report [options] RESULTS.csv...\n"
            "\n"
            "Merges kbench results CSVs (and peers' CSVs in the same schema, e.g. from\n"
            "ci/peers/torch_peers.py) into one report. A row given twice keeps the later.\n"
            "\n"
            "  --out DIR          write report.md, summary.csv and plots/ there (default: report)\n"
            "  --baseline FILE    judge rows without a verdict, or with NO_BASELINE, against\n"
            "                     this baseline CSV (it must exist)\n"
            "  --tolerance T      regression threshold as a fraction (default 0.10, widened by noise)\n"
            "  --title NAME       GPU name for titles (default: the results' gpu column)\n"
            "  --sol GBPS         speed of light in GB/s (default: the results' sol_gbps)\n"
            "  --no-plots         skip the plots\n"
            "  --gnuplot PATH     gnuplot to run (default: gnuplot on PATH)\n"
            "  -h, --help         this text\n"
            "\n"
            "       kbench-report --baseline-diff OLD.csv NEW.csv\n"
            "  summarises what a baseline refresh changed.\n"
            "\n"
            "Exit status: 0 report written and no regression; 4 report written and a kbench\n"
            "row is SLOWER (recorded, or judged against --baseline) or failed accuracy;\n"
            "1 error (unreadable input, missing --baseline or --baseline-diff file); 2 usage.\n");
}

/* "--opt VALUE" or "--opt=VALUE"; NULL when the option is not `name`. */
static const char *value_of(const char *name, int argc, char **argv, int *i, int *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0)) return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--baseline-diff") == 0) {
        kb_err de;
        if (argc != 4) {
            usage(stderr);
            return 2;
        }
        if (kb_baseline_diff(stdout, argv[2], argv[3], &de) != KB_OK) {
            fprintf(stderr, "kbench-report: %s\n", de.msg);
            return 1;
        }
        return 0;
    }
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = "report";
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t nfiles = 0;
    if (!files) return 1;
    int dashdash = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        if (dashdash || a[0] != '-' || strcmp(a, "-") == 0) {
            files[nfiles++] = a;
        } else if (strcmp(a, "--") == 0) {
            dashdash = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(files);
            return 0;
        } else if (strcmp(a, "--no-plots") == 0) {
            o.formats &= ~(unsigned)KB_REPORT_PLOTS;
        } else if ((v = value_of("--out", argc, argv, &i, &missing))) {
            o.out_dir = v;
        } else if ((v = value_of("--baseline", argc, argv, &i, &missing))) {
            o.baseline_path = v;
        } else if ((v = value_of("--title", argc, argv, &i, &missing))) {
            o.title = v;
        } else if ((v = value_of("--gnuplot", argc, argv, &i, &missing))) {
            o.gnuplot = v;
        } else if ((v = value_of("--sol", argc, argv, &i, &missing))) {
            if (!parse_double(v, &o.sol_gbps)) {
                fprintf(stderr, "kbench-report: --sol wants a positive number, got '%s'\n", v);
                free(files);
                return 2;
            }
        } else if ((v = value_of("--tolerance", argc, argv, &i, &missing))) {
            if (!parse_double(v, &o.tolerance)) {
                fprintf(stderr, "kbench-report: --tolerance wants a positive number, got '%s'\n",
                        v);
                free(files);
                return 2;
            }
        } else {
            if (missing) fprintf(stderr, "kbench-report: %s needs a value\n", a);
            else fprintf(stderr, "kbench-report: unknown option '%s'\n", a);
            usage(stderr);
            free(files);
            return 2;
        }
    }
    if (nfiles == 0) {
        usage(stderr);
        free(files);
        return 2;
    }

    /* The library reads a missing baseline as an empty one; named on the
     * command line, a missing file is a mistake worth stopping for. */
    if (o.baseline_path && access(o.baseline_path, R_OK) != 0) {
        fprintf(stderr, "kbench-report: cannot read baseline %s: %s\n", o.baseline_path,
                strerror(errno));
        free(files);
        return 1;
    }
    kb_results r;
    kb_results_init(&r);
    kb_err e = {""};
    kb_status st = KB_OK;
    for (size_t k = 0; k < nfiles && st == KB_OK; k++) st = kb_results_read_csv(files[k], &r, &e);
    size_t regressions = 0;
    o.regressions = &regressions;
    if (st == KB_OK) st = kb_report_generate(&r, &o, &e);
    if (st != KB_OK) fprintf(stderr, "kbench-report: %s\n", kb_err_text(&e));
    else if (o.formats & (KB_REPORT_MD | KB_REPORT_CSV))
        fprintf(stderr, "kbench-report: wrote %s/report.md and %s/summary.csv\n", o.out_dir,
                o.out_dir);
    if (st == KB_OK && regressions)
        fprintf(stderr, "kbench-report: %zu regression(s): SLOWER or accuracy FAIL rows\n",
                regressions);
    kb_results_free(&r);
    free(files);
    return st != KB_OK ? 1 : regressions ? 4 : 0;
}
