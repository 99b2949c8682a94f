/* The GPU reference checked against the CPU reference (kbench --self-test).
 *
 * For every benchmark x dtype x small shape: allocate the case's buffers,
 * prepare them (inputs, saved statistics, gold) exactly as a real case does,
 * copy everything back and recompute on the CPU from the same stored
 * (dtype-rounded) inputs:
 *   saved  lse/mean/rstd (fp32) and softmax y (dtype) vs the CPU from x;
 *   out    gold vs the CPU backward/forward fed with the GPU's saved stats,
 *          so a bad statistic and a bad formula are told apart;
 *   dw     gold_dw vs the CPU column sums;
 *   inputs regenerated with the same seed: byte-identical.
 * Both sides compute in double and round the result to fp32 then to the
 * dtype, so they should agree to the last bit except where the double
 * results straddle a rounding boundary. A value passes when it is within
 * one ulp of the dtype of round(cpu), or within SPEC's tolerance for the
 * dtype (assert_close). dw uses the same rule in fp32: both sides
 * accumulate in double, so the summation order (chunked on the GPU,
 * sequential on the CPU) changes the sum by ~1e-16 relative, far below an
 * fp32 ulp. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffers_gpu.h"
#include "half.h"
#include "reference.h"
#include "registry.h"
#include "run.h"

static const uint64_t SELFTEST_SEED = 0x6b62656e6368ull; /* "kbench" */

static const kb_shape shapes[] = {
    {1, 1}, {5, 1}, {1, 7}, {3, 7}, {4, 1000}, {2, 4099}, {2, 50257},
    {3000, 5}, /* several rows per dw chunk on the GPU */
};

/* ---- comparison -------------------------------------------------------------- */
static void tolerance(kb_dtype d, double *rtol, double *atol)
{
    *atol = 1e-5;
    *rtol = d == KB_BF16 ? 1.6e-2 : d == KB_FP16 ? 1e-3 : 1.3e-6;
}

/* Spacing of the dtype's values just above |v| (v already in the dtype). */
static double ulp_of(kb_dtype d, float v)
{
    const float a = fabsf(v);
    if (!isfinite(a)) return INFINITY;
    switch (d) {
    case KB_BF16: {
        const uint16_t h = kb_float_to_bf16(a);
        return (double)kb_bf16_to_float((uint16_t)(h + 1)) - (double)kb_bf16_to_float(h);
    }
    case KB_FP16: {
        const uint16_t h = kb_float_to_fp16(a);
        return (double)kb_fp16_to_float((uint16_t)(h + 1)) - (double)kb_fp16_to_float(h);
    }
    default: return (double)nextafterf(a, INFINITY) - (double)a;
    }
}

typedef struct {
    int64_t n, bad, worst;  /* worst: index of the largest error/tolerance */
    double worst_ratio, max_ulps;
    float got, want;        /* at worst */
} cmp_result;

/* got: the GPU's dtype values as float; cpu: the CPU's fp32 values. */
static void compare(kb_dtype d, const float *got, const float *cpu, int64_t n, cmp_result *r)
{
    double rtol, atol;
    tolerance(d, &rtol, &atol);
    memset(r, 0, sizeof *r);
    r->n = n;
    r->worst = -1;
    for (int64_t i = 0; i < n; i++) {
        const float g = got[i], w = kb_round_to(d, cpu[i]);
        int ok;
        double ratio = 0.0, ulps = 0.0;
        if (isnan(g) || isnan(w) || isinf(g) || isinf(w)) {
            ok = (isnan(g) && isnan(w)) || g == w;
            ratio = ok ? 0.0 : INFINITY;
        } else {
            const double diff = fabs((double)g - (double)w);
            ulps = diff / ulp_of(d, w);
            ratio = diff / (atol + rtol * fabs((double)w));
            ok = ulps <= 1.0 || ratio <= 1.0;
        }
        if (!ok) r->bad++;
        if (ulps > r->max_ulps) r->max_ulps = ulps;
        if (r->worst < 0 || ratio > r->worst_ratio || (!ok && isinf(ratio))) {
            r->worst_ratio = ratio;
            r->worst = i;
            r->got = g;
            r->want = w;
        }
    }
}

/* Prints the check's line; the first failure goes to *first and acc. */
static void report(FILE *log, const kb_problem *p, const char *what, kb_dtype d,
                   const cmp_result *r, kb_status *first, kb_err *acc)
{
    const char *bench = kb_bench_info_get(p->bench)->name;
    char shape[72];
    kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
    if (log)
        fprintf(log, "reference %-18s %s %s %-5s (%s): %s n=%" PRId64
                     " mismatches=%" PRId64 " max %.2f ulp, worst %.3g of tol at %" PRId64 "\n",
                bench, kb_dtype_name(p->dtype), shape, what, kb_dtype_name(d),
                r->bad ? "FAIL" : "ok", r->n, r->bad, r->max_ulps, r->worst_ratio, r->worst);
    if (r->bad && *first == KB_OK)
        *first = KB_FAIL(acc, KB_ERR_ACCURACY,
                         "GPU reference != CPU reference: %s %s %s %s: %" PRId64
                         " of %" PRId64 " mismatch, worst index %" PRId64 ": gpu %.9g cpu %.9g",
                         bench, kb_dtype_name(p->dtype), shape, what, r->bad, r->n,
                         r->worst, (double)r->got, (double)r->want);
}

/* ---- host copies --------------------------------------------------------------- */
typedef struct {
    float *x, *dy, *w, *dloss, *up;
    int64_t *target;
    uint64_t hash[6]; /* raw bytes of x, dy, w, dloss, target, up */
} host_inputs;

typedef struct {
    host_inputs in, again;  /* again: regenerated with the same seed */
    float *y, *lse, *mean, *rstd, *gold, *gold_dw;
    float *cpu_out, *cpu_dw, *cpu_lse, *cpu_mean, *cpu_rstd, *cpu_y;
} host_case;

static void host_free(host_case *h)
{
    float *f[] = {h->in.x, h->in.dy, h->in.w, h->in.dloss, h->in.up, h->again.x, h->again.dy,
                  h->again.w, h->again.dloss, h->again.up, h->y, h->lse, h->mean, h->rstd, h->gold,
                  h->gold_dw, h->cpu_out, h->cpu_dw, h->cpu_lse, h->cpu_mean, h->cpu_rstd,
                  h->cpu_y};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(f[i]);
    free(h->in.target);
    free(h->again.target);
    memset(h, 0, sizeof *h);
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* n elements of dtype d at dev into a new host float array (dev NULL:
 * *out stays NULL); *hash (if non-NULL) gets a hash of the raw bytes. */
static kb_status fetch(kb_dtype d, const void *dev, int64_t n, float **out, uint64_t *hash,
                       kb_err *e)
{
    if (!dev) return KB_OK;
    const size_t bytes = (size_t)n * kb_dtype_size(d);
    void *raw = malloc(bytes);
    float *f = malloc((size_t)n * sizeof(float));
    if (!raw || !f) {
        free(raw);
        free(f);
        return KB_FAIL(e, KB_ERR_NOMEM, "self-test: host malloc of %zu bytes failed", bytes);
    }
    cudaError_t rc = cudaMemcpy(raw, dev, bytes, cudaMemcpyDeviceToHost);
    if (rc != cudaSuccess) {
        free(raw);
        free(f);
        return KB_FAIL(e, KB_ERR_CUDA, "self-test: cudaMemcpy: %s", cudaGetErrorString(rc));
    }
    for (int64_t i = 0; i < n; i++) f[i] = kb_load_as_float(d, raw, (size_t)i);
    if (hash) *hash = fnv1a(raw, bytes);
    free(raw);
    *out = f;
    return KB_OK;
}

static kb_status fetch_target(const int64_t *dev, int64_t n, int64_t **out, uint64_t *hash,
                              kb_err *e)
{
    if (!dev) return KB_OK;
    int64_t *t = malloc((size_t)n * sizeof *t);
    if (!t) return KB_FAIL(e, KB_ERR_NOMEM, "self-test: host malloc failed");
    cudaError_t rc = cudaMemcpy(t, dev, (size_t)n * sizeof *t, cudaMemcpyDeviceToHost);
    if (rc != cudaSuccess) {
        free(t);
        return KB_FAIL(e, KB_ERR_CUDA, "self-test: cudaMemcpy: %s", cudaGetErrorString(rc));
    }
    *hash = fnv1a(t, (size_t)n * sizeof *t);
    *out = t;
    return KB_OK;
}

static kb_status fetch_inputs(const kb_buffers *b, host_inputs *h, kb_err *e)
{
    const kb_problem *p = &b->p;
    const int64_t MN = p->M * p->N;
    KB_TRY(fetch(p->dtype, b->t.x, MN, &h->x, &h->hash[0], e));
    KB_TRY(fetch(p->dtype, b->t.dy, MN, &h->dy, &h->hash[1], e));
    KB_TRY(fetch(KB_FP32, b->t.w, p->N, &h->w, &h->hash[2], e));
    KB_TRY(fetch(KB_FP32, b->t.dloss, p->M, &h->dloss, &h->hash[3], e));
    KB_TRY(fetch_target(b->t.target, p->M, &h->target, &h->hash[4], e));
    KB_TRY(fetch(p->dtype, b->t.up, MN, &h->up, &h->hash[5], e));
    return KB_OK;
}

static kb_status alloc_f(int64_t n, float **out, kb_err *e)
{
    *out = malloc((size_t)n * sizeof(float));
    return *out ? KB_OK : KB_FAIL(e, KB_ERR_NOMEM, "self-test: host malloc failed");
}

/* SPEC's distributions: x = 0.1 randn (cross entropy, softmax) or randn
 * (norms), dy = randn, target in [0, N). Checked on large enough tensors
 * only: mean within 6 standard errors, standard deviation within 5 %. */
static int plausible_randn(const float *v, int64_t n, double sigma)
{
    if (!v || n < 4096) return 1;
    double s = 0.0, s2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += v[i];
        s2 += (double)v[i] * v[i];
    }
    const double mean = s / (double)n, sd = sqrt(s2 / (double)n - mean * mean);
    return fabs(mean) < 6.0 * sigma / sqrt((double)n) && fabs(sd / sigma - 1.0) < 0.05;
}

static kb_status check_distributions(FILE *log, const kb_problem *p, const host_inputs *in,
                                     kb_status *first, kb_err *acc)
{
    const int64_t MN = p->M * p->N;
    if (MN < 4096) return KB_OK; /* (input kinds other than randn: see the unit tests) */
    const int unit = kb_bench_info_get(p->bench)->x_dist != KB_X_LOGITS;
    int ok = plausible_randn(in->x, MN, unit ? 1.0 : 0.1) && plausible_randn(in->dy, MN, 1.0) &&
             plausible_randn(in->up, MN, 1.0);
    if (in->target)
        for (int64_t i = 0; i < p->M; i++) ok = ok && in->target[i] >= 0 && in->target[i] < p->N;
    const char *bench = kb_bench_info_get(p->bench)->name;
    if (log)
        fprintf(log, "reference %-18s %s %" PRId64 "x%" PRId64 " inputs distribution: %s\n",
                bench, kb_dtype_name(p->dtype), p->M, p->N, ok ? "ok" : "FAIL");
    if (!ok && *first == KB_OK)
        *first = KB_FAIL(acc, KB_ERR_ACCURACY, "self-test: inputs of %s %s %" PRId64 "x%" PRId64
                         " do not follow SPEC's distributions (scale or target range)",
                         bench, kb_dtype_name(p->dtype), p->M, p->N);
    return KB_OK;
}

/* One case (buffers allocated by the caller, h freed by the caller). Hard
 * errors return through e; accuracy failures go to *first / acc. */
static kb_status check_case(FILE *log, kb_buffers *b, cudaStream_t s, host_case *h,
                            kb_status *first, kb_err *acc, kb_err *e)
{
    const kb_problem *p = &b->p;
    const int64_t M = p->M, N = p->N, MN = M * N;
    const int64_t nout = kb_out_elems(p);
    const kb_tensors *t = &b->t;
    const char *bench = kb_bench_info_get(p->bench)->name;
    cmp_result r;

    KB_TRY(kb_buffers_prepare(b, SELFTEST_SEED, s, e));
    KB_CUDA(e, cudaStreamSynchronize(s));
    KB_TRY(fetch_inputs(b, &h->in, e));
    const int randn = b->inputs == KB_INPUTS_RANDN;
    KB_TRY(fetch(p->dtype, t->y, MN, &h->y, NULL, e));
    KB_TRY(fetch(KB_FP32, t->lse, M, &h->lse, NULL, e));
    KB_TRY(fetch(KB_FP32, t->mean, M, &h->mean, NULL, e));
    KB_TRY(fetch(KB_FP32, t->rstd, M, &h->rstd, NULL, e));
    KB_TRY(fetch(p->dtype, b->gold, nout, &h->gold, NULL, e));
    KB_TRY(fetch(KB_FP32, b->gold_dw, N, &h->gold_dw, NULL, e));
    if (!h->gold) return KB_FAIL(e, KB_ERR_ARG, "self-test %s: no gold buffer", bench);
    if (randn) KB_TRY(check_distributions(log, p, &h->in, first, acc));

    /* Saved fp32 statistics, recomputed from the stored x. */
    if (h->in.x && (h->lse || h->mean || h->rstd)) {
        KB_TRY(alloc_f(M, &h->cpu_lse, e));
        KB_TRY(alloc_f(M, &h->cpu_mean, e));
        KB_TRY(alloc_f(M, &h->cpu_rstd, e));
        kb_ref_cpu_saved(p->bench, M, N, h->in.x, h->cpu_lse, h->cpu_mean, h->cpu_rstd, NULL);
        const struct { const float *gpu, *cpu; const char *what; } st[] = {
            {h->lse, h->cpu_lse, "lse"}, {h->mean, h->cpu_mean, "mean"},
            {h->rstd, h->cpu_rstd, "rstd"}};
        for (int k = 0; k < 3; k++) {
            if (!st[k].gpu) continue;
            compare(KB_FP32, st[k].gpu, st[k].cpu, M, &r);
            report(log, p, st[k].what, KB_FP32, &r, first, acc);
        }
    }

    /* Gold, from the stored inputs and the GPU's saved statistics. */
    KB_TRY(alloc_f(nout, &h->cpu_out, e));
    KB_TRY(alloc_f(N, &h->cpu_dw, e));
    const kb_ref_in in = {.x = h->in.x, .up = h->in.up, .dy = h->in.dy, .w = h->in.w, .dloss = h->in.dloss,
                          .y = h->y, .target = h->in.target, .lse = h->lse, .mean = h->mean,
                          .rstd = h->rstd};
    kb_ref_out out = {.out = h->cpu_out, .dw = h->cpu_dw};
    KB_TRY(kb_ref_cpu(p->bench, M, N, &in, &out, e));
    compare(p->dtype, h->gold, h->cpu_out, nout, &r);
    report(log, p, "out", p->dtype, &r, first, acc);
    if (h->gold_dw) {
        compare(KB_FP32, h->gold_dw, h->cpu_dw, N, &r);
        report(log, p, "dw", KB_FP32, &r, first, acc);
    }

    /* Saved softmax y, recomputed from the stored x. */
    if (h->y && h->in.x) {
        KB_TRY(alloc_f(MN, &h->cpu_y, e));
        kb_ref_cpu_saved(p->bench, M, N, h->in.x, NULL, NULL, NULL, h->cpu_y);
        compare(p->dtype, h->y, h->cpu_y, MN, &r);
        report(log, p, "y", p->dtype, &r, first, acc);
    }

    /* Same seed, same bytes. */
    KB_TRY(kb_inputs_generate(b, SELFTEST_SEED, s, e));
    KB_CUDA(e, cudaStreamSynchronize(s));
    KB_TRY(fetch_inputs(b, &h->again, e));
    const int same = memcmp(h->in.hash, h->again.hash, sizeof h->in.hash) == 0;
    if (log)
        fprintf(log, "reference %-18s %s %" PRId64 "x%" PRId64 " inputs deterministic: %s\n",
                bench, kb_dtype_name(p->dtype), M, N, same ? "ok" : "FAIL");
    if (!same && *first == KB_OK)
        *first = KB_FAIL(acc, KB_ERR_ACCURACY, "self-test: inputs of %s %s %" PRId64 "x%" PRId64
                         " differ between two generations with the same seed",
                         bench, kb_dtype_name(p->dtype), M, N);
    return KB_OK;
}

/* A GEMM block (3-D, KB_SELFTEST_GEMM: mlp_forward and its SwiGLU twin):
 * the GPU gold and error scale against its CPU reference's out and scale on
 * small odd shapes, from the GPU's own stored x and weights. The scale is
 * fp32 sums of squares on the GPU, double on the CPU: within 1e-4 relative. */
static const kb_shape mlp_shapes[] = {{1, 1, 1}, {3, 7, 5}, {17, 33, 65}, {70, 96, 130}};

static kb_status check_mlp(FILE *log, kb_buffers *b, cudaStream_t s, kb_status *first,
                           kb_err *acc, kb_err *e)
{
    const kb_problem *p = &b->p;
    const int64_t MN = p->M * p->N, W = 3 * p->K * p->N;
    float *x = NULL, *w = NULL, *gold = NULL, *scale = NULL, *cy = NULL, *cs = NULL;
    kb_status st = kb_buffers_prepare(b, SELFTEST_SEED, s, e);
    if (st == KB_OK) st = fetch(p->dtype, b->t.x, MN, &x, NULL, e);
    if (st == KB_OK) st = fetch(p->dtype, b->t.wts, W, &w, NULL, e);
    if (st == KB_OK) st = fetch(p->dtype, b->gold, MN, &gold, NULL, e);
    if (st == KB_OK) st = fetch(KB_FP32, b->gold_scale, MN, &scale, NULL, e);
    if (st == KB_OK) st = alloc_f(MN, &cy, e);
    if (st == KB_OK) st = alloc_f(MN, &cs, e);
    if (st == KB_OK) {
        const kb_ref_in in = {.x = x, .wts = w};
        kb_ref_out out = {.out = cy, .scale = cs};
        st = kb_ref_cpu3(p, &in, &out, e);
    }
    if (st == KB_OK) {
        cmp_result r;
        compare(p->dtype, gold, cy, MN, &r);
        report(log, p, "out", p->dtype, &r, first, acc);
        int64_t bad = 0;
        for (int64_t i = 0; i < MN; i++)
            bad += !(fabs((double)scale[i] - cs[i]) <= 1e-4 * fabs((double)cs[i]) + 1e-7);
        if (log)
            fprintf(log, "reference mlp_forward %s %" PRId64 "x%" PRId64 "x%" PRId64
                         " scale: %s (%" PRId64 " of %" PRId64 " off by > 1e-4)\n",
                    kb_dtype_name(p->dtype), p->M, p->N, p->K, bad ? "FAIL" : "ok", bad, MN);
        if (bad && *first == KB_OK)
            *first = KB_FAIL(acc, KB_ERR_ACCURACY,
                             "GPU reference != CPU reference: mlp_forward %" PRId64 "x%" PRId64
                             "x%" PRId64 " error scale: %" PRId64 " of %" PRId64 " differ",
                             p->M, p->N, p->K, bad, MN);
    }
    free(x), free(w), free(gold), free(scale), free(cy), free(cs);
    return st;
}

/* An op checked by role (KB_SELFTEST_ODD, the default): every tensor it
 * reads fetched by role, in its own shape, the CPU reference fed with the
 * GPU's inputs and saved statistics, and the GPU's gold and gold_dw
 * compared with it. */
static kb_status check_own(FILE *log, const kb_buffers *b, cudaStream_t s, kb_status *first,
                           kb_err *acc, kb_err *e)
{
    const kb_problem *p = &b->p;
    KB_TRY(kb_buffers_prepare((kb_buffers *)b, SELFTEST_SEED, s, e));
    float *host[KB_NUM_ROLES] = {NULL};
    int64_t *target = NULL;
    float *gold = NULL, *gold_dw = NULL, *cpu = NULL, *cpu_dw = NULL;
    const int64_t nout = kb_out_elems(p);
    kb_status st = KB_OK;
    kb_ref_in in;
    memset(&in, 0, sizeof in);
    for (int r = 0; r < KB_NUM_ROLES && st == KB_OK; r++) {
        if (r == KB_R_OUT || r == KB_R_DW || !b->t.role[r]) continue;
        int64_t rows, cols;
        kb_tensor_dims(p, (kb_role)r, &rows, &cols);
        const int eb = kb_tensor_info_get(r)->elem_bytes;
        if (eb == 8) {
            st = fetch_target((const int64_t *)b->t.role[r], rows * cols, &target, NULL, e);
            in.role[r] = target;
        } else {
            st = fetch(eb == 4 ? KB_FP32 : p->dtype, b->t.role[r], rows * cols, &host[r], NULL, e);
            in.role[r] = host[r];
        }
    }
    if (st == KB_OK) st = fetch(p->dtype, b->gold, nout, &gold, NULL, e);
    if (st == KB_OK) st = fetch(KB_FP32, b->gold_dw, p->N, &gold_dw, NULL, e);
    if (st == KB_OK) {
        cpu = malloc((size_t)nout * sizeof *cpu);
        cpu_dw = gold_dw ? malloc((size_t)p->N * sizeof *cpu_dw) : NULL;
        if (!cpu || (gold_dw && !cpu_dw))
            st = KB_FAIL(e, KB_ERR_NOMEM, "self-test: host memory for %s",
                         kb_bench_info_get(p->bench)->name);
    }
    if (st == KB_OK) {
        kb_ref_out out = {.out = cpu, .dw = cpu_dw};
        st = kb_ref_cpu3(p, &in, &out, e);
    }
    if (st == KB_OK) {
        cmp_result r;
        compare(p->dtype, gold, cpu, nout, &r);
        report(log, p, "out", p->dtype, &r, first, acc);
        if (gold_dw) {
            compare(KB_FP32, gold_dw, cpu_dw, p->N, &r);
            report(log, p, "dw", KB_FP32, &r, first, acc);
        }
    }
    for (int r = 0; r < KB_NUM_ROLES; r++) free(host[r]);
    free(target);
    free(gold);
    free(gold_dw);
    free(cpu);
    free(cpu_dw);
    return st;
}

/* The shapes a KB_SELFTEST_ODD op is checked on: its odd list (the edges
 * its author chose), small enough for the CPU. */
static kb_status selftest_own(FILE *log, kb_bench_id bench, cudaStream_t s, kb_status *first,
                              kb_err *acc, int *cases, kb_err *e)
{
    const kb_shape *odd;
    const size_t n = kb_shapes(bench, KB_SHAPES_ODD, &odd);
    for (int d = 0; d < KB_NUM_DTYPES; d++)
        for (size_t k = 0; k < n; k++) {
            const kb_problem p = {bench, (kb_dtype)d, odd[k].M, odd[k].N, odd[k].K};
            if ((double)kb_out_elems(&p) > 4e6) continue; /* the CPU's share stays small */
            kb_buffers b;
            KB_TRY(kb_buffers_alloc(&p, 0, &b, e));
            const kb_status st = check_own(log, &b, s, first, acc, e);
            kb_buffers_free(&b);
            KB_TRY(st);
            (*cases)++;
        }
    return KB_OK;
}

kb_status kb_reference_selftest(FILE *log, kb_err *e)
{
    int ndev = 0;
    cudaError_t crc = cudaGetDeviceCount(&ndev);
    if (crc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_NODEV, "self-test: no usable CUDA device (%s)",
                       cudaGetErrorString(crc));
    if (ndev == 0) return KB_FAIL(e, KB_ERR_NODEV, "self-test: no CUDA device found");

    cudaStream_t s;
    KB_CUDA(e, cudaStreamCreate(&s));
    kb_status first = KB_OK, rc = KB_OK;
    kb_err acc = {{0}};
    int cases = 0;
    for (int bi = 0; bi < KB_NUM_BENCH && rc == KB_OK; bi++)
        for (int d = 0; d < KB_NUM_DTYPES && rc == KB_OK; d++) {
            const kb_selftest how = kb_bench_info_get((kb_bench_id)bi)->selftest;
            if (how == KB_SELFTEST_ODD) { /* its odd shapes, every role */
                if (d == 0) rc = selftest_own(log, (kb_bench_id)bi, s, &first, &acc, &cases, e);
                continue;
            }
            if (how == KB_SELFTEST_GEMM) { /* MxNxK: check_mlp */
                for (size_t k = 0; k < sizeof mlp_shapes / sizeof mlp_shapes[0] && rc == KB_OK;
                     k++) {
                    const kb_problem p = {(kb_bench_id)bi, (kb_dtype)d, mlp_shapes[k].M,
                                          mlp_shapes[k].N, mlp_shapes[k].K};
                    kb_buffers b;
                    rc = kb_buffers_alloc(&p, 0, &b, e);
                    if (rc != KB_OK) break;
                    rc = check_mlp(log, &b, s, &first, &acc, e);
                    kb_buffers_free(&b);
                    cases++;
                }
                continue;
            }
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0] && rc == KB_OK; k++)
                for (int kind = 0; kind < KB_NUM_INPUTS && rc == KB_OK; kind++) {
                    if (!kb_inputs_apply((kb_inputs)kind, (kb_bench_id)bi)) continue;
                    const kb_problem p = {(kb_bench_id)bi, (kb_dtype)d, shapes[k].M, shapes[k].N};
                    kb_buffers b;
                    memset(&b, 0, sizeof b);
                    rc = kb_buffers_alloc(&p, 0, &b, e);
                    if (rc != KB_OK) break;
                    b.inputs = kind;
                    if (log && kind)
                        fprintf(log, "inputs %s (the lines up to the next 'inputs'):\n",
                                kb_inputs_name((kb_inputs)kind));
                    host_case h;
                    memset(&h, 0, sizeof h);
                    rc = check_case(log, &b, s, &h, &first, &acc, e);
                    host_free(&h);
                    kb_buffers_free(&b);
                    cases++;
                }
        }
    const cudaError_t drc = cudaStreamDestroy(s);
    if (rc != KB_OK) return rc;
    if (drc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "cudaStreamDestroy: %s", cudaGetErrorString(drc));
    if (first != KB_OK) {
        if (e) *e = acc;
        return first;
    }
    if (log)
        fprintf(log, "reference self-test: %d cases, GPU reference matches CPU reference\n",
                cases);
    return KB_OK;
}
