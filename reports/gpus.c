/* GPU models side by side: what moving to another card did.
 *
 * Results of several GPUs given together (a run on each, merged) are
 * compared per (benchmark, dtype, backend) over the cases every GPU timed:
 * the geomean % of each GPU's own SOL (its copy bandwidth; for the MLP
 * block's GEMMs its measured TFLOP/s peak), so a card with more bandwidth
 * is not credited for it, and the geomean GB/s, whose ratio is the speed a
 * user gains or loses by the move. Only randn cases count (an input kind
 * tests numerics; its speed is the randn case's), and of a GPU's several
 * rows for one case the later input's, as everywhere in the report.
 *
 * Computed from the input rows before deduplication: the rest of the report
 * keys rows without their GPU, so the later GPU's row of a case replaces
 * the earlier's there. CUDA-free, unit tested (tests/unit/test_report_*). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

typedef struct {
    const kb_result *x;
    size_t pos, gpu;
    double gbps, sol_pct; /* as the report derives them; both finite */
} gpu_item;

static size_t gpu_index(const kb_report_gpu_cmp *c, const char *gpu)
{
    for (size_t g = 0; g < c->ngpu; g++)
        if (strcmp(c->gpu[g], gpu) == 0) return g;
    return c->ngpu;
}

static int case_cmp(const kb_result *a, const kb_result *b)
{
    int d = strcmp(a->benchmark, b->benchmark);
    if (!d) d = strcmp(a->dtype, b->dtype);
    if (!d) d = strcmp(a->backend, b->backend);
    if (!d) d = (a->M > b->M) - (a->M < b->M);
    if (!d) d = (a->N > b->N) - (a->N < b->N);
    if (!d) d = (a->K > b->K) - (a->K < b->K);
    return d;
}

static int cell_cmp(const kb_result *a, const kb_result *b)
{
    int d = strcmp(a->benchmark, b->benchmark);
    if (!d) d = strcmp(a->dtype, b->dtype);
    if (!d) d = strcmp(a->backend, b->backend);
    return d;
}

/* By case, then GPU, then input position (the later row of a GPU last). */
static int item_cmp(const void *pa, const void *pb)
{
    const gpu_item *a = pa, *b = pb;
    int d = case_cmp(a->x, b->x);
    if (!d) d = (a->gpu > b->gpu) - (a->gpu < b->gpu);
    if (!d) d = (a->pos > b->pos) - (a->pos < b->pos);
    return d;
}

static int row_first_cmp(const void *pa, const void *pb)
{
    const kb_report_gpu_row *a = pa, *b = pb;
    return (a->first > b->first) - (a->first < b->first);
}

/* A row's % of its own GPU's SOL: the column kbench wrote, else from the
 * row's SOL; NaN when neither is known. (The rest of the report takes the
 * input's median SOL when a row has none: one figure for all its rows,
 * which for several GPUs would be none of theirs.) */
static double own_sol_pct(const kb_result *x, double gbps)
{
    if (isfinite(x->sol_pct) && x->sol_pct > 0) return x->sol_pct;
    if (isfinite(x->sol_gbps) && x->sol_gbps > 0) return 100.0 * gbps / x->sol_gbps;
    return NAN;
}

kb_status kb_report_gpu_cmp_build(const kb_results *r, kb_report_gpu_cmp *c, kb_err *e)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < r->n; i++) {
        const kb_result *x = &r->v[i];
        if (!x->gpu[0] || gpu_index(c, x->gpu) < c->ngpu) continue;
        if (c->ngpu == KB_REPORT_GPUS_MAX) {
            c->more = 1;
            continue;
        }
        snprintf(c->gpu[c->ngpu++], sizeof c->gpu[0], "%s", x->gpu);
    }
    if (c->ngpu < 2) return KB_OK;
    gpu_item *it = malloc((r->n ? r->n : 1) * sizeof *it);
    if (!it) return KB_FAIL(e, KB_ERR_NOMEM, "GPU comparison: out of host memory");
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const kb_result *x = &r->v[i];
        const char *kind;
        if (!x->gpu[0] || kb_report_inputs_of(x, &kind) != 0) continue;
        const double gbps = kb_report_row_gbps(x), pct = own_sol_pct(x, gbps);
        const size_t g = gpu_index(c, x->gpu);
        if (g < c->ngpu && isfinite(gbps) && isfinite(pct)) it[n++] = (gpu_item){x, i, g, gbps, pct};
    }
    qsort(it, n, sizeof *it, item_cmp);
    kb_status st = KB_OK;
    size_t cap = 0;
    for (size_t i = 0; i < n && st == KB_OK;) {
        size_t j = i;
        while (j < n && case_cmp(it[i].x, it[j].x) == 0) j++;
        /* The case's last row of each GPU; counted when every GPU has one. */
        const gpu_item *per[KB_REPORT_GPUS_MAX] = {0};
        for (size_t k = i; k < j; k++) per[it[k].gpu] = &it[k];
        int all = 1;
        for (size_t g = 0; g < c->ngpu; g++) all &= per[g] != NULL;
        if (all) {
            kb_report_gpu_row *row = c->n ? &c->v[c->n - 1] : NULL;
            if (!row || cell_cmp(row->x, it[i].x) != 0) {
                if (c->n == cap) {
                    cap = cap ? 2 * cap : 16;
                    kb_report_gpu_row *v = realloc(c->v, cap * sizeof *v);
                    if (!v) {
                        st = KB_FAIL(e, KB_ERR_NOMEM, "GPU comparison: out of host memory");
                        break;
                    }
                    c->v = v;
                }
                row = &c->v[c->n++];
                memset(row, 0, sizeof *row);
                row->x = it[i].x;
                row->first = it[i].pos;
            }
            for (size_t g = 0; g < c->ngpu; g++) {
                row->log_sol[g] += log(per[g]->sol_pct);
                row->log_gbps[g] += log(per[g]->gbps);
            }
            row->cases++;
            for (size_t k = i; k < j; k++)
                if (it[k].pos < row->first) row->first = it[k].pos;
        }
        i = j;
    }
    free(it);
    if (st != KB_OK) {
        kb_report_gpu_cmp_free(c);
        return st;
    }
    /* The input's order of cells (its first row of each), as the report's.
     * No cell (GPUs without a case in common) leaves c->v NULL, which qsort
     * must not be given even with a count of 0. */
    if (c->n > 1) qsort(c->v, c->n, sizeof *c->v, row_first_cmp);
    return KB_OK;
}

void kb_report_gpu_cmp_free(kb_report_gpu_cmp *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

double kb_report_gpu_cmp_sol(const kb_report_gpu_row *row, size_t g)
{
    return exp(row->log_sol[g] / (double)row->cases);
}

double kb_report_gpu_cmp_gbps(const kb_report_gpu_row *row, size_t g)
{
    return exp(row->log_gbps[g] / (double)row->cases);
}

void kb_report_write_gpu_cmp(FILE *f, const kb_report_gpu_cmp *c)
{
    if (c->ngpu < 2) return;
    fprintf(f, "## GPU models side by side\n\n");
    if (!c->n) {
        fprintf(f, "The input holds rows of %zu GPUs but no timed case that every one of them "
                   "ran: nothing to compare.\n\n",
                c->ngpu);
        return;
    }
    fprintf(f, "Per benchmark, dtype and backend, over the cases (shapes) that every GPU timed: "
               "the geomean %% of each GPU's own SOL (copy bandwidth; the GEMM peak for the MLP "
               "block), the geomean GB/s, and the GB/s of "
               "each GPU over the first's. The sections below show each case's row from the "
               "later input only.%s\n\n",
            c->more ? " Only the first four GPUs of the input are compared." : "");
    fprintf(f, "| benchmark | dtype | backend | cases |");
    for (size_t g = 0; g < c->ngpu; g++) fprintf(f, " %% SOL %s |", c->gpu[g]);
    for (size_t g = 0; g < c->ngpu; g++) fprintf(f, " GB/s %s |", c->gpu[g]);
    for (size_t g = 1; g < c->ngpu; g++) fprintf(f, " %s / %s |", c->gpu[g], c->gpu[0]);
    fprintf(f, "\n|---|---|---|--:|");
    for (size_t g = 0; g < 3 * c->ngpu - 1; g++) fprintf(f, "--:|");
    fprintf(f, "\n");
    for (size_t i = 0; i < c->n; i++) {
        const kb_report_gpu_row *row = &c->v[i];
        fprintf(f, "| %s | %s | %s | %zu |", row->x->benchmark, row->x->dtype, row->x->backend,
                row->cases);
        for (size_t g = 0; g < c->ngpu; g++) fprintf(f, " %.1f%% |", kb_report_gpu_cmp_sol(row, g));
        for (size_t g = 0; g < c->ngpu; g++) fprintf(f, " %.0f |", kb_report_gpu_cmp_gbps(row, g));
        for (size_t g = 1; g < c->ngpu; g++)
            fprintf(f, " %.2fx |", kb_report_gpu_cmp_gbps(row, g) / kb_report_gpu_cmp_gbps(row, 0));
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}
