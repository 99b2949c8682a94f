/* The tuner's search: coordinate descent over a kb_tune_space (move one
 * parameter at a time, keep improvements, as torch inductor's
 * coordinate_descent_tuning does), then a check of every direction,
 * diagonals included, once it converges. Candidates the kernel cannot run
 * are walked past, never timed; each configuration is timed at most once. */
#include "tune_int.h"

#include <math.h>
#include <stdlib.h>

/* Improvement a move must bring: below this, timing noise decides. */
#define SEARCH_MIN_GAIN 0.01

/* ---- coordinate descent ------------------------------------------------------ */

typedef struct {
    kb_tune_cfg c;
    double cost;
} evaluated;

static int cfg_eq(const kb_tune_space *sp, const kb_tune_cfg *a, const kb_tune_cfg *b)
{
    for (int i = 0; i < sp->nparams; i++)
        if (a->v[i] != b->v[i]) return 0;
    return 1;
}

int kb_tune_valid(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                    const kb_tune_cfg *c)
{
    return !sp->valid || sp->valid(p, ctx, c);
}

/* Index of v among parameter i's choices, -1 if absent. */
static int choice_index(const kb_tune_space *sp, int i, int v)
{
    for (int k = 0; k < sp->nchoices[i]; k++)
        if (sp->choices[i][k] == v) return k;
    return -1;
}

/* c with parameter i changed is invalid: make it valid by changing one other
 * parameter as little as possible (nearest choice in the list's order
 * first). Kernels whose parameters only mean something in one design (a
 * streaming unroll, say) make the plain neighbour invalid across designs;
 * without the repair the search could never cross from one design to the
 * other. 1 and *c repaired, or 0. */
static int repair(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx, int i,
                  kb_tune_cfg *c)
{
    for (int d = 1; d < KB_TUNE_MAX_CHOICES; d++)
        for (int j = 0; j < sp->nparams; j++) {
            const int at = choice_index(sp, j, c->v[j]);
            if (j == i || at < 0) continue;
            for (int s = -1; s <= 1; s += 2) {
                const int k = at + s * d;
                if (k < 0 || k >= sp->nchoices[j]) continue;
                kb_tune_cfg r = *c;
                r.v[j] = sp->choices[j][k];
                if (kb_tune_valid(sp, p, ctx, &r)) {
                    *c = r;
                    return 1;
                }
            }
        }
    return 0;
}

/* Nearest valid choice of parameter i strictly below (dir < 0) or above
 * (dir > 0) the value in c; failing that, the nearest one that repair()
 * makes valid; 0 when there is none. Choices need not be sorted. */
static int neighbour(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                     const kb_tune_cfg *c, int i, int dir, kb_tune_cfg *out)
{
    const int cur = c->v[i];
    for (int fix = 0; fix <= 1; fix++) {
        int tried[KB_TUNE_MAX_CHOICES] = {0};
        for (;;) {
            int pick = -1;
            for (int k = 0; k < sp->nchoices[i]; k++) {
                const int v = sp->choices[i][k];
                if (tried[k] || (dir < 0 ? v >= cur : v <= cur)) continue;
                if (pick < 0 || (dir < 0 ? v > sp->choices[i][pick] : v < sp->choices[i][pick]))
                    pick = k;
            }
            if (pick < 0) break;
            tried[pick] = 1;
            *out = *c;
            out->v[i] = sp->choices[i][pick];
            if (fix ? repair(sp, p, ctx, i, out) : kb_tune_valid(sp, p, ctx, out)) return 1;
        }
    }
    return 0;
}

/* Nearest choice of parameter i strictly below (dir < 0) or above the
 * value v, validity aside; 0 when there is none. */
static int step_value(const kb_tune_space *sp, int i, int v, int dir, int *out)
{
    int found = 0;
    for (int k = 0; k < sp->nchoices[i]; k++) {
        const int w = sp->choices[i][k];
        if (dir < 0 ? w >= v : w <= v) continue;
        if (!found || (dir < 0 ? w > *out : w < *out)) *out = w;
        found = 1;
    }
    return found;
}

/* A diagonal whose one-step values are invalid together may become valid
 * further along the same directions: the norm backward's db=1 needs NV <= 2
 * packs per thread, so from (threads 128, acc 1, db 0) at a long row the
 * diagonal (256, 0, 1) is invalid while (256, 0, 2) is the best layout
 * (H200, 2026-12-04: docs/dev/tuning.md). Walk one moved parameter at a time
 * further in its own direction, the nearest extra distance first, parameter
 * order breaking ties; 1 and *c the first valid one, or 0. */
static int skip_invalid(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                        unsigned set, const int *dir, kb_tune_cfg *c)
{
    for (int extra = 1; extra < KB_TUNE_MAX_CHOICES; extra++) {
        int any = 0; /* some moved parameter still had choices this far on */
        for (int i = 0; i < sp->nparams; i++) {
            if (!(set & (1u << i))) continue;
            kb_tune_cfg r = *c;
            int ok = 1;
            for (int k = 0; k < extra && ok; k++) ok = step_value(sp, i, r.v[i], dir[i], &r.v[i]);
            if (!ok) continue;
            any = 1;
            if (kb_tune_valid(sp, p, ctx, &r)) {
                *c = r;
                return 1;
            }
        }
        if (!any) break;
    }
    return 0;
}

static int popcount(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

int kb_tune_diagonals(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                      const kb_tune_cfg *c, kb_tune_cfg *out, int max)
{
    int n = 0;
    const unsigned all = (1u << sp->nparams) - 1;
    for (int k = 2; k <= sp->nparams; k++)
        for (unsigned set = 1; set <= all; set++) {
            if (popcount(set) != k) continue;
            /* dirs: bit j of the moved parameters' order set = step up */
            for (unsigned dirs = 0; dirs < (1u << k); dirs++) {
                kb_tune_cfg cand = *c;
                int ok = 1, dir[KB_TUNE_MAX_PARAMS] = {0};
                for (int i = 0, j = 0; i < sp->nparams && ok; i++) {
                    if (!(set & (1u << i))) continue;
                    dir[i] = (dirs >> j++) & 1 ? 1 : -1;
                    ok = step_value(sp, i, c->v[i], dir[i], &cand.v[i]);
                }
                if (!ok) continue;
                if (!kb_tune_valid(sp, p, ctx, &cand)) {
                    if (!skip_invalid(sp, p, ctx, set, dir, &cand)) continue;
                    int dup = 0; /* another diagonal may have walked to it */
                    for (int m = 0; m < n && !dup; m++) dup = cfg_eq(sp, &out[m], &cand);
                    if (dup) continue;
                }
                if (n >= max) return n;
                out[n++] = cand;
            }
        }
    return n;
}

typedef struct {
    evaluated *seen;
    int n, cap;
} memo;

/* Cost of c, evaluated at most once; 0 in *done when the budget is spent. */
static kb_status evaluate(memo *m, const kb_tune_space *sp, const kb_tune_cfg *cand,
                          kb_tune_cost_fn cost, void *arg, double *out, int *done, kb_err *e)
{
    kb_tune_cfg canon = *cand; /* one kernel, one evaluation */
    if (sp->canon) sp->canon(&canon);
    const kb_tune_cfg *c = &canon;
    for (int k = 0; k < m->n; k++)
        if (cfg_eq(sp, &m->seen[k].c, c)) {
            *out = m->seen[k].cost;
            *done = 1;
            return KB_OK;
        }
    if (m->n >= m->cap) {
        *done = 0;
        return KB_OK;
    }
    double v = INFINITY;
    KB_TRY(cost(arg, c, &v, e));
    if (!(v >= 0) || isnan(v)) v = INFINITY;
    m->seen[m->n].c = *c;
    m->seen[m->n].cost = v;
    m->n++;
    *out = v;
    *done = 1;
    return KB_OK;
}

kb_status kb_tune_search(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                         const kb_tune_cfg *start, kb_tune_cost_fn cost, void *arg,
                         int max_evals, kb_tune_cfg *best, double *best_cost, int *evals,
                         kb_err *e)
{
    if (max_evals < 1) max_evals = 1;
    if (!kb_tune_valid(sp, p, ctx, start))
        return KB_FAIL(e, KB_ERR_ARG, "%s: search start is not a valid configuration", sp->op);
    memo m = {calloc((size_t)max_evals, sizeof(evaluated)), 0, max_evals};
    kb_tune_cfg *diag = calloc(KB_TUNE_MAX_DIAGONALS, sizeof *diag);
    if (!m.seen || !diag) {
        free(m.seen);
        free(diag);
        return KB_FAIL(e, KB_ERR_NOMEM, "%s: tuning search: out of host memory", sp->op);
    }
    kb_tune_cfg cur = *start;
    double cur_cost = INFINITY;
    int done = 1;
    kb_status st = evaluate(&m, sp, &cur, cost, arg, &cur_cost, &done, e);
    for (int jumped = 1; st == KB_OK && done && jumped;) {
        for (int moved = 1; st == KB_OK && moved;) {
            moved = 0;
            for (int i = 0; i < sp->nparams && st == KB_OK; i++) {
                kb_tune_cfg pick = cur;
                double pick_cost = cur_cost;
                for (int dir = -1; dir <= 1; dir += 2) {
                    kb_tune_cfg cand;
                    double c;
                    if (!neighbour(sp, p, ctx, &cur, i, dir, &cand)) continue;
                    st = evaluate(&m, sp, &cand, cost, arg, &c, &done, e);
                    if (st != KB_OK || !done) break;
                    if (c < pick_cost) {
                        pick = cand;
                        pick_cost = c;
                    }
                }
                if (st == KB_OK && pick_cost < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                    cur = pick;
                    cur_cost = pick_cost;
                    moved = 1;
                }
                if (!done) {
                    moved = 0;
                    break;
                }
            }
        }
        /* One-step moves stop at a local minimum: a far choice stays out of
         * reach when the steps towards it are worse (measured on the H200:
         * tall norm forwards gain 4-6 % at occ=0, nine choices from
         * occ=32, and nothing at occ=4 or 8 on the way). So each parameter's first and
         * last choice is tried too, the others as they are; an improvement
         * restarts the descent from there. */
        jumped = 0;
        for (int i = 0; i < sp->nparams && st == KB_OK && done && !jumped; i++) {
            for (int end = 0; end < 2 && st == KB_OK && done; end++) {
                kb_tune_cfg cand = cur;
                double c;
                cand.v[i] = sp->choices[i][end ? sp->nchoices[i] - 1 : 0];
                if (cand.v[i] == cur.v[i] || !kb_tune_valid(sp, p, ctx, &cand)) continue;
                st = evaluate(&m, sp, &cand, cost, arg, &c, &done, e);
                if (st == KB_OK && done && c < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                    cur = cand;
                    cur_cost = c;
                    jumped = 1;
                    break;
                }
            }
        }
        /* Converged along every axis: check all directions at once (moves
         * that pay only together, e.g. more threads with fewer rows per CTA
         * when threads x rows is capped). */
        if (!jumped && st == KB_OK && done && diag) {
            const int nd = kb_tune_diagonals(sp, p, ctx, &cur, diag, KB_TUNE_MAX_DIAGONALS);
            kb_tune_cfg pick = cur;
            double pick_cost = cur_cost;
            for (int k = 0; k < nd && st == KB_OK && done; k++) {
                double c;
                st = evaluate(&m, sp, &diag[k], cost, arg, &c, &done, e);
                if (st == KB_OK && done && c < pick_cost) {
                    pick = diag[k];
                    pick_cost = c;
                }
            }
            if (st == KB_OK && pick_cost < cur_cost * (1.0 - SEARCH_MIN_GAIN)) {
                cur = pick;
                cur_cost = pick_cost;
                jumped = 1;
            }
        }
    }
    if (st == KB_OK) {
        *best = cur;
        if (sp->canon) sp->canon(best);
        *best_cost = cur_cost;
        if (evals) *evals = m.n;
    }
    free(m.seen);
    free(diag);
    return st;
}
