/* What a baseline refresh changed: rows added, and how far the others moved. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "registry.h"
#include "report.h"

typedef struct {
    const kb_baseline_row *row;
    double change;
} moved;

static int by_size(const void *a, const void *b)
{
    double x = fabs(((const moved *)a)->change), y = fabs(((const moved *)b)->change);
    return (x < y) - (x > y);
}

kb_status kb_baseline_diff(FILE *f, const char *old_path, const char *new_path, kb_err *e)
{
    kb_baseline o, n;
    kb_baseline_init(&o);
    kb_baseline_init(&n);
    /* Both files are named by the user: a missing one is an error, not an
     * empty baseline ("0 before, 0 after" would hide a wrong path). */
    int missing = 0;
    static const char hint[] = "--baseline-diff OLD NEW compares two existing baseline files";
    kb_status st = kb_baseline_check_path(old_path, 1, 0, hint, &missing, e);
    if (st == KB_OK) st = kb_baseline_check_path(new_path, 1, 0, hint, &missing, e);
    if (st != KB_OK) return st;
    st = kb_baseline_read(old_path, &o, e);
    if (st == KB_OK) st = kb_baseline_read(new_path, &n, e);
    moved *m = st == KB_OK ? calloc(n.n + 1, sizeof *m) : NULL;
    if (st == KB_OK && !m) st = KB_FAIL(e, KB_ERR_NOMEM, "baseline diff of %s: out of host memory", new_path);
    if (st != KB_OK) {
        kb_baseline_free(&o);
        kb_baseline_free(&n);
        return st;
    }
    /* bins: |change| < 2 %, < 5 %, < 10 %, >= 10 % */
    size_t added = 0, bins[4] = {0, 0, 0, 0}, nm = 0, kept = 0;
    for (size_t i = 0; i < n.n; i++) {
        const kb_baseline_row *r = &n.v[i];
        const kb_baseline_row *was = kb_baseline_find(&o, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K);
        if (!was) {
            added++;
            continue;
        }
        double c = r->gbps / was->gbps - 1.0, a = fabs(c);
        bins[a < 0.02 ? 0 : a < 0.05 ? 1 : a < 0.10 ? 2 : 3]++;
        m[nm++] = (moved){r, c};
    }
    for (size_t i = 0; i < o.n; i++) {
        const kb_baseline_row *r = &o.v[i];
        if (!kb_baseline_find(&n, r->benchmark, r->backend, r->dtype, r->M, r->N, r->K)) kept++;
    }
    fprintf(f, "baseline diff %s -> %s\n", old_path, new_path);
    fprintf(f, "  rows: %zu before, %zu after; %zu added, %zu missing from the new file\n", o.n,
            n.n, added, kept);
    fprintf(f, "  changed GB/s: %zu under 2%%, %zu 2-5%%, %zu 5-10%%, %zu 10%% or more\n", bins[0],
            bins[1], bins[2], bins[3]);
    qsort(m, nm, sizeof *m, by_size);
    for (size_t i = 0; i < nm && i < 10 && fabs(m[i].change) >= 0.02; i++) {
        char shape[72]; /* MxNxK for the 3-D ops: two mlp rows differ only in K */
        kb_shape_format(shape, sizeof shape, m[i].row->M, m[i].row->N, m[i].row->K);
        fprintf(f, "  %+6.1f%%  %s %s %s %s\n", 100 * m[i].change, m[i].row->benchmark,
                m[i].row->backend, m[i].row->dtype, shape);
    }
    free(m);
    kb_baseline_free(&o);
    kb_baseline_free(&n);
    return KB_OK;
}
