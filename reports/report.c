/* kb_report_generate: judges the rows (against the run's verdicts or a
 * baseline file, which must be the rows' GPU's), drives the writers in
 * markdown.c, summary.c and plot.c, and says what the report verified
 * (kb_report_exit_status); and the check that no input is a file the report
 * writes. The model is model.c's, the maths maths.c's. */
#include "report_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "registry.h"

/* ---- verdicts ----------------------------------------------------------- */

/* A verdict the run recorded stands, except NO_BASELINE: the run had no
 * row, but the baseline given to the report may have one, and a row judged
 * by nobody must not pass as "not checked". */
static int recorded_verdict(const kb_result *x)
{
    return x->verdict[0] && strcmp(x->verdict, "NO_BASELINE") != 0;
}

/* The baseline row the report judges x by, or NULL (x keeps its own verdict,
 * is not timed, or the baseline bix indexes has no row for it). */
static const kb_baseline_row *judged_by(const kb_result *x, const kb_report_base_index *bix)
{
    if (recorded_verdict(x) || !kb_report_timed(x)) return NULL;
    return kb_report_base_find(bix, x);
}

kb_status kb_report_judge_all(const kb_report_model *m, const kb_baseline *bl,
                              kb_report_judged **out, kb_err *e)
{
    kb_report_base_index bix; /* kb_baseline_find per row, in O(log n) */
    KB_TRY(kb_report_base_index_build(&bix, bl, e));
    kb_report_judged *j = calloc(m->rows.n ? m->rows.n : 1, sizeof *j);
    if (!j) {
        kb_report_base_index_free(&bix);
        return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory judging regressions");
    }
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        const kb_baseline_row *b = kb_report_base_find(&bix, x);
        /* The run's own baseline figure first: it is what its verdict saw. */
        double base = isfinite(x->baseline_gbps) ? x->baseline_gbps : b ? b->gbps : NAN;
        j[i].row = x;
        j[i].base_gbps = base;
        j[i].noise = x->noise;
        const char *v = NULL;
        if (kb_report_timed(x))
            v = kb_report_judge_row(x, base, b ? b->noise : NAN, m->tol, &j[i].change);
        else
            j[i].change = NAN;
        j[i].verdict = recorded_verdict(x) ? x->verdict : v ? v : x->verdict[0] ? x->verdict : NULL;
    }
    kb_report_base_index_free(&bix);
    *out = j;
    return KB_OK;
}

/* ---- driver --------------------------------------------------------------- */

void kb_report_opts_init(kb_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->formats = KB_REPORT_ALL;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* The GPU a baseline file is for, from its name (report.h): *gpu gets the
 * name's stem ("NVIDIA_H200"); 1 when it is a GPU's name as kbench writes
 * it, 0 when the name says nothing (a copy named "baseline.csv"). The
 * prefixes are how CUDA names NVIDIA's GPUs, blanks written as '_'. */
static int baseline_gpu(const char *path, char *gpu, size_t len)
{
    static const char *const vendor[] = {"NVIDIA_", "Tesla_", "Quadro_", "GeForce_", "TITAN_"};
    const char *b = base_name(path);
    size_t n = strlen(b);
    if (n > 4 && strcmp(b + n - 4, ".csv") == 0) n -= 4;
    snprintf(gpu, len, "%.*s", (int)n, b);
    for (size_t k = 0; k < sizeof vendor / sizeof vendor[0]; k++)
        if (strncmp(gpu, vendor[k], strlen(vendor[k])) == 0) return 1;
    return 0;
}

/* Whether a baseline's stem names the GPU whose file name is rgpu: the name
 * itself, or a copy kept under it with a '-' or '.' suffix
 * ("NVIDIA_H200-old", "NVIDIA_H200.2026-11"). '_' stands for a blank in a
 * GPU's name, so "NVIDIA_H200_NVL" is another GPU, not a copy. */
static int same_gpu_file(const char *stem, const char *rgpu)
{
    const size_t n = strlen(rgpu);
    return strncmp(stem, rgpu, n) == 0 && (stem[n] == '\0' || stem[n] == '-' || stem[n] == '.');
}

/* Rows judged by a baseline must come from its GPU: a baseline is one GPU's
 * numbers, and an A100's rows judged against the H200's file gave "no
 * regression" without a word. Refused when the file's name says another
 * GPU; when it says none, or judged rows name none, bl_info->gpu_note says
 * what was not checked (stderr and report.md). */
static kb_status check_baseline_gpu(const kb_report_model *m, const kb_report_base_index *bix,
                                    const char *path, kb_report_baseline_info *info, kb_err *e)
{
    char bgpu[256], rgpu[256], name[256];
    const int known = baseline_gpu(path, bgpu, sizeof bgpu);
    size_t judged = 0, unnamed = 0;
    const char *seen = NULL; /* a GPU of the judged rows, for the note */
    int several = 0;
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (!judged_by(x, bix)) continue;
        judged++;
        if (!x->gpu[0]) {
            unnamed++;
            continue;
        }
        if (seen && strcmp(seen, x->gpu) != 0) several = 1;
        if (!seen) seen = x->gpu;
        if (!known) continue;
        kb_gpu_file_name(x->gpu, rgpu, sizeof rgpu);
        if (same_gpu_file(bgpu, rgpu)) continue;
        kb_report_case_name(x, name, sizeof name);
        return KB_FAIL(e, KB_ERR_ARG,
                       "baseline %s is for GPU %s (its file name), but %s was measured on %s: "
                       "a baseline judges only its own GPU's rows (that GPU's file would be "
                       "%s.csv, or a copy named %s-SUFFIX.csv)",
                       path, bgpu, name, x->gpu, rgpu, rgpu);
    }
    info->gpu_note[0] = '\0';
    if (judged && !known)
        snprintf(info->gpu_note, sizeof info->gpu_note,
                 "the GPU of baseline %s is unknown (its file name is not a GPU's, as kbench's "
                 "baselines/<gpu>.csv are): %zu row(s) measured on %s%s are judged against it "
                 "without checking that it was recorded there",
                 info->name, judged, seen ? seen : "an unnamed GPU",
                 several || (seen && unnamed) ? " and others" : "");
    else if (unnamed)
        snprintf(info->gpu_note, sizeof info->gpu_note,
                 "%zu row(s) judged against baseline %s name no GPU (no gpu column): that "
                 "they were measured on %s is not checked",
                 unnamed, info->name, bgpu);
    return KB_OK;
}

static kb_status write_markdown(const char *dir, const kb_report_model *m,
                                const kb_report_judged *j, const kb_report_baseline_info *bl,
                                const kb_plot_result *plots, kb_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/report.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    kb_status st = kb_report_write_markdown(f, m, j, bl, plots, e);
    if (fclose(f) != 0 && st == KB_OK)
        st = KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    /* The same report as one self-contained page, for CI artifacts. */
    if (st == KB_OK) {
        char html[4096], title[sizeof m->gpu + 32];
        snprintf(html, sizeof html, "%s/report.html", dir);
        snprintf(title, sizeof title, "kbench report%s%s", m->gpu[0] ? ": " : "", m->gpu);
        st = kb_report_write_html(path, html, dir, title, e);
    }
    return st;
}

/* "a, b, c" of a name list, for stderr. */
static void names_join(const kb_names *s, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        const size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s", i ? ", " : "", s->v[i]);
    }
}

static int compared(const char *verdict)
{
    return verdict && strcmp(verdict, "NO_BASELINE") != 0;
}

kb_status kb_report_generate(const kb_results *r, const kb_report_opts *o, kb_err *e)
{
    if (r->n == 0)
        return KB_FAIL(e, KB_ERR_ARG, "no results to report: the input has no rows");
    unsigned files = o->formats & (KB_REPORT_MD | KB_REPORT_CSV | KB_REPORT_PLOTS);
    if (files && !(o->out_dir && *o->out_dir))
        return KB_FAIL(e, KB_ERR_ARG, "no output directory given for the report");

    kb_report_model m;
    KB_TRY(kb_report_model_build(&m, r, o, e));
    kb_baseline bl;
    kb_baseline_init(&bl);
    kb_report_base_index bix = {NULL, 0}; /* of bl, for its lookups per row */
    kb_report_judged *j = NULL;
    kb_plot_result plots = {KB_PLOTS_OFF, ""};
    kb_report_baseline_info info;
    memset(&info, 0, sizeof info);
    kb_report_outcome oc;
    memset(&oc, 0, sizeof oc);
    kb_status st = KB_OK;

    /* A missing baseline is an empty one (as kb_baseline_read has it: a GPU
     * without baselines yet); report.md says so. */
    if (o->baseline_path) {
        info.name = base_name(o->baseline_path);
        info.missing = access(o->baseline_path, F_OK) != 0;
        oc.baseline_given = 1;
    }
    if (o->baseline_path && !info.missing) st = kb_baseline_read(o->baseline_path, &bl, e);
    if (st == KB_OK) st = kb_report_base_index_build(&bix, &bl, e);
    if (st == KB_OK && o->baseline_path)
        st = check_baseline_gpu(&m, &bix, o->baseline_path, &info, e);
    /* After the baseline is read and found to be the rows' GPU's: a bad one
     * is refused before any line is printed. */
    if (st == KB_OK && (o->formats & KB_REPORT_STDOUT))
        kb_report_print_speedups(o->out ? o->out : stdout, &m.rows, m.ref);
    if (st == KB_OK && info.gpu_note[0]) fprintf(stderr, "kbench-report: warning: %s\n", info.gpu_note);
    if (st == KB_OK && m.gpus.n > 1) {
        char list[1024];
        names_join(&m.gpus, list, sizeof list);
        fprintf(stderr, "kbench-report: warning: the input mixes %zu GPUs (%s): their numbers "
                        "do not compare, and a baseline is one GPU's\n", m.gpus.n, list);
    }
    if (st == KB_OK && m.versions.n > 1) {
        char list[1024];
        names_join(&m.versions, list, sizeof list);
        fprintf(stderr, "kbench-report: warning: the input mixes %zu kbench versions (%s)\n",
                m.versions.n, list);
    }
    if (st == KB_OK) st = kb_report_judge_all(&m, &bl, &j, e);
    for (size_t i = 0; st == KB_OK && i < m.rows.n; i++) {
        const kb_result *x = &m.rows.v[i];
        if (x->accuracy == KB_ACC_PASS || x->accuracy == KB_ACC_FAIL || compared(j[i].verdict))
            oc.checked++;
        if (kb_report_is_peer(x->backend)) continue;
        if (kb_report_base_find(&bix, x)) oc.baseline_matched++;
        char kind[32];
        const char *k;
        const size_t kn = kb_report_inputs_of(x, &k);
        snprintf(kind, sizeof kind, "%.*s", (int)kn, k);
        /* a library's known deviation fails as expected (base/registry.c) */
        if (x->accuracy == KB_ACC_FAIL && kb_known_deviation(x->benchmark, x->backend, kind))
            continue;
        if (x->accuracy == KB_ACC_FAIL ||
            (j[i].verdict && (strcmp(j[i].verdict, "SLOWER") == 0 ||
                              strcmp(j[i].verdict, "FUSION_CHANGED") == 0)))
            oc.regressions++;
    }
    info.matched = oc.baseline_matched;
    if (st == KB_OK && o->regressions) *o->regressions = oc.regressions;
    if (st == KB_OK && o->outcome) *o->outcome = oc;
    if (st == KB_OK && files) st = kb_mkdir_p(o->out_dir, e);
    if (st == KB_OK && (o->formats & KB_REPORT_PLOTS)) {
        st = kb_report_plots(&m, o->out_dir, o->gnuplot, &plots, e);
        if (st == KB_OK && plots.state != KB_PLOTS_DRAWN)
            fprintf(stderr, "kbench-report: %s\n", plots.detail);
    }
    if (st == KB_OK && (o->formats & KB_REPORT_MD))
        st = write_markdown(o->out_dir, &m, j, &info, &plots, e);
    if (st == KB_OK && (o->formats & KB_REPORT_CSV)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.csv", o->out_dir);
        st = kb_report_write_summary_csv(path, &m, e);
    }
    free(j);
    kb_report_base_index_free(&bix);
    kb_baseline_free(&bl);
    kb_report_model_free(&m);
    return st;
}

int kb_report_exit_status(const kb_report_outcome *oc, const char *baseline_path, char *why,
                          size_t len)
{
    why[0] = '\0';
    /* Checked first: a report that verified nothing is no pass, and the
     * regressions it may still count come from accuracy alone. */
    if (oc->baseline_given && oc->baseline_matched == 0) {
        snprintf(why, len,
                 "baseline %s has no row for any kbench case in the results: nothing was "
                 "compared with it (a wrong file, or results of other cases); see the report",
                 baseline_path ? baseline_path : "(given)");
        return 1;
    }
    if (oc->checked == 0) {
        snprintf(why, len,
                 "nothing was verified: no row's accuracy was checked (PASS or FAIL) and no "
                 "row's speed was compared with a baseline (every case skipped or untimed, "
                 "and no verdict); see the report");
        return 1;
    }
    return oc->regressions ? 4 : 0;
}

/* Whether path is the same file as dir/name (when that exists). */
static int same_file(const struct stat *in, const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_dev == in->st_dev && st.st_ino == in->st_ino;
}

kb_status kb_report_check_inputs(const kb_report_opts *o, const char *const *paths, size_t n,
                                 kb_err *e)
{
    static const struct {
        unsigned format;
        const char *name;
    } outs[] = {{KB_REPORT_MD, "report.md"}, {KB_REPORT_MD, "report.html"},
                {KB_REPORT_CSV, "summary.csv"}};
    static const char *const plot_ext[] = {".dat", ".gp", ".png", ".svg"};
    if (!(o->out_dir && *o->out_dir)) return KB_OK;
    for (size_t i = 0; i < n; i++) {
        struct stat in;
        if (!paths[i] || stat(paths[i], &in) != 0) continue; /* its reader says why */
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            if ((o->formats & outs[k].format) && same_file(&in, o->out_dir, outs[k].name))
                return KB_FAIL(e, KB_ERR_ARG,
                               "input %s is the report's own %s/%s: writing the report would "
                               "replace it (give another --out)",
                               paths[i], o->out_dir, outs[k].name);
        if (!(o->formats & KB_REPORT_PLOTS)) continue;
        /* Plots are named after what the input holds: any plot file in
         * <out>/plots may be rewritten. */
        const char *b = base_name(paths[i]), *dot = strrchr(b, '.');
        int plot_like = 0;
        for (size_t k = 0; dot && k < sizeof plot_ext / sizeof plot_ext[0]; k++)
            plot_like |= strcmp(dot, plot_ext[k]) == 0;
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", b > paths[i] ? (int)(b - paths[i]) : 1,
                 b > paths[i] ? paths[i] : ".");
        struct stat d, pd;
        char plots_dir[4096];
        snprintf(plots_dir, sizeof plots_dir, "%s/plots", o->out_dir);
        if (plot_like && stat(dir, &d) == 0 && stat(plots_dir, &pd) == 0 &&
            d.st_dev == pd.st_dev && d.st_ino == pd.st_ino)
            return KB_FAIL(e, KB_ERR_ARG,
                           "input %s lies in the report's own %s: writing the plots may "
                           "replace it (give another --out)",
                           paths[i], plots_dir);
    }
    return KB_OK;
}
