/* kbench-report's command line (kb_report_main): results CSVs (ours and
 * peers') -> speedup lines, report.md, summary.csv and plots. See report.h
 * for what each holds. Every input is read and judged before anything is
 * written: a bad input gets its message before any speedup line, and leaves
 * no report folder behind. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kbench-report [options] RESULTS.csv...\n"
            "\n"
            "Merges kbench results CSVs (and peers' CSVs in the same schema, e.g. from\n"
            "ci/peers/torch_peers.py) into one report. A row given twice keeps the later.\n"
            "A baseline file (baselines/<gpu>.csv) is not results: it goes with --baseline.\n"
            "\n"
            "Options take their value as '--opt VALUE' or '--opt=VALUE'; '--' ends them.\n"
            "\n"
            "  --out DIR          write report.md, report.html, summary.csv and plots/ there\n"
            "                     (default: report; made once every input has been read)\n"
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

/* Whether --out DIR is a writable folder, or could be made as one, without
 * making it (it is made once every input has been read: kb_report_generate).
 * Else msg says why. */
static int out_dir_usable(const char *dir, char *msg, size_t len)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        snprintf(msg, len, "--out %.200s...: path longer than %zu characters", dir, sizeof p - 1);
        return 0;
    }
    struct stat st;
    for (;;) {
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
        if (stat(p, &st) == 0) break;
        if (errno != ENOENT && errno != ENOTDIR) {
            snprintf(msg, len, "--out %s: %s: %s", dir, p, strerror(errno));
            return 0;
        }
        char *slash = strrchr(p, '/');
        if (!slash) snprintf(p, sizeof p, ".");
        else if (slash == p) p[1] = '\0';
        else *slash = '\0';
    }
    const int self = strcmp(p, dir) == 0;
    if (!S_ISDIR(st.st_mode)) {
        if (self) snprintf(msg, len, "--out %s: not a folder", dir);
        else snprintf(msg, len, "--out %s: cannot be made, %s is not a folder", dir, p);
        return 0;
    }
    if (access(p, W_OK | X_OK) != 0) {
        if (self) snprintf(msg, len, "--out %s: not writable (%s)", dir, strerror(errno));
        else snprintf(msg, len, "--out %s: cannot be made in %s (%s)", dir, p, strerror(errno));
        return 0;
    }
    return 1;
}

/* The series (backend column) the rows hold, in first-seen order, for the
 * message about a --reference none of them is. */
static void series_list(const kb_results *r, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n && at < len; i++) {
        size_t k = 0;
        while (k < i && strcmp(r->v[k].backend, r->v[i].backend) != 0) k++;
        if (k < i) continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", r->v[i].backend);
    }
}

/* kbench's conventions (base/cli.c): "--opt VALUE" and "--opt=VALUE",
 * "--" ends the options, an option with a value at most once, every value
 * checked before any work. Returns -1 to go on, else the exit status; on a
 * usage error the message is printed with one hint line. */
static int parse_args(int argc, char **argv, kb_report_opts *o, int *diff, FILE *err)
{
    int count[OPT_END] = {0}, c;
    const char *bad = NULL;
    char msg[512];
    optind = 0; /* glibc: full re-initialisation, so the parser can run again */
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
        case OPT_HELP: usage(o->out); return 0;
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
    if (!bad && !*diff && (o->formats & (KB_REPORT_MD | KB_REPORT_CSV | KB_REPORT_PLOTS)) &&
        !out_dir_usable(o->out_dir, msg, sizeof msg))
        bad = msg;
    if (!bad) return -1;
    fprintf(err, "kbench-report: %s\nRun 'kbench-report --help' for usage.\n", bad);
    return 2;
}

int kb_report_main(int argc, char **argv, FILE *out, FILE *err)
{
    kb_report_opts o;
    kb_report_opts_init(&o);
    o.out_dir = "report";
    o.out = out;
    int diff = 0, rc = parse_args(argc, argv, &o, &diff, err);
    if (rc >= 0) return rc;
    char **files = argv + optind;
    size_t nfiles = (size_t)(argc - optind);
    if (diff) {
        kb_err de;
        if (kb_baseline_diff(out, files[0], files[1], &de) != KB_OK) {
            fprintf(err, "kbench-report: %s\n", kb_err_text(&de));
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
        fprintf(err, "kbench-report: %s\nRun 'kbench-report --help' for usage.\n",
                kb_err_text(&ce));
        return 2;
    }
    /* The library reads a missing baseline as an empty one; named on the
     * command line, a missing file is a mistake worth stopping for. */
    if (o.baseline_path && access(o.baseline_path, R_OK) != 0) {
        fprintf(err, "kbench-report: cannot read baseline %s: %s\n", o.baseline_path,
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
            char have[512];
            series_list(&r, have, sizeof have);
            fprintf(err,
                    "kbench-report: --reference %s: no rows of that series in the input (its "
                    "series: %s)\nRun 'kbench-report --help' for usage.\n",
                    o.reference, have[0] ? have : "none");
            kb_results_free(&r);
            return 2;
        }
    }
    kb_report_outcome oc;
    o.outcome = &oc;
    if (st == KB_OK) st = kb_report_generate(&r, &o, &e);
    kb_results_free(&r);
    if (st != KB_OK) {
        fprintf(err, "kbench-report: %s\n", kb_err_text(&e));
        return 1;
    }
    if (o.formats & (KB_REPORT_MD | KB_REPORT_CSV))
        fprintf(err, "kbench-report: wrote %s/report.md and %s/summary.csv\n", o.out_dir,
                o.out_dir);
    if (oc.regressions)
        fprintf(err, "kbench-report: %zu regression(s): SLOWER, FUSION_CHANGED or accuracy FAIL "
                     "rows\n",
                oc.regressions);
    char why[512];
    const int rc2 = kb_report_exit_status(&oc, o.baseline_path, why, sizeof why);
    if (why[0]) fprintf(err, "kbench-report: %s\n", why);
    return rc2;
}
