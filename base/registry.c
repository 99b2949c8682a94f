/* Benchmarks, shapes, byte models and backend implementations. */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SPEC's default sweep (SWEEP_COMMON shapes); the norms add the
 * transformer-activation shapes (SWEEP_NORM). Defined below. */
#define SWEEP_COMMON 11
#define SWEEP_NORM 15

/* ---- backends ------------------------------------------------------------
 * The registry knows no backend by itself: the program registers those it
 * links at start-up (kb_register; kernels/backends.c lists them), so a build
 * without one (cuDNN switched off at configure time) simply never registers
 * it. */
/* cublaslt_epilogue: the activation fused into the GEMM by cuBLASLt's
 * epilogue (mlp; kernels/mlp/). */
static const char *const backend_names[KB_NUM_BACKENDS] = {"eager", "fused", "tuned", "cudnn",
                                                           "cublaslt_epilogue"};
/* Each benchmark's implementation by each backend (NULL: not registered),
 * in backend_names' order: filled once at start-up, then only read. */
static const kb_impl *registered[KB_NUM_BENCH][KB_NUM_BACKENDS];

#define IN(k) (1u << (k))
/* Logits (cross entropy, softmax) and normalised activations take different
 * adversarial input kinds (registry.h, kb_inputs). */
#define LOGIT_KINDS                                                           \
    (IN(KB_INPUTS_RANDN) | IN(KB_INPUTS_SHIFTED) | IN(KB_INPUTS_WIDE) | IN(KB_INPUTS_MASKED))
#define NORM_KINDS                                                            \
    (IN(KB_INPUTS_RANDN) | IN(KB_INPUTS_WIDE) | IN(KB_INPUTS_CONSTANT) | IN(KB_INPUTS_SMALL))
/* GLU gates: wide (20 randn) saturates tanh and overflows exp(-x). Shifted,
 * masked (-inf), constant and small rows test reductions GLU does not have. */
#define GLU_KINDS (IN(KB_INPUTS_RANDN) | IN(KB_INPUTS_WIDE))

/* GLU: the blog's [8192, 3072] (Liger vs torch.compile), the MLP widths of
 * Llama 2 7B / Llama 3 8B / Llama 2 70B at two token counts, then a sweep
 * over H at M = 8192; odd: an odd MLP width, a width one short of a power
 * of two, a single column and a single row; fp16/fp32: one aligned and one
 * odd width. */
static const kb_shape glu_default[] = {
    {8192, 3072},  {4096, 11008}, {8192, 11008}, {4096, 14336}, {8192, 14336}, {4096, 28672},
    {8192, 28672}, {8192, 1024},  {8192, 2048},  {8192, 4096},  {8192, 8192},  {8192, 16384},
};
static const kb_shape glu_odd[] = {{8192, 11007}, {8192, 4095}, {4096, 1}, {1, 14336}};
static const kb_shape glu_short[] = {{8192, 3072}, {4096, 11007}};
#define COUNT(a) (sizeof a / sizeof a[0])
static const kb_shape_lists glu_shapes = {{glu_default, glu_odd, glu_short, NULL},
                                          {COUNT(glu_default), COUNT(glu_odd), COUNT(glu_short), 0}};

/* mlp_forward (GeGLU, tanh GELU): T = M tokens, D = N, H = K. The block's
 * own shapes: the blog's (8192, 768, 3072) and two LLM MLPs at T = 2048 and
 * 8192; small odd shapes (no multiple of 8 anywhere) for accuracy and
 * memcheck. Bytes: x read, y written, the three weights read once (the
 * minimum; intermediates are not counted: the avoided ones are the point,
 * shown in each backend's config). Flops: three GEMMs of 2*T*D*H. */
static const kb_shape mlp_default[] = {
    {8192, 768, 3072},   {2048, 4096, 11008}, {8192, 4096, 11008},
    {2048, 4096, 14336}, {8192, 4096, 14336},
};
static const kb_shape mlp_odd[] = {{3, 7, 5}, {100, 65, 257}, {257, 200, 1001}};
static const kb_shape_lists mlp_shapes = {{mlp_default, mlp_odd, NULL, NULL},
                                          {COUNT(mlp_default), COUNT(mlp_odd), 0, 0}};
/* mlp_swiglu_forward: the same block with SwiGLU (SiLU), Llama's MLP; no
 * cublaslt_epilogue (cuBLASLt has no SiLU epilogue). */
#define MLP_ENTRY(ID, NAME, FAM, OP)                                                      \
    [ID] = {.id = ID, .name = NAME, .family = "mlp",                                      \
        .backward = 0, .x_dist = KB_X_NORM /* x = randn, a normed activation */,          \
        .fam = FAM, .tensors = KB_T_X | KB_T_WTS, .ref_reads = KB_T_X | KB_T_WTS,         \
        .out_per_row = 0, .bytes = {.mn = 2, .nk = 3}, .inputs = 1u << KB_INPUTS_RANDN,   \
        .sweep = (int)COUNT(mlp_default), .shapes = &mlp_shapes, .scale = KB_SCALE_GEMM,  \
        .mutant = KB_MUTANT_NONE, .dims = 3, .flops_mnk = 6}

/* The op descriptors, one per kb_bench_id. Byte models per SPEC: inputs read
 * and outputs written once, saved statistics, w and dw fp32. */
static const kb_bench_info benches[KB_NUM_BENCH] = {
    /* loss[M] = lse - x[target]: (MN + 2M) s */
    [KB_CE_FWD] = {.id = KB_CE_FWD, .name = "cross_entropy_forward", .family = "cross_entropy",
        .backward = 0, .x_dist = KB_X_LOGITS, .fam = KB_FAM_CROSS_ENTROPY,
        .tensors = KB_T_X | KB_T_TARGET,
        .ref_reads = KB_T_X | KB_T_TARGET,
        .out_per_row = 1, .bytes = {1, 2, 0, 0}, .inputs = LOGIT_KINDS, .sweep = SWEEP_COMMON,
        .scale = KB_SCALE_LOSS, .mutant = KB_MUTANT_LOSS},
    /* dx[M,N]: 2MN s + 8M (target) + 4M (dloss) */
    [KB_CE_BWD] = {.id = KB_CE_BWD, .name = "cross_entropy_backward", .family = "cross_entropy",
        .backward = 1, .x_dist = KB_X_LOGITS, .fam = KB_FAM_CROSS_ENTROPY,
        .tensors = KB_T_X | KB_T_TARGET | KB_T_DLOSS | KB_T_LSE,
        .ref_reads = KB_T_X | KB_T_TARGET | KB_T_DLOSS | KB_T_LSE,
        .out_per_row = 0, .bytes = {2, 0, 12, 0}, .inputs = LOGIT_KINDS, .sweep = SWEEP_COMMON,
        .scale = KB_SCALE_CE_GRAD, .mutant = KB_MUTANT_NONE},
    [KB_SOFTMAX_FWD] = {.id = KB_SOFTMAX_FWD, .name = "softmax_forward", .family = "softmax",
        .backward = 0, .x_dist = KB_X_LOGITS, .fam = KB_FAM_SOFTMAX,
        .tensors = KB_T_X,
        .ref_reads = KB_T_X,
        .out_per_row = 0, .bytes = {2, 0, 0, 0}, .inputs = LOGIT_KINDS, .sweep = SWEEP_COMMON,
        .scale = KB_SCALE_ABS, .mutant = KB_MUTANT_SOFTMAX},
    /* x is there only for the saved y = softmax(x); the backward reads y */
    [KB_SOFTMAX_BWD] = {.id = KB_SOFTMAX_BWD, .name = "softmax_backward", .family = "softmax",
        .backward = 1, .x_dist = KB_X_LOGITS, .fam = KB_FAM_SOFTMAX,
        .tensors = KB_T_X | KB_T_DY | KB_T_Y,
        .ref_reads = KB_T_DY | KB_T_Y,
        .out_per_row = 0, .bytes = {3, 0, 0, 0}, .inputs = LOGIT_KINDS, .sweep = SWEEP_COMMON,
        .scale = KB_SCALE_SOFTMAX_GRAD, .mutant = KB_MUTANT_NONE},
    [KB_RMSNORM_FWD] = {.id = KB_RMSNORM_FWD, .name = "rmsnorm_forward", .family = "rmsnorm",
        .backward = 0, .x_dist = KB_X_NORM, .fam = KB_FAM_RMSNORM,
        .tensors = KB_T_X | KB_T_W,
        .ref_reads = KB_T_X | KB_T_W,
        .out_per_row = 0, .bytes = {2, 0, 0, 4}, .inputs = NORM_KINDS, .sweep = SWEEP_NORM,
        .scale = KB_SCALE_ABS, .mutant = KB_MUTANT_RMSNORM},
    [KB_RMSNORM_BWD] = {.id = KB_RMSNORM_BWD, .name = "rmsnorm_backward", .family = "rmsnorm",
        .backward = 1, .x_dist = KB_X_NORM, .fam = KB_FAM_RMSNORM,
        .tensors = KB_T_X | KB_T_W | KB_T_DY | KB_T_RSTD | KB_T_DW,
        .ref_reads = KB_T_X | KB_T_W | KB_T_DY | KB_T_RSTD | KB_T_DW,
        .out_per_row = 0, .bytes = {3, 0, 0, 8}, .inputs = NORM_KINDS, .sweep = SWEEP_NORM,
        .scale = KB_SCALE_NORM_GRAD, .mutant = KB_MUTANT_NONE},
    [KB_LAYERNORM_FWD] = {.id = KB_LAYERNORM_FWD,
        .name = "layernorm_forward", .family = "layernorm",
        .backward = 0, .x_dist = KB_X_NORM, .fam = KB_FAM_LAYERNORM,
        .tensors = KB_T_X | KB_T_W,
        .ref_reads = KB_T_X | KB_T_W,
        .out_per_row = 0, .bytes = {2, 0, 0, 4}, .inputs = NORM_KINDS, .sweep = SWEEP_NORM,
        .scale = KB_SCALE_CENTERED, .mutant = KB_MUTANT_LAYERNORM},
    [KB_LAYERNORM_BWD] = {.id = KB_LAYERNORM_BWD,
        .name = "layernorm_backward", .family = "layernorm",
        .backward = 1, .x_dist = KB_X_NORM, .fam = KB_FAM_LAYERNORM,
        .tensors = KB_T_X | KB_T_W | KB_T_DY | KB_T_MEAN | KB_T_RSTD | KB_T_DW,
        .ref_reads = KB_T_X | KB_T_W | KB_T_DY | KB_T_MEAN | KB_T_RSTD | KB_T_DW,
        .out_per_row = 0, .bytes = {3, 0, 0, 8}, .inputs = NORM_KINDS, .sweep = SWEEP_NORM,
        .scale = KB_SCALE_NORM_GRAD, .mutant = KB_MUTANT_NONE},
    /* out = act(x) * up: 2 reads + 1 write of M*N elements */
#define GLU_FWD(ID, NAME, FAM, OP, SCALE)                                     \
    [ID] = {.id = ID, .name = NAME, .family = "glu", .backward = 0, .x_dist = KB_X_ACT,   \
        .fam = FAM, .tensors = KB_T_X | KB_T_UP, .ref_reads = KB_T_X | KB_T_UP,             \
        .out_per_row = 0, .bytes = {3, 0, 0, 0}, .inputs = GLU_KINDS,                     \
        .sweep = (int)COUNT(glu_default),                                            \
        .shapes = &glu_shapes, .scale = SCALE, .mutant = KB_MUTANT_NONE}
    /* dgate = dy * up * act'(x), dup = dy * act(x): 3 reads + 2 writes */
#define GLU_BWD(ID, NAME, FAM, OP, SCALE)                                     \
    [ID] = {.id = ID, .name = NAME, .family = "glu", .backward = 1, .x_dist = KB_X_ACT,   \
        .fam = FAM, .tensors = KB_T_X | KB_T_UP | KB_T_DY,                                 \
        .ref_reads = KB_T_X | KB_T_UP | KB_T_DY, .out_per_row = 0, .out_pair = 1,          \
        .bytes = {5, 0, 0, 0}, .inputs = GLU_KINDS, .sweep = (int)COUNT(glu_default),      \
        .shapes = &glu_shapes,                                                       \
        .scale = SCALE, .mutant = KB_MUTANT_NONE}
    GLU_FWD(KB_GEGLU_FWD, "geglu_forward", KB_FAM_GEGLU, geglu, KB_SCALE_GEGLU),
    GLU_BWD(KB_GEGLU_BWD, "geglu_backward", KB_FAM_GEGLU, geglu, KB_SCALE_GEGLU),
    GLU_FWD(KB_SWIGLU_FWD, "swiglu_forward", KB_FAM_SWIGLU, swiglu, KB_SCALE_SWIGLU),
    GLU_BWD(KB_SWIGLU_BWD, "swiglu_backward", KB_FAM_SWIGLU, swiglu, KB_SCALE_SWIGLU),
#undef GLU_FWD
#undef GLU_BWD
    MLP_ENTRY(KB_MLP_FWD, "mlp_forward", KB_FAM_MLP, mlp),
    MLP_ENTRY(KB_MLP_SWIGLU_FWD, "mlp_swiglu_forward", KB_FAM_MLP_SWIGLU, mlp_swiglu),
#undef MLP_ENTRY
};

static const kb_tensor_info tensors[KB_NUM_TENSORS] = {
    {"x", KB_T_X, KB_DIM_MN, 0},         {"target", KB_T_TARGET, KB_DIM_M, 8},
    {"dloss", KB_T_DLOSS, KB_DIM_M, 4},  {"dy", KB_T_DY, KB_DIM_MN, 0},
    {"w", KB_T_W, KB_DIM_N, 4},          {"y", KB_T_Y, KB_DIM_MN, 0},
    {"lse", KB_T_LSE, KB_DIM_M, 4},      {"mean", KB_T_MEAN, KB_DIM_M, 4},
    {"rstd", KB_T_RSTD, KB_DIM_M, 4},    {"dw", KB_T_DW, KB_DIM_N, 4},
    {"up", KB_T_UP, KB_DIM_MN, 0},
    {"wts", KB_T_WTS, KB_DIM_3KN, 0},
};

const kb_tensor_info *kb_tensor_info_get(int i)
{
    return (unsigned)i < KB_NUM_TENSORS ? &tensors[i] : NULL;
}

size_t kb_tensor_bytes(const kb_problem *p, kb_tensor_bit bit)
{
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    if (!bi || !(bi->tensors & bit)) return 0;
    for (int i = 0; i < KB_NUM_TENSORS; i++) {
        if (tensors[i].bit != bit) continue;
        const size_t M = (size_t)p->M, N = (size_t)p->N, K = (size_t)p->K;
        const size_t n = tensors[i].dims == KB_DIM_MN   ? M * N
                         : tensors[i].dims == KB_DIM_M   ? M
                         : tensors[i].dims == KB_DIM_3KN ? 3 * K * N
                                                         : N;
        const int eb = tensors[i].elem_bytes;
        return n * (eb ? (size_t)eb : kb_dtype_size(p->dtype));
    }
    return 0;
}

int64_t kb_out_cols(const kb_problem *p)
{
    return kb_bench_info_get(p->bench)->out_per_row ? 1 : p->N;
}

int64_t kb_out_rows(const kb_problem *p)
{
    return kb_bench_info_get(p->bench)->out_pair ? 2 * p->M : p->M;
}

const kb_bench_info *kb_bench_info_get(kb_bench_id id)
{
    return (unsigned)id < KB_NUM_BENCH ? &benches[id] : NULL;
}

kb_status kb_bench_find(const char *name, kb_bench_id *out, kb_err *e)
{
    for (int i = 0; i < KB_NUM_BENCH; i++)
        if (strcmp(name, benches[i].name) == 0) {
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
           b->nk * N * (double)p->K * s;
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
_Static_assert(sizeof sweep / sizeof sweep[0] == SWEEP_NORM, "the sweep's length");

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
    const kb_shape_lists *own = benches[id].shapes;
    if (own && (unsigned)set < 4 && own->count[set]) {
        *out = own->list[set];
        return own->count[set];
    }
    if (own && benches[id].dims == 3) { /* MxNxK: no 2-D list applies */
        *out = NULL;
        return 0;
    }
    switch (set) {
    case KB_SHAPES_DEFAULT:
        *out = sweep;
        return (size_t)benches[id].sweep;
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
    return (unsigned)k < KB_NUM_INPUTS && (unsigned)b < KB_NUM_BENCH &&
           (benches[b].inputs >> k & 1u);
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
    if ((unsigned)impl->bench >= KB_NUM_BENCH)
        return KB_FAIL(e, KB_ERR_ARG, "registering backend %s: benchmark id %d out of range",
                       impl->backend, (int)impl->bench);
    const kb_impl **slot = &registered[impl->bench][be];
    if (*slot && *slot != impl)
        return KB_FAIL(e, KB_ERR_ARG, "backend %s of %s registered twice", impl->backend,
                       benches[impl->bench].name);
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
                                      in_shapes[i].N},
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
    snprintf(buf, len, "%s.%s.%s.%s%s%s", benches[c->p.bench].name, c->backend,
             kb_dtype_name(c->p.dtype), shape, c->inputs ? "." : "",
             c->inputs ? kb_inputs_name(c->inputs) : "");
}

/* Deviations of a library backend from PyTorch's semantics that the input
 * kinds found. Their cases stay registered and must keep failing accuracy:
 * CTest expects it (label known_deviation, tests/discover_cases.cmake), so
 * the day the library changes the case fails and this table is revisited.
 * Measured on the H200: docs/dev/kernels. */
static const struct {
    kb_bench_id bench;
    const char *backend;
    kb_inputs inputs;
    const char *what;
} deviations[] = {
    {KB_LAYERNORM_FWD, "cudnn", KB_INPUTS_CONSTANT,
     "cuDNN 9 LayerNorm forward returns |y| up to ~4e-3 instead of 0 on zero-variance rows "
     "(PyTorch returns 0)"},
};

static const char *deviation_of(kb_bench_id b, const char *backend, kb_inputs k)
{
    for (size_t i = 0; i < sizeof deviations / sizeof deviations[0]; i++)
        if (deviations[i].bench == b && deviations[i].inputs == k &&
            strcmp(deviations[i].backend, backend) == 0)
            return deviations[i].what;
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
    const kb_bench_info *bi = &benches[c->p.bench];
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
