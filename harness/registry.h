/* The registry: the one source of truth for benchmarks, their shapes, byte
 * models and the backends that implement them. CTest's case list, the CLI's
 * --list and the unit tests all read it; nothing else keeps a list. */
#ifndef KB_REGISTRY_H
#define KB_REGISTRY_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    kb_bench_id id;
    const char *name;    /* "softmax_forward"                      */
    const char *family;  /* "softmax": op family, a CTest label      */
    int backward;        /* 0 forward, 1 backward                  */
    int norm;            /* 1 for RMSNorm/LayerNorm (extra shapes)  */
} kb_bench_info;

const kb_bench_info *kb_bench_info_get(kb_bench_id id);
kb_status kb_bench_find(const char *name, kb_bench_id *out, kb_err *e);

/* Bytes moved per SPEC's table (for GB/s). */
double kb_bytes_moved(const kb_problem *p);

/* Shape lists. */
typedef enum {
    KB_SHAPES_DEFAULT = 0, /* SPEC's default sweep (+ norm extras)           */
    KB_SHAPES_ODD,         /* N not a multiple of the vector width, M = 1    */
    KB_SHAPES_SHORT,       /* what fp16 and fp32 run on                      */
    KB_SHAPES_INPUTS       /* input kinds: one short row, one long odd row   */
} kb_shape_set;
size_t kb_shapes(kb_bench_id id, kb_shape_set set, const kb_shape **out);

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
/* Dtypes a kind is registered in: bf16, and fp16 for wide (fp16's range). */
int kb_inputs_dtype(kb_inputs k, kb_dtype d);

/* Backends, in display order: eager first (speedups are against it). */
#define KB_NUM_BACKENDS 4
const char *kb_backend_name(int i);
int kb_backend_index(const char *name); /* -1 when unknown */

/* The implementation of bench by backend, or NULL when that backend does
 * not implement it (or was not built). */
const kb_impl *kb_impl_get(kb_bench_id bench, const char *backend);

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

/* "MxN" with M >= 1, N >= 1, decimal, nothing else. */
kb_status kb_shape_parse(const char *s, kb_shape *out, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
