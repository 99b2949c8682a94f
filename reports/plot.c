/* Bandwidth-vs-shape plots through gnuplot. Per (benchmark, dtype) we write
 * plots/<stem>.dat (one row per shape, one column per series, NaN where a
 * series has no number: gnuplot breaks the line there rather than drawing
 * through a shape that was not measured) and plots/<stem>.gp, then run gnuplot on the script
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

int kb_report_plottable(const kb_report_model *m, const char *bench, const char *dtype)
{
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (has_gbps(x) && strcmp(x->benchmark, bench) == 0 && strcmp(x->dtype, dtype) == 0)
            return 1;
    }
    return 0;
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
} plot_series;

static kb_status write_dat(const char *path, const kb_report_model *m, const char *bench,
                           const char *dt, const kb_mn *shapes, size_t ns,
                           const plot_series *ps, double *ymax, kb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "# %s %s: GB/s by shape, written by kbench-report; NaN = not measured\n# index shape",
            bench, dt);
    for (size_t s = 0; s < ps->n; s++) fprintf(f, " %s", ps->names[s]);
    fputc('\n', f);
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "%zu %" PRId64 "x%" PRId64, k, shapes[k].M, shapes[k].N);
        for (size_t s = 0; s < ps->n; s++) {
            const kb_result *x = kb_report_find(m, bench, ps->names[s], dt, shapes[k].M, shapes[k].N);
            if (has_gbps(x)) {
                fprintf(f, " %.1f", x->gbps);
                if (x->gbps > *ymax) *ymax = x->gbps;
            } else {
                fprintf(f, " NaN");
            }
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return KB_FAIL(e, KB_ERR_IO, "write error on %s", path);
    return KB_OK;
}

static kb_status write_gp(const char *path, const char *stem, const kb_report_model *m,
                          const char *bench, const char *dt, const kb_mn *shapes, size_t ns,
                          const plot_series *ps, double ymax, kb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    char title[256];
    snprintf(title, sizeof title, "%s %s on %s: memory bandwidth by shape", bench, dt,
             m->gpu[0] ? m->gpu : "unknown GPU");
    fprintf(f, "# Written by kbench-report. Redraw: cd to this folder, gnuplot %s.gp\n", stem);
    fprintf(f, "set terminal pngcairo noenhanced size 1280,720 font 'sans,11'\n");
    fprintf(f, "set output '%s.png'\n", stem);
    fprintf(f, "set title ");
    gp_quoted(f, title);
    fprintf(f, "\nset xlabel 'shape (M x N)'\nset ylabel 'GB/s'\n");
    fprintf(f, "set xrange [-0.5:%zu.5]\nset yrange [0:%.0f]\n", ns ? ns - 1 : 0,
            ceil(ymax * 1.12 / 100.0) * 100.0);
    /* Tic labels listed here rather than read with xtic(): a label read
     * from the data is lost where the first series has no number. */
    fprintf(f, "set xtics rotate by 45 right nomirror (");
    for (size_t k = 0; k < ns; k++)
        fprintf(f, "%s'%" PRId64 "x%" PRId64 "' %zu", k ? ", " : "", shapes[k].M, shapes[k].N, k);
    fprintf(f, ")\n");
    fprintf(f, "set ytics nomirror\n"
               "set grid ytics lc rgb '#dddddd'\nset key outside right top\n"
               "set bmargin 7\n");
    fprintf(f, "plot \\\n");
    for (size_t s = 0; s < ps->n; s++) {
        int peer = kb_backend_index(ps->names[s]) < 0 && strncmp(ps->names[s], "tuned:", 6) != 0;
        fprintf(f, "  '%s.dat' using 1:%zu with linespoints lw 2 pt 7 ps 1 dt %d lc rgb '%s' "
                   "title ",
                stem, s + 3, peer ? 2 : 1,
                series_color(ps->names[s], s));
        gp_quoted(f, ps->names[s]);
        fprintf(f, "%s\n", s + 1 < ps->n || isfinite(m->sol_gbps) ? ", \\" : "");
    }
    if (isfinite(m->sol_gbps))
        fprintf(f, "  %.1f with lines dt 3 lw 2 lc rgb '#000000' title 'SOL %.0f GB/s'\n",
                m->sol_gbps, m->sol_gbps);
    fprintf(f, "set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'\n");
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
            plot_series ps = {{0}, 0};
            for (size_t s = 0; s < m->series.n && ps.n < 64; s++)
                for (size_t i = 0; i < m->rows.n; i++) {
                    const kb_result *x = &m->rows.v[i];
                    if (has_gbps(x) && strcmp(x->benchmark, bench) == 0 &&
                        strcmp(x->dtype, dt) == 0 && strcmp(x->backend, m->series.v[s]) == 0) {
                        ps.names[ps.n++] = m->series.v[s];
                        break;
                    }
                }
            kb_mn *shapes;
            size_t ns;
            KB_TRY(kb_report_shapes(m, bench, dt, &shapes, &ns, e));
            double ymax = isfinite(m->sol_gbps) ? m->sol_gbps : 0;
            kb_report_plot_stem(bench, dt, stem, sizeof stem);
            snprintf(path, sizeof path, "%s/%s.dat", pdir, stem);
            kb_status st = write_dat(path, m, bench, dt, shapes, ns, &ps, &ymax, e);
            if (st == KB_OK) {
                snprintf(path, sizeof path, "%s/%s.gp", pdir, stem);
                st = write_gp(path, stem, m, bench, dt, shapes, ns, &ps, ymax, e);
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
