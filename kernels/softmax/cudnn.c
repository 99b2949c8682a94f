/* Softmax forward and backward through cuDNN 9's legacy API (libcudnn_ops):
 * cudnnSoftmaxForward / cudnnSoftmaxBackward with CUDNN_SOFTMAX_ACCURATE
 * (max-subtracted) and CUDNN_SOFTMAX_MODE_INSTANCE (over C,H,W per N), the
 * rows of x[M,N] being the NCHW tensor [M,N,1,1]. The graph API has no
 * standalone softmax operation, so this is the softmax cuDNN offers.
 *   forward   y  = softmax(x)                      (alpha 1, beta 0)
 *   backward  dx = y * (dy - sum(dy*y)) from kbench's saved y
 *
 * Limits: legacy tensor descriptors take int dimensions and cuDNN limits a
 * tensor to 2^31 elements, so N > INT_MAX is declined, and when M*N exceeds
 * INT_MAX the rows are split into equal chunks of at most INT_MAX elements,
 * one call each (exact: rows are independent; 8192x262144 takes 2 calls).
 *
 * Setup (untimed): dlopen cuDNN, create a handle on the case's device, build
 * the descriptors, then probe one [1,N] row on a scratch buffer: cuDNN's
 * legacy softmax may not take every dtype (bf16 in particular), and the
 * probe turns that refusal into KB_ERR_UNSUPPORTED with cuDNN's own message
 * at setup rather than an error in the timed loop. No workspace.
 * Run: cudnnSetStream, then one softmax call per chunk. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn_loader.h"
#include "kbench.h"

typedef struct {
    kb_cudnn_api api;
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t main, tail; /* tail NULL when every chunk is main */
    int64_t rows_main, rows_tail, chunks;
    size_t row_bytes;
    int bwd;
    char name[96];
} sm_state;

static const float one = 1.0f, zero = 0.0f;

/* One softmax call on rows described by d, at element offset 0 of each. */
static cudnnStatus_t call(const sm_state *st, cudnnTensorDescriptor_t d, const void *x_or_y,
                          const void *dy, void *out)
{
    if (!st->bwd)
        return st->api.SoftmaxForward(st->handle, CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_INSTANCE, &one, d, x_or_y, &zero, d,
                                      out);
    return st->api.SoftmaxBackward(st->handle, CUDNN_SOFTMAX_ACCURATE,
                                   CUDNN_SOFTMAX_MODE_INSTANCE, &one, d, x_or_y, d, dy, &zero, d,
                                   out);
}

static kb_status descriptor(sm_state *st, kb_dtype dt, int64_t rows, int64_t N,
                            cudnnTensorDescriptor_t *d, kb_err *e)
{
    cudnnStatus_t s = st->api.CreateTensorDescriptor(d);
    if (s != CUDNN_STATUS_SUCCESS) {
        *d = NULL;
        return KB_CUDNN_FAIL(&st->api, e, s, "%s: cudnnCreateTensorDescriptor", st->name);
    }
    s = st->api.SetTensor4dDescriptor(*d, CUDNN_TENSOR_NCHW, kb_cudnn_dtype(dt), (int)rows,
                                      (int)N, 1, 1);
    if (s != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_DECLINED(&st->api, e, s,
                                 "%s: cudnnSetTensor4dDescriptor(NCHW %s [%" PRId64 ",%" PRId64
                                 ",1,1])",
                                 st->name, kb_dtype_name(dt), rows, N);
    return KB_OK;
}

/* One row through cuDNN on scratch memory, synchronously. */
static kb_status probe(sm_state *st, kb_dtype dt, int64_t N, kb_err *e)
{
    cudnnTensorDescriptor_t d = NULL;
    char *buf = NULL;
    kb_status rc = descriptor(st, dt, 1, N, &d, e);
    const size_t slot = (st->row_bytes + 255) / 256 * 256;
    if (rc == KB_OK) {
        cudaError_t ce = cudaMalloc((void **)&buf, 3 * slot);
        if (ce != cudaSuccess) buf = NULL;
        else ce = cudaMemset(buf, 0, 3 * slot);
        if (ce != cudaSuccess) {
            rc = KB_FAIL(e, KB_ERR_CUDA, "%s: probe buffer: %s", st->name,
                         cudaGetErrorString(ce));
            (void)cudaGetLastError();
        }
    }
    if (rc == KB_OK) {
        cudnnStatus_t s = st->api.SetStream(st->handle, NULL);
        if (s == CUDNN_STATUS_SUCCESS) s = call(st, d, buf, buf + slot, buf + 2 * slot);
        if (s != CUDNN_STATUS_SUCCESS)
            rc = KB_CUDNN_DECLINED(&st->api, e, s, "%s: %s on one row of %" PRId64 " (%s)",
                                   st->name,
                                   st->bwd ? "cudnnSoftmaxBackward" : "cudnnSoftmaxForward", N,
                                   kb_dtype_name(dt));
    }
    if (rc == KB_OK) {
        cudaError_t ce = cudaDeviceSynchronize();
        if (ce == cudaSuccess) ce = cudaGetLastError();
        if (ce != cudaSuccess)
            rc = KB_FAIL(e, KB_ERR_CUDA, "%s: softmax probe: %s", st->name,
                         cudaGetErrorString(ce));
    }
    if (buf) cudaFree(buf);
    if (d) st->api.DestroyTensorDescriptor(d);
    return rc;
}

static void teardown(void *state)
{
    sm_state *st = state;
    if (!st) return;
    if (st->api.DestroyTensorDescriptor) {
        if (st->tail) st->api.DestroyTensorDescriptor(st->tail);
        if (st->main) st->api.DestroyTensorDescriptor(st->main);
    }
    if (st->handle && st->api.Destroy) st->api.Destroy(st->handle);
    kb_cudnn_unload(&st->api);
    free(st);
}

static kb_status build(sm_state *st, const kb_problem *p, int device, kb_err *e)
{
    const int64_t M = p->M, N = p->N;
    if (N > INT_MAX)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "%s: cuDNN legacy tensor descriptors take int dimensions; a row of %" PRId64
                       " elements does not fit",
                       st->name, N);
    /* Equal chunks of rows, each at most INT_MAX elements. */
    const int64_t cap = INT_MAX / N;
    int64_t chunks = (M + cap - 1) / cap;
    st->rows_main = (M + chunks - 1) / chunks;
    st->chunks = (M + st->rows_main - 1) / st->rows_main;
    st->rows_tail = M - (st->chunks - 1) * st->rows_main;
    st->row_bytes = (size_t)N * kb_dtype_size(p->dtype);

    KB_TRY(kb_cudnn_load(&st->api, KB_CUDNN_LEGACY, st->name, e));
    KB_TRY(kb_cudnn_handle(&st->api, device, &st->handle, st->name, e));
    KB_TRY(descriptor(st, p->dtype, st->rows_main, N, &st->main, e));
    if (st->rows_tail != st->rows_main)
        KB_TRY(descriptor(st, p->dtype, st->rows_tail, N, &st->tail, e));
    return probe(st, p->dtype, N, e);
}

static kb_status setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                       size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    *workspace_bytes = 0;
    if (p->bench != KB_SOFTMAX_FWD && p->bench != KB_SOFTMAX_BWD)
        return KB_FAIL(e, KB_ERR_ARG, "cudnn softmax: benchmark %d is not softmax",
                       (int)p->bench);
    if (p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cudnn softmax: shape %" PRId64 "x%" PRId64 " is empty",
                       p->M, p->N);
    int device = 0;
    if (ctx) device = ctx->device;
    else KB_CUDA(e, cudaGetDevice(&device));

    sm_state *st = calloc(1, sizeof *st);
    if (!st) return KB_FAIL(e, KB_ERR_NOMEM, "cudnn softmax: out of host memory");
    st->bwd = p->bench == KB_SOFTMAX_BWD;
    kb_cudnn_case_name(p, st->name, sizeof st->name);
    return kb_cudnn_adopt(build(st, p, device, e), st, teardown, state);
}

static kb_status run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                     kb_err *e)
{
    const sm_state *st = state;
    if (!st) return KB_FAIL(e, KB_ERR_ARG, "cudnn softmax: run before setup");
    const char *in = st->bwd ? t->y : t->x;
    const char *dy = t->dy;
    char *out = t->out;
    if (!in || !out || (st->bwd && !dy))
        return KB_FAIL(e, KB_ERR_ARG, "%s: a tensor is NULL (%s %p, dy %p, out %p)", st->name,
                       st->bwd ? "y" : "x", (const void *)in, (const void *)dy, (void *)out);
    cudnnStatus_t cs = st->api.SetStream(st->handle, s);
    if (cs != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_FAIL(&st->api, e, cs, "%s: cudnnSetStream", st->name);
    for (int64_t c = 0; c < st->chunks; c++) {
        const int last = c == st->chunks - 1;
        cudnnTensorDescriptor_t d = last && st->tail ? st->tail : st->main;
        const size_t off = (size_t)c * (size_t)st->rows_main * st->row_bytes;
        cs = call(st, d, in + off, st->bwd ? dy + off : NULL, out + off);
        if (cs != CUDNN_STATUS_SUCCESS)
            return KB_CUDNN_FAIL(&st->api, e, cs, "%s: %s, chunk %" PRId64 " of %" PRId64,
                                 st->name,
                                 st->bwd ? "cudnnSoftmaxBackward" : "cudnnSoftmaxForward", c,
                                 st->chunks);
    }
    (void)p;
    return KB_OK;
}

static void describe(const void *state, char *buf, size_t len)
{
    const sm_state *st = state;
    if (!len) return;
    if (!st) {
        snprintf(buf, len, "cudnn (not set up)");
        return;
    }
    snprintf(buf, len, "cuDNN %zu %s ACCURATE/INSTANCE, %" PRId64 " call(s) of %" PRId64 " rows",
             st->api.version, st->bwd ? "cudnnSoftmaxBackward" : "cudnnSoftmaxForward",
             st->chunks, st->rows_main);
}

/* kernels NULL: cuDNN picks its kernels; the baseline records how many. */
const kb_impl kb_softmax_cudnn_fwd = {"cudnn", KB_SOFTMAX_FWD, setup, run, describe, teardown,
                                      NULL};
const kb_impl kb_softmax_cudnn_bwd = {"cudnn", KB_SOFTMAX_BWD, setup, run, describe, teardown,
                                      NULL};
