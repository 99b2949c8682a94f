/* The registry: the one source of truth for benchmarks, their shapes, byte
 * models and the backends that implement them. CTest's case list, the CLI's
 * --list and the unit tests all read it; nothing else keeps a list. */
#ifndef KB_REGISTRY_H
#define KB_REGISTRY_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tensors of a case as bits of kb_bench_info.tensors and .ref_reads: bit
 * r is kb_role r (kbench.h). out is always there (and gold after it). */
#define KB_T(role) (1u << (role))
enum {
    KB_T_X = KB_T(KB_R_X), KB_T_UP = KB_T(KB_R_UP), KB_T_TARGET = KB_T(KB_R_TARGET),
    KB_T_DLOSS = KB_T(KB_R_DLOSS), KB_T_DY = KB_T(KB_R_DY), KB_T_W = KB_T(KB_R_W),
    KB_T_Y = KB_T(KB_R_Y),       /* saved softmax output (softmax backward) */
    KB_T_LSE = KB_T(KB_R_LSE),   /* saved statistics, fp32, one per row      */
    KB_T_MEAN = KB_T(KB_R_MEAN), KB_T_RSTD = KB_T(KB_R_RSTD),
    KB_T_OUT = KB_T(KB_R_OUT),
    KB_T_DW = KB_T(KB_R_DW),     /* weight gradient [N] fp32, guarded like out; gold_dw */
    KB_T_WTS = KB_T(KB_R_WTS),   /* mlp weights [Wg; Wu; Wd], 3*K*N in the dtype */
    KB_T_RES = KB_T(KB_R_RES), KB_T_DRES = KB_T(KB_R_DRES), KB_T_CS = KB_T(KB_R_CS)
};
typedef unsigned kb_tensor_bit;

/* What --self-test (run/selftest.c) checks an op's GPU reference against
 * its CPU reference on. */
typedef enum {
    /* The op's odd shape list in bf16: every role it has fetched by index,
     * gold and gold_dw against ref_cpu (the default, for any op). */
    KB_SELFTEST_ODD = 0,
    /* A 2-D row op on the common roles: the self-test's small shapes in
     * every dtype and input kind, with the saved statistics (recomputed by
     * kb_ref_cpu_saved) and the inputs' distributions. */
    KB_SELFTEST_ROWS,
    /* A GEMM block (MxNxK): small odd shapes in every dtype, gold and
     * gold_scale against ref_cpu's out and scale. */
    KB_SELFTEST_GEMM
} kb_selftest;

/* How the generator draws x (kernels/reference/input_values.h). */
typedef enum {
    KB_X_LOGITS = 0, /* 0.1 randn; wide: 20 randn                 */
    KB_X_NORM = 1,   /* randn; wide: 1000 randn                   */
    KB_X_ACT = 2     /* activations (GLU gate): randn; wide: 20 randn */
} kb_x_dist;

/* The accuracy check's per-element error scale for the normwise test
 * (run/accuracy.cu has the formulas). */
typedef enum {
    KB_SCALE_ABS = 0,     /* |gold|                                       */
    KB_SCALE_LOSS,        /* cross entropy loss: |gold| + 2|x[target]|     */
    KB_SCALE_CE_GRAD,     /* cross entropy dx                             */
    KB_SCALE_SOFTMAX_GRAD,/* softmax dx                                   */
    KB_SCALE_NORM_GRAD,   /* RMSNorm/LayerNorm dx and dw (row scales)      */
    KB_SCALE_CENTERED,    /* LayerNorm y: (|x| + |mean|) rstd |w|          */
    KB_SCALE_GEMM,        /* a reduction over K: the reference's gold_scale */
    KB_SCALE_GEGLU,       /* GeGLU out, dgate, dup: the formula's terms    */
    KB_SCALE_SWIGLU,      /* SwiGLU: the same with SiLU                   */
    KB_SCALE_TERMS        /* the op's GPU reference writes each element's
                             scale (the sum of |terms| its formula adds) into
                             gold_scale                                    */
} kb_err_scale;

/* The planted-bug mutant KBENCH_TEST_PERTURB recomputes the output with
 * (testing/perturb.cu); NONE: only the generic damage applies. */
typedef enum {
    KB_MUTANT_NONE = 0,
    KB_MUTANT_LOSS,      /* cross entropy loss: no_max                     */
    KB_MUTANT_SOFTMAX,   /* no_max, half_acc                               */
    KB_MUTANT_RMSNORM,   /* half_acc, eps                                  */
    KB_MUTANT_LAYERNORM  /* half_acc, eps                                  */
} kb_mutant;

/* Bytes moved per SPEC's table: mn*M*N*s + m_dtype*M*s + m_bytes*M +
 * n_bytes*N + nk*N*K*s + mk*M*K*s, s the dtype's size (nk: weights of the
 * 3-D ops; mk: rope's key heads). */
typedef struct {
    double mn, m_dtype, m_bytes, n_bytes, nk, mk;
} kb_byte_model;

/* A library backend's known deviation from PyTorch's semantics on one input
 * kind: its case must keep failing accuracy (kb_case_known_deviation). */
typedef struct {
    const char *backend;
    int inputs; /* kb_inputs */
    const char *what;
} kb_deviation;

struct kb_ref_in;
struct kb_ref_out;
struct kb_buffers;

/* An op's own shape lists, by kb_shape_set (DEFAULT, ODD, SHORT, INPUTS);
 * a count of 0 keeps the shared list of that set. */
typedef struct {
    const kb_shape *list[4];
    size_t count[4];
} kb_shape_lists;

/* The shared shape lists' default sweep: SPEC's (KB_SWEEP_COMMON shapes);
 * the norms add the transformer-activation shapes (KB_SWEEP_NORM). */
#define KB_SWEEP_COMMON 11
#define KB_SWEEP_NORM 15

/* Input kinds as bits of kb_bench_info.inputs (kb_inputs, below), and the
 * sets of the op families: logits (cross entropy, softmax) and normalised
 * activations take different adversarial kinds; GLU gates take wide (20
 * randn saturates tanh and overflows exp(-x)), the reductions' kinds
 * (shifted, masked, constant, small) test what GLU does not have. */
#define KB_IN(k) (1u << (k))
#define KB_KINDS_LOGITS                                                                   \
    (KB_IN(KB_INPUTS_RANDN) | KB_IN(KB_INPUTS_SHIFTED) | KB_IN(KB_INPUTS_WIDE) |          \
     KB_IN(KB_INPUTS_MASKED))
#define KB_KINDS_NORM                                                                     \
    (KB_IN(KB_INPUTS_RANDN) | KB_IN(KB_INPUTS_WIDE) | KB_IN(KB_INPUTS_CONSTANT) |         \
     KB_IN(KB_INPUTS_SMALL))
#define KB_KINDS_ACT (KB_IN(KB_INPUTS_RANDN) | KB_IN(KB_INPUTS_WIDE))
#define KB_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Backends, in display order (kb_backend_name). */
#define KB_NUM_BACKENDS 5

/* The op descriptor: everything the harness, the tuner, the accuracy check
 * and the references derive from a benchmark id. It is written in the op's
 * folder (kernels/<op>/op.c) with KB_OP, and the program registers every
 * op at start-up (kb_op_register, from the list the build generates; see
 * docs/dev/adding-an-op.md). */
typedef struct {
    kb_bench_id id;
    const char *name;    /* "softmax_forward"                      */
    const char *family;  /* "softmax": op family, a CTest label      */
    int backward;        /* 0 forward, 1 backward                  */
    kb_x_dist x_dist;    /* x's distribution                        */
    unsigned tensors;    /* kb_tensor_bit: what a case allocates besides out/gold */
    unsigned ref_reads;  /* kb_tensor_bit: what the references need  */
    int out_per_row;     /* out is one value per row [M] (a loss), else [M,N] */
    int out_pair;        /* out is [2,M,N]: two outputs (GLU backward: dgate, dup) */
    kb_byte_model bytes;
    unsigned inputs;     /* 1u << kb_inputs: the input kinds that apply */
    int sweep;           /* how many shapes of the default sweep it runs */
    const kb_shape_lists *shapes; /* its own shape lists, or NULL       */
    kb_err_scale scale;
    kb_mutant mutant;
    /* 3-D ops (dims = 3: shapes MxNxK, K >= 1) run only their own shape
     * lists (shapes; a set they leave empty is empty, not the common 2-D
     * list); 0 for the 2-D ops. */
    int dims;
    /* Compute-bound ops: flops = flops_mnk * M*N*K; results then carry
     * TFLOP/s and sol_pct is against the measured bf16 GEMM peak. 0: GB/s. */
    double flops_mnk;
    /* The op's own tensor sizes, for ops whose tensors are not the common
     * [M,N] / [M] / [N] ones (rope's [heads, M, D]): rows and columns of
     * role r (out included) for p; return 0 to keep the role table's.
     * NULL: the role table's for every role. */
    int (*tensor_dims)(const kb_problem *p, kb_role r, int64_t *rows, int64_t *cols);
    /* The same sizes as JSON text for --describe, by role (NULL: the role
     * table's), e.g. "[\"N+K\", \"M\", 128]". */
    const char *const *tensor_shapes;
    /* The op's CPU reference (fp32 host arrays, double math), in its own
     * folder (kernels/<op>/reference.c); kb_ref_cpu calls it. */
    kb_status (*ref_cpu)(const kb_problem *p, const struct kb_ref_in *in,
                         struct kb_ref_out *out, kb_err *e);
    /* What --self-test checks it on (kb_selftest). */
    kb_selftest selftest;
    /* Library backends' known deviations, ended by {NULL}; NULL: none. */
    const kb_deviation *deviations;
} kb_bench_info;

/* Defines and names the descriptor of one benchmark in its op folder:
 *   KB_OP(KB_ROPE_FWD, rope_forward, .family = "rope", ...);
 * The build reads these lines (one per benchmark, at the start of a line)
 * to generate kb_bench_id and the list kb_ops_register walks. */
#define KB_OP(ID, NAME, ...) const kb_bench_info kb_op_##NAME = {.id = ID, .name = #NAME, __VA_ARGS__}

/* The GPU half of an op's reference (kernels/<op>/reference.cu), registered
 * with the backends (kb_op_gpu_register), one per benchmark: inputs
 * fills the roles the generic generator does not know (rope's cos/sin
 * table), saved what the forward keeps for the backward, gold the gold
 * outputs and gold_scale. NULL members: nothing to do at that step (saved
 * NULL: the generic saved statistics, by the descriptor's tensor bits; gold
 * NULL: the benchmark has no GPU gold, which kb_ref_gpu_gold refuses). */
typedef struct kb_op_gpu {
    kb_bench_id bench;
    kb_status (*inputs)(struct kb_buffers *b, cudaStream_t s, kb_err *e);
    kb_status (*saved)(struct kb_buffers *b, cudaStream_t s, kb_err *e);
    kb_status (*gold)(struct kb_buffers *b, cudaStream_t s, kb_err *e);
} kb_op_gpu;

/* Registers a descriptor (its id's slot must be free or hold the same one)
 * and the GPU half of an op's reference. */
kb_status kb_op_register(const kb_bench_info *bi, kb_err *e);
kb_status kb_op_gpu_register(const kb_op_gpu *g, kb_err *e);
/* The GPU half registered for bench, or NULL. */
const kb_op_gpu *kb_op_gpu_get(kb_bench_id bench);
/* Every op folder's descriptors (generated: kb_ops_list.c). */
kb_status kb_ops_register(kb_err *e);

/* What each tensor role is (kb_role): its name, default dims and element
 * size (0: the problem's dtype). */
typedef enum { KB_DIM_MN, KB_DIM_M, KB_DIM_N, KB_DIM_3KN /* three [K,N] matrices */, KB_DIM_OUT } kb_dims;
typedef struct {
    const char *name;
    kb_role role;
    kb_dims dims;
    int elem_bytes;
} kb_tensor_info;
#define KB_NUM_TENSORS KB_NUM_ROLES
const kb_tensor_info *kb_tensor_info_get(int i); /* i < KB_NUM_ROLES */
/* Rows and columns of role r for p (the descriptor's tensor_dims, else the
 * role table's); 0 rows when the benchmark does not use it. */
void kb_tensor_dims(const kb_problem *p, kb_role r, int64_t *rows, int64_t *cols);
/* Bytes of tensor `bit` (KB_T_*) for p (0 when the benchmark does not use it;
 * SIZE_MAX when they overflow size_t). */
size_t kb_tensor_bytes(const kb_problem *p, kb_tensor_bit bit);
/* Columns of out: 1 for a per-row output (loss), N otherwise. */
int64_t kb_out_cols(const kb_problem *p);
/* Rows of out: M, or 2M for a pair of outputs (out_pair). */
int64_t kb_out_rows(const kb_problem *p);

const kb_bench_info *kb_bench_info_get(kb_bench_id id);
kb_status kb_bench_find(const char *name, kb_bench_id *out, kb_err *e);

/* Bytes moved per SPEC's table (for GB/s). */
double kb_bytes_moved(const kb_problem *p);
/* Floating-point operations of p (descriptor flops_mnk); 0 for memory-bound ops. */
double kb_flops(const kb_problem *p);

/* Shape lists. */
typedef enum {
    KB_SHAPES_DEFAULT = 0, /* SPEC's default sweep (+ norm extras)           */
    KB_SHAPES_ODD,         /* N not a multiple of the vector width, M = 1    */
    KB_SHAPES_SHORT,       /* what fp16 and fp32 run on                      */
    KB_SHAPES_INPUTS       /* input kinds: one short row, one long odd row   */
} kb_shape_set;
size_t kb_shapes(kb_bench_id id, kb_shape_set set, const kb_shape **out);
/* Is the set registered in dtype d (default and odd: bf16; short: fp16 and
 * fp32)? The input-kind set's dtypes are per kind: kb_inputs_dtype. */
int kb_shapes_dtype(kb_shape_set set, kb_dtype d);

/* Input kinds (kernels/reference/inputs.cu has their definitions): randn
 * is SPEC's distribution, the others are adversarial inputs for the
 * numeric bugs real kernels have. */
typedef enum {
    KB_INPUTS_RANDN = 0,
    KB_INPUTS_SHIFTED,  /* softmax, cross entropy: logits + 1000           */
    KB_INPUTS_WIDE,     /* logits 20 randn; norms 1000 randn               */
    KB_INPUTS_MASKED,   /* softmax, cross entropy: ~half of a row -inf     */
    KB_INPUTS_CONSTANT, /* norms: rows of one value, every 4th row zero    */
    KB_INPUTS_SMALL,    /* norms: 1e-3 randn, variance near eps            */
    KB_NUM_INPUTS
} kb_inputs;
const char *kb_inputs_name(kb_inputs k);
kb_status kb_inputs_parse(const char *s, kb_inputs *out, kb_err *e);
/* Does the kind apply to the benchmark (randn: always)? */
int kb_inputs_apply(kb_inputs k, kb_bench_id b);
/* Dtypes a kind is registered in: bf16, fp16 for wide (fp16's range),
 * every dtype for constant. */
int kb_inputs_dtype(kb_inputs k, kb_dtype d);

/* Backends, in display order: eager first (speedups are against it). */
const char *kb_backend_name(int i);
int kb_backend_index(const char *name); /* -1 when unknown */

/* The implementation of bench by backend, or NULL when that backend does
 * not implement it (or was not built). */
const kb_impl *kb_impl_get(kb_bench_id bench, const char *backend);
/* The same by backend index (kb_backend_name's order). */
const kb_impl *kb_impl_at(kb_bench_id bench, int backend);
/* Registers impl under its benchmark and backend (impl->bench,
 * impl->backend). The program registers every backend it links at start-up
 * (kb_kernels_register, kernels/backends.h), before it parses options or
 * lists a case; the registry knows no backend by itself. Registering the
 * same impl again is a no-op; KB_ERR_ARG for an unknown backend name or
 * benchmark, or a slot another impl holds. */
kb_status kb_register(const kb_impl *impl, kb_err *e);

/* A case as CTest names it: <benchmark>.<backend>.<dtype>.<M>x<N>, and
 * .<inputs> after it for a kind other than randn. */
typedef struct {
    kb_problem p;
    const kb_impl *impl;
    const char *backend;
    kb_shape_set set;
    kb_inputs inputs;
} kb_case;

/* Enumerate every registered case (all benchmarks, backends, dtypes,
 * shapes); fn is called once per case, stops early on non-KB_OK. */
kb_status kb_cases_foreach(kb_status (*fn)(const kb_case *c, void *arg),
                           void *arg);
void kb_case_name(const kb_case *c, char *buf, size_t len);
kb_status kb_case_parse(const char *name, kb_case *out, kb_err *e);
/* Labels, ','-separated: family, benchmark, direction, backend, dtype, gpu
 * (odd for the odd list; inputs and the kind's name for a non-randn kind). */
void kb_case_labels(const kb_case *c, char *buf, size_t len);
/* What a library backend is known to get wrong on this case's inputs (the
 * case is expected to fail accuracy), or NULL. */
const char *kb_case_known_deviation(const kb_case *c);
/* The same by names, for results rows (inputs "" or NULL: randn). */
const char *kb_known_deviation(const char *benchmark, const char *backend, const char *inputs);

/* "MxN" or "MxNxK" with every size >= 1, decimal, nothing else (K = 0 for
 * "MxN"), and not kb_shape_too_large. Whether the benchmark takes a third
 * size is kb_shape_check's. */
kb_status kb_shape_parse(const char *s, kb_shape *out, kb_err *e);
/* 1 when sizes M, N >= 1 and K >= 0 (0: a 2-D op) are beyond what kbench
 * runs: element counts are int64 in the kernels, so M*N, N*K and M*K stay
 * well inside (the MLP's tensors are [M,N], [K,N] and [M,K]); 0 when they
 * fit. What --shape refuses, a results or baseline row may not hold either:
 * the byte and row counts (kb_out_rows: 2M) would overflow. It does not bound
 * every op's tensors: rope's x has 128 * (N + K) * M elements, which rope's
 * own check (kb_rope_check) refuses past 2^56, and the buffers' byte counts
 * saturate (kb_tensor_bytes, kb_buffers_place), so such a case SKIPs. */
int kb_shape_too_large(int64_t M, int64_t N, int64_t K);
/* The bound in words, for messages. */
#define KB_SHAPE_LIMIT_TEXT "M*N must stay below 2^61, M*K and N*K below 2^59"
/* The shape fits the benchmark: K >= 1 for a 3-D op, no K for a 2-D op. */
kb_status kb_shape_check(kb_bench_id b, const kb_shape *sh, kb_err *e);
/* "MxN", or "MxNxK" when K > 0 (case names, results, reports). */
void kb_shape_format(char *buf, size_t len, int64_t M, int64_t N, int64_t K);

#ifdef __cplusplus
}
#endif
#endif
