/* report.md's "Kernels per call" section: how many kernels each series
 * launched per call (the kernel check's CUPTI trace, results columns
 * kernels / kernel_names / kernel_us) and, where it is more than one (eager's
 * decompositions, the norms' backward with its dw reduction, cuDNN's plans),
 * how the kernel time splits between them. */
#include "report_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DASH "\xe2\x80\x94"

/* Next ';'-separated item of *s into buf; 0 at the end. */
static int next_item(const char **s, char *buf, size_t len)
{
    if (!*s || !**s) return 0;
    const char *end = strchr(*s, ';');
    size_t n = end ? (size_t)(end - *s) : strlen(*s);
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), *s);
    *s = end ? end + 1 : *s + n;
    return 1;
}

size_t kb_report_kernel_split(const kb_result *const *rows, size_t n, kb_kernel_share *out,
                              size_t cap, double *total_us)
{
    size_t k = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *names = rows[i]->kernel_names, *us = rows[i]->kernel_us;
        char name[sizeof out->name], num[40];
        while (next_item(&names, name, sizeof name)) {
            double t = 0;
            if (!next_item(&us, num, sizeof num)) num[0] = '\0';
            char *end = NULL;
            t = strtod(num, &end);
            if (end == num || !isfinite(t) || t < 0) t = 0;
            total += t;
            size_t j = 0;
            while (j < k && strcmp(out[j].name, name) != 0) j++;
            if (j == k) {
                if (k == cap) continue; /* full: counted in the total only */
                snprintf(out[k].name, sizeof out[k].name, "%s", name);
                out[k].us = 0;
                out[k].calls = 0;
                k++;
            }
            out[j].us += t;
            out[j].calls++;
        }
    }
    /* largest share first; ties keep launch order */
    for (size_t a = 1; a < k; a++)
        for (size_t b = a; b > 0 && out[b].us > out[b - 1].us; b--) {
            kb_kernel_share tmp = out[b];
            out[b] = out[b - 1];
            out[b - 1] = tmp;
        }
    if (total_us) *total_us = total;
    return k;
}

static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        if (*s == '<' || *s == '>') { /* no HTML in a Markdown cell */
            fputs(*s == '<' ? "&lt;" : "&gt;", f);
            continue;
        }
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

int kb_report_has_kernels(const kb_report_model *m)
{
    for (size_t i = 0; i < m->rows.n; i++)
        if (m->rows.v[i].kernels > 0) return 1;
    return 0;
}

#define KB_SPLIT_SHOWN 5

static kb_status one_cell(FILE *f, const kb_report_model *m, const char *bench, const char *dt,
                          const char *series, kb_err *e)
{
    size_t nc;
    const kb_result *const *cell = kb_report_index_cell(&m->ix, bench, dt, series, &nc);
    if (!nc) return KB_OK;
    const kb_result **rows = malloc(nc * sizeof *rows);
    if (!rows) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory (kernels section)");
    size_t n = 0, changed = 0;
    int lo = 0, hi = 0;
    for (size_t i = 0; i < nc; i++) { /* the cell's rows in input order */
        const kb_result *x = cell[i];
        if (x->kernels <= 0) continue;
        rows[n++] = x;
        if (!lo || x->kernels < lo) lo = x->kernels;
        if (x->kernels > hi) hi = x->kernels;
        if (strcmp(x->verdict, "FUSION_CHANGED") == 0) changed++;
    }
    if (n) {
        fprintf(f, "| ");
        md_cell(f, bench);
        fprintf(f, " | %s | ", dt);
        md_cell(f, series);
        fprintf(f, " | %zu | ", n);
        if (lo == hi) fprintf(f, "%d", lo);
        else fprintf(f, "%d\xe2\x80\x93%d", lo, hi);
        if (changed) fprintf(f, " (%zu FUSION_CHANGED)", changed);
        fprintf(f, " | ");
        kb_kernel_share sh[64];
        double total = 0;
        size_t k = hi > 1 ? kb_report_kernel_split(rows, n, sh, 64, &total) : 0;
        if (k < 1 || !(total > 0)) {
            fputs(DASH, f);
        } else {
            double rest = total;
            for (size_t j = 0; j < k && j < KB_SPLIT_SHOWN; j++) {
                fputs(j ? " \xc2\xb7 " : "", f);
                md_cell(f, sh[j].name);
                fprintf(f, " %.0f%%", 100 * sh[j].us / total);
                rest -= sh[j].us;
            }
            if (k > KB_SPLIT_SHOWN)
                fprintf(f, " \xc2\xb7 %zu more %.0f%%", k - KB_SPLIT_SHOWN, 100 * rest / total);
        }
        fprintf(f, " |\n");
    }
    free(rows);
    return KB_OK;
}

kb_status kb_report_write_kernels(FILE *f, const kb_report_model *m, kb_err *e)
{
    if (!kb_report_has_kernels(m)) return KB_OK;
    fprintf(f, "## Kernels per call\n\n"
               "Kernels one call launched on the case's stream, traced with CUPTI after timing "
               "(one untimed call, L2 flushed first). A count that differs from the one the "
               "backend declares or its baseline row records fails the case as FUSION_CHANGED. "
               "Split: each kernel's share of the traced kernel time, summed over the shapes "
               "(larger shapes weigh more), for series launching more than one.\n\n");
    fprintf(f, "| benchmark | dtype | backend | shapes | kernels | split of kernel time |\n"
               "|---|---|---|--:|--:|---|\n");
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++)
            for (size_t s = 0; s < m->series.n; s++)
                KB_TRY(one_cell(f, m, m->benches.v[b], m->dtypes.v[d], m->series.v[s], e));
    fprintf(f, "\n");
    return KB_OK;
}
