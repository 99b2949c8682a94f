/* kbench core types shared by the harness (C11) and the kernels (CUDA C).
 *
 * Everything a backend needs to know about a case lives here: the problem
 * (benchmark, dtype, shape), the device tensors, the status/error convention
 * and the backend implementation table. Host code includes it from C, kernels
 * from .cu files; hence the extern "C" guards. */
#ifndef KBENCH_H
#define KBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB_VERSION "0.1.0"

/* Exit code CTest treats as "skipped" (SKIP_RETURN_CODE). */
#define KB_EXIT_SKIP 77

/* ---- errors are values -------------------------------------------------- */
typedef enum {
    KB_OK = 0,
    KB_ERR_ARG,         /* bad user input: names, shapes, flags          */
    KB_ERR_IO,          /* file could not be read or written             */
    KB_ERR_PARSE,       /* malformed file content (CSV, cache)           */
    KB_ERR_CUDA,        /* a CUDA runtime call or a launch failed        */
    KB_ERR_NOMEM,       /* out of host memory                            */
    KB_ERR_NODEV,       /* no usable CUDA device                         */
    KB_ERR_UNSUPPORTED, /* backend cannot run this case (SKIP, not FAIL) */
    KB_ERR_ACCURACY,    /* output differs from the fp32 reference        */
    KB_ERR_PERF,        /* slower than the stored baseline               */
    KB_ERR_DEVMEM       /* shape does not fit in free device memory: SKIP */
} kb_status;

/* msg is for users: it names the value, file or shape, and carries no
 * source location. KB_FAIL keeps "file.c:123" apart, in the last
 * KB_ERR_WHERE bytes of msg (so kb_err stays one array and `= {{0}}`
 * initialisers keep compiling warning-free); kb_err_where reads it. */
#define KB_ERR_WHERE 64
typedef struct {
    char msg[1024];
} kb_err;

/* Record the message and where it was raised in e (if non-NULL); return st. */
kb_status kb_fail(kb_err *e, kb_status st, const char *file, int line,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
const char *kb_status_name(kb_status st);
/* The message for users' eyes; with KBENCH_DEBUG=1 in the environment,
 * followed by " [file.c:123]". */
const char *kb_err_text(const kb_err *e);
/* "file.c:123" of the last KB_FAIL into e ("" if none). */
const char *kb_err_where(const kb_err *e);

#define KB_FAIL(e, st, ...) kb_fail((e), (st), __FILE__, __LINE__, __VA_ARGS__)

/* Every CUDA runtime call goes through this: a failure becomes a status with
 * the call's text, CUDA's message, file and line. */
#define KB_CUDA(e, call)                                                      \
    do {                                                                      \
        cudaError_t kb_cuda_rc_ = (call);                                     \
        if (kb_cuda_rc_ != cudaSuccess)                                       \
            return kb_fail((e), KB_ERR_CUDA, __FILE__, __LINE__, "%s: %s",    \
                           #call, cudaGetErrorString(kb_cuda_rc_));           \
    } while (0)

/* After a kernel launch: catches bad configurations at once. */
#define KB_LAUNCHED(e) KB_CUDA((e), cudaGetLastError())

#define KB_TRY(call)                                                          \
    do {                                                                      \
        kb_status kb_try_rc_ = (call);                                        \
        if (kb_try_rc_ != KB_OK) return kb_try_rc_;                           \
    } while (0)

/* ---- dtypes ------------------------------------------------------------- */
typedef enum { KB_BF16 = 0, KB_FP16 = 1, KB_FP32 = 2, KB_NUM_DTYPES } kb_dtype;

size_t kb_dtype_size(kb_dtype d);
const char *kb_dtype_name(kb_dtype d);
kb_status kb_dtype_parse(const char *s, kb_dtype *out, kb_err *e);
/* Index of s in names[0..n), -1 when absent: the lookup behind every name
 * table's _parse (dtypes, input kinds, verdicts, accuracy states). */
int kb_name_index(const char *const *names, int n, const char *s);

/* ---- benchmarks ---------------------------------------------------------
 * kb_bench_id and KB_NUM_BENCH come from a header the build generates from
 * every op folder's KB_OP lines (kernels/<op>/op.c; CMakeLists.txt, "ops"):
 * one id per benchmark, in folder order, and nothing to edit here for a new
 * op. */
#include "kb_ops.h"

/* K is the third size of the ops whose descriptor has dims = 3 (mlp: M = T
 * tokens, N = D model width, K = H hidden width); 0 for every 2-D op, so
 * positional initialisers {M, N} of the 2-D ops stay valid. */
typedef struct {
    int64_t M, N, K;
} kb_shape;

/* One case's problem: what is computed, in which dtype, on which shape. */
typedef struct {
    kb_bench_id bench;
    kb_dtype dtype;
    int64_t M, N, K;
} kb_problem;

#define KB_NORM_EPS 1e-6f

/* Device tensors of one case. Rows are contiguous, shape [M, N], reduction
 * over N. Unused pointers are NULL. "dtype" means the problem's dtype.
 *
 *   benchmark            inputs                 saved (fwd, untimed)  outputs
 *   cross_entropy_fwd    x, target              -                     out=loss[M] dtype
 *   cross_entropy_bwd    x, target, dloss       lse[M]                out=dx[M,N]
 *   softmax_fwd          x                      -                     out=y[M,N]
 *   softmax_bwd          dy                     y[M,N] (=softmax(x))  out=dx[M,N]
 *   rmsnorm_fwd          x, w                   -                     out=y[M,N]
 *   rmsnorm_bwd          x, w, dy               rstd[M]               out=dx[M,N], dw[N]
 *   layernorm_fwd        x, w                   -                     out=y[M,N]
 *   layernorm_bwd        x, w, dy               mean[M], rstd[M]      out=dx[M,N], dw[N]
 *   geglu/swiglu_fwd     x (= gate), up         -                     out=[M,N]
 *   geglu/swiglu_bwd     x (= gate), up, dy     -                     out=[2,M,N]: dgate, dup
 *   mlp_fwd              x[M,N], wts            -                     out=y[M,N]
 *     (M = T tokens, N = D, K = H; wts = [Wg; Wu; Wd] in the dtype: Wg, Wu
 *     [K,N] each, together the concatenated [2K,N] gate/up weight, then Wd
 *     [N,K]; kernels/mlp/mlp.h)
 *   add_rmsnorm_fwd      x, res, w              -                     out=[2,M,N]: h = x + res, y
 *   add_rmsnorm_bwd      x (= h), w, dy, dres   rstd[M]               out=dx[M,N], dw[N]
 *   rope_fwd             x = [q; k], cs         -                     out=[q_rot; k_rot]
 *   rope_bwd             dy = [dq'; dk'], cs    -                     out=[dq; dk]
 *     (rope: M = positions, N = query heads, K = key/value heads; q, k
 *     [heads, M, D] with D = 128, cs = cos [M, D] then sin [M, D] in the
 *     dtype; kernels/rope/rope.h)
 *
 * Saved statistics are fp32. The workspace is the scratch the backend asked
 * for in setup (eager's HBM intermediates, tuned's dw partials), 256-byte
 * aligned, contents undefined on entry. */
/* Tensor roles: kb_tensors' pointers by index, in field order. What each
 * role is (its size, element type, how it is filled) is data: the role
 * table (base/registry.c, kb_role_info) and the op descriptor's tensor list;
 * a new role is a field below, its enumerator and a row there. */
typedef enum {
    KB_R_X, KB_R_UP, KB_R_TARGET, KB_R_DLOSS, KB_R_DY, KB_R_W, KB_R_Y, KB_R_LSE, KB_R_MEAN,
    KB_R_RSTD, KB_R_OUT, KB_R_DW, KB_R_WTS, KB_R_RES, KB_R_DRES, KB_R_CS, KB_NUM_ROLES
} kb_role;

typedef struct {
    union {
        struct {
            const void *x;
            const void *up; /* GLU: x is the gate */
            const int64_t *target;
            const float *dloss;
            const void *dy;
            const float *w;
            const void *y;
            const float *lse;
            const float *mean;
            const float *rstd;
            void *out;
            float *dw;
            const void *wts;
            const void *res;  /* add_rmsnorm: the residual r (h = x + r)          */
            const void *dres; /* add_rmsnorm backward: the gradient reaching h
                                 from the residual stream                        */
            const void *cs;   /* rope: cos [M, D] then sin [M, D]                */
        };
        /* The same pointers by kb_role (the harness allocates and fills by
         * role; a backend reads the names). */
        const void *role[KB_NUM_ROLES];
    };
    void *workspace;
    size_t workspace_bytes;
} kb_tensors;

struct kb_tune_measurer; /* tuner.h */

/* What setup may look at besides the problem. */
typedef struct {
    int device;                 /* CUDA ordinal the case runs on            */
    int sm_count;
    size_t l2_bytes;
    size_t smem_optin;          /* max dynamic shared memory per block      */
    const char *gpu_name;       /* cudaDeviceProp.name, spaces kept          */
    const char *tune_cache;     /* tuned backend: cache file path (or NULL) */
    const char *custom_config;  /* tuned backend: "key=val,..." or NULL     */
    int tune;                   /* tuned backend: run the search now        */
    const char *plan_dir;       /* where a backend may keep built plans
                                 * (kb_plan_cache_dir), or NULL: none       */
    const struct kb_tune_measurer *measurer; /* tuned backend with tune: how
                                 * candidates are checked and timed (tuner.h) */
} kb_setup_ctx;

/* A backend's implementation of one benchmark.
 *
 * setup    (optional) runs once per case outside the timed region: build
 *          plans, pick launch parameters, report workspace bytes needed.
 *          Returning KB_ERR_UNSUPPORTED makes the case SKIP with e->msg.
 * run      enqueues the whole op on stream s; must not synchronise or
 *          allocate. Called many times with the same tensors.
 * describe (optional) writes a short text of the chosen configuration
 *          (e.g. tuned launch parameters) shown in results.
 * teardown (optional) frees state.
 * kernels  (optional) how many kernels one run call launches on its stream,
 *          for the kernel check (verdict FUSION_CHANGED): a function of the
 *          problem and of the configuration setup chose (state). NULL: not
 *          declared (cuDNN picks its own plan; the baseline row records what
 *          it launched). */
typedef struct kb_impl {
    const char *backend;
    kb_bench_id bench;
    kb_status (*setup)(const kb_problem *p, const kb_setup_ctx *ctx,
                       void **state, size_t *workspace_bytes, kb_err *e);
    kb_status (*run)(const kb_problem *p, const kb_tensors *t, void *state,
                     cudaStream_t s, kb_err *e);
    void (*describe)(const void *state, char *buf, size_t len);
    void (*teardown)(void *state);
    int (*kernels)(const kb_problem *p, const void *state);
    /* Tuned backends: the launch-parameter search space (tune/
     * tuner.h), so that a committed tuning cache can be checked against this
     * build without a GPU; NULL for every other backend. */
    const struct kb_tune_space *tune_space;
} kb_impl;

#ifdef __cplusplus
}
#endif
#endif
