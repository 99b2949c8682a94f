/* dlopen of cuDNN 9 and its error text; see cudnn_loader.h for why per-case. */
#include "cudnn_loader.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

/* dlsym hands back a data pointer; POSIX guarantees it converts to a function
 * pointer of the same size. memcpy avoids the ISO C cast warning. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym needs code and data pointers of one size");

#ifndef RTLD_NODELETE
#define RTLD_NODELETE 0
#endif

static const char *const lib_names[] = {"libcudnn.so.9", "libcudnn.so"};

/* Resolve name into *slot (a function-pointer field). */
static kb_status resolve(kb_cudnn_api *api, const char *name, void *slot, size_t size,
                         const char *who, kb_err *e)
{
    (void)dlerror();
    void *sym = dlsym(api->lib, name);
    if (!sym) {
        const char *why = dlerror();
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "%s: cuDNN library lacks %s (%s)", who, name,
                       why ? why : "symbol is NULL");
    }
    memcpy(slot, &sym, size);
    return KB_OK;
}

kb_status kb_cudnn_load(kb_cudnn_api *api, unsigned parts, const char *who, kb_err *e)
{
    memset(api, 0, sizeof *api);
    char why[2][300] = {{0}};
    for (size_t i = 0; i < sizeof lib_names / sizeof lib_names[0] && !api->lib; i++) {
        api->lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!api->lib) {
            const char *d = dlerror();
            snprintf(why[i], sizeof why[i], "%s", d ? d : "dlopen failed");
        }
    }
    if (!api->lib)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "%s: cuDNN is not available: %s; %s", who, why[0],
                       why[1]);

    kb_status rc = KB_OK;
#define KB_RESOLVE(name)                                                      \
    if (rc == KB_OK)                                                          \
        rc = resolve(api, "cudnn" #name, (void *)&api->name, sizeof api->name, who, e);
    KB_CUDNN_FN_CORE(KB_RESOLVE)
    if (parts & KB_CUDNN_LEGACY) { KB_CUDNN_FN_LEGACY(KB_RESOLVE) }
    if (parts & KB_CUDNN_GRAPH) { KB_CUDNN_FN_GRAPH(KB_RESOLVE) }
#undef KB_RESOLVE
    if (rc != KB_OK) {
        kb_cudnn_unload(api);
        return rc;
    }
    /* Optional: cuDNN 9 has it, and its text says why a graph was refused. */
    void *sym = dlsym(api->lib, "cudnnGetLastErrorString");
    if (sym) memcpy((void *)&api->GetLastErrorString, &sym, sizeof sym);

    /* Enum values and attribute semantics are those of the header's major. */
    api->version = api->GetVersion();
    if (api->version / 10000 != CUDNN_MAJOR) {
        const size_t v = api->version;
        kb_cudnn_unload(api);
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "%s: loaded cuDNN version %zu, but kbench was built against cuDNN %d.%d.%d "
                       "headers (major %d required)",
                       who, v, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL, CUDNN_MAJOR);
    }
    return KB_OK;
}

void kb_cudnn_unload(kb_cudnn_api *api)
{
    if (api->lib) dlclose(api->lib);
    memset(api, 0, sizeof *api);
}

bool kb_cudnn_declines(cudnnStatus_t st)
{
    return CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED ||
           st == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
           st == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || st == CUDNN_STATUS_LICENSE_ERROR;
}

void kb_cudnn_status_text(const kb_cudnn_api *api, cudnnStatus_t st, char *buf, size_t len)
{
    char last[512] = "";
    const char *name = api && api->GetErrorString ? api->GetErrorString(st) : NULL;
    if (api && api->GetLastErrorString) api->GetLastErrorString(last, sizeof last);
    last[sizeof last - 1] = '\0';
    /* Its text may hold several "Warning: ..." lines; results want one line. */
    for (char *c = last; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    snprintf(buf, len, "%s (%d)%s%s", name ? name : "cuDNN error", (int)st, last[0] ? ": " : "",
             last);
}

kb_status kb_cudnn_fail(const kb_cudnn_api *api, kb_err *e, kb_status kind, const char *file,
                        int line, cudnnStatus_t st, const char *fmt, ...)
{
    char what[512], why[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    kb_cudnn_status_text(api, st, why, sizeof why);
    return kb_fail(e, kind, file, line, "%s: %s", what, why);
}

kb_status kb_cudnn_handle(const kb_cudnn_api *api, int device, cudnnHandle_t *h,
                          const char *who, kb_err *e)
{
    *h = NULL;
    int cur = -1;
    cudaError_t ce = cudaGetDevice(&cur);
    if (ce == cudaSuccess && cur != device) ce = cudaSetDevice(device);
    if (ce != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "%s: selecting device %d: %s", who, device,
                       cudaGetErrorString(ce));
    cudnnStatus_t st = api->Create(h);
    if (st != CUDNN_STATUS_SUCCESS) {
        *h = NULL;
        return KB_CUDNN_FAIL(api, e, st, "%s: cudnnCreate on device %d", who, device);
    }
    return KB_OK;
}

void kb_cudnn_case_name(const kb_problem *p, char *buf, size_t len)
{
    const kb_bench_info *b = kb_bench_info_get(p->bench);
    snprintf(buf, len, "cudnn %s %s %" PRId64 "x%" PRId64, b ? b->name : "?",
             kb_dtype_name(p->dtype), p->M, p->N);
}

kb_status kb_cudnn_adopt(kb_status rc, void *st, void (*teardown)(void *), void **state)
{
    if (rc != KB_OK) {
        teardown(st);
        return rc;
    }
    *state = st;
    return KB_OK;
}

cudnnDataType_t kb_cudnn_dtype(kb_dtype d)
{
    switch (d) {
    case KB_BF16: return CUDNN_DATA_BFLOAT16;
    case KB_FP16: return CUDNN_DATA_HALF;
    case KB_FP32:
    case KB_NUM_DTYPES: break;
    }
    return CUDNN_DATA_FLOAT;
}
