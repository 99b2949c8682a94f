/* The norm kernels' tuned search spaces as built (host code only, no GPU):
 * canon's folds, the workspace bound (occ at clusters, shift classes),
 * launches refused by name before any CUDA call, and the forward's and
 * backward's reload loops. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"
#include "tuner.h"
#include "unit.h"

/* The tuned search space of benchmark op (its id in *id); each caller
 * asserts the functions it uses. */
static const kb_tune_space *tuned_space_of(const char *op, kb_bench_id *id)
{
    kb_err e = {""};
    ck_assert_msg(kb_bench_find(op, id, &e) == KB_OK, "%s", e.msg);
    const kb_impl *impl = kb_impl_get(*id, "tuned");
    ck_assert(impl && impl->tune_space);
    return impl->tune_space;
}

/* text parsed in sp without a base (every key given; canon applied), which
 * must succeed. */
static kb_tune_cfg parsed(const kb_tune_space *sp, const char *text)
{
    kb_tune_cfg c;
    kb_err e = {""};
    ck_assert_msg(kb_tune_parse(sp, text, NULL, &c, &e) == KB_OK, "%s: %s", text, e.msg);
    return c;
}

/* text parses in sp and formats back as want: what canon makes of it. The
 * configuration parsed. */
static kb_tune_cfg expect_canon(const kb_tune_space *sp, const char *text, const char *want)
{
    const kb_tune_cfg c = parsed(sp, text);
    char got[200];
    kb_tune_format(sp, &c, got, sizeof got);
    ck_assert_str_eq(got, want);
    return c;
}

/* Stand-ins for a launch that must refuse before any CUDA call: 16-byte
 * aligned, never dereferenced. */
static void standin_tensors(kb_tensors *t)
{
    memset(t, 0, sizeof *t);
    t->x = (const void *)(uintptr_t)0x10000;
    t->dy = (const void *)(uintptr_t)0x20000;
    t->w = (const float *)(uintptr_t)0x30000;
    t->rstd = (const float *)(uintptr_t)0x40000;
    t->mean = (const float *)(uintptr_t)0x50000;
    t->out = (void *)(uintptr_t)0x60000;
    t->dw = (float *)(uintptr_t)0x70000;
}

/* The norm backward's workspace bound (one dw partial row per slot) is an
 * upper bound of the grid the launch asks for. A cluster's grid is every
 * cluster that fits, whatever occ says, so occ must not cut the bound there:
 * a bound cut by occ clamped the grid through the workspace (occ=1 at
 * 16-CTA clusters halved 1024x151936's slots on the H200, 2026-12-04).
 * Without a cluster occ still caps the grid, and the bound with it. canon
 * folds occ at clusters (one launch, one evaluation). Class-crossing slots
 * (odd N, db=3 at a cluster) write P - 1 partial rows more than slots.
 * Host code only: the bound needs no device query. */
START_TEST(norm_bwd_workspace_ignores_occ_at_clusters)
{
    static const char *const ops[] = {"layernorm_backward", "rmsnorm_backward"};
    kb_setup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.sm_count = 132;
    for (int o = 0; o < 2; o++) {
        kb_bench_id id;
        const kb_tune_space *sp = tuned_space_of(ops[o], &id);
        ck_assert(sp->workspace && sp->canon);
        const kb_problem p = {id, KB_BF16, 1024, 151936, 0};
        kb_tune_cfg one = parsed(sp, "threads=256,rows=1,cluster=16,occ=1,acc=1,reload=0,hint=0,"
                                     "db=0");
        kb_tune_cfg all;
        ck_assert_int_eq(one.v[3], 32); /* the parse applies canon */
        one.v[3] = 1;                   /* as an old cache text or a caller may hold it */
        all = one;
        all.v[3] = 32;
        const size_t ws1 = sp->workspace(&p, &ctx, &one), ws32 = sp->workspace(&p, &ctx, &all);
        ck_assert_uint_eq(ws1, ws32);
        /* 132 SMs x 8 CTAs of 256 threads / 16 per cluster = 66 slots of N floats */
        ck_assert_uint_eq(ws32, (size_t)66 * 151936 * sizeof(float));
        kb_tune_cfg c = one;
        sp->canon(&c);
        ck_assert_int_eq(c.v[3], 32);
        /* no cluster: occ caps the grid and the bound (132 x 1 slots) */
        one.v[2] = all.v[2] = 1;
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &one), (size_t)132 * 151936 * sizeof(float));
        ck_assert_uint_lt(sp->workspace(&p, &ctx, &one), sp->workspace(&p, &ctx, &all));
        c = one;
        sp->canon(&c);
        ck_assert_int_eq(c.v[3], 1);
        /* shifted rows (odd N): at least one slot per shift class (8 for bf16) */
        const kb_problem odd = {id, KB_BF16, 3, 50257, 0};
        all.v[2] = 8;
        ck_assert_uint_ge(sp->workspace(&odd, &ctx, &all), (size_t)8 * 50257 * sizeof(float));
        /* db=3 at a cluster: class-crossing slots, a partial row per slot
         * and class it covers: 132 x 8 CTAs of 256 threads / 8 per cluster
         * = 132 slots, + 7; db=2 (whole classes): the slots alone */
        const kb_problem odd2 = {id, KB_BF16, 4096, 50257, 0};
        all.v[7] = 3;
        ck_assert_uint_eq(sp->workspace(&odd2, &ctx, &all),
                          (size_t)(132 + 7) * 50257 * sizeof(float));
        all.v[7] = 2;
        ck_assert_uint_eq(sp->workspace(&odd2, &ctx, &all), (size_t)132 * 50257 * sizeof(float));
        all.v[7] = 3; /* aligned rows: one class, db=3 runs as db=2 */
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &all), (size_t)132 * 151936 * sizeof(float));
    }
}
END_TEST

/* The norm forward's staged loop (reload=8) may split a row over a
 * cluster (fwd_stage_cl); the re-reading loops (reload 1, 2, 4) run one CTA
 * per row. A cluster on one of those is refused with the value named, before
 * anything reaches the GPU (the launch used to drop the cluster silently),
 * and canon folds occ 1-16 of a staged cluster into one configuration (every
 * cluster that fits), leaving occ alone without a cluster, where it caps
 * CTAs per SM. Host code only. */
START_TEST(norm_fwd_cluster_only_on_the_staged_loop)
{
    static const char *const ops[] = {"layernorm_forward", "rmsnorm_forward"};
    for (int o = 0; o < 2; o++) {
        kb_bench_id id;
        kb_err e = {""};
        const kb_tune_space *sp = tuned_space_of(ops[o], &id);
        ck_assert(sp->launch && sp->canon);
        const kb_tune_cfg c = parsed(sp, "threads=512,rows=1,cluster=4,occ=6,db=0,reload=8,hint=0");
        ck_assert_int_eq(c.v[3], 1); /* the parse applies canon */
        kb_tune_cfg one = c;
        one.v[2] = 1;
        one.v[3] = 6;
        sp->canon(&one);
        ck_assert_int_eq(one.v[3], 6);
        /* reload=2 with a cluster: refused before any CUDA call */
        const kb_problem p = {id, KB_BF16, 1024, 151936, 0};
        kb_tensors t;
        standin_tensors(&t);
        kb_tune_cfg bad = c;
        bad.v[5] = 2;
        e.msg[0] = '\0';
        ck_assert_int_eq(sp->launch(&p, &t, &bad, NULL, &e), KB_ERR_ARG);
        ck_assert_msg(strstr(e.msg, "cluster=4 needs reload=8") && strstr(e.msg, "1024x151936"),
                      "%s", e.msg);
    }
}
END_TEST

/* The tuned norm backward deals shifted rows (16-bit, N % 8 != 0) out by
 * shift class: rows r, r+P, r+2P, ... with P = 8 / gcd(N, 8) share a slot's
 * columns, and every class needs its own dw partial rows. Its launch refuses
 * a workspace without one partial row per class, so the workspace a case
 * asks for (from hardware limits alone, before any launch) must cover P rows
 * even when M < P: otherwise the case would fail only on a GPU. fp32 and
 * aligned rows keep one class, and ask for no more than before. */
#define WS_SMALL "threads=8,rows=4,cluster=1,occ=32,acc=0,reload=0,hint=0,db=0"
/* 1 SM, 16-CTA clusters of 32 threads: 2 slots fit, fewer than P = 8 */
#define WS_FEW "threads=32,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0"
/* the double-buffered kernel (aligned rows): the same partial rows */
#define WS_DB "threads=512,rows=1,cluster=1,occ=1,acc=1,reload=0,hint=1,db=1"
static const struct {
    const char *op;
    kb_dtype dtype;
    int64_t M, N;
    const char *cfg;
    int sms;
    int64_t rows; /* the partial rows the workspace must hold */
    int exact;    /* and not more */
} ws_cases[] = {
    {"rmsnorm_backward", KB_BF16, 3, 37, WS_SMALL, 132, 8, 1},      /* P = 8 > M      */
    {"layernorm_backward", KB_FP16, 1, 50257, WS_SMALL, 132, 8, 1}, /* P = 8, one row */
    {"rmsnorm_backward", KB_BF16, 2, 4094, WS_SMALL, 132, 4, 1},    /* P = 4          */
    {"layernorm_backward", KB_BF16, 1, 4092, WS_SMALL, 132, 2, 1},  /* P = 2          */
    {"rmsnorm_backward", KB_BF16, 40000, 4095, WS_SMALL, 132, 8, 0}, /* many rows     */
    {"layernorm_backward", KB_BF16, 4096, 4095, WS_FEW, 1, 8, 1},   /* fit < P        */
    {"rmsnorm_backward", KB_FP32, 3, 37, WS_SMALL, 132, 1, 1},      /* element access */
    {"layernorm_backward", KB_BF16, 3, 4096, WS_SMALL, 132, 1, 1},  /* aligned        */
    {"rmsnorm_backward", KB_BF16, 300, 4096, WS_DB, 132, 132, 1},   /* one per SM     */
};

START_TEST(norm_backward_workspace_covers_shift_classes)
{
    kb_bench_id id;
    const kb_tune_space *sp = tuned_space_of(ws_cases[_i].op, &id);
    ck_assert(sp->workspace);
    const kb_tune_cfg c = parsed(sp, ws_cases[_i].cfg);
    const kb_problem p = {id, ws_cases[_i].dtype, ws_cases[_i].M, ws_cases[_i].N, 0};
    kb_setup_ctx ctx = {0};
    ctx.sm_count = ws_cases[_i].sms;
    const size_t ws = sp->workspace(&p, &ctx, &c);
    const size_t need = (size_t)ws_cases[_i].rows * (size_t)ws_cases[_i].N * sizeof(float);
    if (ws_cases[_i].exact) ck_assert_uint_eq(ws, need);
    else ck_assert_uint_ge(ws, need);
}
END_TEST

/* The backward's reload fallback runs neither the hint's stores nor the
 * double buffer: canon folds those texts into one configuration, so the
 * search never times the same kernels twice under two names. */
START_TEST(norm_backward_reload_ignores_hint_and_db)
{
    kb_bench_id id;
    const kb_tune_space *sp = tuned_space_of("layernorm_backward", &id);
    const kb_tune_cfg a =
        parsed(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,hint=1,db=1");
    const kb_tune_cfg b =
        parsed(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,hint=0,db=0");
    ck_assert_mem_eq(&a, &b, sizeof a);
    /* held rows keep both */
    expect_canon(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=0,hint=1,db=1",
                 "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=0,hint=1,db=1");
}
END_TEST

/* The forward's `reload` is the re-reading loop's slots per thread per step
 * (1, 2, 4; 8 stages the row in shared memory; 0 holds the row in
 * registers); the backward's stays 0/1. Any
 * loop value folds hint 2 into 1 (the loop's loads ignore it). */
START_TEST(norm_forward_reload_is_slots_per_step)
{
    static const char *ops[] = {"layernorm_forward", "rmsnorm_forward"};
    kb_err e = {{0}};
    for (int i = 0; i < 2; i++) {
        kb_bench_id id;
        const kb_tune_space *sp = tuned_space_of(ops[i], &id);
        kb_tune_cfg c;
        char text[200];
        for (int u = 0; u <= 8; u++) {
            snprintf(text, sizeof text,
                     "threads=256,rows=1,cluster=1,occ=32,db=0,reload=%d,hint=0", u);
            const int ok = u == 0 || u == 1 || u == 2 || u == 4 || u == 8;
            ck_assert_msg((kb_tune_parse(sp, text, NULL, &c, &e) == KB_OK) == ok, "%s %s", ops[i],
                          text);
        }
        expect_canon(sp, "threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,hint=2",
                     "threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,hint=1");
        /* the loop ignores db, and runs occ 0 as occ = all (one CTA per
         * row): one configuration, one timing */
        expect_canon(sp, "threads=512,rows=1,cluster=1,occ=0,db=1,reload=2,hint=0",
                     "threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0");
        /* occ 1-16 caps the loop's CTAs per SM (fewer rows in flight): kept */
        expect_canon(sp, "threads=512,rows=1,cluster=1,occ=2,db=1,reload=2,hint=0",
                     "threads=512,rows=1,cluster=1,occ=2,db=0,reload=2,hint=0");
        /* held rows keep them */
        expect_canon(sp, "threads=512,rows=1,cluster=1,occ=0,db=1,reload=0,hint=2",
                     "threads=512,rows=1,cluster=1,occ=0,db=1,reload=0,hint=2");
        /* The heuristic's odd-N loop: two slots in flight from 16K columns,
         * one below (variants timed on the H200, 2026-12-03); it decides
         * without the GPU.
         * With the GPU's shared memory known (H200: 227 KB a CTA), rows
         * beyond 16K columns that fit it are staged there (reload=8, 512
         * threads; fp32 1024); 4095 stays on the loop, and a row that does
         * not fit keeps it too (fp32 65535: 256 KB). */
        static const struct {
            kb_dtype d;
            int64_t M, N;
            size_t optin;
            const char *cfg;
        } hc[] = {
            {KB_BF16, 4096, 50257, 0, "threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0"},
            {KB_BF16, 32768, 4095, 0, "threads=64,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0"},
            {KB_BF16, 4096, 50257, 232448,
             "threads=512,rows=1,cluster=1,occ=32,db=0,reload=8,hint=0"},
            {KB_FP32, 4096, 50257, 232448,
             "threads=1024,rows=1,cluster=1,occ=32,db=0,reload=8,hint=0"},
            {KB_FP32, 4096, 65535, 232448,
             "threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0"},
            {KB_BF16, 32768, 4095, 232448,
             "threads=64,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0"},
        };
        for (size_t h = 0; h < sizeof hc / sizeof hc[0]; h++) {
            kb_setup_ctx ctx = {0};
            ctx.sm_count = 132;
            ctx.smem_optin = hc[h].optin;
            const kb_problem hp = {id, hc[h].d, hc[h].M, hc[h].N, 0};
            sp->heuristic(&hp, &ctx, &c);
            kb_tune_format(sp, &c, text, sizeof text);
            ck_assert_msg(strcmp(text, hc[h].cfg) == 0, "%s %s %lldx%lld optin %zu: %s, not %s",
                          ops[i], kb_dtype_name(hc[h].d), (long long)hc[h].M, (long long)hc[h].N,
                          hc[h].optin, text, hc[h].cfg);
        }
    }
    /* the backward's loop takes reload 2, 4, 8 but no other step */
    kb_bench_id id;
    kb_tune_cfg c;
    ck_assert_int_ne(kb_tune_parse(tuned_space_of("layernorm_backward", &id),
                                   "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=3,hint=0,db=0",
                                   NULL, &c, &e),
                     KB_OK);
}
END_TEST

/* The norm backward's loop (reload 2, 4, 8: bwd_loop, U packs a step) is a
 * configuration of its own: canon folds what it ignores (the double buffer;
 * acc, its dw accumulators being in shared memory always) and keeps what it
 * runs (rows, occ, the stores' hint); it launches two kernels (the loop and
 * dw_reduce), sizes the workspace as the persistent grid's partial rows (a
 * cluster's one), and refuses rows it cannot read as 16-byte slots (fp32 at
 * odd N) and row slots beside a cluster by name, before any CUDA call. Host
 * code only. */
START_TEST(norm_backward_loop_is_its_own_configuration)
{
    static const char *const ops[] = {"layernorm_backward", "rmsnorm_backward"};
    for (int o = 0; o < 2; o++) {
        kb_bench_id id;
        kb_err e = {""};
        const kb_tune_space *sp = tuned_space_of(ops[o], &id);
        ck_assert(sp->launch && sp->canon && sp->workspace && sp->kernels);
        kb_tune_cfg c, d;
        for (int u = 2; u <= 8; u *= 2) {
            char in[200], want[200];
            snprintf(in, sizeof in, "threads=256,rows=2,cluster=1,occ=4,acc=0,reload=%d,hint=1,db=2",
                     u);
            snprintf(want, sizeof want,
                     "threads=256,rows=2,cluster=1,occ=4,acc=1,reload=%d,hint=1,db=0", u);
            c = expect_canon(sp, in, want); /* after the loop: reload=8's */
        }
        const kb_problem p = {id, KB_BF16, 32768, 8192, 0};
        kb_setup_ctx ctx = {0};
        ctx.sm_count = 132;
        ck_assert_int_eq(sp->kernels(&p, &c), 2);
        /* 256-thread CTAs of 2 row slots: at most 4 per SM by threads, occ 4 */
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &c), (size_t)132 * 4 * 8192 * sizeof(float));
        d = parsed(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,hint=0,db=0");
        ck_assert_int_eq(sp->kernels(&p, &d), 3);
        kb_tensors t;
        standin_tensors(&t);
        /* odd 16-bit rows run bwd_reg's shifted slots, one class a CTA: the
         * workspace holds the persistent grid's partial rows (128-thread
         * CTAs: 16 per SM); fp32 at odd N has element accesses only */
        const kb_problem odd = {id, KB_BF16, 32768, 4095, 0};
        d = parsed(sp, "threads=128,rows=1,cluster=1,occ=32,acc=1,reload=4,hint=0,db=0");
        ck_assert_uint_eq(sp->workspace(&odd, &ctx, &d), (size_t)132 * 16 * 4095 * sizeof(float));
        const kb_problem odd32 = {id, KB_FP32, 32768, 4095, 0};
        e.msg[0] = '\0';
        ck_assert_int_eq(sp->launch(&odd32, &t, &c, NULL, &e), KB_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(e.msg, "reload=8 reads 16-byte slots") &&
                          strstr(e.msg, "fp32 32768x4095"),
                      "%s", e.msg);
        /* a cluster splits each row: one row slot a CTA */
        d = parsed(sp, "threads=256,rows=2,cluster=2,occ=32,acc=1,reload=4,hint=0,db=0");
        e.msg[0] = '\0';
        ck_assert_int_eq(sp->launch(&p, &t, &d, NULL, &e), KB_ERR_ARG);
        ck_assert_msg(strstr(e.msg, "rows=2 cluster=2") && strstr(e.msg, "rows 1 at a cluster") &&
                          strstr(e.msg, "32768x8192"),
                      "%s", e.msg);
        /* the workspace at a cluster: a partial row per cluster that fits
         * (every one, whatever occ says: canon) */
        d = parsed(sp, "threads=256,rows=1,cluster=4,occ=2,acc=1,reload=8,hint=0,db=0");
        ck_assert_int_eq(d.v[3], 32);
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &d), (size_t)132 * 8 / 4 * 8192 * sizeof(float));
    }
}
END_TEST

Suite *kb_suite_tuner_norm(void)
{
    Suite *s = suite_create("tuner_norm");
    TCase *tc = tcase_create("norm");
    tcase_add_loop_test(tc, norm_backward_workspace_covers_shift_classes, 0,
                        (int)(sizeof ws_cases / sizeof ws_cases[0]));
    tcase_add_test(tc, norm_backward_reload_ignores_hint_and_db);
    tcase_add_test(tc, norm_forward_reload_is_slots_per_step);
    tcase_add_test(tc, norm_backward_loop_is_its_own_configuration);
    tcase_add_test(tc, norm_bwd_workspace_ignores_occ_at_clusters);
    tcase_add_test(tc, norm_fwd_cluster_only_on_the_staged_loop);
    suite_add_tcase(s, tc);
    return s;
}
