/* The tuning cache file (write, read, merge, malformed lines, BOM and
 * blanks), the committed caches under baselines/tuning/, and
 * kb_tuned_setup's choice between custom, cache and heuristic without a GPU
 * (no search), on the synthetic space of tuner_util.h. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpfiles.h"
#include "tuner_util.h"
#include "unit.h"

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
    /* strtod's hex: the baselines' rule (decimal) holds here too */
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=256|0x10",
     "GB/s is not a non-negative number: '0x10'"},
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
    {"NVIDIA H200|rope_forward|bf16|N<=32,M<=8192,K<=3|threads=256|100", "bucket is not"},
    {"NVIDIA H200|rope_forward|bf16|N<=32,M<=8192,K<=|threads=256|100", "bucket is not"},
    {"NVIDIA H200|rope_forward|bf16|N<=32,K<=8,M<=8192|threads=256|100", "bucket is not"},
    {"NVIDIA H200|rope_forward|bf16|N<=32,M<=8192,K<=8,K<=8|threads=256|100", "bucket is not"},
    {"NVIDIA H200|rope_forward|bf16|N<=32,M<=8192|threads=256|100", "lacks K<=k"},
    {"NVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024,K<=8|threads=256|100", "has K<=k"},
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

/* A NUL byte ended the line as a C string: "100<NUL>junk" read as 100 GB/s
 * and whatever followed the NUL on its line was dropped unseen. */
START_TEST(cache_nul_byte_is_refused)
{
    make_tmpdir();
    char path[512], cfg[128];
    snprintf(path, sizeof path, "%s/cache.txt", tmpdir);
    static const char text[] =
        "# header\nNVIDIA H200|softmax_forward|bf16|N<=4096,M<=1024|threads=32|100\0junk\n";
    kbt_write_n(path, text, sizeof text - 1);
    const kb_tune_key k = {"NVIDIA H200", "softmax_forward", "bf16", "N<=4096,M<=1024"};
    double gbps = 0;
    int found = 1;
    kb_err e = {""};
    ck_assert_int_eq(kb_tune_cache_lookup(path, &k, cfg, sizeof cfg, &gbps, &found, &e),
                     KB_ERR_PARSE);
    ck_assert_int_eq(found, 0);
    char want[600];
    snprintf(want, sizeof want, "%s:2: NUL byte in the line", path);
    ck_assert_msg(strstr(e.msg, want), "message '%s' lacks '%s'", e.msg, want);
    /* nor is such a file rewritten by a store */
    ck_assert_int_eq(kb_tune_cache_store(path, &k, "threads=64", 1, &e), KB_ERR_PARSE);
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
                    "NVIDIA H200|softmax_forward|fp32|N<=65536,unaligned,M<=4096|threads=128|3\n"
                    "NVIDIA H200|rope_forward|bf16|N<=32,M<=8192,K<=8|threads=128|4\n");
    static const char *const buckets[][4] = {
        {"softmax_forward", "bf16", "N<=4096,M<=1024", "threads=32"},
        {"softmax_forward", "bf16", "N<=32768,M<=1", "threads=64"},
        {"softmax_forward", "fp32", "N<=65536,unaligned,M<=4096", "threads=128"},
        {"rope_forward", "bf16", "N<=32,M<=8192,K<=8", "threads=128"}};
    for (size_t i = 0; i < 4; i++) {
        const kb_tune_key k = {"NVIDIA H200", buckets[i][0], buckets[i][1], buckets[i][2]};
        double gbps = 0;
        int found = 0;
        kb_err e = {""};
        ck_assert_msg(kb_tune_cache_lookup(path, &k, cfg, sizeof cfg, &gbps, &found, &e) == KB_OK,
                      "%s", e.msg);
        ck_assert_msg(found, "entry %zu (%s) not found", i, buckets[i][2]);
        ck_assert_str_eq(cfg, buckets[i][3]);
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
    /* A 3-D op's message names its whole shape: rope's 4096x32x8 and
     * 4096x32x32 are different cases. */
    bad.op = "rope_forward";
    const kb_problem rope = {KB_ROPE_FWD, KB_BF16, 4096, 32, 8};
    ck_assert_int_eq(kb_tuned_setup(&bad, &rope, &ctx, &state, &ws, &e), KB_ERR_CUDA);
    ck_assert_msg(strstr(e.msg, "rope_forward bf16 4096x32x8: heuristic"), "%s", e.msg);
    /* so does a custom configuration's refusal */
    ctx.custom_config = "threads=512,rows=8";
    ck_assert_int_eq(kb_tuned_setup(&space, &rope, &ctx, &state, &ws, &e), KB_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "4096x32x8: custom config threads=512,rows=8,cluster=1 cannot run"),
                  "%s", e.msg);
}
END_TEST

/* The search measures only through the measurer it is handed: none handed,
 * a clear refusal before any GPU work. */
START_TEST(setup_tune_needs_a_measurer)
{
    kb_setup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.gpu_name = "NVIDIA H200";
    ctx.tune = 1;
    char buf[512];
    kb_err e = {""};
    describe_of(&ctx, &prob, KB_ERR_ARG, buf, sizeof buf, &e);
    ck_assert_msg(strstr(e.msg, "softmax_forward: tuning without a measurer"), "%s", e.msg);
}
END_TEST

/* A cache key's GPU field: the device name, never a field separator. */
START_TEST(key_gpu_field)
{
    char buf[64];
    kb_tune_key_gpu("NVIDIA H200|x\ny\rz", buf, sizeof buf);
    ck_assert_str_eq(buf, "NVIDIA H200_x_y_z");
    kb_tune_key_gpu(NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "unknown GPU");
    kb_tune_key_gpu("", buf, sizeof buf);
    ck_assert_str_eq(buf, "unknown GPU");
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

Suite *kb_suite_tuner_cache(void)
{
    Suite *s = suite_create("tuner_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, NULL, cleanup_tmpdir);
    tcase_add_test(tc, cache_write_read_merge);
    tcase_add_loop_test(tc, cache_malformed_line_names_file_and_line, 0,
                        (int)(sizeof bad_lines / sizeof bad_lines[0]));
    tcase_add_test(tc, setup_chooses_custom_cache_heuristic);
    tcase_add_test(tc, cache_bom_and_blanks_are_not_the_key);
    tcase_add_test(tc, cache_nul_byte_is_refused);
    tcase_add_test(tc, setup_fails_when_heuristic_cannot_run);
    tcase_add_test(tc, setup_tune_needs_a_measurer);
    tcase_add_test(tc, key_gpu_field);
    suite_add_tcase(s, tc);

    tc = tcase_create("committed");
    tcase_add_test(tc, committed_caches_parse);
    suite_add_tcase(s, tc);
    return s;
}
