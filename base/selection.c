/* What a selection holds: the cases it runs, in run order
 * (kb_selection_foreach), and the checks that it runs something
 * (kb_cli_check_selection), before any GPU work. Apart from cli.c, which
 * parses the command line into the selection, because these walk the
 * registry's benchmarks, backends, input kinds and shapes. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Does benchmark b have one of the selected backends (any, when none is given)? */
static int has_backend(const kb_options *o, int any_backend, int b)
{
    for (int be = 0; be < KB_NUM_BACKENDS; be++)
        if ((!any_backend || o->backend[be]) && kb_impl_get((kb_bench_id)b, kb_backend_name(be)))
            return 1;
    return 0;
}

/* Does benchmark b take one of the --shape sizes (any, when none is given)?
 * If not, why names the first refusal. */
static int takes_shape(const kb_options *o, int b, kb_err *why)
{
    if (!o->nshapes) return 1;
    for (int i = 0; i < o->nshapes; i++) {
        kb_err w;
        if (kb_shape_check((kb_bench_id)b, &o->shapes[i], &w) == KB_OK) return 1;
        if (i == 0) *why = w;
    }
    return 0;
}

/* Each of --backend and --shape may be taken by some selected benchmark while
 * no benchmark takes both (softmax_forward mlp_forward --backend
 * cublaslt_epilogue --shape 4x4): every benchmark then drops one or the other
 * and the run is of nothing. A benchmark that takes only one is passed over,
 * as --all --shape MxN passes over the MxNxK benchmarks. */
static kb_status check_together(const kb_options *o, int any_backend, kb_err *e)
{
    int first = -1;
    kb_err why = {{0}};
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        if (!o->bench[b] || !has_backend(o, any_backend, b)) continue;
        kb_err w = {{0}};
        if (takes_shape(o, b, &w)) return KB_OK;
        if (first < 0) {
            first = b;
            why = w;
        }
    }
    if (first < 0) return KB_OK; /* no backend at all: the checks above said so */
    return KB_FAIL(e, KB_ERR_ARG,
                   "--backend and --shape select no case together: %s, and no selected "
                   "benchmark that takes the shape has the backend (--list shows each one's "
                   "backends)",
                   why.msg);
}

/* ---- the cases a selection holds --------------------------------------------- */
/* One benchmark and backend in dtype d over a shape list: a shape the
 * benchmark does not take (--shape names sizes for one kind of op, MxN or
 * MxNxK) is passed over, with why. The number of cases. */
static int each_shape(kb_case c, const kb_shape *shapes, size_t n, kb_dtype d,
                      kb_selection_fn fn, void *arg)
{
    int cases = 0;
    for (size_t i = 0; i < n; i++) {
        kb_err why;
        c.p.dtype = d;
        c.p.M = shapes[i].M;
        c.p.N = shapes[i].N;
        c.p.K = shapes[i].K;
        const int takes = kb_shape_check(c.p.bench, &shapes[i], &why) == KB_OK;
        if (fn) fn(&c, takes ? NULL : &why, arg);
        cases += takes;
    }
    return cases;
}

/* A non-randn input kind: its registered shapes and dtypes, unless --shape
 * or --dtype choose; benchmarks it does not apply to have none of its cases. */
static int each_kind_case(const kb_options *o, kb_case c, int any_dtype, kb_selection_fn fn,
                          void *arg)
{
    int cases = 0;
    if (!kb_inputs_apply(c.inputs, c.p.bench)) return 0;
    c.set = KB_SHAPES_INPUTS;
    for (int d = 0; d < KB_NUM_DTYPES; d++) {
        if (any_dtype ? !o->dtype[d] : !kb_inputs_dtype(c.inputs, (kb_dtype)d)) continue;
        const kb_shape *list = o->shapes;
        size_t n = (size_t)o->nshapes;
        if (!n) n = kb_shapes(c.p.bench, KB_SHAPES_INPUTS, &list);
        cases += each_shape(c, list, n, (kb_dtype)d, fn, arg);
    }
    return cases;
}

int kb_selection_foreach(const kb_options *o, kb_selection_fn fn, void *arg)
{
    int any_inputs = 0, any_backend = 0, any_dtype = 0, cases = 0;
    for (int k = 1; k < KB_NUM_INPUTS; k++) any_inputs |= o->inputs[k];
    for (int i = 0; i < KB_NUM_BACKENDS; i++) any_backend |= o->backend[i];
    for (int i = 0; i < KB_NUM_DTYPES; i++) any_dtype |= o->dtype[i];
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        if (!o->bench[b]) continue;
        for (int be = 0; be < KB_NUM_BACKENDS; be++) {
            if (any_backend && !o->backend[be]) continue;
            kb_case c = {{(kb_bench_id)b, KB_BF16, 0, 0}, kb_impl_get((kb_bench_id)b, kb_backend_name(be)),
                         kb_backend_name(be), KB_SHAPES_DEFAULT, KB_INPUTS_RANDN};
            if (!c.impl) continue;
            for (int k = 1; k < KB_NUM_INPUTS; k++) {
                if (!o->inputs[k]) continue;
                c.inputs = (kb_inputs)k;
                cases += each_kind_case(o, c, any_dtype, fn, arg);
            }
            c.inputs = KB_INPUTS_RANDN;
            if (any_inputs && !o->inputs[KB_INPUTS_RANDN]) continue;
            for (int d = 0; d < KB_NUM_DTYPES; d++) {
                if (any_dtype ? !o->dtype[d] : d != KB_BF16) continue;
                const kb_shape *list;
                size_t n;
                if (o->nshapes) {
                    cases += each_shape(c, o->shapes, (size_t)o->nshapes, (kb_dtype)d, fn, arg);
                    continue;
                }
                n = kb_shapes((kb_bench_id)b, KB_SHAPES_DEFAULT, &list);
                cases += each_shape(c, list, n, (kb_dtype)d, fn, arg);
                if (o->sweep_odd) {
                    n = kb_shapes((kb_bench_id)b, KB_SHAPES_ODD, &list);
                    cases += each_shape(c, list, n, (kb_dtype)d, fn, arg);
                }
            }
            if (o->sweep_short && !o->nshapes) {
                const kb_shape *list;
                size_t n = kb_shapes((kb_bench_id)b, KB_SHAPES_SHORT, &list);
                cases += each_shape(c, list, n, KB_FP16, fn, arg);
                cases += each_shape(c, list, n, KB_FP32, fn, arg);
            }
        }
    }
    return cases;
}

/* An --inputs kind that applies to none of the selected benchmarks
 * (softmax_forward --inputs small) would run none of its cases: refuse it,
 * naming the kinds each benchmark does take, as kbench --case NAME.small
 * refuses the case. A kind that applies to some selected benchmarks runs
 * there. */
static kb_status check_inputs(const kb_options *o, kb_err *e)
{
    for (int k = 1; k < KB_NUM_INPUTS; k++) {
        if (!o->inputs[k]) continue;
        int applies = 0;
        for (int b = 0; b < KB_NUM_BENCH; b++)
            applies |= o->bench[b] && kb_inputs_apply((kb_inputs)k, (kb_bench_id)b);
        if (applies) continue;
        char kinds[640] = "";
        for (int b = 0; b < KB_NUM_BENCH; b++) {
            if (!o->bench[b]) continue;
            snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s takes",
                     kinds[0] ? "; " : "", kb_bench_info_get((kb_bench_id)b)->name);
            for (int a = 0, n = 0; a < KB_NUM_INPUTS; a++)
                if (kb_inputs_apply((kb_inputs)a, (kb_bench_id)b))
                    snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s %s",
                             n++ ? "," : "", kb_inputs_name((kb_inputs)a));
        }
        return KB_FAIL(e, KB_ERR_ARG,
                       "--inputs %s: the kind applies to none of the selected benchmarks (%s)",
                       kb_inputs_name((kb_inputs)k), kinds);
    }
    return KB_OK;
}

void kb_selection_backends(const kb_options *o, char *buf, size_t len)
{
    int nsel = 0, one = -1;
    for (int b = 0; b < KB_NUM_BENCH; b++)
        if (o->bench[b] && nsel++ == 0) one = b;
    size_t at = (size_t)snprintf(buf, len, "%s%s ",
                                 nsel == 1 ? kb_bench_info_get((kb_bench_id)one)->name
                                 : nsel    ? "the selected benchmarks"
                                           : "the backends",
                                 nsel == 1 ? " has" : nsel ? " have" : " are");
    const char *sep = "";
    for (int be = 0; be < KB_NUM_BACKENDS && at < len; be++) {
        int has = 0;
        for (int b = 0; b < KB_NUM_BENCH && !has; b++)
            has = (!nsel || o->bench[b]) && kb_impl_get((kb_bench_id)b, kb_backend_name(be));
        if (!has) continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, kb_backend_name(be));
        sep = ", ";
    }
}

kb_status kb_cli_check_selection(const kb_options *o, kb_err *e)
{
    /* A --backend that no selected benchmark has (softmax_forward --backend
     * cublaslt_epilogue) would run nothing and pass: refuse it, as --list
     * would show. */
    int any_backend = 0, runnable = 0;
    for (int be = 0; be < KB_NUM_BACKENDS; be++) any_backend |= o->backend[be];
    for (int b = 0; b < KB_NUM_BENCH && !runnable; b++)
        runnable = o->bench[b] && has_backend(o, any_backend, b);
    if (any_backend && !runnable) {
        char names[128] = "", have[256];
        for (int be = 0; be < KB_NUM_BACKENDS; be++)
            if (o->backend[be])
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         names[0] ? "," : "", kb_backend_name(be));
        kb_selection_backends(o, have, sizeof have);
        return KB_FAIL(e, KB_ERR_ARG, "--backend %s: no selected benchmark has it (%s)", names,
                       have);
    }
    /* A --shape no selected benchmark takes (MxN for mlp_forward alone) would
     * be passed over by every benchmark: a run of nothing, found only after
     * the GPU is opened. Refuse it here, like any bad value. */
    for (int i = 0; i < o->nshapes; i++) {
        int takes = 0, nsel = 0;
        kb_err first = {{0}};
        for (int b = 0; b < KB_NUM_BENCH && !takes; b++) {
            if (!o->bench[b]) continue;
            kb_err why;
            if (kb_shape_check((kb_bench_id)b, &o->shapes[i], &why) == KB_OK) takes = 1;
            else if (nsel++ == 0) first = why;
        }
        if (takes) continue;
        if (nsel == 1) return KB_FAIL(e, KB_ERR_ARG, "--shape: %s", first.msg);
        char buf[72];
        kb_shape_format(buf, sizeof buf, o->shapes[i].M, o->shapes[i].N, o->shapes[i].K);
        return KB_FAIL(e, KB_ERR_ARG, "--shape %s: no selected benchmark takes %s sizes", buf,
                       o->shapes[i].K ? "three" : "two");
    }
    KB_TRY(check_together(o, any_backend, e));
    KB_TRY(check_inputs(o, e));
    /* Whatever else leaves the selection empty (an --inputs kind on one
     * benchmark and a --backend or --shape only another takes): a run of
     * nothing would print "0 passed, 0 failed" and pass. */
    if (kb_selection_foreach(o, NULL, NULL) == 0)
        return KB_FAIL(e, KB_ERR_ARG,
                       "the selection holds no case: no selected benchmark has the --backend, "
                       "--inputs kind and --shape given together (--list shows each one's "
                       "backends, --describe its input kinds and sizes)");
    return KB_OK;
}
