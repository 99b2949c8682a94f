/* The tuned backend's configuration machinery, CPU only: parse/format,
 * shape buckets, the cache file, the coordinate-descent search on synthetic cost
 * functions and kb_tuned_setup's choice between custom, cache and heuristic. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwfit.h"
#include "registry.h"
#include "tmpfiles.h"
#include "tuner.h"
#include "unit.h"

/* ---- a synthetic space: threads x rows x cluster ------------------------- */
static void heur(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    memset(out, 0, sizeof *out);
    out->v[0] = 128;
    out->v[1] = 1;
    out->v[2] = 1;
}

/* threads * rows <= 512 and cluster <= N / 16384 (>= 1). */
static int valid(const kb_problem *p, const kb_setup_ctx *ctx, const kb_tune_cfg *c)
{
    const int64_t max_cluster = p->N / 16384 > 1 ? p->N / 16384 : 1;
    return c->v[0] * c->v[1] <= 512 && c->v[2] <= max_cluster;
}

static kb_status no_launch(const kb_problem *p, const kb_tensors *t, const kb_tune_cfg *c,
                           cudaStream_t s, kb_err *e)
{
    return KB_FAIL(e, KB_ERR_UNSUPPORTED, "not launched in unit tests");
}

static const kb_tune_space space = {
    "softmax_forward",
    3,
    {"threads", "rows", "cluster"},
    {5, 4, 5},
    {{32, 64, 128, 256, 512}, {1, 2, 4, 8}, {1, 2, 4, 8, 16}},
    heur,
    valid,
    NULL,
    no_launch,
    NULL,
};

static const kb_problem prob = {KB_SOFTMAX_FWD, KB_BF16, 1024, 262144};

static kb_tune_cfg cfg3(int a, int b, int c)
{
    kb_tune_cfg r;
    memset(&r, 0, sizeof r);
    r.v[0] = a;
    r.v[1] = b;
    r.v[2] = c;
    return r;
}

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
        kb_tune_bucket(t[i].d, 32768, t[i].N, buf, sizeof buf);
        snprintf(want, sizeof want, "%s,M<=32768", t[i].want);
        ck_assert_msg(strcmp(buf, want) == 0, "N=%lld: got %s, want %s", (long long)t[i].N, buf,
                      want);
    }
    /* M is rounded up to a power of two too: the grid matters as much as the row */
    char buf[64];
    kb_tune_bucket(KB_BF16, 1, 32768, buf, sizeof buf);
    ck_assert_str_eq(buf, "N<=32768,M<=1");
    kb_tune_bucket(KB_BF16, 1024, 151936, buf, sizeof buf);
    ck_assert_str_eq(buf, "N<=262144,M<=1024");
    kb_tune_bucket(KB_BF16, 1025, 151936, buf, sizeof buf);
    ck_assert_str_eq(buf, "N<=262144,M<=2048");
    kb_tune_bucket(KB_BF16, 1152000, 4095, buf, sizeof buf);
    ck_assert_str_eq(buf, "N<=4096,unaligned,M<=2097152");
    ck_assert_int_eq(kb_tune_rows_class(576000), 1048576);
    ck_assert_int_eq(kb_tune_rows_class(0), 1);
}
END_TEST

/* ---- cache file --------------------------------------------------------------- */
static char tmpdir[256];

static void cleanup_tmpdir(void)
{
    if (tmpdir[0]) kbt_rm_rf(tmpdir);
    tmpdir[0] = '\0';
}

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kbench_tuner_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

START_TEST(cache_write_read_merge)
{
    make_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/deep/er/NVIDIA_H200.txt", tmpdir);
    kb_err e = {""};
    const kb_tune_key a = {"NVIDIA H200", "softmax_forward", "bf16", "N<=4096,M<=1024"};
    const kb_tune_key b = {"NVIDIA H200", "softmax_forward", "bf16", "N<=4096,unaligned,M<=1024"};
    const kb_tune_key other_gpu = {"NVIDIA H100 80GB HBM3", "softmax_forward", "bf16",
                                   "N<=4096,M<=1024"};
    char cfg[128];
    double gbps = -1;
    int found = 7;

    /* No file yet: not found, not an error. */
    ck_assert_int_eq(kb_tune_cache_lookup(path, &a, cfg, sizeof cfg, &gbps, &found, &e), KB_OK);
    ck_assert_int_eq(found, 0);

    ck_assert_int_eq(kb_tune_cache_store(path, &a, "threads=256,rows=2,cluster=1", 3890.54, &e),
                     KB_OK);
    ck_assert_int_eq(kb_tune_cache_store(path, &b, "threads=128,rows=1,cluster=1", 3000, &e),
                     KB_OK);
    ck_assert_int_eq(kb_tune_cache_lookup(path, &a, cfg, sizeof cfg, &gbps, &found, &e), KB_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(cfg, "threads=256,rows=2,cluster=1");
    ck_assert_double_eq_tol(gbps, 3890.5, 0.05);
    ck_assert_int_eq(kb_tune_cache_lookup(path, &other_gpu, cfg, sizeof cfg, &gbps, &found, &e),
                     KB_OK);
    ck_assert_int_eq(found, 0);

    const char *text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|"
                                       "threads=256,rows=2,cluster=1|3890.5\n"));
    ck_assert_int_eq(text[0], '#');

    /* A hand edit (comment, blank line) survives; replacing a entry keeps b. */
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs("\n# my note\n", f);
    fclose(f);
    ck_assert_int_eq(kb_tune_cache_store(path, &a, "threads=512,rows=1,cluster=2", 4000, &e),
                     KB_OK);
    text = slurp(path);
    ck_assert_int_eq(count_lines(text, "|N<=4096,M<=1024|"), 1);
    ck_assert_ptr_nonnull(strstr(text, "|N<=4096,M<=1024|threads=512,rows=1,cluster=2|4000.0\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "|N<=4096,unaligned,M<=1024|threads=128,rows=1,cluster=1|3000.0"));
    ck_assert_ptr_nonnull(strstr(text, "# my note\n"));
    ck_assert_int_eq(kb_tune_cache_lookup(path, &b, cfg, sizeof cfg, &gbps, &found, &e), KB_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(cfg, "threads=128,rows=1,cluster=1");

    /* Duplicates written by hand: lookup takes the last, store collapses them. */
    f = fopen(path, "a");
    fputs("NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=32,rows=8,cluster=1|1.0\r\n",
          f);
    fclose(f);
    ck_assert_int_eq(kb_tune_cache_lookup(path, &a, cfg, sizeof cfg, &gbps, &found, &e), KB_OK);
    ck_assert_str_eq(cfg, "threads=32,rows=8,cluster=1");
    ck_assert_int_eq(kb_tune_cache_store(path, &a, "threads=64,rows=1,cluster=1", 5, &e), KB_OK);
    text = slurp(path);
    ck_assert_int_eq(count_lines(text, "|N<=4096,M<=1024|"), 1);
    ck_assert_ptr_nonnull(strstr(text, "|N<=4096,M<=1024|threads=64,rows=1,cluster=1|5.0\n"));

    /* Keys with '|' are refused rather than corrupting the file. */
    const kb_tune_key bad = {"GPU|X", "softmax_forward", "bf16", "N<=1,M<=1024"};
    ck_assert_int_eq(kb_tune_cache_store(path, &bad, "threads=64", 1, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_tune_cache_store(path, &a, "threads=64|x", 1, &e), KB_ERR_ARG);
}
END_TEST

static const struct {
    const char *line, *why;
} bad_lines[] = {
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=256", "6 '|'-separated fields"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=256|1|2", "more than 6"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=256|fast", "GB/s is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=256|-3", "GB/s is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads:256|100", "config is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=2x|100", "config is not"},
    {"NVIDIA H200||bf16|N<=4096,M<=1024|threads=256|100", "empty field"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096|threads=256|100", "bucket without M<="},
    {"NVIDIA H200|softmax_forward|bf16|M<=4096|threads=256|100", "bucket is not"},
    /* keys that load but can never match: refused, naming the field */
    {"NVIDIA H200|nosuch_op|bf16|N<=4096,M<=1024|threads=256|100",
     "benchmark 'nosuch_op' is not registered"},
    {"NVIDIA H200|softmax_forward|bf17|N<=4096,M<=1024|threads=256|100", "dtype 'bf17'"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=abc|threads=256|100", "'N<=4096,M<=abc'"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4000,M<=1024|threads=256|100", "powers of two"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,aligned,M<=1024|threads=256|100", "bucket is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024,x|threads=256|100", "bucket is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=0|threads=256|100", "bucket is not"},
    {"NVIDIA H200|softmax_forward|bf16|N<=04096,M<=1024|threads=256|100", "bucket is not"},
};

START_TEST(cache_malformed_line_names_file_and_line)
{
    make_tmpdir();
    char path[512], text[1024];
    snprintf(path, sizeof path, "%s/cache.txt", tmpdir);
    snprintf(text, sizeof text,
             "# header\n\nNVIDIA H200|softmax_forward|bf16|N<=1,M<=1024|threads=32|1.5\n%s\n",
             bad_lines[_i].line);
    kbt_write(path, text);
    kb_err e = {""};
    const kb_tune_key k = {"NVIDIA H200", "softmax_forward", "bf16", "N<=1,M<=1024"};
    char cfg[128], want[600];
    double gbps;
    int found = 1;
    ck_assert_int_eq(kb_tune_cache_lookup(path, &k, cfg, sizeof cfg, &gbps, &found, &e),
                     KB_ERR_PARSE);
    ck_assert_int_eq(found, 0);
    snprintf(want, sizeof want, "%s:4: malformed tuning-cache line", path);
    ck_assert_msg(strstr(e.msg, want), "message '%s' lacks '%s'", e.msg, want);
    ck_assert_msg(strstr(e.msg, bad_lines[_i].why), "message '%s' lacks '%s'", e.msg,
                  bad_lines[_i].why);

    /* A store refuses to rewrite a file it cannot read, and leaves it alone. */
    ck_assert_int_eq(kb_tune_cache_store(path, &k, "threads=64", 1, &e), KB_ERR_PARSE);
    ck_assert_str_eq(slurp(path), text);
}
END_TEST

/* A UTF-8 byte order mark (an editor's) before the first line, and blanks
 * around the fields (a hand-aligned file), are not part of the key: with
 * them the first entry, or the padded one, loaded but never matched, and
 * its bucket ran the heuristic without a word. Every bucket form
 * kb_tune_bucket writes reads back. */
START_TEST(cache_bom_and_blanks_are_not_the_key)
{
    make_tmpdir();
    char path[512], cfg[128];
    snprintf(path, sizeof path, "%s/cache.txt", tmpdir);
    kbt_write(path, "\xEF\xBB\xBFNVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=32|1\n"
                    "NVIDIA H200 |softmax_forward |bf16|N<=32768,M<=1 | threads=64 |2\n"
                    "NVIDIA H200|softmax_forward|fp32|N<=65536,unaligned,M<=4096|threads=128|3\n");
    static const char *const buckets[][3] = {{"bf16", "N<=4096,M<=1024", "threads=32"},
                                            {"bf16", "N<=32768,M<=1", "threads=64"},
                                            {"fp32", "N<=65536,unaligned,M<=4096", "threads=128"}};
    for (size_t i = 0; i < 3; i++) {
        const kb_tune_key k = {"NVIDIA H200", "softmax_forward", buckets[i][0], buckets[i][1]};
        double gbps = 0;
        int found = 0;
        kb_err e = {""};
        ck_assert_msg(kb_tune_cache_lookup(path, &k, cfg, sizeof cfg, &gbps, &found, &e) == KB_OK,
                      "%s", e.msg);
        ck_assert_msg(found, "entry %zu (%s) not found", i, buckets[i][1]);
        ck_assert_str_eq(cfg, buckets[i][2]);
        ck_assert_double_eq(gbps, (double)(i + 1));
    }
    /* a key that could never be read back is not written */
    const kb_tune_key bad = {"NVIDIA H200", "nosuch_op", "bf16", "N<=1,M<=1"};
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_cache_store(path, &bad, "threads=64", 1, &e), KB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "nosuch_op"));
    /* a rewrite keeps every entry, the BOM'd one found as its key */
    const kb_tune_key first = {"NVIDIA H200", "softmax_forward", "bf16", "N<=4096,M<=1024"};
    ck_assert_int_eq(kb_tune_cache_store(path, &first, "threads=256", 9, &e), KB_OK);
    const char *text = slurp(path);
    ck_assert_int_eq(count_lines(text, "|N<=4096,M<=1024|"), 1);
    ck_assert_ptr_nonnull(strstr(text, "|N<=32768,M<=1 |"));
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

START_TEST(search_finds_bowl_minimum)
{
    synth s = {0, {64, 4, 16}, 0, 0};
    kb_tune_cfg start = cfg3(512, 1, 1), best;
    double cost = 0;
    int evals = 0;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, bowl, &s, 100, &best, &cost,
                                    &evals, &e),
                     KB_OK);
    ck_assert_int_eq(best.v[0], 64);
    ck_assert_int_eq(best.v[1], 4);
    ck_assert_int_eq(best.v[2], 16);
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
    kb_tune_cfg start = cfg3(256, 2, 1), best;
    double cost = 0;
    int evals = 0;
    saw_noncanonical = 0;
    ck_assert_int_eq(kb_tune_search(&canon_space, &prob, NULL, &start, canon_bowl, &s, 100, &best,
                                    &cost, &evals, &e),
                     KB_OK);
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
    kb_tune_cfg start = cfg3(32, 1, 1), best;
    double cost;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, bowl, &s, 100, &best, &cost,
                                    NULL, &e),
                     KB_OK);
    ck_assert_int_eq(s.seen_invalid, 0);
    ck_assert(valid(&prob, NULL, &best));
    ck_assert_int_eq(best.v[0] * best.v[1], 512);

    /* An invalid start is refused. */
    kb_tune_cfg bad = cfg3(512, 8, 1);
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &bad, bowl, &s, 100, &best, &cost, NULL,
                                    &e),
                     KB_ERR_ARG);
}
END_TEST

START_TEST(search_caps_evaluations)
{
    synth s = {0, {32, 8, 16}, 0, 0};
    kb_tune_cfg start = cfg3(512, 1, 1), best;
    double cost;
    int evals;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, bowl, &s, 4, &best, &cost,
                                    &evals, &e),
                     KB_OK);
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
    kb_tune_cfg start = cfg3(512, 1, 1), best;
    double cost;
    int evals;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, ridge, &s, 100, &best, &cost,
                                    &evals, &e),
                     KB_OK);
    ck_assert_int_eq(best.v[0], 32);
    ck_assert_int_eq(best.v[1], 4);
    ck_assert_double_eq_tol(cost, 40.0, 1e-12);
    ck_assert_int_eq(evals, s.calls);

    /* Without the budget for the probe, the local minimum is what comes back. */
    s.calls = 0;
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, ridge, &s, 4, &best, &cost,
                                    &evals, &e),
                     KB_OK);
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
    kb_tune_cfg start = cfg3(128, 1, 1), best;
    double cost;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, flat, &s, 100, &best, &cost,
                                    NULL, &e),
                     KB_OK);
    ck_assert_int_eq(best.v[0], 128); /* 0.9 % better: stays */
    ck_assert_int_eq(best.v[1], 2);   /* 5 % better: moves */
    ck_assert_int_eq(best.v[2], 1);
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
    kb_tune_cfg best;
    double cost;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space_db, &prob, NULL, &c, far_db, &s, 200, &best, &cost,
                                    NULL, &e),
                     KB_OK);
    ck_assert_int_eq(best.v[0], 256);
    ck_assert_int_eq(best.v[1], 0);
    ck_assert_int_eq(best.v[2], 2);
    ck_assert_double_eq_tol(cost, 80.0, 1e-12);
    ck_assert_int_eq(s.seen_invalid, 0);
}
END_TEST

/* The norm backward's workspace bound (one dw partial row per slot) is an
 * upper bound of the grid the launch asks for. A cluster's grid is every
 * cluster that fits, whatever occ says, so occ must not cut the bound there:
 * a bound cut by occ clamped the grid through the workspace (occ=1 at
 * 16-CTA clusters halved 1024x151936's slots on the H200, session 22).
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
        kb_err e = {""};
        ck_assert_int_eq(kb_bench_find(ops[o], &id, &e), KB_OK);
        const kb_impl *impl = kb_impl_get(id, "tuned");
        ck_assert(impl && impl->tune_space && impl->tune_space->workspace &&
                  impl->tune_space->canon);
        const kb_tune_space *sp = impl->tune_space;
        const kb_problem p = {id, KB_BF16, 1024, 151936, 0};
        kb_tune_cfg one, all;
        ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=16,occ=1,acc=1,reload=0,"
                                           "hint=0,db=0",
                                       NULL, &one, &e),
                         KB_OK);
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

/* The tuned search space of benchmark op (its id in *id), with the
 * functions every caller here uses. */
static const kb_tune_space *tuned_space_of(const char *op, kb_bench_id *id)
{
    kb_err e = {""};
    ck_assert_msg(kb_bench_find(op, id, &e) == KB_OK, "%s", e.msg);
    const kb_impl *impl = kb_impl_get(*id, "tuned");
    ck_assert(impl && impl->tune_space && impl->tune_space->launch && impl->tune_space->canon);
    return impl->tune_space;
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
        kb_tune_cfg c;
        ck_assert_int_eq(kb_tune_parse(sp, "threads=512,rows=1,cluster=4,occ=6,db=0,reload=8,"
                                           "hint=0",
                                       NULL, &c, &e),
                         KB_OK);
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

START_TEST(search_checks_all_directions)
{
    synth s = {0, {0, 0, 0}, 0, 0};
    kb_tune_cfg start = cfg3(128, 2, 1), best;
    double cost;
    int evals;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_search(&space, &prob, NULL, &start, pair_only, &s, 200, &best, &cost,
                                    &evals, &e),
                     KB_OK);
    ck_assert_int_eq(best.v[0], 256);
    ck_assert_int_eq(best.v[1], 1);
    ck_assert_int_eq(best.v[2], 1);
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

/* ---- kb_tuned_setup without a GPU (no search) -------------------------------- */
static void describe_of(const kb_setup_ctx *ctx, const kb_problem *p, kb_status want, char *out,
                        size_t len, kb_err *e)
{
    void *state = NULL;
    size_t ws = 99;
    kb_status st = kb_tuned_setup(&space, p, ctx, &state, &ws, e);
    ck_assert_msg(st == want, "status %d, want %d: %s", st, want, e->msg);
    if (st != KB_OK) {
        ck_assert_ptr_null(state);
        return;
    }
    ck_assert_uint_eq(ws, 0);
    kb_tuned_describe(state, out, len);
    kb_tuned_teardown(state);
}

/* A cache entry for softmax_forward bf16 on the H200, GB/s 1. */
static void put_entry(const char *path, const char *bucket, const char *cfg)
{
    kb_err e = {""};
    const kb_tune_key k = {"NVIDIA H200", "softmax_forward", "bf16", bucket};
    ck_assert_int_eq(kb_tune_cache_store(path, &k, cfg, 1, &e), KB_OK);
}

/* softmax_forward bf16 MxN set up under ctx chooses `want` (kb_tuned_describe). */
static void expect_setup(const kb_setup_ctx *ctx, int64_t M, int64_t N, const char *want)
{
    const kb_problem p = {KB_SOFTMAX_FWD, KB_BF16, M, N};
    char buf[512];
    kb_err e = {""};
    describe_of(ctx, &p, KB_OK, buf, sizeof buf, &e);
    ck_assert_msg(strcmp(buf, want) == 0, "%lldx%lld: got '%s', want '%s'", (long long)M,
                  (long long)N, buf, want);
}

/* A heuristic whose configuration cannot run (here: threads x rows over the
 * space's cap; on the GPU: a kernel that spills) fails the case: as a SKIP
 * it once let every tuned cross-entropy forward case pass having run nothing. */
static void heur_bad(const kb_problem *p, const kb_setup_ctx *ctx, kb_tune_cfg *out)
{
    heur(p, ctx, out);
    out->v[0] = 512;
    out->v[1] = 8;
}

START_TEST(setup_fails_when_heuristic_cannot_run)
{
    kb_tune_space bad = space;
    bad.heuristic = heur_bad;
    kb_setup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.gpu_name = "NVIDIA H200";
    void *state = NULL;
    size_t ws = 0;
    kb_err e = {""};
    const kb_status st = kb_tuned_setup(&bad, &prob, &ctx, &state, &ws, &e);
    ck_assert_int_ne(st, KB_ERR_UNSUPPORTED);
    ck_assert_int_eq(st, KB_ERR_CUDA);
    ck_assert_ptr_null(state);
    ck_assert_msg(strstr(e.msg, "softmax_forward bf16 1024x262144: heuristic threads=512,rows=8") &&
                      strstr(e.msg, "cannot run (a bug"),
                  "%s", e.msg);
}
END_TEST

START_TEST(setup_chooses_custom_cache_heuristic)
{
    make_tmpdir();
    char path[512], buf[512];
    snprintf(path, sizeof path, "%s/NVIDIA_H200.txt", tmpdir);
    kb_err e = {""};
    kb_setup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.gpu_name = "NVIDIA H200";
    ctx.tune_cache = path;

    /* No cache file: heuristic. */
    describe_of(&ctx, &prob, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=128,rows=1,cluster=1 (heuristic)");

    /* A cache entry for this GPU, op, dtype and bucket wins. */
    const kb_tune_key k = {"NVIDIA H200", "softmax_forward", "bf16", "N<=262144,M<=1024"};
    ck_assert_int_eq(kb_tune_cache_store(path, &k, "threads=256,rows=2,cluster=4", 3900, &e), KB_OK);
    describe_of(&ctx, &prob, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=256,rows=2,cluster=4 (cache)");

    /* Same bucket, but N too small for cluster=4: heuristic, with the reason. */
    const kb_tune_key k2 = {"NVIDIA H200", "softmax_forward", "bf16", "N<=65536,M<=1024"};
    ck_assert_int_eq(kb_tune_cache_store(path, &k2, "threads=256,rows=2,cluster=4", 1, &e), KB_OK);
    const kb_problem mid = {KB_SOFTMAX_FWD, KB_BF16, 1024, 65536};
    describe_of(&ctx, &mid, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=256,rows=2,cluster=4 (cache)");
    const kb_problem small = {KB_SOFTMAX_FWD, KB_BF16, 1024, 40000};
    describe_of(&ctx, &small, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=128,rows=1,cluster=1 (heuristic; cached "
                          "threads=256,rows=2,cluster=4 cannot run N=40000)");

    /* An entry from a build with other parameter values: heuristic. */
    const kb_tune_key k3 = {"NVIDIA H200", "softmax_forward", "bf16",
                            "N<=65536,unaligned,M<=1024"};
    ck_assert_int_eq(kb_tune_cache_store(path, &k3, "threads=256,cluster=64", 1, &e), KB_OK);
    const kb_problem odd = {KB_SOFTMAX_FWD, KB_BF16, 1024, 40001};
    describe_of(&ctx, &odd, KB_OK, buf, sizeof buf, &e);
    ck_assert_msg(strstr(buf, "(heuristic; cached threads=256,cluster=64 unknown"), "%s", buf);

    /* Another M: an M class within two powers of two, the larger first;
     * none that near: the heuristic. An entry this build cannot use does
     * not end the search; with none usable, the first one's reason stays
     * (with its M class when it is not the problem's own). */
    const int64_t N = 262144;
    expect_setup(&ctx, 2048, N, "threads=256,rows=2,cluster=4 (cache; entry of M<=1024)");
    expect_setup(&ctx, 4097, N, "threads=128,rows=1,cluster=1 (heuristic)");
    put_entry(path, "N<=262144,M<=4096", "threads=512,rows=1,cluster=2");
    expect_setup(&ctx, 2048, N, "threads=512,rows=1,cluster=2 (cache; entry of M<=4096)");
    expect_setup(&ctx, 1024, N, "threads=256,rows=2,cluster=4 (cache)");
    put_entry(path, "N<=262144,M<=2048", "threads=256,cluster=64");
    expect_setup(&ctx, 2048, N, "threads=512,rows=1,cluster=2 (cache; entry of M<=4096)");
    put_entry(path, "N<=262144,M<=16384", "threads=256,cluster=64");
    expect_setup(&ctx, 65536, N,
                 "threads=128,rows=1,cluster=1 (heuristic; cached threads=256,cluster=64 unknown "
                 "to this build (entry of M<=16384))");
    put_entry(path, "N<=262144,M<=65536", "threads=128,cluster=64");
    expect_setup(&ctx, 65536, N,
                 "threads=128,rows=1,cluster=1 (heuristic; cached threads=128,cluster=64 unknown "
                 "to this build)");

    /* An entry with every key it names known, but one left out (a hand
     * edit, or an entry not migrated when its kernel gained a parameter):
     * `kbench --tune` never writes one, and filled from the heuristic it was
     * reported as `cache`. Refused, naming the file, line and key. */
    put_entry(path, "N<=262144,M<=128", "threads=128,rows=2");
    const kb_problem partial = {KB_SOFTMAX_FWD, KB_BF16, 128, N};
    describe_of(&ctx, &partial, KB_ERR_PARSE, buf, sizeof buf, &e);
    snprintf(buf, sizeof buf, "%s:", path);
    ck_assert_msg(strstr(e.msg, buf) && strstr(e.msg, "'threads=128,rows=2' is incomplete") &&
                      strstr(e.msg, "'cluster' missing"),
                  "%s", e.msg);

    /* Another GPU's entries are not used. */
    ctx.gpu_name = "NVIDIA H100";
    describe_of(&ctx, &prob, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=128,rows=1,cluster=1 (heuristic)");
    ctx.gpu_name = "NVIDIA H200";

    /* A custom configuration overrides everything; left-out keys come from
     * the heuristic. */
    ctx.custom_config = "rows=4";
    describe_of(&ctx, &prob, KB_OK, buf, sizeof buf, &e);
    ck_assert_str_eq(buf, "threads=128,rows=4,cluster=1 (custom)");
    ctx.custom_config = "rows=3";
    describe_of(&ctx, &prob, KB_ERR_ARG, buf, sizeof buf, &e);
    ck_assert_ptr_nonnull(strstr(e.msg, "rows=3 is not one of"));
    ctx.custom_config = "threads=512,rows=8";
    describe_of(&ctx, &prob, KB_ERR_ARG, buf, sizeof buf, &e);
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot run this shape"));
    ctx.custom_config = NULL;

    /* A malformed cache is an error, never silently ignored. */
    kbt_write(path, "NVIDIA H200|softmax_forward|bf16\n");
    describe_of(&ctx, &prob, KB_ERR_PARSE, buf, sizeof buf, &e);
    ck_assert_ptr_nonnull(strstr(e.msg, ":1: malformed"));
}
END_TEST

/* The file being checked and its entries so far. */
typedef struct {
    const char *path;
    int entries;
} cache_check;

/* kb_tune_cache_each's visitor: the entry's config against its benchmark's
 * tuned search space. */
static kb_status check_cache_entry(void *arg, const kb_tune_key *k, const char *cfg, double gbps,
                                   int lineno, kb_err *e)
{
    cache_check *cc = arg;
    (void)gbps;
    kb_bench_id id;
    ck_assert_msg(kb_bench_find(k->op, &id, e) == KB_OK, "%s:%d: %s", cc->path, lineno, e->msg);
    const kb_impl *impl = kb_impl_get(id, "tuned");
    ck_assert_msg(impl && impl->tune_space, "%s:%d: %s has no tuned search space", cc->path,
                  lineno, k->op);
    kb_tune_cfg c;
    ck_assert_msg(kb_tune_parse(impl->tune_space, cfg, NULL, &c, e) == KB_OK, "%s:%d: %s",
                  cc->path, lineno, e->msg);
    cc->entries++;
    return KB_OK;
}

/* Every committed tuning cache parses, and every entry is a complete
 * configuration of its benchmark's tuned search space in this build (every
 * key present, no unknown key, each value among the choices). Without this a
 * hand edit that breaks a line, or a kernel that gains a parameter without
 * its entries being migrated, would surface only on a GPU: as every tuned
 * case failing setup, or silently, as entries the lookup skips for the
 * heuristic (an H200 run measured that as -25..-29 % on long-row norms). */
static void check_cache_file(const char *path, void *arg)
{
    (void)arg;
    cache_check cc = {path, 0};
    kb_err e = {{0}};
    ck_assert_msg(kb_tune_cache_each(path, check_cache_entry, &cc, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_ge(cc.entries, 1);
}

START_TEST(committed_caches_parse)
{
    ck_assert_int_ge(kbt_for_files(KB_REPO_BASELINES "/tuning", ".txt", check_cache_file, NULL), 1);
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
    kb_err e = {{0}};
    ck_assert_int_eq(kb_bench_find(ws_cases[_i].op, &id, &e), KB_OK);
    const kb_impl *impl = kb_impl_get(id, "tuned");
    ck_assert(impl && impl->tune_space && impl->tune_space->workspace);
    kb_tune_cfg c;
    ck_assert_int_eq(kb_tune_parse(impl->tune_space, ws_cases[_i].cfg, NULL, &c, &e), KB_OK);
    const kb_problem p = {id, ws_cases[_i].dtype, ws_cases[_i].M, ws_cases[_i].N, 0};
    kb_setup_ctx ctx = {0};
    ctx.sm_count = ws_cases[_i].sms;
    const size_t ws = impl->tune_space->workspace(&p, &ctx, &c);
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
    kb_err e = {{0}};
    ck_assert_int_eq(kb_bench_find("layernorm_backward", &id, &e), KB_OK);
    const kb_impl *impl = kb_impl_get(id, "tuned");
    ck_assert(impl && impl->tune_space);
    const kb_tune_space *sp = impl->tune_space;
    kb_tune_cfg a, b;
    ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,"
                                       "hint=1,db=1", NULL, &a, &e), KB_OK);
    ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,"
                                       "hint=0,db=0", NULL, &b, &e), KB_OK);
    ck_assert_mem_eq(&a, &b, sizeof a);
    /* held rows keep both */
    ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=0,"
                                       "hint=1,db=1", NULL, &a, &e), KB_OK);
    char text[200];
    kb_tune_format(sp, &a, text, sizeof text);
    ck_assert_str_eq(text, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=0,hint=1,db=1");
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
        ck_assert_int_eq(kb_bench_find(ops[i], &id, &e), KB_OK);
        const kb_impl *impl = kb_impl_get(id, "tuned");
        ck_assert(impl && impl->tune_space);
        const kb_tune_space *sp = impl->tune_space;
        kb_tune_cfg c;
        char text[200];
        for (int u = 0; u <= 8; u++) {
            snprintf(text, sizeof text,
                     "threads=256,rows=1,cluster=1,occ=32,db=0,reload=%d,hint=0", u);
            const int ok = u == 0 || u == 1 || u == 2 || u == 4 || u == 8;
            ck_assert_msg((kb_tune_parse(sp, text, NULL, &c, &e) == KB_OK) == ok, "%s %s", ops[i],
                          text);
        }
        ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,"
                                           "hint=2", NULL, &c, &e), KB_OK);
        kb_tune_format(sp, &c, text, sizeof text);
        ck_assert_str_eq(text, "threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,hint=1");
        /* the loop ignores db, and runs occ 0 as occ = all (one CTA per
         * row): one configuration, one timing */
        ck_assert_int_eq(kb_tune_parse(sp, "threads=512,rows=1,cluster=1,occ=0,db=1,reload=2,"
                                           "hint=0", NULL, &c, &e), KB_OK);
        kb_tune_format(sp, &c, text, sizeof text);
        ck_assert_str_eq(text, "threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0");
        /* occ 1-16 caps the loop's CTAs per SM (fewer rows in flight): kept */
        ck_assert_int_eq(kb_tune_parse(sp, "threads=512,rows=1,cluster=1,occ=2,db=1,reload=2,"
                                           "hint=0", NULL, &c, &e), KB_OK);
        kb_tune_format(sp, &c, text, sizeof text);
        ck_assert_str_eq(text, "threads=512,rows=1,cluster=1,occ=2,db=0,reload=2,hint=0");
        /* held rows keep them */
        ck_assert_int_eq(kb_tune_parse(sp, "threads=512,rows=1,cluster=1,occ=0,db=1,reload=0,"
                                           "hint=2", NULL, &c, &e), KB_OK);
        kb_tune_format(sp, &c, text, sizeof text);
        ck_assert_str_eq(text, "threads=512,rows=1,cluster=1,occ=0,db=1,reload=0,hint=2");
        /* The heuristic's odd-N loop: two slots in flight from 16K columns,
         * one below (session 18's variants); it decides without the GPU.
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
    kb_bench_id id;
    ck_assert_int_eq(kb_bench_find("layernorm_backward", &id, &e), KB_OK);
    kb_tune_cfg c;
    ck_assert_int_ne(kb_tune_parse(kb_impl_get(id, "tuned")->tune_space,
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
        ck_assert(sp->workspace && sp->kernels);
        kb_tune_cfg c, d;
        char text[200];
        for (int u = 2; u <= 8; u *= 2) {
            char in[200], want[200];
            snprintf(in, sizeof in, "threads=256,rows=2,cluster=1,occ=4,acc=0,reload=%d,hint=1,db=2",
                     u);
            snprintf(want, sizeof want,
                     "threads=256,rows=2,cluster=1,occ=4,acc=1,reload=%d,hint=1,db=0", u);
            ck_assert_int_eq(kb_tune_parse(sp, in, NULL, &c, &e), KB_OK);
            kb_tune_format(sp, &c, text, sizeof text);
            ck_assert_str_eq(text, want);
        }
        const kb_problem p = {id, KB_BF16, 32768, 8192, 0};
        kb_setup_ctx ctx = {0};
        ctx.sm_count = 132;
        ck_assert_int_eq(sp->kernels(&p, &c), 2);
        /* 256-thread CTAs of 2 row slots: at most 4 per SM by threads, occ 4 */
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &c), (size_t)132 * 4 * 8192 * sizeof(float));
        ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=1,occ=32,acc=0,reload=1,"
                                           "hint=0,db=0",
                                       NULL, &d, &e),
                         KB_OK);
        ck_assert_int_eq(sp->kernels(&p, &d), 3);
        kb_tensors t;
        standin_tensors(&t);
        /* odd 16-bit rows run bwd_reg's shifted slots, one class a CTA: the
         * workspace holds the persistent grid's partial rows (128-thread
         * CTAs: 16 per SM); fp32 at odd N has element accesses only */
        const kb_problem odd = {id, KB_BF16, 32768, 4095, 0};
        ck_assert_int_eq(kb_tune_parse(sp, "threads=128,rows=1,cluster=1,occ=32,acc=1,reload=4,"
                                           "hint=0,db=0",
                                       NULL, &d, &e),
                         KB_OK);
        ck_assert_uint_eq(sp->workspace(&odd, &ctx, &d), (size_t)132 * 16 * 4095 * sizeof(float));
        const kb_problem odd32 = {id, KB_FP32, 32768, 4095, 0};
        e.msg[0] = '\0';
        ck_assert_int_eq(sp->launch(&odd32, &t, &c, NULL, &e), KB_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(e.msg, "reload=8 reads 16-byte slots") &&
                          strstr(e.msg, "fp32 32768x4095"),
                      "%s", e.msg);
        /* a cluster splits each row: one row slot a CTA */
        ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=2,cluster=2,occ=32,acc=1,reload=4,"
                                           "hint=0,db=0",
                                       NULL, &d, &e),
                         KB_OK);
        e.msg[0] = '\0';
        ck_assert_int_eq(sp->launch(&p, &t, &d, NULL, &e), KB_ERR_ARG);
        ck_assert_msg(strstr(e.msg, "rows=2 cluster=2") && strstr(e.msg, "rows 1 at a cluster") &&
                          strstr(e.msg, "32768x8192"),
                      "%s", e.msg);
        /* the workspace at a cluster: a partial row per cluster that fits
         * (every one, whatever occ says: canon) */
        ck_assert_int_eq(kb_tune_parse(sp, "threads=256,rows=1,cluster=4,occ=2,acc=1,reload=8,"
                                           "hint=0,db=0",
                                       NULL, &d, &e),
                         KB_OK);
        ck_assert_int_eq(d.v[3], 32);
        ck_assert_uint_eq(sp->workspace(&p, &ctx, &d), (size_t)132 * 8 / 4 * 8192 * sizeof(float));
    }
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
    tcase_add_test(tc, committed_caches_parse);
    tcase_add_loop_test(tc, norm_backward_workspace_covers_shift_classes, 0,
                        (int)(sizeof ws_cases / sizeof ws_cases[0]));
    tcase_add_test(tc, norm_backward_reload_ignores_hint_and_db);
    tcase_add_test(tc, norm_forward_reload_is_slots_per_step);
    tcase_add_test(tc, norm_backward_loop_is_its_own_configuration);
    suite_add_tcase(s, tc);

    tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, NULL, cleanup_tmpdir);
    tcase_add_test(tc, cache_write_read_merge);
    tcase_add_loop_test(tc, cache_malformed_line_names_file_and_line, 0,
                        (int)(sizeof bad_lines / sizeof bad_lines[0]));
    tcase_add_test(tc, setup_chooses_custom_cache_heuristic);
    tcase_add_test(tc, cache_bom_and_blanks_are_not_the_key);
    tcase_add_test(tc, setup_fails_when_heuristic_cannot_run);
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
    tcase_add_test(tc, norm_bwd_workspace_ignores_occ_at_clusters);
    tcase_add_test(tc, norm_fwd_cluster_only_on_the_staged_loop);
    tcase_add_test(tc, search_checks_all_directions);
    tcase_add_test(tc, canon_merges_equivalent_configs);
    tcase_add_test(tc, launch_fits_decides_from_queries);
    suite_add_tcase(s, tc);
    return s;
}
