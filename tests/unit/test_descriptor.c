/* The op descriptor's equivalence record: for every registered case and for
 * edge shapes in every dtype, what the harness derives from a benchmark id
 * (buffer layout and bytes, output elements, byte model, input kinds,
 * shapes) and the CPU reference's outputs on small shapes, compared line by
 * line with tests/fixtures/descriptor/equiv.txt. The fixture was recorded
 * from the code before the descriptor existed (KB_EQUIV_RECORD=1 rewrites
 * it), so a refactor that changes any derived value fails here. */
#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "knobs.h"
#include "reference.h"
#include "registry.h"
#include "unit.h"

#define FIXTURE KB_FIXTURES "/descriptor/equiv.txt"
#define SEED 0x6b62656e6368ull

typedef struct {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ck_assert_int_lt(n, (int)sizeof line);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
        ck_assert_ptr_nonnull(t->buf);
    }
    memcpy(t->buf + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

static const size_t ws_values[] = {0, 1, 4096, 1000003};

static void problem_lines(text *t, const char *tag, const kb_problem *p)
{
    put(t, "%s out=%" PRId64 " moved=%a bytes=", tag, kb_out_elems(p), kb_bytes_moved(p));
    for (size_t i = 0; i < sizeof ws_values / sizeof ws_values[0]; i++)
        put(t, "%zu%s", kb_buffers_bytes(p, ws_values[i]), i + 1 < 4 ? "," : "");
    kb_layout l;
    kb_buffers_layout(p, 4096, &l);
    const size_t *z = l.bytes;
    put(t, " layout=%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu", z[KB_R_X],
        z[KB_R_TARGET], z[KB_R_DLOSS], z[KB_R_DY], z[KB_R_W], z[KB_R_Y], z[KB_R_LSE],
        z[KB_R_MEAN], z[KB_R_RSTD], z[KB_R_OUT], z[KB_R_DW], z[KB_SLOT_GOLD], z[KB_SLOT_GOLD_DW],
        z[KB_SLOT_WS]);
    if (z[KB_R_UP]) put(t, " up=%zu", z[KB_R_UP]); /* GLU's up: the ops before it have none */
    /* The roles of the ops added after the record (add_rmsnorm, rope). */
    const int later[] = {KB_R_RES, KB_R_DRES, KB_R_CS};
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (z[later[i]]) put(t, " %s=%zu", kb_tensor_info_get(later[i])->name, z[later[i]]);
    put(t, "\n");
}

static kb_status case_line(const kb_case *c, void *arg)
{
    char name[256];
    kb_case_name(c, name, sizeof name);
    problem_lines(arg, name, &c->p);
    return KB_OK;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The CPU reference on the generator's x and target and plain dy, w, dloss:
 * hashes of the saved statistics, out and dw, and which inputs it refuses
 * to run without. */
static void reference_line(text *t, kb_bench_id b, kb_inputs k, kb_dtype d, int64_t M, int64_t N)
{
    const size_t MN = (size_t)(M * N);
    const size_t nout = MN * (kb_bench_info_get(b)->out_pair ? 2 : 1);
    float *x = calloc(MN, 4), *dy = calloc(MN, 4), *w = calloc((size_t)N, 4),
          *y = calloc(MN, 4), *out = calloc(nout, 4), *dw = calloc((size_t)N, 4),
          *up = calloc(MN, 4),
          *lse = calloc((size_t)M, 4), *mean = calloc((size_t)M, 4),
          *rstd = calloc((size_t)M, 4), *dloss = calloc((size_t)M, 4);
    int64_t *target = calloc((size_t)M, 8);
    ck_assert(x && dy && w && y && out && dw && lse && mean && rstd && dloss && target && up);
    kb_inputs_host(k, b, d, SEED, M, N, x, target);
    uint32_t s = 12345;
    for (size_t i = 0; i < MN; i++) {
        s = s * 1664525u + 1013904223u;
        dy[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    for (size_t i = 0; i < MN; i++) up[i] = 1.0f - (float)(i % 7) * 0.375f;
    for (int64_t j = 0; j < N; j++) w[j] = 0.5f + (float)j / (float)N;
    for (int64_t i = 0; i < M; i++) dloss[i] = 1.0f - 0.25f * (float)i;
    kb_ref_cpu_saved(b, M, N, x, lse, mean, rstd, y);
    kb_ref_in in = {.x = x, .up = up, .dy = dy, .w = w, .dloss = dloss, .y = y, .target = target,
                    .lse = lse, .mean = mean, .rstd = rstd};
    kb_ref_out o = {.out = out, .dw = dw};
    kb_err e;
    const kb_status st = kb_ref_cpu(b, M, N, &in, &o, &e);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, x, MN * 4);
    h = fnv(h, target, (size_t)M * 8);
    uint64_t hs = fnv(0xcbf29ce484222325ull, lse, (size_t)M * 4);
    hs = fnv(hs, mean, (size_t)M * 4);
    hs = fnv(hs, rstd, (size_t)M * 4);
    hs = fnv(hs, y, MN * 4);
    const uint64_t ho = fnv(fnv(0xcbf29ce484222325ull, out, nout * 4), dw, (size_t)N * 4);
    /* Which input the reference requires: each pointer NULL in turn. */
    char req[16] = "";
    const float **fp[] = {&in.x, &in.dy, &in.w, &in.dloss, &in.y, &in.lse, &in.mean, &in.rstd};
    for (size_t i = 0; i < sizeof fp / sizeof fp[0]; i++) {
        const float *keep = *fp[i];
        *fp[i] = NULL;
        req[i] = kb_ref_cpu(b, M, N, &in, &o, &e) == KB_OK ? '-' : 'r';
        *fp[i] = keep;
    }
    in.target = NULL;
    req[8] = kb_ref_cpu(b, M, N, &in, &o, &e) == KB_OK ? '-' : 'r';
    in.target = target;
    o.dw = NULL;
    req[9] = kb_ref_cpu(b, M, N, &in, &o, &e) == KB_OK ? '-' : 'r';
    o.dw = dw;
    if (kb_bench_info_get(b)->ref_reads & KB_T_UP) { /* GLU's up (after the older ops' ten) */
        in.up = NULL;
        req[10] = kb_ref_cpu(b, M, N, &in, &o, &e) == KB_OK ? '-' : 'r';
        in.up = up;
    }
    put(t, "ref %s %s %s %" PRId64 "x%" PRId64 " st=%d in=%016" PRIx64 " saved=%016" PRIx64
           " out=%016" PRIx64 " req=%s\n",
        kb_bench_info_get(b)->name, kb_inputs_name(k), kb_dtype_name(d), M, N, (int)st, h, hs,
        ho, req);
    free(x), free(dy), free(w), free(y), free(out), free(dw), free(lse), free(mean), free(rstd),
        free(dloss), free(target), free(up);
}

static text record(void)
{
    text t = {0};
    ck_assert_int_eq(kb_cases_foreach(case_line, &t), KB_OK);
    static const kb_shape extra[] = {{1, 1}, {7, 9}, {3, 4095}, {4096, 1}, {1, 32768}};
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_bench_info *bi = kb_bench_info_get((kb_bench_id)b);
        put(&t, "bench %s %s bwd=%d norm=%d kinds=", bi->name, bi->family, bi->backward,
            (int)bi->x_dist);
        for (int k = 0; k < KB_NUM_INPUTS; k++)
            put(&t, "%d", kb_inputs_apply((kb_inputs)k, (kb_bench_id)b));
        for (int set = KB_SHAPES_DEFAULT; set <= KB_SHAPES_INPUTS; set++) {
            const kb_shape *sh;
            const size_t n = kb_shapes((kb_bench_id)b, (kb_shape_set)set, &sh);
            put(&t, " set%d=", set);
            for (size_t i = 0; i < n; i++) {
                put(&t, "%" PRId64 "x%" PRId64, sh[i].M, sh[i].N);
                if (sh[i].K) put(&t, "x%" PRId64, sh[i].K); /* a 3-D op's shapes */
                put(&t, ";");
            }
        }
        put(&t, "\n");
        for (int d = 0; d < KB_NUM_DTYPES; d++)
            for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
                const kb_problem p = {(kb_bench_id)b, (kb_dtype)d, extra[i].M, extra[i].N};
                char tag[128];
                snprintf(tag, sizeof tag, "extra %s %s %" PRId64 "x%" PRId64, bi->name,
                         kb_dtype_name((kb_dtype)d), p.M, p.N);
                problem_lines(&t, tag, &p);
            }
        static const kb_shape small[] = {{1, 1}, {3, 7}, {2, 33}, {5, 1}};
        for (int k = 0; k < KB_NUM_INPUTS; k++)
            for (int d = 0; d < KB_NUM_DTYPES; d++)
                for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
                    reference_line(&t, (kb_bench_id)b, (kb_inputs)k, (kb_dtype)d, small[i].M,
                                   small[i].N);
    }
    return t;
}

/* The record's lines, sorted: the ids (and so the order of the cases) come
 * from the op folders' order, which a new op changes; what a benchmark,
 * case or shape derives must not. */
static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t sorted_lines(char *buf, char ***out)
{
    size_t n = 0, cap = 1024;
    char **v = malloc(cap * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (char *c = buf; *c;) {
        char *nl = strchr(c, '\n');
        if (nl) *nl = '\0';
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            ck_assert_ptr_nonnull(v);
        }
        v[n++] = c;
        if (!nl) break;
        c = nl + 1;
    }
    qsort(v, n, sizeof *v, cmp_line);
    *out = v;
    return n;
}

/* The benchmark a record line is about: a case name's first part, or the
 * word after "bench", "extra" or "ref". */
static void line_bench(const char *l, char *out, size_t len)
{
    const char *p = l;
    if (!strncmp(l, "bench ", 6) || !strncmp(l, "extra ", 6)) p = l + 6;
    else if (!strncmp(l, "ref ", 4)) p = l + 4;
    size_t n = strcspn(p, p == l ? ". " : " ");
    if (n >= len) n = len - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* Does any of the fixture's lines name line's benchmark? */
static int named_in(const char *line, char **fix, size_t n)
{
    char b[128], o[128];
    line_bench(line, b, sizeof b);
    for (size_t i = 0; i < n; i++) {
        line_bench(fix[i], o, sizeof o);
        if (!strcmp(b, o)) return 1;
    }
    return 0;
}

START_TEST(test_equivalence)
{
    text now = record();
    if (getenv("KB_EQUIV_RECORD")) {
        FILE *f = fopen(FIXTURE, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(now.buf, 1, now.len, f), now.len);
        ck_assert_int_eq(fclose(f), 0);
    }
    FILE *f = fopen(FIXTURE, "r");
    ck_assert_msg(f != NULL, "cannot open %s", FIXTURE);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    const long size = ftell(f);
    ck_assert_int_gt(size, 0);
    rewind(f);
    text fix = {malloc((size_t)size + 1), (size_t)size, (size_t)size + 1};
    ck_assert_ptr_nonnull(fix.buf);
    ck_assert_uint_eq(fread(fix.buf, 1, (size_t)size, f), (size_t)size);
    fix.buf[size] = '\0';
    fclose(f);
    char **want, **have;
    const size_t nw = sorted_lines(fix.buf, &want), nh = sorted_lines(now.buf, &have);
    for (size_t i = 0, j = 0; i < nw || j < nh;) {
        const int c = i == nw ? 1 : j == nh ? -1 : strcmp(want[i], have[j]);
        /* A benchmark the fixture never names is an op added after the
         * record: its lines are its own (its folder's tests check its
         * reference), not a change to what the recorded ops derive. */
        if (c > 0 && !named_in(have[j], want, nw)) {
            j++;
            continue;
        }
        ck_assert_msg(c == 0, "%s: %s\n  %s", FIXTURE,
                      c < 0 ? "a line of the fixture is not in the record:" :
                              "a line of the record is not in the fixture:",
                      c < 0 ? want[i] : have[j]);
        i++, j++;
    }
    ck_assert_uint_gt(nw, 1000);
    free(want), free(have), free(fix.buf), free(now.buf);
}
END_TEST

/* The table's own invariants: each entry at its id, the tensor roles in bit
 * order, the references read only what a case allocates, a sweep within
 * the sweep, randn applying everywhere. */
START_TEST(test_table)
{
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const kb_bench_info *bi = kb_bench_info_get((kb_bench_id)b);
        ck_assert_int_eq(bi->id, b);
        ck_assert_uint_eq(bi->ref_reads & ~(bi->tensors | KB_T_X), 0);
        ck_assert(bi->tensors & (KB_T_X | KB_T_DY)); /* rope's backward reads dy alone */
        ck_assert(kb_inputs_apply(KB_INPUTS_RANDN, (kb_bench_id)b));
        const kb_shape *sh;
        ck_assert_int_le(bi->sweep, (int)kb_shapes((kb_bench_id)b, KB_SHAPES_DEFAULT, &sh));
        ck_assert_int_ge(bi->sweep, 1);
        /* a 3-D op runs its own shapes, every one MxNxK; a compute-bound op
         * is 3-D (the MLP block; rope is 3-D and memory-bound) */
        if (bi->flops_mnk > 0) ck_assert_int_eq(bi->dims, 3);
        if (bi->dims == 3) {
            ck_assert_ptr_nonnull(bi->shapes);
            for (int set = KB_SHAPES_DEFAULT; set <= KB_SHAPES_INPUTS; set++) {
                const size_t n = kb_shapes((kb_bench_id)b, (kb_shape_set)set, &sh);
                for (size_t i = 0; i < n; i++) ck_assert_int_ge(sh[i].K, 1);
            }
        }
        /* dw only with the norm-gradient scale or an op's own terms (the dw
         * check's scale is the norms' |dy * xhat| sums, from x, dy and the
         * saved statistics) */
        if (bi->tensors & KB_T_DW)
            ck_assert(bi->scale == KB_SCALE_NORM_GRAD || bi->scale == KB_SCALE_TERMS);
        if (bi->scale == KB_SCALE_NORM_GRAD) ck_assert(bi->tensors & KB_T_DW);
        /* Each backend slot holds that op direction's implementation. */
        for (int be = 0; be < KB_NUM_BACKENDS; be++) {
            const kb_impl *impl = kb_impl_at((kb_bench_id)b, be);
            ck_assert_ptr_eq(kb_impl_get((kb_bench_id)b, kb_backend_name(be)), impl);
            if (impl) {
                ck_assert_int_eq(impl->bench, b);
                ck_assert_str_eq(impl->backend, kb_backend_name(be));
            }
        }
    }
    ck_assert_ptr_null(kb_bench_info_get(KB_NUM_BENCH));
    for (int i = 0; i < KB_NUM_TENSORS; i++)
        ck_assert_int_eq((int)kb_tensor_info_get(i)->role, i);
    ck_assert_ptr_null(kb_tensor_info_get(KB_NUM_TENSORS));
    const kb_problem p = {KB_NUM_BENCH, KB_BF16, 4, 4};
    ck_assert_uint_eq(kb_tensor_bytes(&p, KB_T_X), 0);
    ck_assert(kb_bytes_moved(&p) == 0.0);
}
END_TEST

/* The mutants that apply, per benchmark, as they were before the
 * descriptor named them (testing/perturb.cu switched on the id). The error
 * scale is held against docs/reference/spec.md's table by unit.spec. */
START_TEST(test_mutants)
{
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        const int sm = b == KB_SOFTMAX_FWD, ce = b == KB_CE_FWD,
                  nf = b == KB_RMSNORM_FWD || b == KB_LAYERNORM_FWD;
        ck_assert_int_eq(!!kb_perturb_applies(KB_PERTURB_NO_MAX, (kb_bench_id)b), sm || ce);
        ck_assert_int_eq(!!kb_perturb_applies(KB_PERTURB_HALF_ACC, (kb_bench_id)b), sm || nf);
        ck_assert_int_eq(!!kb_perturb_applies(KB_PERTURB_EPS, (kb_bench_id)b), nf);
        ck_assert(kb_perturb_applies(KB_PERTURB_SCALE, (kb_bench_id)b));
        ck_assert(kb_perturb_applies(KB_PERTURB_SKIP_LAST, (kb_bench_id)b));
    }
}
END_TEST

/* Placement: every tensor at its band-free offset modulo KB_PLACE_PERIOD,
 * the guard bands of out/dw/workspace inside the block and clear of every
 * other tensor, at most a period of padding per tensor. */
static kb_status placement_case(const kb_case *c, void *arg)
{
    (void)arg;
    const size_t ws_values2[] = {0, 4633408, 1000003};
    for (size_t w = 0; w < 3; w++) {
        kb_layout l;
        kb_buffers_layout(&c->p, ws_values2[w], &l);
        const size_t *sz = l.bytes;
        size_t off[KB_NSLOTS];
        const size_t total = kb_buffers_place(&l, off);
        size_t plain = 0, lo[KB_NSLOTS], hi[KB_NSLOTS];
        int n = 0;
        for (int k = 0; k < KB_NSLOTS; k++) {
            const int i = kb_slot_order[k];
            if (!sz[i]) continue;
            const int g = kb_slot_guarded(i);
            const size_t up = (sz[i] + 255) / 256 * 256, band = g ? KB_GUARD_BYTES : 0;
            ck_assert_uint_eq(off[i] % 256, 0);
            ck_assert_msg(off[i] % KB_PLACE_PERIOD == plain % KB_PLACE_PERIOD,
                          "slot %d: offset %zu, band-free %zu", i, off[i], plain);
            ck_assert_uint_ge(off[i], band);
            lo[n] = off[i] - band;
            hi[n] = off[i] + up + band;
            ck_assert_uint_le(hi[n], total);
            for (int j = 0; j < n; j++) ck_assert(hi[j] <= lo[n]); /* in order, apart */
            n++;
            plain += up;
        }
        ck_assert_uint_le(total, plain + (size_t)n * (KB_PLACE_PERIOD + 2 * KB_GUARD_BYTES));
        ck_assert_uint_eq(total, kb_buffers_bytes(&c->p, ws_values2[w]));
    }
    return KB_OK;
}

START_TEST(test_placement)
{
    ck_assert_int_eq(kb_cases_foreach(placement_case, NULL), KB_OK);
}
END_TEST

Suite *kb_suite_descriptor(void)
{
    Suite *s = suite_create("descriptor");
    TCase *tc = tcase_create("equivalence");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_equivalence);
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_mutants);
    tcase_add_test(tc, test_placement);
    suite_add_tcase(s, tc);
    return s;
}
