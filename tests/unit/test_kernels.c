/* The kernel check without a GPU: the FUSION_CHANGED rule, what each backend
 * declares, kernel names, the kernel columns of baselines, the reasons the
 * check gives when CUPTI is missing, the KBENCH_TEST_SPLIT knob. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "kernel_check.h"
#include "kernel_trace.h"
#include "knobs.h"
#include "registry.h"
#include "rows.h"
#include "tmpfiles.h"
#include "unit.h"

/* ---- the rule ------------------------------------------------------------------ */
START_TEST(changed_rule)
{
    char why[512];
    /* same as declared and as recorded */
    ck_assert_int_eq(kb_kernels_changed(2, 2, 2, "a;b", why, sizeof why), 0);
    ck_assert_msg(strstr(why, "2 kernels per call") && strstr(why, "declares 2") &&
                      strstr(why, "records 2") && !strstr(why, "differs"),
                  "%s", why);
    /* a split fused kernel: differs from both, both lists named */
    ck_assert_int_eq(kb_kernels_changed(2, 1, 1, "fwd_reg<float>", why, sizeof why), 1);
    ck_assert_msg(strstr(why, "declares 1 (differs)") && strstr(why, "records 1, differs") &&
                      strstr(why, "(fwd_reg<float>)"),
                  "%s", why);
    /* declared only (no baseline count yet) */
    ck_assert_int_eq(kb_kernels_changed(1, 1, 0, NULL, why, sizeof why), 0);
    ck_assert_int_eq(kb_kernels_changed(3, 2, 0, NULL, why, sizeof why), 1);
    ck_assert_ptr_null(strstr(why, "baseline"));
    /* cuDNN: nothing declared, the baseline is the reference */
    ck_assert_int_eq(kb_kernels_changed(3, 0, 3, "x;y;z", why, sizeof why), 0);
    ck_assert_int_eq(kb_kernels_changed(2, 0, 3, "x;y;z", why, sizeof why), 1);
    ck_assert_ptr_null(strstr(why, "declares"));
    /* a stale baseline fails even when the declaration agrees: refresh it */
    ck_assert_int_eq(kb_kernels_changed(1, 1, 2, "", why, sizeof why), 1);
    ck_assert_msg(strstr(why, "no names"), "%s", why);
    /* nothing to compare with: recorded, never a failure */
    ck_assert_int_eq(kb_kernels_changed(4, 0, 0, NULL, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "nothing to compare"), "%s", why);
    /* a tiny buffer is cut, not overrun */
    char small[8];
    ck_assert_int_eq(kb_kernels_changed(2, 1, 1, "long;names", small, sizeof small), 1);
    ck_assert_uint_lt(strlen(small), sizeof small);
}
END_TEST

/* ---- declarations: what each backend run enqueues (kernels/<op>/ files) ------ */
static const struct {
    kb_bench_id bench;
    const char *backend;
    int kernels;
} declared[] = {
    {KB_CE_FWD, "eager", 2},        /* log_softmax + nll gather              */
    {KB_CE_BWD, "eager", 3},        /* logp, nll scatter, log_softmax bwd    */
    {KB_SOFTMAX_FWD, "eager", 1},   {KB_SOFTMAX_BWD, "eager", 1},
    {KB_RMSNORM_FWD, "eager", 8},   /* the fp32 chain, one kernel per op     */
    {KB_RMSNORM_BWD, "eager", 15},
    {KB_LAYERNORM_FWD, "eager", 3}, /* cast, layer_norm, cast                */
    {KB_LAYERNORM_BWD, "eager", 6},
    {KB_CE_FWD, "fused", 1},        {KB_CE_BWD, "fused", 1},
    {KB_SOFTMAX_FWD, "fused", 1},   {KB_SOFTMAX_BWD, "fused", 1},
    {KB_RMSNORM_FWD, "fused", 1},   {KB_RMSNORM_BWD, "fused", 2}, /* + dw reduction */
    {KB_LAYERNORM_FWD, "fused", 1}, {KB_LAYERNORM_BWD, "fused", 2},
    {KB_GEGLU_FWD, "eager", 2},     /* act, mul                               */
    {KB_GEGLU_BWD, "eager", 4},     /* act (recompute), 2 mul, act backward   */
    {KB_SWIGLU_FWD, "eager", 2},    {KB_SWIGLU_BWD, "eager", 4},
    {KB_GEGLU_FWD, "fused", 1},     {KB_GEGLU_BWD, "fused", 1},
    {KB_SWIGLU_FWD, "fused", 1},    {KB_SWIGLU_BWD, "fused", 1},
};

START_TEST(backends_declare)
{
    const kb_impl *impl = kb_impl_get(declared[_i].bench, declared[_i].backend);
    ck_assert_ptr_nonnull(impl);
    ck_assert_ptr_nonnull(impl->kernels);
    const kb_problem p = {declared[_i].bench, KB_BF16, 32768, 4096};
    ck_assert_int_eq(impl->kernels(&p, NULL), declared[_i].kernels);
}
END_TEST

/* Every eager, fused and tuned implementation declares; cuDNN does not (its
 * plan is cuDNN's choice: the baseline records it). */
START_TEST(who_declares)
{
    for (int b = 0; b < KB_NUM_BENCH; b++)
        for (int be = 0; be < KB_NUM_BACKENDS; be++) {
            const kb_impl *impl = kb_impl_get((kb_bench_id)b, kb_backend_name(be));
            if (!impl) continue;
            /* mlp_forward's GEMMs are cuBLASLt's plans (its kernel count is
             * the library's), like cuDNN's. */
            if (strcmp(impl->backend, "cudnn") == 0 || b == KB_MLP_FWD ||
                b == KB_MLP_SWIGLU_FWD)
                ck_assert_ptr_null(impl->kernels);
            else
                ck_assert_msg(impl->kernels != NULL, "%s %s declares no kernel count",
                              kb_bench_info_get((kb_bench_id)b)->name, impl->backend);
        }
    /* tuned without a setup state: nothing to say */
    const kb_impl *t = kb_impl_get(KB_SOFTMAX_FWD, "tuned");
    ck_assert_ptr_nonnull(t);
    const kb_problem p = {KB_SOFTMAX_FWD, KB_BF16, 32768, 4096};
    ck_assert_int_eq(t->kernels(&p, NULL), 0);
}
END_TEST

/* ---- names ------------------------------------------------------------------------- */
START_TEST(short_names)
{
    char b[128];
    /* nvcc's anonymous namespace, a template with a functor argument */
    kb_kernel_short_name(
        "_ZN40_GLOBAL__N__7a9223bf_8_eager_cu_e799d02c9ew_kernelIfNS_6SquareEEEvPT_lT0_", b,
        sizeof b);
    ck_assert_str_eq(b, "ew_kernel<float, Square>");
    kb_kernel_short_name("_ZN12_GLOBAL__N_19ew_kernelI13__nv_bfloat16NS_4LoadIfEEEEvPT_lT0_", b,
                         sizeof b);
    ck_assert_str_eq(b, "ew_kernel<bfloat16, Load<float> >");
    kb_kernel_short_name("_Z17split_noop_kernelv", b, sizeof b);
    ck_assert_str_eq(b, "split_noop_kernel");
    /* a static kernel (internal linkage, as the harness's own are) */
    kb_kernel_short_name("_ZL17split_noop_kernelv", b, sizeof b);
    ck_assert_str_eq(b, "split_noop_kernel");
    /* a C name, or a library's own, stays; ';' would break the list */
    kb_kernel_short_name("cudnn_generated_fort;native", b, sizeof b);
    ck_assert_str_eq(b, "cudnn_generated_fort,native");
    /* too long for the field: template arguments elided */
    char s[16];
    kb_kernel_short_name("_ZN12_GLOBAL__N_19ew_kernelI13__nv_bfloat16NS_4LoadIfEEEEvPT_lT0_", s,
                         sizeof s);
    ck_assert_str_eq(s, "ew_kernel<...>");
}
END_TEST

START_TEST(trace_lists)
{
    kb_kernel_trace t;
    memset(&t, 0, sizeof t);
    t.n = 2;
    snprintf(t.k[0].name, sizeof t.k[0].name, "a<x, y>");
    t.k[0].start_ns = 1000, t.k[0].end_ns = 13500;
    snprintf(t.k[1].name, sizeof t.k[1].name, "b");
    t.k[1].start_ns = 14000, t.k[1].end_ns = 15750;
    char names[64], us[64];
    kb_trace_names(&t, names, sizeof names);
    kb_trace_times_us(&t, us, sizeof us);
    ck_assert_str_eq(names, "a<x, y>;b");
    ck_assert_str_eq(us, "12.5;1.75");
}
END_TEST

/* ---- no CUPTI: the reason ------------------------------------------------------------ */
START_TEST(no_cupti_reason)
{
    kb_tracer *t = (kb_tracer *)1;
    kb_err e = {{0}};
    const char *missing[] = {"/nonexistent/libcupti.so", "libcupti-not-here.so.99"};
    ck_assert_int_eq(kb_tracer_open(missing, 2, &t, &e), KB_ERR_UNSUPPORTED);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(e.msg, "CUPTI not available") &&
                      strstr(e.msg, "/nonexistent/libcupti.so") &&
                      strstr(e.msg, "libcupti-not-here.so.99"),
                  "%s", e.msg);
    /* a library that loads but is not CUPTI */
    const char *libm[] = {"libm.so.6"};
    ck_assert_int_eq(kb_tracer_open(libm, 1, &t, &e), KB_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(e.msg, "libm.so.6 lacks cupti"), "%s", e.msg);
    /* turned off by the environment */
    setenv("KBENCH_CUPTI_LIB", "none", 1);
    ck_assert_int_eq(kb_tracer_open(NULL, 0, &t, &e), KB_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(e.msg, "KBENCH_CUPTI_LIB=none"), "%s", e.msg);
    setenv("KBENCH_CUPTI_LIB", "/nonexistent/x/libcupti.so", 1);
    ck_assert_int_eq(kb_tracer_open(NULL, 0, &t, &e), KB_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(e.msg, "/nonexistent/x/libcupti.so"), "%s", e.msg);
    unsetenv("KBENCH_CUPTI_LIB");
}
END_TEST

/* ---- baselines ------------------------------------------------------------------------- */
/* A baseline row (mkrow) and a result (mkres) of softmax_forward bf16
 * 32768xN on backend, with the kernels it launched. */
static kb_baseline_row mkrow(const char *backend, int64_t N, int kernels, const char *names)
{
    kb_baseline_row r = kbt_baseline_row("softmax_forward", backend, "bf16", 32768, N);
    r.median_ms = 0.5;
    r.gbps = 1000;
    r.noise = 0.01;
    r.q1_ms = r.q3_ms = NAN;
    r.kernels = kernels;
    snprintf(r.kernel_names, sizeof r.kernel_names, "%s", names);
    return r;
}

static kb_result mkres(const char *backend, int64_t N, int kernels, const char *names)
{
    kb_result x = kbt_result("softmax_forward", backend, "bf16", 32768, N);
    x.accuracy = KB_ACC_PASS;
    x.kernels = kernels;
    snprintf(x.kernel_names, sizeof x.kernel_names, "%s", names);
    return x;
}

START_TEST(baseline_columns_round_trip)
{
    char dir[4096], path[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "b.csv");
    kb_baseline b, back;
    kb_baseline_init(&b);
    kb_baseline_init(&back);
    kb_err e = {{0}};
    kb_baseline_row r1 = mkrow("cudnn", 4096, 3, "k<a, b>;k2;k3"), r2 = mkrow("eager", 4096, 0, "");
    ck_assert_int_eq(kb_baseline_upsert(&b, &r1, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r2, &e), KB_OK);
    ck_assert_msg(kb_baseline_write(path, &b, &e) == KB_OK, "%s", e.msg);
    char *text = kbt_read(path, NULL);
    ck_assert_msg(strstr(text, ",date,version,kernels,kernel_names\n") &&
                      strstr(text, ",3,\"k<a, b>;k2;k3\"\n") &&
                      strstr(text, "eager,bf16,32768,4096,0.5,1000,0.01,0,,,,,,\n"),
                  "%s", text);
    free(text);
    ck_assert_msg(kb_baseline_read(path, &back, &e) == KB_OK, "%s", e.msg);
    const kb_baseline_row *g = kb_baseline_find(&back, "softmax_forward", "cudnn", "bf16", 32768, 4096, 0);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(g->kernels, 3);
    ck_assert_str_eq(g->kernel_names, "k<a, b>;k2;k3");
    g = kb_baseline_find(&back, "softmax_forward", "eager", "bf16", 32768, 4096, 0);
    ck_assert_int_eq(g->kernels, 0);
    ck_assert_str_eq(g->kernel_names, "");

    /* bad counts are errors naming file and line */
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,kernels\n"
                    "softmax_forward,eager,bf16,1,2,1,1,0,-1\n");
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "b.csv:2:") && strstr(e.msg, "kernels"), "%s", e.msg);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,kernels\n"
                    "softmax_forward,eager,bf16,1,2,1,1,0,two\n");
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "'kernels'"), "%s", e.msg);
    kb_baseline_free(&b);
    kb_baseline_free(&back);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(update_keeps_recorded_kernels)
{
    kb_baseline old;
    kb_baseline_init(&old);
    kb_err e = {{0}};
    kb_baseline_row was = mkrow("cudnn", 4096, 3, "x;y;z");
    ck_assert_int_eq(kb_baseline_upsert(&old, &was, &e), KB_OK);
    /* a run without CUPTI keeps what the file had */
    kb_baseline_row row = mkrow("cudnn", 4096, 0, "");
    kb_result r = mkres("cudnn", 4096, 0, "");
    kb_kernels_to_row(&old, &r, &row);
    ck_assert_int_eq(row.kernels, 3);
    ck_assert_str_eq(row.kernel_names, "x;y;z");
    /* a traced run replaces it */
    r = mkres("cudnn", 4096, 2, "x;y");
    kb_kernels_to_row(&old, &r, &row);
    ck_assert_int_eq(row.kernels, 2);
    ck_assert_str_eq(row.kernel_names, "x;y");
    kb_baseline_free(&old);
}
END_TEST

START_TEST(record_kernels_only)
{
    char dir[4096], path[4200];
    kbt_tmpdir_file(dir, path, sizeof path, "b.csv");
    kb_err e = {{0}};
    kb_results res;
    kb_results_init(&res);
    /* an empty or missing file: nothing to fill, said so */
    ck_assert_int_eq(kb_baseline_record_kernels(path, &res, NULL, NULL, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "no rows"), "%s", e.msg);

    kb_baseline b;
    kb_baseline_init(&b);
    kb_baseline_row r1 = mkrow("fused", 4096, 0, ""), r2 = mkrow("tuned", 4096, 0, "");
    r1.gbps = 1234.5;
    ck_assert_int_eq(kb_baseline_upsert(&b, &r1, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r2, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    kb_result x = mkres("fused", 4096, 1, "fwd<bfloat16>");
    x.gbps = 1.0; /* timing columns are not taken */
    ck_assert_int_eq(kb_results_push(&res, &x, &e), KB_OK);
    x = mkres("eager", 4096, 1, "softmax_fwd"); /* no row: not added */
    ck_assert_int_eq(kb_results_push(&res, &x, &e), KB_OK);
    x = mkres("tuned", 4096, 0, ""); /* not traced: row untouched */
    ck_assert_int_eq(kb_results_push(&res, &x, &e), KB_OK);
    size_t updated = 9, missing = 9;
    ck_assert_msg(kb_baseline_record_kernels(path, &res, &updated, &missing, &e) == KB_OK, "%s",
                  e.msg);
    ck_assert_uint_eq(updated, 1);
    ck_assert_uint_eq(missing, 1);
    kb_baseline back;
    kb_baseline_init(&back);
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_OK);
    ck_assert_uint_eq(back.n, 2);
    const kb_baseline_row *g = kb_baseline_find(&back, "softmax_forward", "fused", "bf16", 32768, 4096, 0);
    ck_assert_int_eq(g->kernels, 1);
    ck_assert_str_eq(g->kernel_names, "fwd<bfloat16>");
    ck_assert_double_eq(g->gbps, 1234.5);
    ck_assert_int_eq(kb_baseline_find(&back, "softmax_forward", "tuned", "bf16", 32768, 4096, 0)->kernels, 0);
    kb_baseline_free(&b);
    kb_baseline_free(&back);
    kb_results_free(&res);
    kbt_rm_rf(dir);
}
END_TEST

/* ---- the planted split's knob ---------------------------------------------------------- */
START_TEST(split_knob)
{
    kb_knobs k;
    kb_err e = {{0}};
    memset(&k, 0, sizeof k);
    ck_assert_int_eq(kb_knobs_parse_split(NULL, &k, &e), KB_OK);
    ck_assert_str_eq(k.split_backend, "");
    ck_assert_int_eq(kb_knob_applies(k.split_backend, "fused"), 0);
    ck_assert_int_eq(kb_knobs_parse_split("tuned", &k, &e), KB_OK);
    ck_assert_int_eq(kb_knob_applies(k.split_backend, "tuned"), 1);
    ck_assert_int_eq(kb_knob_applies(k.split_backend, "tuned:big"), 1);
    ck_assert_int_eq(kb_knob_applies(k.split_backend, "fused"), 0);
    ck_assert_int_eq(kb_knobs_parse_split("fusde", &k, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_TEST_SPLIT='fusde'"), "%s", e.msg);
    ck_assert_int_eq(kb_knobs_parse_split("tuned:0.1", &k, &e), KB_ERR_ARG);
}
END_TEST

Suite *kb_suite_kernels(void)
{
    Suite *s = suite_create("kernels");
    TCase *t = tcase_create("expect");
    tcase_add_test(t, changed_rule);
    tcase_add_loop_test(t, backends_declare, 0, (int)(sizeof declared / sizeof declared[0]));
    tcase_add_test(t, who_declares);
    suite_add_tcase(s, t);
    t = tcase_create("trace");
    tcase_add_test(t, short_names);
    tcase_add_test(t, trace_lists);
    tcase_add_test(t, no_cupti_reason);
    suite_add_tcase(s, t);
    t = tcase_create("baseline");
    tcase_add_test(t, baseline_columns_round_trip);
    tcase_add_test(t, update_keeps_recorded_kernels);
    tcase_add_test(t, record_kernels_only);
    tcase_add_test(t, split_knob);
    suite_add_tcase(s, t);
    return s;
}
