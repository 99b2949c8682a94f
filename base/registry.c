/* Benchmarks, shapes, byte models and backend implementations. */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- backends ------------------------------------------------------------
 * The registry knows no backend by itself: the program registers those it
 * links at start-up (kb_register; each op folder's register.c lists them), so a build
 * without one (cuDNN switched off at configure time) simply never registers
 * it. */
/* cublaslt_epilogue: the activation fused into the GEMM by cuBLASLt's
 * epilogue (mlp; kernels/mlp/). */
static const char *const backend_names[KB_NUM_BACKENDS] = {"eager", "fused", "tuned", "cudnn",
                                                           "cublaslt_epilogue"};
/* Each benchmark's implementation by each backend (NULL: not registered),
 * in backend_names' order: filled once at start-up, then only read. */
static const kb_impl *registered[KB_NUM_BENCH][KB_NUM_BACKENDS];

/* Each benchmark's descriptor (kernels/<op>/op.c), registered at start-up
 * by kb_ops_register; then only read. */
static const kb_bench_info *ops[KB_NUM_BENCH];
/* Each op's GPU reference half, where it has its own. */
static const kb_op_gpu *op_gpus[KB_NUM_BENCH];

kb_status kb_op_register(const kb_bench_info *bi, kb_err *e)
{
    if (!bi || (unsigned)bi->id >= KB_NUM_BENCH || !bi->name || !bi->family)
        return KB_FAIL(e, KB_ERR_ARG, "registering an op: no descriptor, id out of range or "
                                      "no name or family");
    if (ops[bi->id] && ops[bi->id] != bi)
        return KB_FAIL(e, KB_ERR_ARG, "op %s: id %d registered twice (also %s)", bi->name,
                       (int)bi->id, ops[bi->id]->name);
    ops[bi->id] = bi;
    return KB_OK;
}

kb_status kb_op_gpu_register(const kb_op_gpu *g, kb_err *e)
{
    if (!g || (unsigned)g->bench >= KB_NUM_BENCH)
        return KB_FAIL(e, KB_ERR_ARG, "registering an op's GPU reference: id out of range");
    if (op_gpus[g->bench] && op_gpus[g->bench] != g)
        return KB_FAIL(e, KB_ERR_ARG, "the GPU reference of benchmark %d registered twice",
                       (int)g->bench);
    op_gpus[g->bench] = g;
    return KB_OK;
}

const kb_op_gpu *kb_op_gpu_get(kb_bench_id bench)
{
    return (unsigned)bench < KB_NUM_BENCH ? op_gpus[bench] : NULL;
}

/* The role table, in kb_role order: a role's name (describe, dumps,
 * messages), its default dims and element size (0: the dtype). */
static const kb_tensor_info tensors[KB_NUM_ROLES] = {
    {"x", KB_R_X, KB_DIM_MN, 0},         {"up", KB_R_UP, KB_DIM_MN, 0},
    {"target", KB_R_TARGET, KB_DIM_M, 8}, {"dloss", KB_R_DLOSS, KB_DIM_M, 4},
    {"dy", KB_R_DY, KB_DIM_MN, 0},       {"w", KB_R_W, KB_DIM_N, 4},
    {"y", KB_R_Y, KB_DIM_MN, 0},         {"lse", KB_R_LSE, KB_DIM_M, 4},
    {"mean", KB_R_MEAN, KB_DIM_M, 4},    {"rstd", KB_R_RSTD, KB_DIM_M, 4},
    {"out", KB_R_OUT, KB_DIM_OUT, 0},    {"dw", KB_R_DW, KB_DIM_N, 4},
    {"wts", KB_R_WTS, KB_DIM_3KN, 0},    {"res", KB_R_RES, KB_DIM_MN, 0},
    {"dres", KB_R_DRES, KB_DIM_MN, 0},   {"cs", KB_R_CS, KB_DIM_MN, 0},
};

const kb_tensor_info *kb_tensor_info_get(int i)
{
    return (unsigned)i < KB_NUM_TENSORS ? &tensors[i] : NULL;
}

void kb_tensor_dims(const kb_problem *p, kb_role r, int64_t *rows, int64_t *cols)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    *rows = *cols = 0;
    if (!bi || (unsigned)r >= KB_NUM_ROLES || (r != KB_R_OUT && !(bi->tensors & KB_T(r)))) return;
    if (bi->tensor_dims && bi->tensor_dims(p, r, rows, cols)) return;
    switch (tensors[r].dims) {
    case KB_DIM_MN: *rows = p->M, *cols = p->N; return;
    case KB_DIM_M: *rows = p->M, *cols = 1; return;
    case KB_DIM_N: *rows = 1, *cols = p->N; return;
    case KB_DIM_3KN: *rows = 3 * p->K, *cols = p->N; return;
    case KB_DIM_OUT:
        *rows = bi->out_pair ? 2 * p->M : p->M;
        *cols = bi->out_per_row ? 1 : p->N;
        return;
    }
}

/* a * b, or SIZE_MAX where that overflows: a tensor of a shape --shape
 * accepts can still have more bytes than size_t holds (rope's x is 128 *
 * (N + K) * M elements, add_rmsnorm's out 2 * M * N), and a wrapped count
 * would let kb_buffers_fit pass a case that then writes past its block. */
static size_t mul_sat(size_t a, size_t b) { return a && b > SIZE_MAX / a ? SIZE_MAX : a * b; }

size_t kb_tensor_bytes(const kb_problem *p, kb_tensor_bit bit)
{
    for (int r = 0; r < KB_NUM_ROLES; r++) {
        if (KB_T(r) != bit) continue;
        int64_t rows, cols;
        kb_tensor_dims(p, (kb_role)r, &rows, &cols);
        const int eb = tensors[r].elem_bytes;
        return mul_sat(mul_sat((size_t)rows, (size_t)cols),
                       eb ? (size_t)eb : kb_dtype_size(p->dtype));
    }
    return 0;
}

int64_t kb_out_cols(const kb_problem *p)
{
    int64_t rows, cols;
    kb_tensor_dims(p, KB_R_OUT, &rows, &cols);
    return cols;
}

int64_t kb_out_rows(const kb_problem *p)
{
    int64_t rows, cols;
    kb_tensor_dims(p, KB_R_OUT, &rows, &cols);
    return rows;
}

const kb_bench_info *kb_bench_info_get(kb_bench_id id)
{
    return (unsigned)id < KB_NUM_BENCH ? ops[id] : NULL;
}

kb_status kb_bench_find(const char *name, kb_bench_id *out, kb_err *e)
{
    for (int i = 0; i < KB_NUM_BENCH; i++)
        if (ops[i] && strcmp(name, ops[i]->name) == 0) {
            *out = (kb_bench_id)i;
            return KB_OK;
        }
    return KB_FAIL(e, KB_ERR_ARG, "Unknown benchmark '%s'. Use --list to see the benchmarks.",
                   name);
}

double kb_bytes_moved(const kb_problem *p)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    if (!bi) return 0;
    const double M = (double)p->M, N = (double)p->N, s = (double)kb_dtype_size(p->dtype);
    const kb_byte_model *b = &bi->bytes;
    return b->mn * M * N * s + b->m_dtype * M * s + b->m_bytes * M + b->n_bytes * N +
           b->nk * N * (double)p->K * s + b->mk * M * (double)p->K * s;
}

double kb_flops(const kb_problem *p)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    return bi ? bi->flops_mnk * (double)p->M * (double)p->N * (double)p->K : 0;
}

/* SPEC's default sweep; the norms add the transformer-activation shapes. */
static const kb_shape sweep[] = {
    {32768, 256},   {32768, 512},   {32768, 1024},  {32768, 2048},
    {32768, 4096},  {32768, 8192},  {32768, 16384}, {32768, 32768},
    {32768, 65536}, {16384, 131072}, {8192, 262144},
    {576000, 384},  {576000, 512},  {1152000, 384}, {1152000, 512},
};
_Static_assert(sizeof sweep / sizeof sweep[0] == KB_SWEEP_NORM, "the sweep's length");

/* Vocabulary sizes (GPT-2, Llama 3, Qwen 2), a width one short of a power of
 * two, a single column and a single row: the tails and edges of every kernel. */
static const kb_shape odd[] = {
    {4096, 50257}, {2048, 128256}, {1024, 151936}, {32768, 4095}, {4096, 1}, {1, 32768},
};
/* fp16 and fp32: one aligned and one odd width. */
static const kb_shape short_list[] = {{32768, 1024}, {4096, 50257}};
/* Input kinds: a short row (one warp or a few per row in most kernels) and a
 * long odd row (a vocabulary size: the looping, re-reading and tail paths). */
static const kb_shape inputs_list[] = {{4096, 1000}, {512, 50257}};

size_t kb_shapes(kb_bench_id id, kb_shape_set set, const kb_shape **out)
{
    const kb_bench_info *bi = kb_bench_info_get(id);
    if (!bi) {
        *out = NULL;
        return 0;
    }
    const kb_shape_lists *own = bi->shapes;
    if (own && (unsigned)set < 4 && own->count[set]) {
        *out = own->list[set];
        return own->count[set];
    }
    if (bi->dims == 3) { /* MxNxK: no 2-D list applies */
        *out = NULL;
        return 0;
    }
    switch (set) {
    case KB_SHAPES_DEFAULT:
        *out = sweep;
        return (size_t)bi->sweep;
    case KB_SHAPES_ODD: *out = odd; return sizeof odd / sizeof odd[0];
    case KB_SHAPES_SHORT: *out = short_list; return sizeof short_list / sizeof short_list[0];
    case KB_SHAPES_INPUTS: *out = inputs_list; return sizeof inputs_list / sizeof inputs_list[0];
    }
    *out = NULL;
    return 0;
}

/* ---- input kinds --------------------------------------------------------- */
static const char *const inputs_names[KB_NUM_INPUTS] = {"randn",  "shifted",  "wide",
                                                        "masked", "constant", "small"};

const char *kb_inputs_name(kb_inputs k)
{
    return (unsigned)k < KB_NUM_INPUTS ? inputs_names[k] : "?";
}

kb_status kb_inputs_parse(const char *s, kb_inputs *out, kb_err *e)
{
    const int k = kb_name_index(inputs_names, KB_NUM_INPUTS, s);
    if (k >= 0) {
        *out = (kb_inputs)k;
        return KB_OK;
    }
    return KB_FAIL(e, KB_ERR_ARG,
                   "unknown input kind '%s' (expected randn, shifted, wide, masked, constant or "
                   "small)",
                   s);
}

int kb_inputs_apply(kb_inputs k, kb_bench_id b)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    return (unsigned)k < KB_NUM_INPUTS && bi && (bi->inputs >> k & 1u);
}

static const kb_impl *impl_at(int backend, kb_bench_id bench)
{
    return registered[bench][backend];
}

const char *kb_backend_name(int i)
{
    return i >= 0 && i < KB_NUM_BACKENDS ? backend_names[i] : NULL;
}

int kb_backend_index(const char *name)
{
    for (int i = 0; i < KB_NUM_BACKENDS; i++)
        if (strcmp(name, backend_names[i]) == 0) return i;
    return -1;
}

const kb_impl *kb_impl_get(kb_bench_id bench, const char *backend)
{
    int b = kb_backend_index(backend);
    if (b < 0 || (unsigned)bench >= KB_NUM_BENCH) return NULL;
    return impl_at(b, bench);
}

const kb_impl *kb_impl_at(kb_bench_id bench, int backend)
{
    if (backend < 0 || backend >= KB_NUM_BACKENDS || (unsigned)bench >= KB_NUM_BENCH) return NULL;
    return impl_at(backend, bench);
}

kb_status kb_register(const kb_impl *impl, kb_err *e)
{
    const int be = impl && impl->backend ? kb_backend_index(impl->backend) : -1;
    if (be < 0)
        return KB_FAIL(e, KB_ERR_ARG, "registering a backend: unknown backend name '%s'",
                       impl && impl->backend ? impl->backend : "(none)");
    if (!kb_bench_info_get(impl->bench))
        return KB_FAIL(e, KB_ERR_ARG,
                       "registering backend %s: benchmark id %d out of range or its op not "
                       "registered (kb_ops_register first)",
                       impl->backend, (int)impl->bench);
    const kb_impl **slot = &registered[impl->bench][be];
    if (*slot && *slot != impl)
        return KB_FAIL(e, KB_ERR_ARG, "backend %s of %s registered twice", impl->backend,
                       kb_bench_info_get(impl->bench)->name);
    *slot = impl;
    return KB_OK;
}

/* ---- cases --------------------------------------------------------------- */
static const struct {
    kb_dtype dtype;
    kb_shape_set set;
} sweeps[] = {
    {KB_BF16, KB_SHAPES_DEFAULT},
    {KB_BF16, KB_SHAPES_ODD},
    {KB_FP16, KB_SHAPES_SHORT},
    {KB_FP32, KB_SHAPES_SHORT},
};

int kb_shapes_dtype(kb_shape_set set, kb_dtype d)
{
    for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++)
        if (sweeps[s].set == set && sweeps[s].dtype == d) return 1;
    return 0;
}

int kb_inputs_dtype(kb_inputs k, kb_dtype d)
{
    /* constant in every dtype: an fp32 sum of N equal values is exact in
     * bf16 for longer rows than in fp16, and in fp32 not at all (a
     * LayerNorm mean that is not the value itself comes back as
     * error * 1/sqrt(eps)). */
    return d == KB_BF16 || (k == KB_INPUTS_WIDE && d == KB_FP16) || k == KB_INPUTS_CONSTANT;
}

kb_status kb_cases_foreach(kb_status (*fn)(const kb_case *c, void *arg), void *arg)
{
    for (int b = 0; b < KB_NUM_BENCH; b++)
        for (int be = 0; be < KB_NUM_BACKENDS; be++) {
            const kb_impl *impl = impl_at(be, (kb_bench_id)b);
            if (!impl) continue;
            for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++) {
                const kb_shape *shapes;
                size_t n = kb_shapes((kb_bench_id)b, sweeps[s].set, &shapes);
                for (size_t i = 0; i < n; i++) {
                    kb_case c = {{(kb_bench_id)b, sweeps[s].dtype, shapes[i].M, shapes[i].N,
                                  shapes[i].K},
                                 impl, backend_names[be], sweeps[s].set, KB_INPUTS_RANDN};
                    kb_status st = fn(&c, arg);
                    if (st != KB_OK) return st;
                }
            }
            for (int k = 1; k < KB_NUM_INPUTS; k++) {
                if (!kb_inputs_apply((kb_inputs)k, (kb_bench_id)b)) continue;
                for (int d = 0; d < KB_NUM_DTYPES; d++) {
                    if (!kb_inputs_dtype((kb_inputs)k, (kb_dtype)d)) continue;
                    const kb_shape *in_shapes;
                    const size_t n_in = kb_shapes((kb_bench_id)b, KB_SHAPES_INPUTS, &in_shapes);
                    for (size_t i = 0; i < n_in; i++) {
                        kb_case c = {{(kb_bench_id)b, (kb_dtype)d, in_shapes[i].M,
                                      in_shapes[i].N, in_shapes[i].K},
                                     impl, backend_names[be], KB_SHAPES_INPUTS, (kb_inputs)k};
                        kb_status st = fn(&c, arg);
                        if (st != KB_OK) return st;
                    }
                }
            }
        }
    return KB_OK;
}

void kb_shape_format(char *buf, size_t len, int64_t M, int64_t N, int64_t K)
{
    if (K > 0)
        snprintf(buf, len, "%" PRId64 "x%" PRId64 "x%" PRId64, M, N, K);
    else
        snprintf(buf, len, "%" PRId64 "x%" PRId64, M, N);
}

void kb_case_name(const kb_case *c, char *buf, size_t len)
{
    char shape[72];
    kb_shape_format(shape, sizeof shape, c->p.M, c->p.N, c->p.K);
    snprintf(buf, len, "%s.%s.%s.%s%s%s", kb_bench_info_get(c->p.bench)->name, c->backend,
             kb_dtype_name(c->p.dtype), shape, c->inputs ? "." : "",
             c->inputs ? kb_inputs_name(c->inputs) : "");
}

/* A library backend's deviations from PyTorch's semantics that the input
 * kinds found are in its op's descriptor. Their cases stay registered and
 * must keep failing accuracy: CTest expects it (label known_deviation,
 * tests/discover_cases.cmake), so the day the library changes the case
 * fails and the descriptor is revisited. */
static const char *deviation_of(kb_bench_id b, const char *backend, kb_inputs k)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    for (const kb_deviation *d = bi ? bi->deviations : NULL; d && d->backend; d++)
        if (d->inputs == (int)k && strcmp(d->backend, backend) == 0) return d->what;
    return NULL;
}

const char *kb_case_known_deviation(const kb_case *c)
{
    return deviation_of(c->p.bench, c->backend, c->inputs);
}

const char *kb_known_deviation(const char *benchmark, const char *backend, const char *inputs)
{
    kb_bench_id b = (kb_bench_id)0;
    kb_inputs k = KB_INPUTS_RANDN;
    if (kb_bench_find(benchmark, &b, NULL) != KB_OK) return NULL;
    if (inputs && *inputs && kb_inputs_parse(inputs, &k, NULL) != KB_OK) return NULL;
    return deviation_of(b, backend, k);
}

void kb_case_labels(const kb_case *c, char *buf, size_t len)
{
    const kb_bench_info *bi = kb_bench_info_get(c->p.bench);
    snprintf(buf, len, "%s,%s,%s,%s,%s,gpu%s%s%s%s", bi->family, bi->name,
             bi->backward ? "backward" : "forward", c->backend, kb_dtype_name(c->p.dtype),
             c->set == KB_SHAPES_ODD ? ",odd" : "", c->inputs ? ",inputs," : "",
             c->inputs ? kb_inputs_name(c->inputs) : "",
             kb_case_known_deviation(c) ? ",known_deviation" : "");
}

static kb_status parse_dim(const char *s, const char *end, const char *whole, int64_t *out,
                           kb_err *e)
{
    if (s == end) return KB_FAIL(e, KB_ERR_ARG, "malformed shape '%s': expected MxN or MxNxK", whole);
    int64_t v = 0;
    for (const char *c = s; c < end; c++) {
        if (*c < '0' || *c > '9')
            return KB_FAIL(e, KB_ERR_ARG,
                           "malformed shape '%s': expected MxN or MxNxK with positive integers",
                           whole);
        if (v > (INT64_MAX - 9) / 10)
            return KB_FAIL(e, KB_ERR_ARG, "shape '%s': dimension too large", whole);
        v = v * 10 + (*c - '0');
    }
    if (v < 1) return KB_FAIL(e, KB_ERR_ARG, "shape '%s': every size must be >= 1", whole);
    *out = v;
    return KB_OK;
}

int kb_shape_too_large(int64_t M, int64_t N, int64_t K)
{
    if (M < 1 || N < 1 || K < 0) return 0; /* not a size: the callers' own checks */
    return M > INT64_MAX / 4 / N || (K && (K > INT64_MAX / 16 / N || K > INT64_MAX / 16 / M));
}

kb_status kb_shape_parse(const char *s, kb_shape *out, kb_err *e)
{
    const char *x = strchr(s, 'x');
    if (!x)
        return KB_FAIL(e, KB_ERR_ARG,
                       "malformed shape '%s': expected MxN (e.g. 32768x4096) or MxNxK", s);
    const char *x2 = strchr(x + 1, 'x');
    kb_shape sh = {0, 0, 0};
    KB_TRY(parse_dim(s, x, s, &sh.M, e));
    KB_TRY(parse_dim(x + 1, x2 ? x2 : x + strlen(x), s, &sh.N, e));
    if (x2) KB_TRY(parse_dim(x2 + 1, x2 + strlen(x2), s, &sh.K, e));
    if (kb_shape_too_large(sh.M, sh.N, sh.K))
        return KB_FAIL(e, KB_ERR_ARG, "shape '%s': too large", s);
    *out = sh;
    return KB_OK;
}

kb_status kb_shape_check(kb_bench_id b, const kb_shape *sh, kb_err *e)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    if (!bi) return KB_FAIL(e, KB_ERR_ARG, "unknown benchmark id %d", (int)b);
    char buf[72];
    kb_shape_format(buf, sizeof buf, sh->M, sh->N, sh->K);
    if (bi->dims == 3 && sh->K < 1)
        return KB_FAIL(e, KB_ERR_ARG, "%s takes three sizes MxNxK, got '%s'", bi->name, buf);
    if (bi->dims != 3 && sh->K != 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s takes two sizes MxN, got '%s'", bi->name, buf);
    return KB_OK;
}

kb_status kb_case_parse(const char *name, kb_case *out, kb_err *e)
{
    char buf[256];
    if (strlen(name) >= sizeof buf) return KB_FAIL(e, KB_ERR_ARG, "case name too long: '%s'", name);
    strcpy(buf, name);
    char *part[4];
    char *p = buf;
    for (int i = 0; i < 3; i++) {
        char *dot = strchr(p, '.');
        if (!dot)
            return KB_FAIL(e, KB_ERR_ARG,
                           "malformed case name '%s': expected <benchmark>.<backend>.<dtype>.<M>x<N>[.<inputs>]",
                           name);
        *dot = '\0';
        part[i] = p;
        p = dot + 1;
    }
    part[3] = p;
    kb_case c;
    memset(&c, 0, sizeof c);
    char *kind = strchr(p, '.');
    if (kind) {
        *kind++ = '\0';
        KB_TRY(kb_inputs_parse(kind, &c.inputs, e));
        if (c.inputs == KB_INPUTS_RANDN)
            return KB_FAIL(e, KB_ERR_ARG, "case '%s': randn cases carry no input suffix", name);
    }
    KB_TRY(kb_bench_find(part[0], &c.p.bench, e));
    int be = kb_backend_index(part[1]);
    if (be < 0) return KB_FAIL(e, KB_ERR_ARG, "unknown backend '%s' in case '%s'", part[1], name);
    c.backend = backend_names[be];
    c.impl = impl_at(be, c.p.bench);
    if (!c.impl)
        return KB_FAIL(e, KB_ERR_ARG, "backend '%s' does not implement %s", part[1], part[0]);
    KB_TRY(kb_dtype_parse(part[2], &c.p.dtype, e));
    kb_shape sh;
    KB_TRY(kb_shape_parse(part[3], &sh, e));
    KB_TRY(kb_shape_check(c.p.bench, &sh, e));
    c.p.M = sh.M;
    c.p.N = sh.N;
    c.p.K = sh.K;
    /* Which list the case comes from, as kb_cases_foreach registers it: the
     * odd list runs in bf16, the short list in fp16/fp32. */
    c.set = c.p.dtype == KB_BF16 ? KB_SHAPES_DEFAULT : KB_SHAPES_SHORT;
    const kb_shape *odd_shapes;
    size_t n = kb_shapes(c.p.bench, KB_SHAPES_ODD, &odd_shapes);
    for (size_t i = 0; i < n && c.p.dtype == KB_BF16; i++)
        if (odd_shapes[i].M == sh.M && odd_shapes[i].N == sh.N && odd_shapes[i].K == sh.K)
            c.set = KB_SHAPES_ODD;
    if (c.inputs) {
        if (!kb_inputs_apply(c.inputs, c.p.bench))
            return KB_FAIL(e, KB_ERR_ARG, "case '%s': input kind %s does not apply to %s", name,
                           kind, part[0]);
        c.set = KB_SHAPES_INPUTS;
    }
    *out = c;
    return KB_OK;
}
