/* cuDNN 9, loaded at run time: kbench never links libcudnn, so it builds and
 * runs where cuDNN is absent; the cudnn backend then reports SKIP.
 *
 * kb_cudnn_load() dlopens libcudnn.so.9 (then libcudnn.so) and resolves every
 * function the backend calls into a table of pointers typed from cudnn.h's own
 * prototypes (__typeof__ of the declared function, so a prototype change in
 * the header is a compile error here, not a silent ABI mismatch).
 *
 * Ownership: the table, and the dlopen reference in it, belong to one case's
 * state (the project has no global mutable state). dlopen is refcounted, so a
 * second case costs a lookup, not a load; RTLD_NODELETE keeps the library
 * mapped after the last case's dlclose, because unloading a library that has
 * registered CUDA kernels is unsafe and reloading cuDNN's engine libraries
 * (hundreds of MB) per case would be slow. */
#ifndef KB_CUDNN_LOADER_H
#define KB_CUDNN_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include <cudnn.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Functions every user needs: version, errors, handle, stream. */
#define KB_CUDNN_FN_CORE(X)                                                   \
    X(GetVersion) X(GetErrorString) X(Create) X(Destroy) X(SetStream)
/* The legacy (cudnn_ops) API: tensor descriptors and softmax. */
#define KB_CUDNN_FN_LEGACY(X)                                                 \
    X(CreateTensorDescriptor) X(SetTensor4dDescriptor)                        \
    X(DestroyTensorDescriptor) X(SoftmaxForward) X(SoftmaxBackward)
/* The graph (backend descriptor) API. */
#define KB_CUDNN_FN_GRAPH(X)                                                  \
    X(BackendCreateDescriptor) X(BackendDestroyDescriptor)                    \
    X(BackendSetAttribute) X(BackendGetAttribute) X(BackendFinalize)          \
    X(BackendExecute)

enum { KB_CUDNN_LEGACY = 1u, KB_CUDNN_GRAPH = 2u };

typedef struct {
    void *lib;      /* dlopen handle; NULL when not loaded        */
    size_t version; /* cudnnGetVersion(), e.g. 91400 for 9.14.0   */
#define KB_CUDNN_FIELD(name) __typeof__(&cudnn##name) name;
    KB_CUDNN_FN_CORE(KB_CUDNN_FIELD)
    KB_CUDNN_FN_LEGACY(KB_CUDNN_FIELD)
    KB_CUDNN_FN_GRAPH(KB_CUDNN_FIELD)
#undef KB_CUDNN_FIELD
    /* Optional (NULL when absent): the detailed text of the last failure. */
    __typeof__(&cudnnGetLastErrorString) GetLastErrorString;
} kb_cudnn_api;

/* Load cuDNN and resolve the core functions plus the groups in parts
 * (KB_CUDNN_LEGACY | KB_CUDNN_GRAPH). A missing library, a missing symbol or
 * a runtime whose major version differs from cudnn.h's is
 * KB_ERR_UNSUPPORTED with the dlerror()/version text; who prefixes it. */
kb_status kb_cudnn_load(kb_cudnn_api *api, unsigned parts, const char *who, kb_err *e);
/* Safe on a zeroed or partly loaded table. */
void kb_cudnn_unload(kb_cudnn_api *api);

/* True when st means "cuDNN cannot do this here" (NOT_SUPPORTED family, a
 * missing or mismatched sub-library, license) rather than misuse. */
bool kb_cudnn_declines(cudnnStatus_t st);

/* "CUDNN_STATUS_X (code): <cudnnGetLastErrorString>" into buf; call it right
 * after the failing call (the last-error text is per thread). */
void kb_cudnn_status_text(const kb_cudnn_api *api, cudnnStatus_t st, char *buf, size_t len);

/* Record "<what>: <kb_cudnn_status_text>" in e and return kind. */
kb_status kb_cudnn_fail(const kb_cudnn_api *api, kb_err *e, kb_status kind, const char *file,
                        int line, cudnnStatus_t st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* A failed cuDNN call: SKIP when cuDNN declines, a failure otherwise. */
#define KB_CUDNN_FAIL(api, e, st, ...)                                        \
    kb_cudnn_fail((api), (e),                                                 \
                  kb_cudnn_declines(st) ? KB_ERR_UNSUPPORTED : KB_ERR_CUDA,   \
                  __FILE__, __LINE__, (st), __VA_ARGS__)
/* A failed cuDNN call that means cuDNN has no implementation for the case. */
#define KB_CUDNN_DECLINED(api, e, st, ...)                                    \
    kb_cudnn_fail((api), (e), KB_ERR_UNSUPPORTED, __FILE__, __LINE__, (st),   \
                  __VA_ARGS__)

/* A handle on device (made current if it is not). */
kb_status kb_cudnn_handle(const kb_cudnn_api *api, int device, cudnnHandle_t *h,
                          const char *who, kb_err *e);

/* "cudnn <benchmark> <dtype> <M>x<N>", the prefix of every message. */
void kb_cudnn_case_name(const kb_problem *p, char *buf, size_t len);
/* A backend's setup ending: rc, the result of building the state st; on
 * failure st is torn down and rc returned, else *state = st. */
kb_status kb_cudnn_adopt(kb_status rc, void *st, void (*teardown)(void *), void **state);

cudnnDataType_t kb_cudnn_dtype(kb_dtype d);

#ifdef __cplusplus
}
#endif
#endif
