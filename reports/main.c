/* kbench-report: results CSVs (ours and peers') -> speedup lines on stdout,
 * report.md, summary.csv and plots. See report.h for what each holds. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kbench-report [options] RESULTS.csv...\n"
            "\n"
            "Merges kbench results CSVs (and peers' CSVs in the same schema, e.g. from\n"
            "ci/peers/torch_peers.py) into one report. A row given twice keeps the later.\n"
            "\n"
            "Options take their value as '--opt VALUE' or '--opt=VALUE'; '--' ends them.\n"
            "\n"
            "  --out DIR          write report.md, report.html, summary.csv and plots/ there\n"
            "                     (default: report)\n"
            "  --baseline FILE    judge rows without a verdict, or with NO_BASELINE, against\n"
            "                     this baseline CSV (it must exist, and not be a results CSV).\n"
            "                     A baseline is one GPU's: named like kbench's\n"
            "                     baselines/<gpu>.csv (NVIDIA_H200.csv), it refuses rows of\n"
            "                     another GPU; any other name is warned about. kbench's time\n"
            "                     floor is not applied (results files do not record it)\n"
            "  --tolerance T      regression threshold, 0 < T < 1 (default 0.10, widened by noise)\n"
            "  --title NAME       GPU name for titles (default: the results' gpu column)\n"
            "  --sol GBPS         speed of light in GB/s (default: the results' sol_gbps)\n"
            "  --no-plots         skip the plots\n"
            "  --gnuplot PATH     gnuplot to run (default: gnuplot on PATH)\n"
            "  --reference NAME   the series speedups are relative to (default: eager); with\n"
            "                     peers merged, torch_eager gives the seed suite's numbers\n"
            "  --image-base URL   link report.md's plots under URL (where CI publishes the\n"
            "                     report folder) instead of the relative plots/\n"
            "  -h, --help         this text\n"
            "\n"
            "       kbench-report --baseline-diff OLD.csv NEW.csv\n"
            "  summarises what a baseline refresh changed.\n"
            "\n"
            "An input that is one of the files the report writes (e.g. --out DIR with\n"
            "DIR/summary.csv as input) is a usage error: the report would replace it.\n"
            "\n"
            "Exit status: 0 report written and no regression; 4 report written and a kbench\n"
            "row is SLOWER (recorded, or judged against --baseline), FUSION_CHANGED or failed\n"
            "accuracy; 1 error: unreadable or invalid input (a bad number or verdict, a\n"
            "results CSV given as --baseline), a missing --baseline or --baseline-diff file,\n"
            "rows judged against another GPU's baseline, or a report that verified nothing\n"
            "(no row's accuracy checked and no speed compared, or a --baseline with no row\n"
            "for any kbench case; the report is still written, saying why); 2 usage.\n");
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > lo && v < hi)) return 0;
    *out = v;
    return 1;
}

enum { OPT_HELP = 'h', OPT_OUT = 256, OPT_BASELINE, OPT_TOLERANCE, OPT_TITLE, OPT_SOL,
       OPT_NO_PLOTS, OPT_GNUPLOT, OPT_BASELINE_DIFF, OPT_REFERENCE, OPT_IMAGE_BASE, OPT_END };

static const struct option long_opts[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {"out", required_argument, NULL, OPT_OUT},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"title", required_argument, NULL, OPT_TITLE},
    {"sol", required_argument, NULL, OPT_SOL},
    {"no-plots", no_argument, NULL, OPT_NO_PLOTS},
    {"gnuplot", required_argument, NULL, OPT_GNUPLOT},
    {"baseline-diff", no_argument, NULL, OPT_BASELINE_DIFF},
    {"reference", required_argument, NULL, OPT_REFERENCE},
    {"image-base", required_argument, NULL, OPT_IMAGE_BASE},
    {NULL, 0, NULL, 0},
};

/* kbench's conventions (harness/cli.c): "--opt VALUE" and "--opt=VALUE",
 * "--" ends the options, an option with a value at most once, every value
 * checked before any work. Returns -1 to go on, else the exit status; on a
 * usage error the message is printed with one hint line. */
static int parse_args(int argc, char **argv, kb_report_opts *o, int *diff)
{
    int count[OPT_END] = {0}, c;
    const char *bad = NULL;
    char msg[512];
    opterr = 0;
    while (!bad && (c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        const char *a = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "?";
        const struct option *p = long_opts;
        while (p->name && p->val != c) p++;
        if (c == ':') snprintf(msg, sizeof msg, "option '%s' needs a value", a);
        else if (c == '?') snprintf(msg, sizeof msg, "unknown or ambiguous option '%s'%s", a,
                                    strchr(a, '=') ? ", or it takes no value" : "");
        else if (p->has_arg && ++count[c] > 1)
            snprintf(msg, sizeof msg, "--%s given twice (it takes one value)", p->name);
        else if (p->has_arg && !*optarg) snprintf(msg, sizeof msg, "--%s: empty value", p->name);
        else msg[0] = '\0';
        if (msg[0]) {
            bad = msg;
            break;
        }
        switch (c) {
        case OPT_HELP: usage(stdout); return 0;
        case OPT_NO_PLOTS: o->formats &= ~(unsigned)KB_REPORT_PLOTS; break;
        case OPT_BASELINE_DIFF: *diff = 1; break;
        case OPT_OUT: o->out_dir = optarg; break;
        case OPT_BASELINE: o->baseline_path = optarg; break;
        case OPT_TITLE: o->title = optarg; break;
        case OPT_GNUPLOT: o->gnuplot = optarg; break;
        case OPT_REFERENCE: o->reference = optarg; break;
        case OPT_IMAGE_BASE: o->image_base = optarg; break;
        case OPT_SOL:
            if (parse_double(optarg, 0.0, 1e9, &o->sol_gbps)) break;
            snprintf(msg, sizeof msg, "--sol '%s': expected a bandwidth in GB/s above 0", optarg);
            bad = msg;
            break;
        case OPT_TOLERANCE:
            if (parse_double(optarg, 0.0, 1.0, &o->tolerance)) break;
            snprintf(msg, sizeof msg,
                     "--tolerance '%s': expected a fraction between 0 and 1, exclusive (e.g. 0.05)",
                     optarg);
            bad = msg;
            break;
        }
    }
    int nfiles = argc - optind;
    if (!bad && *diff && nfiles != 2) {
        snprintf(msg, sizeof msg, "--baseline-diff takes two files, OLD.csv NEW.csv (got %d)",
                 nfiles);
        bad = msg;
    } else if (!bad && !*diff && nfiles == 0) bad = "no results CSV given";
    if (!bad && !*diff && (o->formats & (KB_REPORT_MD | KB_REPORT_CSV | KB_REPORT_PLOTS))) {
        /* The report directory is made (or found writable) before any reading. */
        kb_err e;
        if (kb_mkdir_p(o->out_dir, &e) != KB_OK) {
            snprintf(msg, sizeof msg, "--out %s: %s", o->out_dir, e.msg);
            bad = msg;
        } else if (access(o->out_dir, W_OK | X_OK) != 0) {
            snprintf(msg, sizeof msg, "--out %s: not writable (%s)", o->out_dir, strerror(errno));
            bad = msg;
        }
    }
    if (!bad) return -1;
    fprintf(stderr, "kbench-report: %s\nRun 'kbench-report --help' for usage.\n", bad);
    return 2;
}

int main(int argc, char **argv)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = "report";
    int diff = 0, rc = parse_args(argc, argv, &o, &diff);
    if (rc >= 0) return rc;
    char **files = argv + optind;
    size_t nfiles = (size_t)(argc - optind);
    if (diff) {
        kb_err de;
        if (kb_baseline_diff(stdout, files[0], files[1], &de) != KB_OK) {
            fprintf(stderr, "kbench-report: %s\n", kb_err_text(&de));
            return 1;
        }
        return 0;
    }

    /* Nothing is read before we know that no input is an output: the report
     * would replace what it was made from. */
    kb_err ce;
    const char *baseline_in[1] = {o.baseline_path};
    if (kb_report_check_inputs(&o, (const char *const *)files, nfiles, &ce) != KB_OK ||
        kb_report_check_inputs(&o, baseline_in, 1, &ce) != KB_OK) {
        fprintf(stderr, "kbench-report: %s\nRun 'kbench-report --help' for usage.\n",
                kb_err_text(&ce));
        return 2;
    }
    /* The library reads a missing baseline as an empty one; named on the
     * command line, a missing file is a mistake worth stopping for. */
    if (o.baseline_path && access(o.baseline_path, R_OK) != 0) {
        fprintf(stderr, "kbench-report: cannot read baseline %s: %s\n", o.baseline_path,
                strerror(errno));
        return 1;
    }
    kb_results r;
    kb_results_init(&r);
    kb_err e = {""};
    kb_status st = KB_OK;
    for (size_t k = 0; k < nfiles && st == KB_OK; k++) st = kb_results_read_csv(files[k], &r, &e);
    /* A reference no row has would leave every speedup empty: a typo. */
    if (st == KB_OK && o.reference) {
        size_t i = 0;
        while (i < r.n && strcmp(r.v[i].backend, o.reference) != 0) i++;
        if (i == r.n) {
            fprintf(stderr,
                    "kbench-report: --reference %s: no rows of that series in the input\n"
                    "Run 'kbench-report --help' for usage.\n",
                    o.reference);
            kb_results_free(&r);
            return 2;
        }
    }
    kb_report_outcome oc;
    o.outcome = &oc;
    if (st == KB_OK) st = kb_report_generate(&r, &o, &e);
    kb_results_free(&r);
    if (st != KB_OK) {
        fprintf(stderr, "kbench-report: %s\n", kb_err_text(&e));
        return 1;
    }
    if (o.formats & (KB_REPORT_MD | KB_REPORT_CSV))
        fprintf(stderr, "kbench-report: wrote %s/report.md and %s/summary.csv\n", o.out_dir,
                o.out_dir);
    if (oc.regressions)
        fprintf(stderr, "kbench-report: %zu regression(s): SLOWER, FUSION_CHANGED or accuracy FAIL "
                        "rows\n",
                oc.regressions);
    char why[512];
    const int rc2 = kb_report_exit_status(&oc, o.baseline_path, why, sizeof why);
    if (why[0]) fprintf(stderr, "kbench-report: %s\n", why);
    return rc2;
}
