/* Registry: completeness, a worked byte count, case names
 * and labels, shape parsing. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "buffers.h"
#include "registry.h"
#include "results.h"
#include "unit.h"

START_TEST(every_benchmark_has_eager)
{
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_impl *impl = kb_impl_get((kb_bench_id)b, "eager");
        ck_assert_msg(impl != NULL, "%s has no eager backend", kb_bench_info_get((kb_bench_id)b)->name);
        ck_assert_str_eq(impl->backend, "eager");
        ck_assert_int_eq(impl->bench, b);
        ck_assert_ptr_nonnull(impl->run);
    }
}
END_TEST

START_TEST(impls_match_their_slot)
{
    for (int b = 0; b < KB_NUM_BENCH; b++)
        for (int be = 0; be < KB_NUM_BACKENDS; be++) {
            const kb_impl *impl = kb_impl_get((kb_bench_id)b, kb_backend_name(be));
            if (!impl) continue;
            ck_assert_str_eq(impl->backend, kb_backend_name(be));
            ck_assert_int_eq(impl->bench, b);
        }
    /* Cross entropy has no cuDNN op: never registered. */
    ck_assert_ptr_null(kb_impl_get(KB_CE_FWD, "cudnn"));
    ck_assert_ptr_null(kb_impl_get(KB_CE_BWD, "cudnn"));
    ck_assert_ptr_null(kb_impl_get(KB_SOFTMAX_FWD, "nosuch"));
}
END_TEST

/* kb_register: the same impl again changes nothing; another one in a held
 * slot, an unknown backend name or benchmark id is refused, naming it. */
START_TEST(register_refuses_conflicts)
{
    const kb_impl *held = kb_impl_get(KB_SOFTMAX_FWD, "eager");
    ck_assert_ptr_nonnull(held);
    kb_err e = {{0}};
    ck_assert_int_eq(kb_register(held, &e), KB_OK);
    ck_assert_ptr_eq(kb_impl_get(KB_SOFTMAX_FWD, "eager"), held);
    kb_impl other = *held;
    ck_assert_int_eq(kb_register(&other, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "eager of softmax_forward registered twice"));
    ck_assert_ptr_eq(kb_impl_get(KB_SOFTMAX_FWD, "eager"), held);
    other.backend = "nosuch";
    ck_assert_int_eq(kb_register(&other, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "'nosuch'"));
    other.backend = "eager";
    other.bench = KB_NUM_BENCH;
    ck_assert_int_eq(kb_register(&other, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_register(NULL, &e), KB_ERR_ARG);
}
END_TEST

/* One worked number. Every benchmark's byte model, flops and error scale
 * are held against docs/reference/spec.md's table by unit.spec
 * (test_spec.c), which reads the table itself. */
START_TEST(byte_model_worked_number)
{
    /* softmax forward bf16 32768x4096 = 2*32768*4096*2 */
    kb_problem p = {KB_SOFTMAX_FWD, KB_BF16, 32768, 4096};
    ck_assert_double_eq(kb_bytes_moved(&p), 536870912.0);
}
END_TEST

START_TEST(sweeps_follow_spec)
{
    const kb_shape *s;
    ck_assert_uint_eq(kb_shapes(KB_SOFTMAX_FWD, KB_SHAPES_DEFAULT, &s), 11);
    ck_assert_int_eq(s[0].M, 32768);
    ck_assert_int_eq(s[0].N, 256);
    ck_assert_int_eq(s[10].M, 8192);
    ck_assert_int_eq(s[10].N, 262144);
    ck_assert_uint_eq(kb_shapes(KB_RMSNORM_BWD, KB_SHAPES_DEFAULT, &s), 15);
    ck_assert_int_eq(s[14].M, 1152000);
    ck_assert_int_eq(s[14].N, 512);
    ck_assert_uint_eq(kb_shapes(KB_CE_FWD, KB_SHAPES_DEFAULT, &s), 11);
    size_t n = kb_shapes(KB_CE_FWD, KB_SHAPES_ODD, &s);
    int has_1 = 0, has_m1 = 0;
    for (size_t i = 0; i < n; i++) {
        has_1 |= s[i].N == 1;
        has_m1 |= s[i].M == 1;
    }
    ck_assert(has_1 && has_m1);
}
END_TEST

static kb_status count_case(const kb_case *c, void *arg)
{
    int *n = arg;
    char name[160];
    kb_case_name(c, name, sizeof name);
    kb_case back;
    kb_err e;
    ck_assert_msg(kb_case_parse(name, &back, &e) == KB_OK, "%s: %s", name, e.msg);
    ck_assert_int_eq(back.p.bench, c->p.bench);
    ck_assert_int_eq(back.p.dtype, c->p.dtype);
    ck_assert_int_eq(back.p.M, c->p.M);
    ck_assert_int_eq(back.p.N, c->p.N);
    ck_assert_str_eq(back.backend, c->backend);
    ck_assert_int_eq(back.set == KB_SHAPES_ODD, c->set == KB_SHAPES_ODD);
    ck_assert_int_eq(back.inputs, c->inputs);
    (*n)++;
    return KB_OK;
}

START_TEST(case_names_round_trip)
{
    int n = 0;
    ck_assert_int_eq(kb_cases_foreach(count_case, &n), KB_OK);
    /* eager alone: per benchmark 11 (+4 norms) bf16 sweep, 6 odd, 2 fp16, 2 fp32. */
    ck_assert_int_ge(n, 4 * (11 + 10) + 4 * (15 + 10));
}
END_TEST

START_TEST(case_name_and_labels)
{
    kb_case c = {{KB_SOFTMAX_FWD, KB_BF16, 32768, 4096}, kb_impl_get(KB_SOFTMAX_FWD, "eager"),
                 "eager", KB_SHAPES_DEFAULT, KB_INPUTS_RANDN};
    char buf[256];
    kb_case_name(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "softmax_forward.eager.bf16.32768x4096");
    kb_case_labels(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "softmax,softmax_forward,forward,eager,bf16,gpu");
    c.p.bench = KB_LAYERNORM_BWD;
    c.set = KB_SHAPES_ODD;
    kb_case_labels(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "layernorm,layernorm_backward,backward,eager,bf16,gpu,odd");
    /* an input kind: suffix and labels */
    c.p.bench = KB_SOFTMAX_FWD;
    c.p.M = 512;
    c.p.N = 50257;
    c.set = KB_SHAPES_INPUTS;
    c.inputs = KB_INPUTS_MASKED;
    kb_case_name(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "softmax_forward.eager.bf16.512x50257.masked");
    kb_case_labels(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "softmax,softmax_forward,forward,eager,bf16,gpu,inputs,masked");
    kb_case back;
    kb_err e;
    ck_assert_int_eq(kb_case_parse("softmax_forward.eager.bf16.512x50257.masked", &back, &e),
                     KB_OK);
    ck_assert_int_eq(back.inputs, KB_INPUTS_MASKED);
    ck_assert_int_eq(back.set, KB_SHAPES_INPUTS);
    ck_assert_int_eq(back.p.N, 50257);
}
END_TEST

/* Every kind where it applies, at two shapes (one of them a long odd row),
 * bf16, fp16 for wide, every dtype for constant; nowhere else. */
static kb_status count_kinds(const kb_case *c, void *arg)
{
    int(*n)[KB_NUM_INPUTS] = arg;
    ck_assert(kb_inputs_apply(c->inputs, c->p.bench));
    if (c->inputs) {
        ck_assert(c->p.dtype == KB_BF16 || (c->inputs == KB_INPUTS_WIDE && c->p.dtype == KB_FP16) ||
                  c->inputs == KB_INPUTS_CONSTANT);
        ck_assert_int_eq(c->set, KB_SHAPES_INPUTS);
    }
    n[c->p.bench][c->inputs]++;
    return KB_OK;
}

START_TEST(input_kinds_registered)
{
    int n[KB_NUM_BENCH][KB_NUM_INPUTS];
    memset(n, 0, sizeof n);
    ck_assert_int_eq(kb_cases_foreach(count_kinds, n), KB_OK);
    const kb_shape *s;
    ck_assert_uint_eq(kb_shapes(KB_SOFTMAX_FWD, KB_SHAPES_INPUTS, &s), 2);
    ck_assert(s[0].N <= 1024 && s[1].N > 16384 && s[1].N % 2 == 1);
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        int backends = 0;
        for (int be = 0; be < KB_NUM_BACKENDS; be++)
            backends += kb_impl_get((kb_bench_id)b, kb_backend_name(be)) != NULL;
        const kb_x_dist xd = kb_bench_info_get((kb_bench_id)b)->x_dist;
        const int norm = xd == KB_X_NORM, logits = xd == KB_X_LOGITS;
        if (kb_bench_info_get((kb_bench_id)b)->inputs == 1u << KB_INPUTS_RANDN) {
            for (int k = 1; k < KB_NUM_INPUTS; k++) ck_assert_int_eq(n[b][k], 0); /* mlp */
            continue;
        }
        /* each kind on every input-kind shape of the op (its own list or
         * the shared two), and only where the descriptor says it applies */
        const int ns = (int)kb_shapes((kb_bench_id)b, KB_SHAPES_INPUTS, &s);
        const unsigned in = kb_bench_info_get((kb_bench_id)b)->inputs;
        ck_assert_int_eq(n[b][KB_INPUTS_WIDE], backends * ns * 2);
        ck_assert_int_eq(n[b][KB_INPUTS_SHIFTED], logits ? backends * ns : 0);
        ck_assert_int_eq(n[b][KB_INPUTS_MASKED], logits ? backends * ns : 0);
        ck_assert_int_eq(n[b][KB_INPUTS_CONSTANT],
                         norm && (in & KB_IN(KB_INPUTS_CONSTANT)) ? backends * ns * KB_NUM_DTYPES : 0);
        ck_assert_int_eq(n[b][KB_INPUTS_SMALL],
                         norm && (in & KB_IN(KB_INPUTS_SMALL)) ? backends * ns : 0);
    }
}
END_TEST

/* A case name and what kb_case_parse makes of it: the status and, for a
 * refusal, a part of its message (NULL: not checked). */
typedef struct {
    const char *name;
    kb_status want;
    const char *says;
} case_parse;

static void expect_case_parses(const case_parse *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kb_case c;
        kb_err e = {""};
        ck_assert_msg(kb_case_parse(t[i].name, &c, &e) == t[i].want, "%s: %s", t[i].name, e.msg);
        if (t[i].says)
            ck_assert_msg(strstr(e.msg, t[i].says), "%s: '%s' lacks '%s'", t[i].name, e.msg,
                          t[i].says);
    }
}

START_TEST(bad_input_kinds)
{
    kb_err e;
    kb_inputs k;
    ck_assert_int_eq(kb_inputs_parse("wide", &k, &e), KB_OK);
    ck_assert_int_eq(k, KB_INPUTS_WIDE);
    ck_assert_int_eq(kb_inputs_parse("Wide", &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "unknown input kind 'Wide'"));
    /* a case name's kind: unknown, the default spelled out, or not the benchmark's */
    static const case_parse names[] = {
        {"softmax_forward.eager.bf16.4x4.loud", KB_ERR_ARG, NULL},
        {"softmax_forward.eager.bf16.4x4.randn", KB_ERR_ARG, NULL},
        {"softmax_forward.eager.bf16.4x4.constant", KB_ERR_ARG, "does not apply to softmax_forward"},
        {"rmsnorm_forward.eager.bf16.4x4.masked", KB_ERR_ARG, NULL},
        {"rmsnorm_forward.eager.bf16.4x4.small", KB_OK, NULL},
    };
    expect_case_parses(names, sizeof names / sizeof names[0]);
}
END_TEST

START_TEST(bad_case_names)
{
    static const case_parse names[] = {
        {"softmax_forward.eager.bf16", KB_ERR_ARG, NULL},
        {"nosuch.eager.bf16.1x1", KB_ERR_ARG, "Unknown benchmark"},
        {"softmax_forward.magic.bf16.1x1", KB_ERR_ARG, NULL},
        {"softmax_forward.eager.fp8.1x1", KB_ERR_ARG, NULL},
        {"softmax_forward.eager.bf16.0x1", KB_ERR_ARG, NULL},
        {"cross_entropy_forward.cudnn.bf16.4x4", KB_ERR_ARG, NULL},
    };
    expect_case_parses(names, sizeof names / sizeof names[0]);
}
END_TEST

START_TEST(shape_parse_good)
{
    kb_shape s;
    kb_err e;
    ck_assert_int_eq(kb_shape_parse("32768x4096", &s, &e), KB_OK);
    ck_assert_int_eq(s.M, 32768);
    ck_assert_int_eq(s.N, 4096);
    ck_assert_int_eq(kb_shape_parse("1x1", &s, &e), KB_OK);
    ck_assert_int_eq(kb_shape_parse("8192x262144", &s, &e), KB_OK);
    ck_assert_int_eq(s.N, 262144);
}
END_TEST

START_TEST(shape_parse_bad)
{
    const char *bad[] = {"0x5", "5x0", "12", "-1x3", "3x-1", "x5", "5x", "", "1.5x2", "2x3x",
                         " 2x3", "2x3 ", "99999999999999999999x1", "4611686018427387904x4",
                         "0x0", "ax b", "2X3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kb_shape s;
        kb_err e = {{0}};
        ck_assert_msg(kb_shape_parse(bad[i], &s, &e) == KB_ERR_ARG, "'%s' accepted", bad[i]);
        ck_assert_msg(strstr(e.msg, "shape") != NULL, "message for '%s': %s", bad[i], e.msg);
    }
}
END_TEST

/* kb_shape_too_large, the bound --shape and the results and baseline
 * readers share: M*N below 2^61 (M <= INT64_MAX/4/N), K*N and K*M below 2^59
 * (K <= INT64_MAX/16/N and /M); each edge fits, one past it does not. */
START_TEST(shape_too_large_edges)
{
    const int64_t mn = INT64_MAX / 4, k = INT64_MAX / 16;
    ck_assert_int_eq(kb_shape_too_large(mn, 1, 0), 0);
    ck_assert_int_eq(kb_shape_too_large(mn + 1, 1, 0), 1);
    ck_assert_int_eq(kb_shape_too_large(1, mn, 0), 0);
    ck_assert_int_eq(kb_shape_too_large(1, mn + 1, 0), 1);
    ck_assert_int_eq(kb_shape_too_large(mn / 3, 3, 0), 0);
    ck_assert_int_eq(kb_shape_too_large(mn / 3 + 1, 3, 0), 1);
    ck_assert_int_eq(kb_shape_too_large(INT64_MAX, 1, 0), 1);
    /* K against N, then against M (the other size 1) */
    ck_assert_int_eq(kb_shape_too_large(1, 1, k), 0);
    ck_assert_int_eq(kb_shape_too_large(1, 1, k + 1), 1);
    ck_assert_int_eq(kb_shape_too_large(1, 1000, k / 1000), 0);
    ck_assert_int_eq(kb_shape_too_large(1, 1000, k / 1000 + 1), 1);
    ck_assert_int_eq(kb_shape_too_large(1000, 1, k / 1000), 0);
    ck_assert_int_eq(kb_shape_too_large(1000, 1, k / 1000 + 1), 1);
    /* not sizes: the callers' own checks say so */
    ck_assert_int_eq(kb_shape_too_large(0, 1, 0), 0);
    ck_assert_int_eq(kb_shape_too_large(1, -1, 0), 0);
    ck_assert_int_eq(kb_shape_too_large(INT64_MAX, 1, -1), 0);

    kb_shape s;
    kb_err e = {{0}};
    ck_assert_int_eq(kb_shape_parse("9223372036854775807x1", &s, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "too large") != NULL, "%s", e.msg);
    ck_assert_int_eq(kb_shape_parse("2305843009213693951x1", &s, &e), KB_OK);
    ck_assert_int_eq(s.M, mn);
    ck_assert_int_eq(kb_shape_parse("1x1x576460752303423488", &s, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "too large") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(bench_and_dtype_names)
{
    kb_bench_id b;
    kb_dtype d;
    kb_err e;
    ck_assert_int_eq(kb_bench_find("rmsnorm_backward", &b, &e), KB_OK);
    ck_assert_int_eq(b, KB_RMSNORM_BWD);
    ck_assert_int_eq(kb_bench_find("softmax", &b, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_dtype_parse("fp16", &d, &e), KB_OK);
    ck_assert_int_eq(d, KB_FP16);
    ck_assert_int_eq(kb_dtype_parse("float32", &d, &e), KB_ERR_ARG);
    ck_assert_uint_eq(kb_dtype_size(KB_BF16), 2);
    ck_assert_uint_eq(kb_dtype_size(KB_FP32), 4);
    ck_assert_int_eq(kb_backend_index("cudnn"), 3);
    ck_assert_int_eq(kb_backend_index("CUDNN"), -1);
}
END_TEST

START_TEST(error_text_strips_location)
{
    kb_err e;
    unsetenv("KBENCH_DEBUG");
    ck_assert_int_eq(KB_FAIL(&e, KB_ERR_ARG, "bad %d", 7), KB_ERR_ARG);
    /* Users see no source location; it is kept apart for KBENCH_DEBUG=1. */
    ck_assert_str_eq(e.msg, "bad 7");
    ck_assert_ptr_nonnull(strstr(kb_err_where(&e), "test_registry.c:"));
    ck_assert_str_eq(kb_err_text(&e), "bad 7");
    setenv("KBENCH_DEBUG", "1", 1);
    ck_assert_ptr_nonnull(strstr(kb_err_text(&e), "bad 7 [test_registry.c:"));
    unsetenv("KBENCH_DEBUG");
    ck_assert_str_eq(kb_status_name(KB_ERR_NOMEM), "out of host memory");
    ck_assert_str_eq(kb_status_name(KB_ERR_DEVMEM), "does not fit in device memory");
}
END_TEST

/* Host and device out-of-memory are different things: a shape that does not
 * fit in free device memory is KB_ERR_DEVMEM (the case SKIPs, saying why); a
 * failed host malloc is KB_ERR_NOMEM (an error, never a skip). */
START_TEST(out_of_memory_host_and_device)
{
    const kb_problem p = {KB_SOFTMAX_FWD, KB_FP32, 1000, 1000};
    const size_t need = kb_buffers_bytes(&p, 0), gb = (size_t)1 << 30;
    kb_err e;
    ck_assert_int_eq(kb_buffers_fit(&p, need, need + gb, &e), KB_OK);
    ck_assert_int_eq(kb_buffers_fit(&p, need, need + gb - 1, &e), KB_ERR_DEVMEM);
    char want[200];
    snprintf(want, sizeof want, "softmax_forward fp32 1000x1000 needs %.2f GB of device memory "
             "(+1 GB headroom), only %.2f GB free: skipped", need / 1e9, (need + gb - 1) / 1e9);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(kb_buffers_fit(&p, need, need / 2, &e), KB_ERR_DEVMEM);
    ck_assert_int_eq(kb_buffers_fit(&p, SIZE_MAX - 1, SIZE_MAX - 2, &e), KB_ERR_DEVMEM);

    /* A host allocation that fails (address space capped just above what the
     * process uses) is NOMEM. */
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
    fclose(f);
    struct rlimit was;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &was), 0);
    const struct rlimit cap = {(rlim_t)pages * 4096 + (64u << 20), was.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0);
    kb_results r;
    kb_results_init(&r);
    kb_result x;
    memset(&x, 0, sizeof x);
    kb_status st = KB_OK;
    for (size_t i = 0; i < ((size_t)1 << 20) && st == KB_OK; i++) st = kb_results_push(&r, &x, &e);
    ck_assert_int_eq(st, KB_ERR_NOMEM);
    ck_assert_str_eq(e.msg, "results: out of host memory");
    kb_results_free(&r);
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &was), 0); /* CK_FORK=no runs on in this process */
    ck_assert_str_eq(kb_status_name(KB_ERR_NOMEM), "out of host memory");
    ck_assert_str_eq(kb_status_name(KB_ERR_DEVMEM), "does not fit in device memory");
}
END_TEST

/* Known library deviations: found by name and by case, labelled, and only
 * for the backend and input kind they were measured on. */
START_TEST(known_deviations)
{
    ck_assert_ptr_nonnull(kb_known_deviation("layernorm_forward", "cudnn", "constant"));
    ck_assert_ptr_null(kb_known_deviation("layernorm_forward", "cudnn", ""));
    ck_assert_ptr_null(kb_known_deviation("layernorm_forward", "cudnn", NULL));
    ck_assert_ptr_null(kb_known_deviation("layernorm_forward", "tuned", "constant"));
    ck_assert_ptr_null(kb_known_deviation("rmsnorm_forward", "cudnn", "constant"));
    ck_assert_ptr_null(kb_known_deviation("no_such_bench", "cudnn", "constant"));
    ck_assert_ptr_null(kb_known_deviation("layernorm_forward", "cudnn", "no_such_kind"));
    kb_case c;
    kb_err e;
    char labels[256];
    if (kb_case_parse("layernorm_forward.cudnn.bf16.4096x1000.constant", &c, &e) == KB_OK) {
        ck_assert_ptr_nonnull(kb_case_known_deviation(&c));
        kb_case_labels(&c, labels, sizeof labels);
        ck_assert_ptr_nonnull(strstr(labels, ",known_deviation"));
    }
    ck_assert_int_eq(kb_case_parse("layernorm_forward.eager.bf16.4096x1000.constant", &c, &e),
                     KB_OK);
    ck_assert_ptr_null(kb_case_known_deviation(&c));
    kb_case_labels(&c, labels, sizeof labels);
    ck_assert_ptr_null(strstr(labels, "known_deviation"));
}
END_TEST

/* Every registered benchmark has its reference: a CPU one in its descriptor
 * and a GPU gold registered with its backends (kbench's registration, as
 * kbench_unit_core's main runs it); a case of an op without them could not
 * be checked. Registering a second GPU half for a benchmark is refused. */
START_TEST(every_op_has_its_references)
{
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_bench_info *bi = kb_bench_info_get((kb_bench_id)b);
        ck_assert_ptr_nonnull(bi);
        ck_assert_msg(bi->ref_cpu != NULL, "%s: no CPU reference", bi->name);
        const kb_op_gpu *g = kb_op_gpu_get((kb_bench_id)b);
        ck_assert_msg(g != NULL && g->gold != NULL, "%s: no GPU gold registered", bi->name);
        ck_assert_int_eq(g->bench, b);
        kb_op_gpu other = *g;
        kb_err e = {{0}};
        ck_assert_int_eq(kb_op_gpu_register(&other, &e), KB_ERR_ARG);
        ck_assert_int_eq(kb_op_gpu_register(g, &e), KB_OK); /* the same one again: a no-op */
    }
    ck_assert_ptr_null(kb_op_gpu_get(KB_NUM_BENCH));
}
END_TEST

Suite *kb_suite_registry(void)
{
    Suite *s = suite_create("registry");
    TCase *t = tcase_create("registry");
    tcase_add_test(t, every_benchmark_has_eager);
    tcase_add_test(t, impls_match_their_slot);
    tcase_add_test(t, register_refuses_conflicts);
    tcase_add_test(t, byte_model_worked_number);
    tcase_add_test(t, sweeps_follow_spec);
    tcase_add_test(t, case_names_round_trip);
    tcase_add_test(t, case_name_and_labels);
    tcase_add_test(t, bad_case_names);
    tcase_add_test(t, input_kinds_registered);
    tcase_add_test(t, bad_input_kinds);
    tcase_add_test(t, known_deviations);
    tcase_add_test(t, shape_parse_good);
    tcase_add_test(t, shape_parse_bad);
    tcase_add_test(t, shape_too_large_edges);
    tcase_add_test(t, bench_and_dtype_names);
    tcase_add_test(t, error_text_strips_location);
    tcase_add_test(t, out_of_memory_host_and_device);
    tcase_add_test(t, every_op_has_its_references);
    suite_add_tcase(s, t);
    return s;
}
