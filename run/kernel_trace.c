/* CUPTI loaded at run time, one traced call, short kernel names; see
 * kernel_trace.h. */
#include "kernel_trace.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the CUPTI subset used, declared here (no header needed) ---------------
 * Values and the record layout are CUPTI's public ABI; the record prefix up
 * to `name` has been the same in every kernel record version since CUDA 9
 * (CUpti_ActivityKernel4 .. 10), and CUPTI appends new fields at the end, so
 * records from a newer library read correctly. */
typedef int kb_cupti_result; /* CUptiResult: 0 is CUPTI_SUCCESS */
enum {
    KB_CUPTI_SUCCESS = 0,
    KB_CUPTI_MAX_LIMIT_REACHED = 12, /* no more records in the buffer */
    KB_CUPTI_KIND_KERNEL = 3,
    KB_CUPTI_KIND_CONCURRENT_KERNEL = 10,
    KB_CUPTI_FLUSH_FORCED = 1
};

typedef struct {
    int32_t kind;
    uint8_t cache_config, shared_memory_config;
    uint16_t registers_per_thread;
    int32_t pgc_requested, pgc_executed;
    uint64_t start, end, completed;
    uint32_t device_id, context_id, stream_id;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int32_t static_shared_memory, dynamic_shared_memory;
    uint32_t local_memory_per_thread, local_memory_total;
    uint32_t correlation_id;
    int64_t grid_id;
    const char *name;
} kb_cupti_kernel;

/* Where the toolkit's header is on the include path, hold the layout to it. */
#if defined(__has_include)
#if __has_include(<cupti_activity.h>) && __has_include(<cupti_version.h>)
#include <cupti_activity.h>
#include <cupti_version.h>
#if CUPTI_API_VERSION >= 130000
#define KB_SAME_OFFSET(mine, theirs)                                                    \
    _Static_assert(offsetof(kb_cupti_kernel, mine) == offsetof(CUpti_ActivityKernel10, theirs), \
                   "CUPTI kernel record field " #theirs " moved")
KB_SAME_OFFSET(registers_per_thread, registersPerThread);
KB_SAME_OFFSET(start, start);
KB_SAME_OFFSET(end, end);
KB_SAME_OFFSET(stream_id, streamId);
KB_SAME_OFFSET(grid_x, gridX);
KB_SAME_OFFSET(block_x, blockX);
KB_SAME_OFFSET(static_shared_memory, staticSharedMemory);
KB_SAME_OFFSET(dynamic_shared_memory, dynamicSharedMemory);
KB_SAME_OFFSET(name, name);
_Static_assert((int)KB_CUPTI_KIND_KERNEL == (int)CUPTI_ACTIVITY_KIND_KERNEL &&
                   (int)KB_CUPTI_KIND_CONCURRENT_KERNEL == (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
                   (int)KB_CUPTI_MAX_LIMIT_REACHED == (int)CUPTI_ERROR_MAX_LIMIT_REACHED &&
                   (int)KB_CUPTI_FLUSH_FORCED == (int)CUPTI_ACTIVITY_FLAG_FLUSH_FORCED,
               "CUPTI constants differ from cupti_activity.h");
#endif
#endif
#endif

typedef void (*kb_cupti_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*kb_cupti_complete_fn)(void *context, uint32_t stream_id, uint8_t *buffer,
                                     size_t size, size_t valid);

struct kb_tracer {
    void *lib;
    char lib_name[256];
    kb_cupti_result (*GetResultString)(kb_cupti_result, const char **);
    kb_cupti_result (*ActivityEnable)(int kind);
    kb_cupti_result (*ActivityDisable)(int kind);
    kb_cupti_result (*ActivityRegisterCallbacks)(kb_cupti_request_fn, kb_cupti_complete_fn);
    kb_cupti_result (*ActivityFlushAll)(uint32_t flag);
    kb_cupti_result (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid, void **record);
    kb_cupti_result (*GetStreamIdEx)(void *context, void *stream, uint8_t per_thread,
                                     uint32_t *stream_id);
    int kind; /* the activity kind enabled */
};

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym needs code and data pointers of one size");

#ifndef RTLD_NODELETE
#define RTLD_NODELETE 0
#endif

/* ---- the sink CUPTI's buffer callbacks write to ----------------------------
 * CUPTI's callbacks carry no user pointer and may run on CUPTI's own thread,
 * so the trace in progress is reached through this one locked slot (CUPTI is
 * itself one per process). Outside kb_trace_call, sink.out is NULL and
 * completed buffers are dropped. */
static struct {
    pthread_mutex_t mu;
    const kb_tracer *t;
    kb_kernel_trace *out;
    uint32_t stream_id;
} sink = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0};

#define KB_CUPTI_BUFFER (1u << 20)

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = malloc(KB_CUPTI_BUFFER); /* malloc aligns to 16: CUPTI asks for 8 */
    *size = *buffer ? KB_CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void keep(kb_kernel_trace *out, const kb_cupti_kernel *k)
{
    if (out->n < KB_TRACE_MAX) {
        kb_kernel_rec *r = &out->k[out->n];
        kb_kernel_short_name(k->name ? k->name : "?", r->name, sizeof r->name);
        r->grid[0] = k->grid_x, r->grid[1] = k->grid_y, r->grid[2] = k->grid_z;
        r->block[0] = k->block_x, r->block[1] = k->block_y, r->block[2] = k->block_z;
        r->registers = k->registers_per_thread;
        r->smem_static = k->static_shared_memory;
        r->smem_dynamic = k->dynamic_shared_memory;
        r->start_ns = k->start;
        r->end_ns = k->end;
    }
    out->n++;
}

static void on_complete(void *context, uint32_t stream_id, uint8_t *buffer, size_t size,
                        size_t valid)
{
    pthread_mutex_lock(&sink.mu);
    if (sink.out && sink.t) {
        void *rec = NULL;
        while (sink.t->ActivityGetNextRecord(buffer, valid, &rec) == KB_CUPTI_SUCCESS) {
            const kb_cupti_kernel *k = rec;
            if (k->kind != KB_CUPTI_KIND_KERNEL && k->kind != KB_CUPTI_KIND_CONCURRENT_KERNEL)
                continue;
            if (k->stream_id == sink.stream_id) keep(sink.out, k);
            else sink.out->other++;
        }
    }
    pthread_mutex_unlock(&sink.mu);
    free(buffer);
}

/* ---- loading ---------------------------------------------------------------- */
static kb_status resolve(kb_tracer *t, const char *name, void *slot, kb_err *e)
{
    (void)dlerror();
    void *sym = dlsym(t->lib, name);
    if (!sym) {
        const char *why = dlerror();
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "CUPTI library %s lacks %s (%s)", t->lib_name,
                       name, why ? why : "symbol is NULL");
    }
    memcpy(slot, &sym, sizeof sym);
    return KB_OK;
}

static const char *const default_libs[] = {
    "libcupti.so", "libcupti.so.13", "libcupti.so.12",
#ifdef KBENCH_CUPTI_LIB
    KBENCH_CUPTI_LIB,
#endif
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so"};

kb_status kb_tracer_open(const char *const *libs, size_t nlibs, kb_tracer **out, kb_err *e)
{
    *out = NULL;
    const char *env = getenv("KBENCH_CUPTI_LIB");
    const char *one[1] = {env};
    if (!libs && env && *env) {
        if (strcmp(env, "none") == 0)
            return KB_FAIL(e, KB_ERR_UNSUPPORTED, "CUPTI turned off (KBENCH_CUPTI_LIB=none)");
        libs = one;
        nlibs = 1;
    } else if (!libs) {
        libs = default_libs;
        nlibs = sizeof default_libs / sizeof default_libs[0];
    }
    kb_tracer *t = calloc(1, sizeof *t);
    if (!t) return KB_FAIL(e, KB_ERR_NOMEM, "CUPTI: out of host memory");
    char why[700] = "";
    size_t used = 0;
    for (size_t i = 0; i < nlibs && !t->lib; i++) {
        t->lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (t->lib) {
            snprintf(t->lib_name, sizeof t->lib_name, "%s", libs[i]);
        } else if (used < sizeof why) {
            /* dlerror names the file and says why (missing, wrong ELF class) */
            const char *d = dlerror();
            used += (size_t)snprintf(why + used, sizeof why - used, "%s%s", used ? "; " : "",
                                     d ? d : libs[i]);
        }
    }
    if (!t->lib) {
        free(t);
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "CUPTI not available: %s", why);
    }
    kb_status st = KB_OK;
#define KB_RESOLVE(name)                                                      \
    if (st == KB_OK) st = resolve(t, "cupti" #name, (void *)&t->name, e);
    KB_RESOLVE(GetResultString)
    KB_RESOLVE(ActivityEnable)
    KB_RESOLVE(ActivityDisable)
    KB_RESOLVE(ActivityRegisterCallbacks)
    KB_RESOLVE(ActivityFlushAll)
    KB_RESOLVE(ActivityGetNextRecord)
    KB_RESOLVE(GetStreamIdEx)
#undef KB_RESOLVE
    if (st != KB_OK) {
        kb_tracer_close(t);
        return st;
    }
    *out = t;
    return KB_OK;
}

void kb_tracer_close(kb_tracer *t)
{
    if (!t) return;
    if (t->lib) dlclose(t->lib); /* RTLD_NODELETE: CUPTI stays mapped once attached */
    free(t);
}

/* ---- one traced call ---------------------------------------------------------- */
static kb_status cupti_fail(const kb_tracer *t, kb_cupti_result rc, const char *call, kb_err *e)
{
    const char *s = NULL;
    if (t->GetResultString(rc, &s) != KB_CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
    return KB_FAIL(e, KB_ERR_UNSUPPORTED, "CUPTI (%s): %s failed: %s (%d)", t->lib_name, call, s,
                   rc);
}

#define KB_CUPTI(t, e, call)                                                  \
    do {                                                                      \
        kb_cupti_result kb_cupti_rc_ = (t)->call;                             \
        if (kb_cupti_rc_ != KB_CUPTI_SUCCESS) return cupti_fail((t), kb_cupti_rc_, #call, (e)); \
    } while (0)

static int by_start(const void *a, const void *b)
{
    const kb_kernel_rec *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static kb_status enable(kb_tracer *t, kb_err *e)
{
    if (t->kind) {
        KB_CUPTI(t, e, ActivityEnable(t->kind));
        return KB_OK;
    }
    KB_CUPTI(t, e, ActivityRegisterCallbacks(on_request, on_complete));
    /* CONCURRENT_KERNEL keeps kernels concurrent; KERNEL is the fallback of
     * older drivers. */
    if (t->ActivityEnable(KB_CUPTI_KIND_CONCURRENT_KERNEL) == KB_CUPTI_SUCCESS) {
        t->kind = KB_CUPTI_KIND_CONCURRENT_KERNEL;
        return KB_OK;
    }
    KB_CUPTI(t, e, ActivityEnable(KB_CUPTI_KIND_KERNEL));
    t->kind = KB_CUPTI_KIND_KERNEL;
    return KB_OK;
}

kb_status kb_trace_call(kb_tracer *t, kb_timed_fn fn, void *arg, cudaStream_t s,
                        kb_kernel_trace *out, kb_err *e)
{
    memset(out, 0, sizeof *out);
    KB_CUDA(e, cudaStreamSynchronize(s)); /* nothing of the caller's in the window */
    KB_TRY(enable(t, e));
    uint32_t id = 0;
    kb_cupti_result rc = t->GetStreamIdEx(NULL, (void *)s, 0, &id);
    if (rc != KB_CUPTI_SUCCESS) {
        t->ActivityDisable(t->kind);
        return cupti_fail(t, rc, "GetStreamIdEx", e);
    }
    /* Buffers may complete on CUPTI's thread at any time from here on. */
    pthread_mutex_lock(&sink.mu);
    sink.t = t;
    sink.out = out;
    sink.stream_id = id;
    pthread_mutex_unlock(&sink.mu);
    kb_status st = fn(arg, s, e);
    cudaError_t ce = cudaStreamSynchronize(s);
    rc = t->ActivityDisable(t->kind);
    kb_cupti_result frc = t->ActivityFlushAll(KB_CUPTI_FLUSH_FORCED);
    pthread_mutex_lock(&sink.mu);
    sink.out = NULL;
    pthread_mutex_unlock(&sink.mu);
    if (st != KB_OK) return st;
    if (ce != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "traced call: %s", cudaGetErrorString(ce));
    if (rc != KB_CUPTI_SUCCESS) return cupti_fail(t, rc, "ActivityDisable", e);
    if (frc != KB_CUPTI_SUCCESS) return cupti_fail(t, frc, "ActivityFlushAll", e);
    const int kept = out->n < KB_TRACE_MAX ? out->n : KB_TRACE_MAX;
    qsort(out->k, (size_t)kept, sizeof out->k[0], by_start);
    return KB_OK;
}

/* ---- names ---------------------------------------------------------------------- */
/* The C++ runtime's demangler, looked up in the running program (kbench
 * links libstdc++ for its CUDA objects) rather than referenced: this file
 * links no C++ library, and a program without one gets the plain parse
 * below. NULL when absent. */
typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);
static demangle_fn find_demangler(void)
{
    demangle_fn fn = NULL;
    void *self = dlopen(NULL, RTLD_LAZY);
    if (!self) return NULL;
    void *sym = dlsym(self, "__cxa_demangle");
    memcpy(&fn, &sym, sizeof sym);
    dlclose(self);
    return fn;
}

static void erase_all(char *s, const char *what)
{
    const size_t n = strlen(what);
    for (char *p = strstr(s, what); p; p = strstr(p, what)) memmove(p, p + n, strlen(p + n) + 1);
}

/* "void ns::name<args>(params)" -> "name<args>" in place. */
static void strip_signature(char *s)
{
    erase_all(s, "(anonymous namespace)::");
    int angle = 0, paren = 0;
    char *start = s, *end = NULL;
    for (char *p = s; *p && !end; p++) {
        switch (*p) {
        case '<': angle++; break;
        case '>': angle--; break;
        case '(':
            if (angle == 0 && paren == 0) end = p;
            paren++;
            break;
        case ')': paren--; break;
        case ' ':
            if (angle == 0 && paren == 0) start = p + 1; /* after the return type */
            break;
        case ':':
            if (angle == 0 && paren == 0 && p[1] == ':') start = p + 2; /* qualifier */
            break;
        default: break;
        }
    }
    if (end) *end = '\0';
    memmove(s, start, strlen(start) + 1);
}

/* Without a demangler: the last <length><identifier> of the (nested) name. */
static void plain_parse(const char *m, char *buf, size_t len)
{
    const char *p = m + 2, *best = NULL;
    size_t best_n = 0;
    if (*p == 'N') p++;
    for (;;) {
        if (*p == 'L') p++; /* internal linkage: a static kernel */
        if (!(*p >= '0' && *p <= '9')) break;
        char *end;
        unsigned long n = strtoul(p, &end, 10);
        if (n == 0 || strlen(end) < n) break;
        best = end;
        best_n = n;
        p = end + n;
    }
    if (best) snprintf(buf, len, "%.*s", (int)best_n, best);
    else snprintf(buf, len, "%s", m);
}

void kb_kernel_short_name(const char *mangled, char *buf, size_t len)
{
    if (!len) return;
    char tmp[1024];
    if (strncmp(mangled, "_Z", 2) != 0) {
        snprintf(tmp, sizeof tmp, "%s", mangled);
    } else {
        int status = -1;
        const demangle_fn demangle = find_demangler();
        char *d = demangle ? demangle(mangled, NULL, NULL, &status) : NULL;
        if (d && status == 0) {
            snprintf(tmp, sizeof tmp, "%s", d);
            strip_signature(tmp);
        } else {
            plain_parse(mangled, tmp, sizeof tmp);
        }
        free(d);
    }
    erase_all(tmp, "__nv_"); /* __nv_bfloat16 -> bfloat16 */
    for (char *c = tmp; *c; c++)
        if (*c == ';' || *c == '\n' || *c == '\r') *c = ',';
    /* Too long: keep the name, elide its template arguments. */
    char *lt = strchr(tmp, '<');
    if (strlen(tmp) >= len && lt && (size_t)(lt - tmp) + 6 < len) strcpy(lt, "<...>");
    snprintf(buf, len, "%s", tmp);
}

void kb_trace_names(const kb_kernel_trace *t, char *buf, size_t len)
{
    size_t used = 0;
    const int kept = t->n < KB_TRACE_MAX ? t->n : KB_TRACE_MAX;
    if (len) buf[0] = '\0';
    for (int i = 0; i < kept && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ";" : "", t->k[i].name);
}

void kb_trace_times_us(const kb_kernel_trace *t, char *buf, size_t len)
{
    size_t used = 0;
    const int kept = t->n < KB_TRACE_MAX ? t->n : KB_TRACE_MAX;
    if (len) buf[0] = '\0';
    for (int i = 0; i < kept && used < len; i++) {
        const kb_kernel_rec *k = &t->k[i];
        const double us = k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) * 1e-3 : 0;
        used += (size_t)snprintf(buf + used, len - used, "%s%.4g", i ? ";" : "", us);
    }
}
