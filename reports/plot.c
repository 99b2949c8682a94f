/* Bandwidth-vs-N plots through gnuplot. Per (benchmark, dtype) we write
 * plots/<stem>.dat (fixed-M sweeps as lines on a log2 N axis, other shapes
 * as labelled points; one column per series, NaN where a series has no
 * number: gnuplot breaks the line there rather than drawing through a shape
 * that was not measured) and plots/<stem>.gp, then run gnuplot on the script
 * in that folder, so `cd plots && gnuplot <stem>.gp` redraws by hand. The
 * script draws the PNG (pngcairo) and then the SVG from the same plot.
 * gnuplot runs through fork/exec with its exit status checked; missing or
 * failing, it is reported, never fatal. */
#include "files.h"
#include "report_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry.h"

void kb_report_plot_stem(const char *bench, const char *dtype, char *buf, size_t len)
{
    snprintf(buf, len, "%s_%s", bench, dtype);
    for (char *p = buf; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            *p = '_';
}

static int has_gbps(const kb_result *x)
{
    return x && kb_report_timed(x) && isfinite(x->gbps) && x->gbps > 0;
}

/* Does the (benchmark, dtype[, backend]) cell have a row to draw? */
static int cell_has_gbps(const kb_report_model *m, const char *bench, const char *dtype,
                         const char *backend)
{
    size_t n;
    const kb_result *const *cell = kb_report_index_cell(&m->ix, bench, dtype, backend, &n);
    for (size_t i = 0; i < n; i++)
        if (has_gbps(cell[i])) return 1;
    return 0;
}

int kb_report_plottable(const kb_report_model *m, const char *bench, const char *dtype)
{
    return cell_has_gbps(m, bench, dtype, NULL);
}

/* Fixed colours for the series people compare most, so eager is the same
 * blue in every plot; a peer is drawn dashed in a paler shade. */
static const char *series_color(const char *name, size_t idx)
{
    static const struct {
        const char *name, *rgb;
    } known[] = {
        {"eager", "#1f77b4"},       {"fused", "#9467bd"},  {"tuned", "#2ca02c"},
        {"cudnn", "#8c564b"},       {"torch_eager", "#6baed6"},
        {"torch_compile", "#ff7f0e"}, {"liger", "#d62728"}, {"quack", "#e377c2"},
    };
    static const char *const other[] = {"#17becf", "#bcbd22", "#7f7f7f", "#393b79",
                                        "#637939", "#8c6d31", "#843c39", "#7b4173"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i].name) == 0) return known[i].rgb;
    return other[idx % (sizeof other / sizeof other[0])];
}

/* gnuplot single-quoted string: only the quote itself needs doubling. */
static void gp_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

typedef struct {
    const char *names[64];
    size_t n;
    unsigned char has[64][2]; /* series s has a number in data block b */
} plot_series;

/* Lines join only shapes that belong together: a fixed-M sweep (three or
 * more shapes with one M), ordered by N. Every other shape -- the long-row
 * tail at constant M*N, the norms' activation shapes, the odd list, a
 * --shape of the user's -- is its own point, labelled with its shape, so no
 * line runs between unrelated problems. */
static int in_odd_list(const char *bench, int64_t M, int64_t N, int64_t K)
{
    kb_bench_id id;
    const kb_shape *odd;
    if (kb_bench_find(bench, &id, NULL) != KB_OK) return 0;
    size_t n = kb_shapes(id, KB_SHAPES_ODD, &odd);
    for (size_t i = 0; i < n; i++)
        if (odd[i].M == M && odd[i].N == N && odd[i].K == K) return 1;
    return 0;
}

/* sweep[k]: is shapes[k] on a sweep? shapes are sorted by M (cmp_mn), so
 * the shapes of one M are a run, counted once. */
static void mark_sweeps(const char *bench, const kb_mn *shapes, size_t ns, unsigned char *sweep)
{
    for (size_t k = 0; k < ns; k++)
        sweep[k] = !in_odd_list(bench, shapes[k].M, shapes[k].N, shapes[k].K);
    for (size_t lo = 0, hi; lo < ns; lo = hi) {
        size_t same_m = 0;
        for (hi = lo; hi < ns && shapes[hi].M == shapes[lo].M; hi++) same_m += sweep[hi];
        for (size_t k = lo; k < hi; k++) sweep[k] = sweep[k] && same_m >= 3;
    }
}

static int cmp_mn(const void *a, const void *b)
{
    const kb_mn *x = a, *y = b;
    if (x->M != y->M) return (x->M > y->M) - (x->M < y->M);
    if (x->N != y->N) return (x->N > y->N) - (x->N < y->N);
    return (x->K > y->K) - (x->K < y->K);
}

/* Two data blocks (gnuplot "index"): 0 = sweep shapes by M then N, a blank
 * line between sweeps so each M is its own line; 1 = single points (block 0
 * when there is no sweep). Columns:
 * N, shape label, highest GB/s at the shape (where its label goes), then one
 * GB/s column per series, NaN where a series has no number. */
static kb_status write_dat(const char *path, const kb_report_model *m, const char *bench,
                           const char *dt, kb_mn *shapes, size_t ns, plot_series *ps,
                           double *ymax, size_t *nline, size_t *npoint, kb_err *e)
{
    qsort(shapes, ns, sizeof *shapes, cmp_mn);
    unsigned char *sweep = malloc(ns ? ns : 1);
    if (!sweep) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory writing %s", path);
    mark_sweeps(bench, shapes, ns, sweep);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(sweep);
        return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    fprintf(f, "# %s %s: GB/s by shape, written by kbench-report; NaN = not measured\n"
               "# block 0: fixed-M sweeps (one per M), block 1: single shapes\n# N shape top",
            bench, dt);
    for (size_t s = 0; s < ps->n; s++) fprintf(f, " %s", ps->names[s]);
    fputc('\n', f);
    *nline = *npoint = 0;
    for (int block = 0; block < 2; block++) {
        int64_t last_m = -1;
        /* Two blank lines end a gnuplot index block; without sweep rows the
         * points are block 0 (gnuplot skips an empty leading block). */
        if (block == 1 && *nline) fputs("\n\n", f);
        for (size_t k = 0; k < ns; k++) {
            if (sweep[k] != (block == 0)) continue;
            if (block == 0 && last_m >= 0 && shapes[k].M != last_m) fputc('\n', f);
            last_m = shapes[k].M;
            double top = 0;
            char vals[64 * 16] = "";
            size_t used = 0;
            for (size_t s = 0; s < ps->n; s++) {
                const kb_result *x = kb_report_find(m, bench, ps->names[s], dt, shapes[k].M, shapes[k].N, shapes[k].K);
                int w = has_gbps(x) ? snprintf(vals + used, sizeof vals - used, " %.1f", x->gbps)
                                    : snprintf(vals + used, sizeof vals - used, " NaN");
                if (w > 0 && (size_t)w < sizeof vals - used) used += (size_t)w;
                if (has_gbps(x)) ps->has[s][block] = 1;
                if (has_gbps(x) && x->gbps > top) top = x->gbps;
            }
            if (top > *ymax) *ymax = top;
            char shape[72];
            kb_shape_format(shape, sizeof shape, shapes[k].M, shapes[k].N, shapes[k].K);
            fprintf(f, "%" PRId64 " %s %.1f%s\n", shapes[k].N, shape, top, vals);
            ++*(block == 0 ? nline : npoint);
        }
    }
    free(sweep);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return KB_FAIL(e, KB_ERR_IO, "write error on %s", path);
    return KB_OK;
}

/* "1K" for 1024 and so on: N's tics on the log2 axis. */
static void pow2_label(int64_t v, char *buf, size_t len)
{
    if (v >= (1 << 20) && v % (1 << 20) == 0) snprintf(buf, len, "%" PRId64 "M", v >> 20);
    else if (v >= 1024 && v % 1024 == 0) snprintf(buf, len, "%" PRId64 "K", v >> 10);
    else snprintf(buf, len, "%" PRId64, v);
}

static kb_status write_gp(const char *path, const char *stem, const kb_report_model *m,
                          const char *bench, const char *dt, const kb_mn *shapes, size_t ns,
                          const plot_series *ps, double ymax, size_t nline, size_t npoint,
                          kb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    char title[256];
    snprintf(title, sizeof title, "%s %s on %s: memory bandwidth by row length", bench, dt,
             m->gpu[0] ? m->gpu : "unknown GPU");
    int64_t nmin = INT64_MAX, nmax = 1;
    for (size_t k = 0; k < ns; k++) {
        if (shapes[k].N < nmin) nmin = shapes[k].N;
        if (shapes[k].N > nmax) nmax = shapes[k].N;
    }
    int64_t lo = 1, hi = 1;
    while (lo * 2 <= nmin) lo *= 2;
    while (hi < nmax) hi *= 2;
    if (hi == lo) hi *= 2;
    fprintf(f, "# Written by kbench-report. Redraw: cd to this folder, gnuplot %s.gp\n", stem);
    fprintf(f, "set terminal pngcairo noenhanced size 1280,720 font 'sans,11'\n");
    fprintf(f, "set output '%s.png'\n", stem);
    fprintf(f, "set title ");
    gp_quoted(f, title);
    fprintf(f, "\nset xlabel 'N (log2 scale).  Lines: fixed-M sweeps.  Open circles: other "
               "shapes, labelled MxN.'\nset ylabel 'GB/s'\n");
    fprintf(f, "set logscale x 2\nset xrange [%" PRId64 "/1.2:%" PRId64 "*1.2]\n", lo, hi);
    fprintf(f, "set yrange [0:%.0f]\n", ceil(ymax * 1.15 / 100.0) * 100.0);
    /* Every power of two a tic; over a wide range only every other one
     * labelled, so the labels do not run together. */
    int octaves = 0;
    for (int64_t v = lo; v < hi; v *= 2) octaves++;
    fprintf(f, "set xtics nomirror (");
    int k = 0;
    for (int64_t v = lo; v <= hi; v *= 2, k++) {
        char lab[32];
        pow2_label(v, lab, sizeof lab);
        if (octaves > 12 && k % 2) lab[0] = '\0';
        fprintf(f, "%s'%s' %" PRId64, v == lo ? "" : ", ", lab, v);
    }
    fprintf(f, ")\n");
    fprintf(f, "set ytics nomirror\n"
               "set grid xtics ytics lc rgb '#dddddd'\nset key below horizontal\n");
    fprintf(f, "plot \\\n");
    const char *sep = "";
    for (size_t s = 0; s < ps->n; s++) {
        int peer = kb_backend_index(ps->names[s]) < 0 && strncmp(ps->names[s], "tuned:", 6) != 0;
        const char *rgb = series_color(ps->names[s], s);
        if (nline && ps->has[s][0]) {
            fprintf(f, "%s  '%s.dat' index 0 using 1:%zu with linespoints lw 2 pt 7 ps 1 dt %d "
                       "lc rgb '%s' title ",
                    sep, stem, s + 4, peer ? 2 : 1, rgb);
            gp_quoted(f, ps->names[s]);
            sep = ", \\\n";
        }
        if (npoint && ps->has[s][1]) {
            fprintf(f, "%s  '%s.dat' index %d using 1:%zu with points pt 6 ps 1.5 lw 2 lc rgb '%s' ",
                    sep, stem, nline ? 1 : 0, s + 4, rgb);
            if (nline && ps->has[s][0]) {
                fprintf(f, "notitle"); /* the line's legend entry names the series */
            } else {
                fprintf(f, "title ");
                gp_quoted(f, ps->names[s]);
            }
            sep = ", \\\n";
        }
    }
    if (npoint)
        fprintf(f, "%s  '%s.dat' index %d using 1:3:2 with labels offset 0,1 font ',8' notitle",
                sep, stem, nline ? 1 : 0);
    /* SOL is a measured copy, not a physical limit: a kernel with another
     * read:write mix, or whose small outputs stay in L2, can pass it by a few
     * per cent, so the line says what it is rather than pose as a ceiling. */
    if (isfinite(m->sol_gbps))
        fprintf(f, ", \\\n  %.1f with lines dt 3 lw 2 lc rgb '#000000' "
                   "title 'SOL (measured device copy) %.0f GB/s'",
                m->sol_gbps, m->sol_gbps);
    fprintf(f, "\nset terminal svg noenhanced size 1280,720 dynamic font 'sans,11'\n");
    fprintf(f, "set output '%s.svg'\nreplot\nunset output\n", stem);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return KB_FAIL(e, KB_ERR_IO, "write error on %s", path);
    return KB_OK;
}

/* opts->gnuplot, else "gnuplot" on PATH, else /usr/bin/gnuplot (what
 * Debian's gnuplot-nox installs). */
static int find_gnuplot(const char *want, char *buf, size_t len)
{
    if (want) {
        snprintf(buf, len, "%s", want);
        return access(buf, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *c = strchr(path, ':');
        size_t n = c ? (size_t)(c - path) : strlen(path);
        if (n > 0 && n + 9 < len) {
            snprintf(buf, len, "%.*s/gnuplot", (int)n, path);
            if (access(buf, X_OK) == 0) return 1;
        }
        path = c ? c + 1 : NULL;
    }
    snprintf(buf, len, "/usr/bin/gnuplot");
    return access(buf, X_OK) == 0;
}

/* Runs gnuplot on one script inside dir; returns its exit status, or -1 with
 * errno-ish detail when it could not run. */
static int run_gnuplot(const char *gnuplot, const char *dir, const char *script)
{
    fflush(NULL); /* the child must not flush our buffered output again */
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

kb_status kb_report_plots(const kb_report_model *m, const char *dir, const char *gnuplot,
                          kb_plot_result *res, kb_err *e)
{
    char pdir[4096], path[4352], stem[160], gp[4096];
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    KB_TRY(kb_mkdir_p(pdir, e));
    int have = find_gnuplot(gnuplot, gp, sizeof gp);
    size_t drawn = 0, failed = 0;
    char first_fail[192] = "";
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++) {
            const char *bench = m->benches.v[b], *dt = m->dtypes.v[d];
            if (!kb_report_plottable(m, bench, dt)) continue;
            plot_series ps;
            memset(&ps, 0, sizeof ps);
            for (size_t s = 0; s < m->series.n && ps.n < 64; s++)
                if (cell_has_gbps(m, bench, dt, m->series.v[s])) ps.names[ps.n++] = m->series.v[s];
            kb_mn *shapes;
            size_t ns;
            KB_TRY(kb_report_shapes(m, bench, dt, &shapes, &ns, e));
            double ymax = isfinite(m->sol_gbps) ? m->sol_gbps : 0;
            kb_report_plot_stem(bench, dt, stem, sizeof stem);
            snprintf(path, sizeof path, "%s/%s.dat", pdir, stem);
            size_t nline = 0, npoint = 0;
            kb_status st = write_dat(path, m, bench, dt, shapes, ns, &ps, &ymax, &nline, &npoint, e);
            if (st == KB_OK) {
                snprintf(path, sizeof path, "%s/%s.gp", pdir, stem);
                st = write_gp(path, stem, m, bench, dt, shapes, ns, &ps, ymax, nline, npoint, e);
            }
            free(shapes);
            KB_TRY(st);
            if (!have) continue;
            char script[176];
            snprintf(script, sizeof script, "%s.gp", stem);
            int rc = run_gnuplot(gp, pdir, script);
            snprintf(path, sizeof path, "%s/%s.png", pdir, stem);
            if (rc == 0 && nonempty(path)) {
                drawn++;
            } else {
                if (!failed) snprintf(first_fail, sizeof first_fail, "%.160s (exit %d)", stem, rc);
                failed++;
            }
        }
    if (!have) {
        res->state = KB_PLOTS_NO_GNUPLOT;
        snprintf(res->detail, sizeof res->detail,
                 "not drawn: gnuplot not found (%s; install gnuplot-nox). The data and "
                 "scripts are in plots/.",
                 gnuplot ? gnuplot : "searched PATH and /usr/bin");
    } else if (failed) {
        res->state = KB_PLOTS_FAILED;
        snprintf(res->detail, sizeof res->detail,
                 "gnuplot failed on %zu of %zu plots, first %s; scripts are in plots/.", failed,
                 failed + drawn, first_fail);
    } else {
        res->state = KB_PLOTS_DRAWN;
        snprintf(res->detail, sizeof res->detail, "%zu plots drawn with %.200s", drawn, gp);
    }
    return KB_OK;
}
