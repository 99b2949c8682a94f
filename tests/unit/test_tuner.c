/* The tuned backend's configuration machinery, CPU only: parse/format,
 * shape buckets, the coordinate-descent search on synthetic cost functions
 * (diagonal moves, canon, validity) and the hardware fit check. The cache
 * and kb_tuned_setup are test_tuner_cache.c's, the norm kernels' real
 * spaces test_tuner_norm.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwfit.h"
#include "tuner_util.h"
#include "unit.h"

/* ---- parse / format ------------------------------------------------------- */
START_TEST(parse_format_round_trip)
{
    kb_err e = {""};
    kb_tune_cfg c, base = cfg3(128, 1, 1);
    ck_assert_int_eq(kb_tune_parse(&space, "threads=256,rows=2,cluster=4", &base, &c, &e), KB_OK);
    ck_assert_int_eq(c.v[0], 256);
    ck_assert_int_eq(c.v[1], 2);
    ck_assert_int_eq(c.v[2], 4);
    char buf[128];
    kb_tune_format(&space, &c, buf, sizeof buf);
    ck_assert_str_eq(buf, "threads=256,rows=2,cluster=4");
    kb_tune_cfg d;
    ck_assert_int_eq(kb_tune_parse(&space, buf, NULL, &d, &e), KB_OK);
    ck_assert_mem_eq(&c, &d, sizeof c);

    /* Keys left out keep the base; order and spaces do not matter. */
    ck_assert_int_eq(kb_tune_parse(&space, " cluster = 8 , threads=64 ", &base, &c, &e), KB_OK);
    ck_assert_int_eq(c.v[0], 64);
    ck_assert_int_eq(c.v[1], 1);
    ck_assert_int_eq(c.v[2], 8);
    ck_assert_int_eq(kb_tune_parse(&space, "", &base, &c, &e), KB_OK);
    ck_assert_mem_eq(&c, &base, sizeof c);

    /* A short buffer truncates instead of overflowing. */
    char small[8];
    kb_tune_format(&space, &d, small, sizeof small);
    ck_assert_str_eq(small, "threads");
}
END_TEST

static const struct {
    const char *text, *needle;
} bad_texts[] = {
    {"thread=256", "unknown launch parameter 'thread'"},
    {"threads=300", "threads=300 is not one of 32|64|128|256|512"},
    {"threads=abc", "'threads' needs an integer value"},
    {"threads=", "'threads' needs an integer value"},
    {"threads=64x", "unexpected 'x'"},
    {"threads", "expected key=value"},
    {"=4", "expected key=value"},
    {"threads=64,", "trailing ','"},
    {"rows=2,rows=4", "'rows' given twice"},
    {"cluster=99999999999", "'cluster' needs an integer value"},
    {"threads=64;rows=2", "unexpected ';'"},
};

START_TEST(parse_rejects_bad_text)
{
    kb_err e = {""};
    kb_tune_cfg base = cfg3(128, 1, 1), c = cfg3(7, 7, 7);
    kb_status st = kb_tune_parse(&space, bad_texts[_i].text, &base, &c, &e);
    ck_assert_int_eq(st, KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, bad_texts[_i].needle), "'%s': message '%s' lacks '%s'",
                  bad_texts[_i].text, e.msg, bad_texts[_i].needle);
    ck_assert_int_eq(c.v[0], 7); /* out untouched on error */
}
END_TEST

START_TEST(parse_without_base_needs_every_key)
{
    kb_err e = {""};
    kb_tune_cfg c;
    ck_assert_int_eq(kb_tune_parse(&space, "threads=64,rows=2", NULL, &c, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "'cluster' missing"));
}
END_TEST

/* ---- buckets ---------------------------------------------------------------- */
START_TEST(bucket_rounds_up_and_flags_unaligned)
{
    static const struct {
        kb_dtype d;
        int64_t N;
        const char *want;
    } t[] = {
        {KB_BF16, 4096, "N<=4096"},
        {KB_BF16, 4095, "N<=4096,unaligned"},
        {KB_BF16, 4097, "N<=8192,unaligned"},
        {KB_BF16, 4104, "N<=8192"},
        {KB_BF16, 1, "N<=1,unaligned"},
        {KB_BF16, 8, "N<=8"},
        {KB_FP16, 50257, "N<=65536,unaligned"},
        {KB_BF16, 128256, "N<=131072"},
        {KB_BF16, 151936, "N<=262144"},
        {KB_FP32, 4, "N<=4"},
        {KB_FP32, 6, "N<=8,unaligned"},
        {KB_FP32, 262144, "N<=262144"},
        {KB_FP32, (int64_t)1 << 40, "N<=1099511627776"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char buf[64], want[64];
        kb_tune_bucket(t[i].d, 32768, t[i].N, 0, buf, sizeof buf);
        snprintf(want, sizeof want, "%s,M<=32768", t[i].want);
        ck_assert_msg(strcmp(buf, want) == 0, "N=%lld: got %s, want %s", (long long)t[i].N, buf,
                      want);
    }
    /* M is rounded up to a power of two too: the grid matters as much as the row;
     * a 3-D problem's K (rope's kv heads) is its own class: 8 and 32 are two entries */
    static const struct {
        int64_t M, N, K;
        const char *want;
    } mk[] = {
        {1, 32768, 0, "N<=32768,M<=1"},
        {1024, 151936, 0, "N<=262144,M<=1024"},
        {1025, 151936, 0, "N<=262144,M<=2048"},
        {1152000, 4095, 0, "N<=4096,unaligned,M<=2097152"},
        {8192, 32, 8, "N<=32,M<=8192,K<=8"},
        {8192, 32, 32, "N<=32,M<=8192,K<=32"},
        {4099, 5, 3, "N<=8,unaligned,M<=8192,K<=4"},
    };
    for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
        char buf[64];
        kb_tune_bucket(KB_BF16, mk[i].M, mk[i].N, mk[i].K, buf, sizeof buf);
        ck_assert_str_eq(buf, mk[i].want);
    }
    ck_assert_int_eq(kb_tune_rows_class(576000), 1048576);
    ck_assert_int_eq(kb_tune_rows_class(0), 1);
}
END_TEST

/* ---- search ------------------------------------------------------------------- */
typedef struct {
    int calls;
    int target[3];
    int seen_invalid;
    int fail_at; /* call number that returns an error, or 0 */
} synth;

static double lg(int v) { return log2((double)v); }

/* Separable bowl in log2 space with its minimum at target. */
static kb_status bowl(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    synth *s = (synth *)arg;
    s->calls++;
    if (s->fail_at && s->calls == s->fail_at) return KB_FAIL(e, KB_ERR_CUDA, "boom");
    if (!valid(&prob, NULL, c)) s->seen_invalid++;
    double d = 0;
    for (int i = 0; i < 3; i++) d += (lg(c->v[i]) - lg(s->target[i])) * (lg(c->v[i]) - lg(s->target[i]));
    *cost = 1.0 + d;
    return KB_OK;
}

/* kb_tune_search of sp for prob from start, cost(s) timing at most
 * max_evals configurations, which must succeed: the best configuration,
 * its cost in *cost, the evaluations in *evals (NULL: not asked for). */
static kb_tune_cfg search_ok(const kb_tune_space *sp, kb_tune_cfg start, kb_tune_cost_fn cost_fn,
                             synth *s, int max_evals, double *cost, int *evals)
{
    kb_tune_cfg best;
    kb_err e = {""};
    ck_assert_msg(kb_tune_search(sp, &prob, NULL, &start, cost_fn, s, max_evals, &best, cost,
                                 evals, &e) == KB_OK,
                  "%s", e.msg);
    return best;
}

/* c is (a, b, d) in its first three parameters. */
static void expect_cfg3(const kb_tune_cfg *c, int a, int b, int d)
{
    ck_assert_int_eq(c->v[0], a);
    ck_assert_int_eq(c->v[1], b);
    ck_assert_int_eq(c->v[2], d);
}

START_TEST(search_finds_bowl_minimum)
{
    synth s = {0, {64, 4, 16}, 0, 0};
    double cost = 0;
    int evals = 0;
    const kb_tune_cfg best = search_ok(&space, cfg3(512, 1, 1), bowl, &s, 100, &cost, &evals);
    expect_cfg3(&best, 64, 4, 16);
    ck_assert_double_eq_tol(cost, 1.0, 1e-12);
    ck_assert_int_eq(evals, s.calls); /* each configuration timed once */
    ck_assert_int_eq(s.seen_invalid, 0);
    ck_assert_int_lt(evals, 5 * 4 * 5); /* cheaper than the full grid */
}
END_TEST

/* A space whose third parameter matters only when the second is above its
 * first choice (softmax backward's xchg, which matters only with a
 * cluster): canon resets it, so parsed texts and the search's candidates
 * name one kernel one way and no kernel is timed twice. */
static void canon_rows(kb_tune_cfg *c)
{
    if (c->v[1] == 1) c->v[2] = 1;
}

static const kb_tune_space canon_space = {
    "softmax_backward", 3, {"threads", "rows", "cluster"}, {5, 4, 5},
    {{32, 64, 128, 256, 512}, {1, 2, 4, 8}, {1, 2, 4, 8, 16}},
    heur, valid, NULL, no_launch, NULL, canon_rows,
};

/* The bowl, recording whether a non-canonical candidate reached the timer. */
static int saw_noncanonical;
static kb_status canon_bowl(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    if (c->v[1] == 1 && c->v[2] != 1) saw_noncanonical++;
    return bowl(arg, c, cost, e);
}

START_TEST(canon_merges_equivalent_configs)
{
    kb_err e = {""};
    kb_tune_cfg base = cfg3(128, 2, 4), c;
    ck_assert_int_eq(kb_tune_parse(&canon_space, "rows=1", &base, &c, &e), KB_OK);
    ck_assert_int_eq(c.v[2], 1); /* inherited cluster=4 does not matter at rows=1 */
    ck_assert_int_eq(kb_tune_parse(&canon_space, "rows=1,cluster=8", &base, &c, &e), KB_OK);
    ck_assert_int_eq(c.v[2], 1);
    ck_assert_int_eq(kb_tune_parse(&canon_space, "rows=2,cluster=8", &base, &c, &e), KB_OK);
    ck_assert_int_eq(c.v[2], 8); /* matters here: kept */

    /* Minimum at rows=1: every cluster value there is one kernel, timed once. */
    synth s = {0, {64, 1, 1}, 0, 0};
    double cost = 0;
    int evals = 0;
    saw_noncanonical = 0;
    const kb_tune_cfg best =
        search_ok(&canon_space, cfg3(256, 2, 1), canon_bowl, &s, 100, &cost, &evals);
    ck_assert_int_eq(saw_noncanonical, 0);
    ck_assert_int_eq(evals, s.calls);
    ck_assert_int_eq(best.v[1], 1);
    ck_assert_int_eq(best.v[2], 1); /* the result is canonical too */
}
END_TEST

START_TEST(search_respects_validity)
{
    /* The bowl's minimum (512 threads x 8 rows) is invalid: the best valid
     * point on the threads*rows <= 512 frontier wins instead. */
    synth s = {0, {512, 8, 1}, 0, 0};
    double cost;
    kb_tune_cfg best = search_ok(&space, cfg3(32, 1, 1), bowl, &s, 100, &cost, NULL);
    ck_assert_int_eq(s.seen_invalid, 0);
    ck_assert(valid(&prob, NULL, &best));
    ck_assert_int_eq(best.v[0] * best.v[1], 512);

    /* An invalid start is refused. */
    kb_err e = {""};
    kb_tune_cfg bad = cfg3(512, 8, 1);
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &bad, bowl, &s, 100, &best, &cost, NULL,
                                    &e),
                     KB_ERR_ARG);
}
END_TEST

START_TEST(search_caps_evaluations)
{
    synth s = {0, {32, 8, 16}, 0, 0};
    double cost;
    int evals;
    const kb_tune_cfg best = search_ok(&space, cfg3(512, 1, 1), bowl, &s, 4, &cost, &evals);
    ck_assert_int_eq(evals, 4);
    ck_assert_int_eq(s.calls, 4);
    ck_assert(valid(&prob, NULL, &best));
    ck_assert_double_lt(cost, 1.0 + 16 + 9 + 16); /* moved away from the start */
}
END_TEST

/* A far choice behind worse neighbours: threads=32 is best, but every step
 * down from 512 costs more, so one-step moves stay at 512; the end-choice
 * probe finds 32 and the descent goes on from there (rows to 4). */
static kb_status ridge(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    synth *s = (synth *)arg;
    s->calls++;
    const double t = c->v[0] == 32 ? 50.0 : 100.0 + (512 - c->v[0]) / 8.0;
    *cost = t - (c->v[1] == 2 ? 5.0 : c->v[1] == 4 ? 10.0 : c->v[1] == 8 ? 8.0 : 0.0);
    return KB_OK;
}

START_TEST(search_reaches_far_choice)
{
    synth s = {0, {0, 0, 0}, 0, 0};
    double cost;
    int evals;
    kb_tune_cfg best = search_ok(&space, cfg3(512, 1, 1), ridge, &s, 100, &cost, &evals);
    ck_assert_int_eq(best.v[0], 32);
    ck_assert_int_eq(best.v[1], 4);
    ck_assert_double_eq_tol(cost, 40.0, 1e-12);
    ck_assert_int_eq(evals, s.calls);

    /* Without the budget for the probe, the local minimum is what comes back. */
    s.calls = 0;
    best = search_ok(&space, cfg3(512, 1, 1), ridge, &s, 4, &cost, &evals);
    ck_assert_int_eq(evals, 4);
    ck_assert_int_ne(best.v[0], 32);
}
END_TEST

/* Moves that gain 1 % or less are noise and are not taken. */
static kb_status flat(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    synth *s = (synth *)arg;
    s->calls++;
    *cost = 100.0 - (c->v[0] == 256 ? 0.9 : 0) - (c->v[1] == 2 ? 5.0 : 0);
    if (c->v[2] == 2) *cost = INFINITY; /* cannot run */
    return KB_OK;
}

START_TEST(search_ignores_gains_within_noise)
{
    synth s = {0, {0, 0, 0}, 0, 0};
    double cost;
    const kb_tune_cfg best = search_ok(&space, cfg3(128, 1, 1), flat, &s, 100, &cost, NULL);
    /* threads 256 is 0.9 % better: stays at 128; rows 2 is 5 % better: moves */
    expect_cfg3(&best, 128, 2, 1);
    ck_assert_double_eq_tol(cost, 95.0, 1e-12);
}
END_TEST

/* All directions: from (128,2,1), two parameters moved together first
 * (threads with rows, threads with cluster, rows with cluster), then all
 * three; threads*rows <= 512 and cluster <= 16 prune before any timing. */
START_TEST(diagonals_enumerate_valid_multi_moves)
{
    kb_tune_cfg out[KB_TUNE_MAX_DIAGONALS];
    const kb_tune_cfg c = cfg3(128, 2, 1);
    const int n = kb_tune_diagonals(&space, &prob, NULL, &c, out, KB_TUNE_MAX_DIAGONALS);
    static const int want[][3] = {
        {64, 1, 1},  {256, 1, 1}, {64, 4, 1},            /* threads x rows; 256x4 pruned */
        {64, 2, 2},  {256, 2, 2},                        /* threads x cluster (none below 1) */
        {128, 1, 2}, {128, 4, 2},                        /* rows x cluster */
        {64, 1, 2},  {256, 1, 2}, {64, 4, 2},            /* all three */
    };
    ck_assert_int_eq(n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < n; i++) {
        ck_assert_msg(out[i].v[0] == want[i][0] && out[i].v[1] == want[i][1] &&
                          out[i].v[2] == want[i][2],
                      "diagonal %d: %d,%d,%d", i, out[i].v[0], out[i].v[1], out[i].v[2]);
        ck_assert(valid(&prob, NULL, &out[i]));
    }
    /* The cap is honoured; one-parameter moves are never listed. */
    ck_assert_int_eq(kb_tune_diagonals(&space, &prob, NULL, &c, out, 4), 4);
    /* On a problem with no room for clusters, every cluster move is pruned. */
    const kb_problem narrow = {KB_SOFTMAX_FWD, KB_BF16, 1024, 4096};
    ck_assert_int_eq(kb_tune_diagonals(&space, &narrow, NULL, &c, out, KB_TUNE_MAX_DIAGONALS), 3);
}
END_TEST

/* A move that pays only when two parameters change together: from
 * (128,2,1) every one-parameter move and end probe costs more, but
 * (256,1,1) -- more threads, fewer rows -- costs less. */
static kb_status pair_only(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    synth *s = (synth *)arg;
    s->calls++;
    if (!valid(&prob, NULL, c)) s->seen_invalid++;
    *cost = c->v[0] == 128 && c->v[1] == 2 && c->v[2] == 1   ? 100.0
            : c->v[0] == 256 && c->v[1] == 1 && c->v[2] == 1 ? 90.0
                                                             : 110.0;
    return KB_OK;
}

/* A middle choice invalid together with the others, as the norm backward's
 * db=1 (registers: NV <= 2) on a long row: threads x acc x db, db=1 only at
 * 128 threads. From (128,1,0) the best layout (256,0,2) is three parameters
 * away and its one-step diagonal (256,0,1) is invalid: the diagonal walks on
 * along its own directions to db=2 (threads 512 first: invalid too). */
static int valid_db(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    return c->v[2] != 1 || c->v[0] == 128;
}

static const kb_tune_space space_db = {
    "softmax_forward",
    3,
    {"threads", "acc", "db"},
    {3, 2, 3},
    {{128, 256, 512}, {0, 1}, {0, 1, 2}},
    heur,
    valid_db,
    NULL,
    no_launch,
    NULL,
};

static kb_status far_db(void *arg, const kb_tune_cfg *c, double *cost, kb_err *e)
{
    synth *s = (synth *)arg;
    s->calls++;
    if (!valid_db(&prob, NULL, c)) s->seen_invalid++;
    *cost = c->v[0] == 128 && c->v[1] == 1 && c->v[2] == 0   ? 100.0
            : c->v[0] == 256 && c->v[1] == 0 && c->v[2] == 2 ? 80.0
                                                             : 110.0;
    return KB_OK;
}

START_TEST(diagonals_walk_past_invalid_middle_choice)
{
    kb_tune_cfg out[KB_TUNE_MAX_DIAGONALS];
    const kb_tune_cfg c = cfg3(128, 1, 0);
    const int n = kb_tune_diagonals(&space_db, &prob, NULL, &c, out, KB_TUNE_MAX_DIAGONALS);
    int found = 0;
    for (int i = 0; i < n; i++) {
        ck_assert(valid_db(&prob, NULL, &out[i]));
        for (int j = 0; j < i; j++)
            ck_assert_msg(memcmp(out[i].v, out[j].v, 3 * sizeof(int)) != 0,
                          "diagonal %d repeats %d", i, j);
        found += out[i].v[0] == 256 && out[i].v[1] == 0 && out[i].v[2] == 2;
    }
    ck_assert_int_eq(found, 1);
    /* threads x db: (256,1,1) walks to (256,1,2); acc x db: (128,0,1) is valid
     * as it is (db=1 at 128 threads) and stays. */
    int walked = 0, kept = 0;
    for (int i = 0; i < n; i++) {
        walked += out[i].v[0] == 256 && out[i].v[1] == 1 && out[i].v[2] == 2;
        kept += out[i].v[0] == 128 && out[i].v[1] == 0 && out[i].v[2] == 1;
    }
    ck_assert_int_eq(walked, 1);
    ck_assert_int_eq(kept, 1);

    synth s = {0, {0, 0, 0}, 0, 0};
    double cost;
    const kb_tune_cfg best = search_ok(&space_db, c, far_db, &s, 200, &cost, NULL);
    expect_cfg3(&best, 256, 0, 2);
    ck_assert_double_eq_tol(cost, 80.0, 1e-12);
    ck_assert_int_eq(s.seen_invalid, 0);
}
END_TEST

START_TEST(search_checks_all_directions)
{
    synth s = {0, {0, 0, 0}, 0, 0};
    double cost;
    int evals;
    const kb_tune_cfg best = search_ok(&space, cfg3(128, 2, 1), pair_only, &s, 200, &cost, &evals);
    expect_cfg3(&best, 256, 1, 1);
    ck_assert_double_eq_tol(cost, 90.0, 1e-12);
    ck_assert_int_eq(s.seen_invalid, 0); /* pruned, never timed */
    ck_assert_int_eq(evals, s.calls);
}
END_TEST

/* The hardware check the tuned kernels' valid() make before any timing. */
START_TEST(launch_fits_decides_from_queries)
{
    kb_launch_need n = kb_launch_need_init(256, 1, 0);
    /* nothing asked yet: nothing refused but the block itself */
    ck_assert_ptr_null(kb_launch_fits(&n));
    n.block = 0;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "no threads"));
    n.block = 256;
    n.max_threads = 1024;
    ck_assert_ptr_null(kb_launch_fits(&n));
    /* registers: the kernel's maxThreadsPerBlock is below the block */
    n.max_threads = 128;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "registers"));
    n.max_threads = 256;
    ck_assert_ptr_null(kb_launch_fits(&n));
    /* spills */
    n.local_bytes = 8;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "local memory"));
    n.local_bytes = 0;
    /* shared memory: static + dynamic against the opt-in limit */
    n.static_smem = 1024;
    n.dyn_smem = 227 * 1024;
    ck_assert_ptr_null(kb_launch_fits(&n)); /* limit unknown: not checked */
    n.smem_optin = 227 * 1024;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "shared memory"));
    n.dyn_smem = 226 * 1024;
    ck_assert_ptr_null(kb_launch_fits(&n));
    /* occupancy: zero resident CTAs */
    n.blocks_per_sm = 0;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "SM"));
    n.blocks_per_sm = 2;
    ck_assert_ptr_null(kb_launch_fits(&n));
    /* clusters: too large, or none schedulable; not asked = not refused */
    n.cluster = 32;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "16"));
    n.cluster = 16;
    ck_assert_ptr_null(kb_launch_fits(&n));
    n.active_clusters = 0;
    ck_assert_ptr_nonnull(strstr(kb_launch_fits(&n), "cluster"));
    n.active_clusters = 3;
    ck_assert_ptr_null(kb_launch_fits(&n));
    n.block = 0;
    ck_assert_ptr_nonnull(kb_launch_fits(&n));
}
END_TEST

START_TEST(search_propagates_cost_errors)
{
    synth s = {0, {64, 4, 16}, 0, 3};
    kb_tune_cfg start = cfg3(128, 1, 1), best = cfg3(1, 1, 1);
    double cost;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, bowl, &s, 100, &best, &cost,
                                    NULL, &e),
                     KB_ERR_CUDA);
    ck_assert_ptr_nonnull(strstr(e.msg, "boom"));
    ck_assert_int_eq(best.v[0], 1);
}
END_TEST

Suite *kb_suite_tuner(void)
{
    Suite *s = suite_create("tuner");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, parse_format_round_trip);
    tcase_add_loop_test(tc, parse_rejects_bad_text, 0, (int)(sizeof bad_texts / sizeof bad_texts[0]));
    tcase_add_test(tc, parse_without_base_needs_every_key);
    tcase_add_test(tc, bucket_rounds_up_and_flags_unaligned);
    suite_add_tcase(s, tc);

    tc = tcase_create("search");
    tcase_add_test(tc, search_finds_bowl_minimum);
    tcase_add_test(tc, search_respects_validity);
    tcase_add_test(tc, search_reaches_far_choice);
    tcase_add_test(tc, search_caps_evaluations);
    tcase_add_test(tc, search_ignores_gains_within_noise);
    tcase_add_test(tc, search_propagates_cost_errors);
    tcase_add_test(tc, diagonals_enumerate_valid_multi_moves);
    tcase_add_test(tc, diagonals_walk_past_invalid_middle_choice);
    tcase_add_test(tc, search_checks_all_directions);
    tcase_add_test(tc, canon_merges_equivalent_configs);
    tcase_add_test(tc, launch_fits_decides_from_queries);
    suite_add_tcase(s, tc);
    return s;
}
