/* mlp_forward and the third size it brought: MxNxK shapes
 * (parse, check, format, case names), the K column of baselines and results
 * (round trip, old files, unique keys), the byte/flop model, the CPU
 * reference's closed forms, the HBM bytes each backend avoids, the GEMM SOL
 * cache text. No GPU. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "baseline.h"
#include "gemm_sol.h"
#include "lt_gemm.h"
#include "mlp.h"
#include "mlp_ref.h"
#include "reference.h"
#include "registry.h"
#include "results.h"
#include "tmpfiles.h"
#include "unit.h"

START_TEST(shape_parse_three_sizes)
{
    kb_shape sh;
    kb_err e = {{0}};
    ck_assert_int_eq(kb_shape_parse("8192x768x3072", &sh, &e), KB_OK);
    ck_assert(sh.M == 8192 && sh.N == 768 && sh.K == 3072);
    ck_assert_int_eq(kb_shape_parse("32768x4096", &sh, &e), KB_OK);
    ck_assert(sh.M == 32768 && sh.N == 4096 && sh.K == 0);
    static const char *const bad[] = {"4x5x", "4x5x0", "4xx5", "4x5x6x7", "x4x5", "4x5x-1",
                                      "4x5x 6", "4x99999999999999x99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.msg[0] = '\0';
        ck_assert_msg(kb_shape_parse(bad[i], &sh, &e) == KB_ERR_ARG, "'%s' parsed", bad[i]);
        ck_assert_msg(strstr(e.msg, bad[i]) != NULL, "message names the shape: %s", e.msg);
    }
}
END_TEST

START_TEST(shape_check_and_format)
{
    kb_err e = {{0}};
    const kb_shape two = {2048, 4096}, three = {2048, 4096, 11008};
    ck_assert_int_eq(kb_shape_check(KB_MLP_FWD, &three, &e), KB_OK);
    ck_assert_int_eq(kb_shape_check(KB_MLP_FWD, &two, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "mlp_forward takes three sizes MxNxK") != NULL, "%s", e.msg);
    ck_assert_int_eq(kb_shape_check(KB_SOFTMAX_FWD, &two, &e), KB_OK);
    ck_assert_int_eq(kb_shape_check(KB_SOFTMAX_FWD, &three, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "'2048x4096x11008'") != NULL, "%s", e.msg);
    char buf[72];
    kb_shape_format(buf, sizeof buf, 4, 5, 0);
    ck_assert_str_eq(buf, "4x5");
    kb_shape_format(buf, sizeof buf, 4, 5, 6);
    ck_assert_str_eq(buf, "4x5x6");
}
END_TEST

/* Every registered case's name parses back to the same case. */
static kb_status round_trip(const kb_case *c, void *arg)
{
    char name[256];
    kb_case_name(c, name, sizeof name);
    kb_case back;
    kb_err e = {{0}};
    ck_assert_msg(kb_case_parse(name, &back, &e) == KB_OK, "%s: %s", name, e.msg);
    ck_assert_msg(back.p.bench == c->p.bench && back.p.dtype == c->p.dtype &&
                      back.p.M == c->p.M && back.p.N == c->p.N && back.p.K == c->p.K &&
                      back.impl == c->impl && back.set == c->set && back.inputs == c->inputs,
                  "%s does not round-trip", name);
    if (c->p.bench == KB_MLP_FWD) ((int *)arg)[0]++;
    if (c->p.bench == KB_MLP_SWIGLU_FWD) ((int *)arg)[1]++;
    return KB_OK;
}

START_TEST(case_names_round_trip)
{
    int mlp[2] = {0, 0};
    ck_assert_int_eq(kb_cases_foreach(round_trip, mlp), KB_OK);
    /* 5 + 3 odd shapes per built backend (CPU CI builds all four); SwiGLU
     * has no cublaslt_epilogue (no SiLU epilogue) */
    ck_assert_int_eq(mlp[0], 8 * 4);
    ck_assert_int_eq(mlp[1], 8 * 3);
    ck_assert_ptr_null(kb_impl_get(KB_MLP_SWIGLU_FWD, "cublaslt_epilogue"));
    kb_case c;
    kb_err e = {{0}};
    ck_assert_int_eq(kb_case_parse("mlp_forward.tuned.bf16.8192x768x3072", &c, &e), KB_OK);
    ck_assert(c.p.K == 3072 && c.set == KB_SHAPES_DEFAULT);
    ck_assert_int_eq(kb_case_parse("mlp_forward.eager.bf16.100x65x257", &c, &e), KB_OK);
    ck_assert_int_eq(c.set, KB_SHAPES_ODD);
    ck_assert_int_eq(kb_case_parse("mlp_forward.eager.bf16.8192x768", &c, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_case_parse("softmax_forward.eager.bf16.8x8x8", &c, &e), KB_ERR_ARG);
    char labels[256];
    ck_assert_int_eq(kb_case_parse("mlp_forward.cublaslt_epilogue.bf16.2048x4096x11008", &c, &e),
                     KB_OK);
    kb_case_labels(&c, labels, sizeof labels);
    ck_assert_str_eq(labels, "mlp,mlp_forward,forward,cublaslt_epilogue,bf16,gpu");
}
END_TEST

START_TEST(bytes_and_flops)
{
    const kb_problem p = {KB_MLP_FWD, KB_BF16, 8192, 768, 3072};
    ck_assert(kb_flops(&p) == 6.0 * 8192 * 768 * 3072);
    ck_assert(kb_bytes_moved(&p) == (2.0 * 8192 * 768 + 3.0 * 768 * 3072) * 2);
    ck_assert_uint_eq(kb_tensor_bytes(&p, KB_T_WTS), (size_t)3 * 768 * 3072 * 2);
    const kb_problem q = {KB_SOFTMAX_FWD, KB_BF16, 8192, 768};
    ck_assert(kb_flops(&q) == 0);
    ck_assert_uint_eq(kb_tensor_bytes(&q, KB_T_WTS), 0);
    /* The HBM round trip each backend avoids against eager. */
    const double TH = 8192.0 * 3072, TD = 8192.0 * 768, s = 2;
    const double eager = kb_mlp_intermediate_bytes("eager", KB_BF16, 8192, 768, 3072);
    ck_assert(eager - kb_mlp_intermediate_bytes("fused", KB_BF16, 8192, 768, 3072) == 2 * TH * s);
    ck_assert(eager - kb_mlp_intermediate_bytes("cublaslt_epilogue", KB_BF16, 8192, 768, 3072) ==
              2 * TH * s);
    ck_assert(eager - kb_mlp_intermediate_bytes("tuned", KB_BF16, 8192, 768, 3072) ==
              2 * TH * s + TD * s);
    ck_assert(kb_mlp_intermediate_bytes("cudnn", KB_BF16, 1, 1, 1) == 0);
}
END_TEST

/* T = D = H = 1: y = act(x g) (x u) w, scale = |y|; H = 2 sums two terms. */
START_TEST(cpu_reference_closed_forms)
{
    kb_err e = {{0}};
    const float x[1] = {1.0f}, w1[3] = {1.0f, 2.0f, 0.5f};
    float y[1], sc[1];
    ck_assert_int_eq(kb_ref_cpu_mlp(KB_MLP_GELU_TANH, 1, 1, 1, x, w1, y, sc, &e), KB_OK);
    /* gelu_tanh(1) = 0.8411919906..., times up 2, times w 0.5 */
    ck_assert_double_eq_tol(y[0], 0.8411919906, 1e-6);
    ck_assert_double_eq_tol(sc[0], 0.8411919906, 1e-6);
    ck_assert_int_eq(kb_ref_cpu_mlp(KB_MLP_SILU, 1, 1, 1, x, w1, y, sc, &e), KB_OK);
    ck_assert_double_eq_tol(y[0], 1.0 / (1.0 + exp(-1.0)), 1e-6);
    /* H = 2, D = 1: Wg = [1, -1], Wu = [1, 1], Wd = [1, -1]; x = 2:
     * h = [gelu(2)*2, gelu(-2)*2], y = h0 - h1 = 2 (gelu(2) - gelu(-2)) = 4
     * (gelu(x) - gelu(-x) = x), scale = sqrt(h0^2 + h1^2) */
    const float x2[1] = {2.0f}, w2[6] = {1, -1, 1, 1, 1, -1};
    ck_assert_int_eq(kb_ref_cpu_mlp(KB_MLP_GELU_TANH, 1, 1, 2, x2, w2, y, sc, &e), KB_OK);
    const double a = kb_mlp_act(KB_MLP_GELU_TANH, 2.0) * 2,
                 b = -kb_mlp_act(KB_MLP_GELU_TANH, -2.0) * 2;
    ck_assert_double_eq_tol(y[0], a + b, 1e-6);
    ck_assert_double_eq_tol(sc[0], sqrt(a * a + b * b), 1e-6);
    ck_assert_double_eq_tol(a + b, 4.0, 1e-9); /* gelu(x) - gelu(-x) = x */
    ck_assert_int_eq(kb_ref_cpu_mlp(KB_MLP_GELU_TANH, 0, 1, 1, x, w1, y, sc, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_ref_cpu_mlp(7, 1, 1, 1, x, w1, y, sc, &e), KB_ERR_ARG);
    /* kb_ref_cpu (2-D: K = 0) refuses the 3-D op. */
    kb_ref_in in = {.x = x};
    kb_ref_out out = {.out = y};
    ck_assert_int_eq(kb_ref_cpu(KB_MLP_FWD, 1, 1, &in, &out, &e), KB_ERR_ARG);
    /* Its descriptor's reference (kb_ref_cpu3, K >= 1) is kb_ref_cpu_mlp
     * with the benchmark's activation: GELU for mlp_forward, SiLU for
     * mlp_swiglu_forward, y and scale alike. */
    ck_assert_int_eq(kb_mlp_ref_act(KB_MLP_FWD), KB_MLP_GELU_TANH);
    ck_assert_int_eq(kb_mlp_ref_act(KB_MLP_SWIGLU_FWD), KB_MLP_SILU);
    const kb_bench_id mb[] = {KB_MLP_FWD, KB_MLP_SWIGLU_FWD};
    const int acts[] = {KB_MLP_GELU_TANH, KB_MLP_SILU};
    for (int k = 0; k < 2; k++) {
        float y3[1] = {0}, s3[1] = {0};
        ck_assert_int_eq(kb_ref_cpu_mlp(acts[k], 1, 1, 2, x2, w2, y, sc, &e), KB_OK);
        const kb_problem p = {mb[k], KB_BF16, 1, 1, 2};
        kb_ref_out o3 = {.out = y3, .scale = s3};
        ck_assert_int_eq(kb_ref_cpu3(&p, &(kb_ref_in){.x = x2, .wts = w2}, &o3, &e), KB_OK);
        ck_assert_float_eq(y3[0], y[0]);
        ck_assert_float_eq(s3[0], sc[0]);
    }
    const kb_problem p0 = {KB_MLP_FWD, KB_BF16, 1, 1, 0};
    ck_assert_int_eq(kb_ref_cpu3(&p0, &(kb_ref_in){.x = x2, .wts = w2}, &out, &e), KB_ERR_ARG);
}
END_TEST

static kb_baseline_row row3(const char *backend, int64_t M, int64_t N, int64_t K, double gbps)
{
    kb_baseline_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.benchmark, sizeof r.benchmark, "%s", K ? "mlp_forward" : "softmax_forward");
    snprintf(r.backend, sizeof r.backend, "%s", backend);
    snprintf(r.dtype, sizeof r.dtype, "bf16");
    r.M = M, r.N = N, r.K = K, r.gbps = gbps, r.median_ms = 1.0, r.noise = 0.01;
    r.q1_ms = r.q3_ms = NAN;
    return r;
}

START_TEST(baseline_k_column)
{
    char dir[256], path[300];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    kb_baseline b;
    kb_baseline_init(&b);
    kb_err e = {{0}};
    /* 2-D rows only: no K column, the file stays what it was. */
    kb_baseline_row r = row3("eager", 32768, 4096, 0, 100);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    char *text = kbt_read(path, NULL);
    ck_assert_ptr_null(strstr(text, ",K"));
    free(text);
    /* Same T and D, two H: two keys. */
    r = row3("tuned", 2048, 4096, 11008, 200);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    r = row3("tuned", 2048, 4096, 14336, 300);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_OK);
    ck_assert_uint_eq(b.n, 3);
    ck_assert_int_eq(kb_baseline_write(path, &b, &e), KB_OK);
    kb_baseline back;
    kb_baseline_init(&back);
    ck_assert_msg(kb_baseline_read(path, &back, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(back.n, 3);
    ck_assert_double_eq(kb_baseline_find(&back, "mlp_forward", "tuned", "bf16", 2048, 4096, 14336)->gbps, 300);
    ck_assert_double_eq(kb_baseline_find(&back, "mlp_forward", "tuned", "bf16", 2048, 4096, 11008)->gbps, 200);
    ck_assert_ptr_null(kb_baseline_find(&back, "mlp_forward", "tuned", "bf16", 2048, 4096, 0));
    ck_assert_double_eq(kb_baseline_find(&back, "softmax_forward", "eager", "bf16", 32768, 4096, 0)->gbps, 100);
    /* A negative K is refused; a duplicate (M, N, K) is a parse error. */
    r = row3("tuned", 1, 1, -1, 1);
    ck_assert_int_eq(kb_baseline_upsert(&b, &r, &e), KB_ERR_ARG);
    snprintf(path, sizeof path, "%s/dup.csv", dir);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,gbps,noise,K\n"
                    "mlp_forward,eager,bf16,4,5,1,1,0,6\n"
                    "mlp_forward,eager,bf16,4,5,1,1,0,7\n"
                    "mlp_forward,eager,bf16,4,5,1,1,0,6\n");
    ck_assert_int_eq(kb_baseline_read(path, &back, &e), KB_ERR_PARSE);
    ck_assert_msg(strstr(e.msg, "dup.csv:4: duplicate row") != NULL, "%s", e.msg);
    kb_baseline_free(&b);
    kb_baseline_free(&back);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(results_k_column)
{
    char dir[256], path[300];
    kbt_tmpdir(dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    kb_results r;
    kb_results_init(&r);
    kb_err e = {{0}};
    /* An older file: no K, tflops or peak_tflops columns. */
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms\nsoftmax_forward,eager,bf16,4,5,1\n");
    ck_assert_msg(kb_results_read_csv(path, &r, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_eq(r.v[0].K, 0);
    ck_assert(isnan(r.v[0].tflops));
    /* Written and read back with K. */
    kb_result x = r.v[0];
    snprintf(x.benchmark, sizeof x.benchmark, "mlp_forward");
    x.K = 3072;
    x.tflops = 512.5;
    x.peak_tflops = 700;
    ck_assert_int_eq(kb_results_push(&r, &x, &e), KB_OK);
    ck_assert_int_eq(kb_results_write_csv(&r, path, &e), KB_OK);
    kb_results back;
    kb_results_init(&back);
    ck_assert_msg(kb_results_read_csv(path, &back, &e) == KB_OK, "%s", e.msg);
    ck_assert_uint_eq(back.n, 2);
    ck_assert_int_eq(back.v[0].K, 0);
    ck_assert_int_eq(back.v[1].K, 3072);
    ck_assert_double_eq(back.v[1].tflops, 512.5);
    ck_assert_double_eq(back.v[1].peak_tflops, 700);
    kbt_write(path, "benchmark,backend,dtype,M,N,median_ms,K\nmlp_forward,eager,bf16,4,5,1,-3\n");
    ck_assert_int_eq(kb_results_read_csv(path, &back, &e), KB_ERR_PARSE);
    kb_results_free(&r);
    kb_results_free(&back);
    kbt_rm_rf(dir);
}
END_TEST

START_TEST(gemm_sol_cache_text)
{
    double t = 0;
    ck_assert(kb_gemm_sol_parse("712.5\n# bf16 GEMM ...\n", &t) && t == 712.5);
    ck_assert(kb_gemm_sol_parse("600", &t) && t == 600);
    ck_assert(!kb_gemm_sol_parse("", &t));
    ck_assert(!kb_gemm_sol_parse("fast\n", &t));
    ck_assert(!kb_gemm_sol_parse("-3\n", &t));
    ck_assert(!kb_gemm_sol_parse("0\n", &t));
    ck_assert(!kb_gemm_sol_parse("712.5 TFLOP/s\n", &t));
}
END_TEST

/* cuBLASLt is dlopen'ed (lt_gemm.h): the toolkit's library loads and has
 * every function kbench calls; without a driver only the handle may fail. */
START_TEST(cublaslt_loads)
{
    kb_lt lt;
    kb_err e = {{0}};
    const kb_status st = kb_lt_open(&lt, &e);
    ck_assert_msg(st == KB_OK || st == KB_ERR_CUDA, "kb_lt_open: %s", e.msg);
    if (st == KB_OK) {
        ck_assert_ptr_nonnull(lt.Matmul);
        kb_lt_close(&lt);
    }
}
END_TEST

Suite *kb_suite_mlp(void)
{
    Suite *s = suite_create("mlp");
    TCase *tc = tcase_create("mlp");
    tcase_add_test(tc, shape_parse_three_sizes);
    tcase_add_test(tc, shape_check_and_format);
    tcase_add_test(tc, case_names_round_trip);
    tcase_add_test(tc, bytes_and_flops);
    tcase_add_test(tc, cpu_reference_closed_forms);
    tcase_add_test(tc, baseline_k_column);
    tcase_add_test(tc, results_k_column);
    tcase_add_test(tc, gemm_sol_cache_text);
    tcase_add_test(tc, cublaslt_loads);
    suite_add_tcase(s, tc);
    return s;
}
