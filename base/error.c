/* Status values, error messages and dtype helpers. */
#include "kbench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_fail(kb_err *e, kb_status st, const char *file, int line,
                  const char *fmt, ...)
{
    if (!e) return st;
    const char *base = strrchr(file, '/');
    char *where = e->msg + sizeof e->msg - KB_ERR_WHERE;
    snprintf(where, KB_ERR_WHERE, "%s:%d", base ? base + 1 : file, line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg - KB_ERR_WHERE, fmt, ap);
    va_end(ap);
    return st;
}

const char *kb_status_name(kb_status st)
{
    switch (st) {
    case KB_OK: return "ok";
    case KB_ERR_ARG: return "bad argument";
    case KB_ERR_IO: return "I/O error";
    case KB_ERR_PARSE: return "parse error";
    case KB_ERR_CUDA: return "CUDA error";
    case KB_ERR_NOMEM: return "out of host memory";
    case KB_ERR_DEVMEM: return "does not fit in device memory";
    case KB_ERR_NODEV: return "no CUDA device";
    case KB_ERR_UNSUPPORTED: return "unsupported";
    case KB_ERR_ACCURACY: return "accuracy failure";
    case KB_ERR_PERF: return "performance regression";
    }
    return "unknown status";
}

static const char *const dtype_names[KB_NUM_DTYPES] = {"bf16", "fp16", "fp32"};

size_t kb_dtype_size(kb_dtype d) { return d == KB_FP32 ? 4 : 2; }

const char *kb_dtype_name(kb_dtype d)
{
    return (unsigned)d < KB_NUM_DTYPES ? dtype_names[d] : "?";
}

int kb_name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

kb_status kb_dtype_parse(const char *s, kb_dtype *out, kb_err *e)
{
    const int i = kb_name_index(dtype_names, KB_NUM_DTYPES, s);
    if (i >= 0) {
        *out = (kb_dtype)i;
        return KB_OK;
    }
    return KB_FAIL(e, KB_ERR_ARG, "unknown dtype '%s' (expected bf16, fp16 or fp32)", s);
}

const char *kb_err_where(const kb_err *e)
{
    const char *w = e->msg + sizeof e->msg - KB_ERR_WHERE;
    /* Only what KB_FAIL wrote there: a message written straight into msg may
     * have run over it. */
    return memchr(w, '\0', KB_ERR_WHERE) && strlen(e->msg) < sizeof e->msg - KB_ERR_WHERE ? w : "";
}

const char *kb_err_text(const kb_err *e)
{
    const char *dbg = getenv("KBENCH_DEBUG");
    const char *w = kb_err_where(e);
    if (!dbg || !*dbg || strcmp(dbg, "0") == 0 || !*w) return e->msg;
    /* Debug only: the source location, appended in a per-thread buffer. */
    static _Thread_local char buf[sizeof e->msg + 4];
    snprintf(buf, sizeof buf, "%s [%s]", e->msg, w);
    return buf;
}
