/* kbench's test knobs (KBENCH_TEST_EXTRA_BYTES, _EXTRA_TIME, _PERTURB,
 * _SPLIT), with which the gate's own checks make a case slower or wrong on
 * purpose: parsing and validation, and the decorator of a kb_impl that
 * applies them (knob_impl.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "registry.h"
#include "unit.h"

START_TEST(knobs_parse)
{
    kb_knobs k;
    kb_err e;
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, NULL, &k, &e), KB_OK);
    ck_assert_double_eq(k.extra_fraction, 0);
    ck_assert_double_eq(k.slow_fraction, 0);
    ck_assert_int_eq(k.perturb, KB_PERTURB_NONE);
    ck_assert_int_eq(kb_knobs_parse("eager:0.10", NULL, "tuned:skip_last", &k, &e), KB_OK);
    ck_assert_str_eq(k.extra_backend, "eager");
    ck_assert_double_eq(k.extra_fraction, 0.10);
    ck_assert_double_eq(k.slow_fraction, 0);
    ck_assert_str_eq(k.perturb_backend, "tuned");
    ck_assert_int_eq(k.perturb, KB_PERTURB_SKIP_LAST);
    ck_assert_int_eq(kb_knobs_parse("", "", "fused:scale:0.03", &k, &e), KB_OK);
    ck_assert_int_eq(k.perturb, KB_PERTURB_SCALE);
    ck_assert_double_eq(k.scale, 0.03);
    ck_assert_int_eq(kb_knobs_parse("eager", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse("eager:abc", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse("eager:0", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(":0.1", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "tuned:explode", &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "tuned:scale:", &k, &e), KB_ERR_ARG);
    /* the mutants: names round-trip, each applies where README says */
    const struct { const char *name; kb_perturb k; } m[] = {
        {"write_past_end", KB_PERTURB_WRITE_PAST_END}, {"no_max_subtraction", KB_PERTURB_NO_MAX},
        {"half_accumulation", KB_PERTURB_HALF_ACC}, {"eps_1e-5", KB_PERTURB_EPS}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "cudnn:%s", m[i].name);
        ck_assert_int_eq(kb_knobs_parse(NULL, NULL, v, &k, &e), KB_OK);
        ck_assert_int_eq(k.perturb, m[i].k);
        ck_assert_str_eq(kb_perturb_name(k.perturb), m[i].name);
    }
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "tuned:eps_1e-6", &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "tuned:scale", &k, &e), KB_ERR_ARG);
    ck_assert(kb_perturb_applies(KB_PERTURB_NO_MAX, KB_CE_FWD));
    ck_assert(!kb_perturb_applies(KB_PERTURB_NO_MAX, KB_SOFTMAX_BWD));
    ck_assert(kb_perturb_applies(KB_PERTURB_HALF_ACC, KB_LAYERNORM_FWD));
    ck_assert(!kb_perturb_applies(KB_PERTURB_HALF_ACC, KB_CE_FWD));
    ck_assert(kb_perturb_applies(KB_PERTURB_EPS, KB_RMSNORM_FWD));
    ck_assert(!kb_perturb_applies(KB_PERTURB_EPS, KB_RMSNORM_BWD));
    ck_assert(kb_perturb_applies(KB_PERTURB_WRITE_PAST_END, KB_LAYERNORM_BWD));
    ck_assert(kb_perturb_applies(KB_PERTURB_SCALE, KB_SOFTMAX_BWD));
    ck_assert(kb_knob_applies("tuned", "tuned"));
    ck_assert(kb_knob_applies("tuned", "tuned:wide"));
    ck_assert(!kb_knob_applies("tuned", "tunedx"));
    ck_assert(!kb_knob_applies("eager", "tuned"));
}
END_TEST

START_TEST(knobs_parse_extra_time)
{
    kb_knobs k;
    kb_err e;
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:0.10", NULL, &k, &e), KB_OK);
    ck_assert_str_eq(k.slow_backend, "eager");
    ck_assert_double_eq(k.slow_fraction, 0.10);
    ck_assert_double_eq(k.extra_fraction, 0);
    ck_assert_str_eq(k.extra_backend, "");
    ck_assert_int_eq(k.perturb, KB_PERTURB_NONE);
    ck_assert_int_eq(kb_knobs_parse(NULL, "tuned:10", NULL, &k, &e), KB_OK); /* upper bound in */
    ck_assert_double_eq(k.slow_fraction, 10.0);
    ck_assert_int_eq(kb_knobs_parse(NULL, "tuned:1e-3", NULL, &k, &e), KB_OK);
    ck_assert_double_eq(k.slow_fraction, 1e-3);

    /* Malformed: the variable's name and the value are in the message. */
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:abc", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_TIME"));
    ck_assert_ptr_nonnull(strstr(e.msg, "'abc'"));
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_TIME='eager': expected <backend>:<value>"));
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, ":0.1", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:0.1x", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:nan", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, "a-backend-name-far-longer-than-forty-seven-characters:0.1",
                                    NULL, &k, &e),
                     KB_ERR_ARG);

    /* Out of range: (0, 10]. */
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:0", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "is not a number in (0, 10]"));
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:-0.1", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:10.5", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_knobs_parse(NULL, "eager:inf", NULL, &k, &e), KB_ERR_ARG);

    /* Both knobs (and a perturbation) together, on different backends. */
    ck_assert_int_eq(kb_knobs_parse("tuned:0.20", "eager:0.05", "fused:skip_last", &k, &e), KB_OK);
    ck_assert_str_eq(k.extra_backend, "tuned");
    ck_assert_double_eq(k.extra_fraction, 0.20);
    ck_assert_str_eq(k.slow_backend, "eager");
    ck_assert_double_eq(k.slow_fraction, 0.05);
    ck_assert_str_eq(k.perturb_backend, "fused");
    ck_assert_int_eq(k.perturb, KB_PERTURB_SKIP_LAST);
    /* A bad time knob fails the parse even when the bytes knob is good, and
     * the message names the bad one. */
    ck_assert_int_eq(kb_knobs_parse("eager:0.1", "eager:2O", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_TIME"));
    ck_assert_ptr_null(strstr(e.msg, "KBENCH_TEST_EXTRA_BYTES"));
    ck_assert_int_eq(kb_knobs_parse("eager:abc", "eager:0.1", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_BYTES"));
}
END_TEST

/* The test knobs' backend must be one kbench has, as KBENCH_TEST_SPLIT's
 * is: nosuch:0.5 matched no series, and the knob measured nothing. */
START_TEST(knob_backends_checked)
{
    kb_knobs k;
    kb_err e;
    ck_assert_int_eq(kb_knobs_parse("nosuch:0.5", NULL, NULL, &k, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_TEST_EXTRA_BYTES='nosuch:0.5': unknown backend 'nosuch'"),
                  "%s", e.msg);
    ck_assert_int_eq(kb_knobs_parse(NULL, "nosuch:0.5", NULL, &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_EXTRA_TIME='nosuch:0.5'"));
    ck_assert_int_eq(kb_knobs_parse(NULL, NULL, "nosuch:skip_last", &k, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "KBENCH_TEST_PERTURB='nosuch:skip_last'"));
    ck_assert_int_eq(kb_knobs_parse("cublaslt_epilogue:0.5", "cudnn:0.1", "eager:skip_last", &k,
                                    &e),
                     KB_OK);
}
END_TEST

/* KBENCH_TEST_FAULT: <backend>:hang or <backend>:illegal_address; anything
 * else refused, naming the variable. */
START_TEST(knob_fault_parsed)
{
    kb_knobs k;
    kb_err e;
    memset(&k, 0, sizeof k);
    ck_assert_int_eq(kb_knobs_parse_fault(NULL, &k, &e), KB_OK);
    ck_assert_int_eq(k.fault, KB_FAULT_NONE);
    ck_assert_int_eq(kb_knobs_parse_fault("fused:hang", &k, &e), KB_OK);
    ck_assert_int_eq(k.fault, KB_FAULT_HANG);
    ck_assert_str_eq(k.fault_backend, "fused");
    ck_assert_int_eq(kb_knobs_parse_fault("eager:illegal_address", &k, &e), KB_OK);
    ck_assert_int_eq(k.fault, KB_FAULT_ILLEGAL_ADDRESS);
    ck_assert_int_eq(kb_knobs_parse_fault("fused:crash", &k, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "KBENCH_TEST_FAULT") && strstr(e.msg, "'crash'"), "%s", e.msg);
    ck_assert_int_eq(kb_knobs_parse_fault("nosuch:hang", &k, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "unknown backend 'nosuch'"), "%s", e.msg);
    ck_assert_int_eq(kb_knobs_parse_fault("hang", &k, &e), KB_ERR_ARG);
}
END_TEST

/* ---- the knobs as a decorator of a kb_impl (knob_impl.c) ---- */
typedef struct {
    int runs;
    const kb_problem *p;
    const kb_tensors *t;
    cudaStream_t s;
    kb_status status;
} fake_state;

static kb_status fake_run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                          kb_err *e)
{
    fake_state *f = state;
    f->runs++;
    f->p = p;
    f->t = t;
    f->s = s;
    return f->status == KB_OK ? KB_OK : KB_FAIL(e, f->status, "fake backend failed");
}

static int fake_kernels(const kb_problem *p, const void *state)
{
    return 100 + ((const fake_state *)state)->runs;
}

static kb_status fake_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                            size_t *ws, kb_err *e)
{
    return KB_OK;
}

static const kb_impl FAKE = {"tuned", KB_SOFTMAX_BWD, fake_setup, fake_run, NULL, NULL,
                             fake_kernels};

static kb_buffers fake_buffers(kb_bench_id bench)
{
    kb_buffers b;
    memset(&b, 0, sizeof b);
    b.p = (kb_problem){bench, KB_BF16, 64, 1000};
    return b;
}

static kb_knobs knobs(const char *bytes, const char *time, const char *perturb, const char *split)
{
    kb_knobs k;
    kb_err e;
    ck_assert_int_eq(kb_knobs_parse(bytes, time, perturb, &k, &e), KB_OK);
    ck_assert_int_eq(kb_knobs_parse_split(split, &k, &e), KB_OK);
    return k;
}

/* No knob for the series (every real run): the backend's own impl and state. */
START_TEST(knobbed_off_is_the_backend)
{
    fake_state f = {0};
    kb_buffers b = fake_buffers(KB_SOFTMAX_BWD);
    const kb_knobs none = knobs(NULL, NULL, NULL, NULL);
    const kb_knobs other = knobs("eager:0.5", "eager:0.5", "eager:scale:0.1", "eager");
    const kb_impl_use uses[] = {KB_USE_CHECKED, KB_USE_TIMED, KB_USE_TRACED};
    for (size_t i = 0; i < 3; i++) {
        kb_knobbed w;
        kb_err e;
        ck_assert_int_eq(kb_knobbed_open(&none, uses[i], &FAKE, &f, &b, "tuned", NULL, &w, &e),
                         KB_OK);
        ck_assert_ptr_eq(w.impl, &FAKE);
        ck_assert_ptr_eq(w.state, &f);
        kb_knobbed_close(&w);
        ck_assert_int_eq(kb_knobbed_open(&other, uses[i], &FAKE, &f, &b, "tuned:wide", NULL, &w,
                                         &e),
                         KB_OK);
        ck_assert_ptr_eq(w.impl, &FAKE);
        ck_assert_ptr_eq(w.state, &f);
        kb_knobbed_close(&w);
    }
    /* Each knob only where its use is: perturbation on the checked run,
     * extra bytes and time on the timed runs, the split on timed and traced. */
    struct {
        kb_knobs k;
        int wraps[3];
    } where[] = {
        {knobs(NULL, NULL, "tuned:scale:0.1", NULL), {1, 0, 0}},
        {knobs("tuned:0.5", NULL, NULL, NULL), {0, 1, 0}},
        {knobs(NULL, NULL, NULL, "tuned"), {0, 1, 1}},
        {knobs(NULL, NULL, NULL, NULL), {1, 0, 0}}, /* KBENCH_TEST_FAULT, set below */
    };
    kb_err fe;
    ck_assert_int_eq(kb_knobs_parse_fault("tuned:hang", &where[3].k, &fe), KB_OK);
    for (size_t j = 0; j < sizeof where / sizeof where[0]; j++)
        for (size_t i = 0; i < 3; i++) {
            if (i == 1 && where[j].k.extra_fraction > 0) continue; /* allocates: below */
            kb_knobbed w;
            kb_err e;
            ck_assert_int_eq(kb_knobbed_open(&where[j].k, uses[i], &FAKE, &f, &b, "tuned:wide",
                                             NULL, &w, &e),
                             KB_OK);
            ck_assert_int_eq(w.impl != &FAKE, where[j].wraps[i]);
            ck_assert_int_eq(w.state != (void *)&f, where[j].wraps[i]);
            kb_knobbed_close(&w);
        }
}
END_TEST

START_TEST(knobbed_wraps_the_backend)
{
    fake_state f = {0};
    kb_buffers b = fake_buffers(KB_SOFTMAX_BWD);
    const kb_knobs k = knobs(NULL, NULL, NULL, "tuned");
    kb_knobbed w;
    kb_err e;
    ck_assert_int_eq(kb_knobbed_open(&k, KB_USE_TRACED, &FAKE, &f, &b, "tuned", NULL, &w, &e),
                     KB_OK);
    ck_assert_ptr_ne(w.impl, &FAKE);
    ck_assert_str_eq(w.impl->backend, "tuned");
    ck_assert_int_eq(w.impl->bench, KB_SOFTMAX_BWD);
    /* the harness set up the backend itself: the wrapper has no life cycle */
    ck_assert_ptr_null(w.impl->setup);
    ck_assert_ptr_null(w.impl->teardown);
    ck_assert_ptr_null(w.impl->describe);
    /* the declared kernel count is the backend's, on its own state */
    f.runs = 7;
    ck_assert_int_eq(w.impl->kernels(&b.p, w.state), 107);
    /* run calls the backend first, with its own state; a failure is the
     * backend's, and nothing is added after it */
    f.runs = 0;
    f.status = KB_ERR_ARG;
    ck_assert_int_eq(w.impl->run(&b.p, &b.t, w.state, (cudaStream_t)0x1234, &e), KB_ERR_ARG);
    ck_assert_str_eq(e.msg, "fake backend failed");
    ck_assert_int_eq(f.runs, 1);
    ck_assert_ptr_eq(f.p, &b.p);
    ck_assert_ptr_eq(f.t, &b.t);
    ck_assert_ptr_eq(f.s, (cudaStream_t)0x1234);
    kb_knobbed_close(&w);
    /* a backend that declares no count: neither does the wrapper */
    kb_impl undeclared = FAKE;
    undeclared.kernels = NULL;
    ck_assert_int_eq(kb_knobbed_open(&k, KB_USE_TIMED, &undeclared, &f, &b, "tuned", NULL, &w,
                                     &e),
                     KB_OK);
    ck_assert_ptr_null(w.impl->kernels);
    kb_knobbed_close(&w);
}
END_TEST

/* A perturbation that does not apply to the benchmark makes the case SKIP
 * (KB_ERR_UNSUPPORTED, saying so), on its own series only. */
START_TEST(knobbed_perturb_not_applicable)
{
    fake_state f = {0};
    kb_buffers b = fake_buffers(KB_SOFTMAX_BWD);
    const kb_knobs k = knobs(NULL, NULL, "tuned:no_max_subtraction", NULL);
    kb_knobbed w;
    kb_err e;
    ck_assert_int_eq(kb_knobbed_open(&k, KB_USE_CHECKED, &FAKE, &f, &b, "tuned", NULL, &w, &e),
                     KB_ERR_UNSUPPORTED);
    ck_assert_str_eq(e.msg, "KBENCH_TEST_PERTURB: no_max_subtraction does not apply to "
                            "softmax_backward");
    ck_assert_int_eq(kb_knobbed_open(&k, KB_USE_CHECKED, &FAKE, &f, &b, "eager", NULL, &w, &e),
                     KB_OK);
    ck_assert_ptr_eq(w.impl, &FAKE);
    b = fake_buffers(KB_SOFTMAX_FWD);
    ck_assert_int_eq(kb_knobbed_open(&k, KB_USE_CHECKED, &FAKE, &f, &b, "tuned", NULL, &w, &e),
                     KB_OK);
    ck_assert_ptr_ne(w.impl, &FAKE);
    ck_assert(w.perturb);
    kb_knobbed_close(&w);
}
END_TEST

/* KBENCH_TEST_EXTRA_BYTES: a scratch of fraction x the case's byte model
 * (a GPU-less machine cannot allocate it: the error names the size). */
START_TEST(knobbed_extra_bytes)
{
    fake_state f = {0};
    kb_buffers b = fake_buffers(KB_SOFTMAX_BWD);
    const kb_knobs k = knobs("tuned:0.5", NULL, NULL, NULL);
    const size_t want = (size_t)(0.5 * kb_bytes_moved(&b.p));
    ck_assert_uint_gt(want, 0);
    kb_knobbed w;
    kb_err e;
    const kb_status st = kb_knobbed_open(&k, KB_USE_TIMED, &FAKE, &f, &b, "tuned", NULL, &w, &e);
    if (st == KB_OK) {
        ck_assert_ptr_nonnull(w.extra);
        ck_assert_uint_eq(w.extra_bytes, want);
        kb_knobbed_close(&w);
        ck_assert_ptr_null(w.extra);
    } else {
        /* Names the benchmark (no timer: no case name), the size and CUDA's reason. */
        char msg[128];
        snprintf(msg, sizeof msg, "softmax_backward: KBENCH_TEST_EXTRA_BYTES: cannot allocate %zu bytes: ",
                 want);
        ck_assert_int_eq(st, KB_ERR_CUDA);
        ck_assert_int_eq(strncmp(e.msg, msg, strlen(msg)), 0);
        ck_assert_uint_gt(strlen(e.msg), strlen(msg));
    }
}
END_TEST

Suite *kb_suite_gate_knobs(void)
{
    Suite *s = suite_create("gate_knobs");
    TCase *t = tcase_create("parse");
    tcase_add_test(t, knobs_parse);
    tcase_add_test(t, knobs_parse_extra_time);
    tcase_add_test(t, knob_backends_checked);
    tcase_add_test(t, knob_fault_parsed);
    suite_add_tcase(s, t);
    TCase *k = tcase_create("knobbed");
    tcase_add_test(k, knobbed_off_is_the_backend);
    tcase_add_test(k, knobbed_wraps_the_backend);
    tcase_add_test(k, knobbed_perturb_not_applicable);
    tcase_add_test(k, knobbed_extra_bytes);
    suite_add_tcase(s, k);
    return s;
}
