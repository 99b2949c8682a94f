/* Status values, error messages and dtype helpers. */
#include "kbench.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

kb_status kb_fail(kb_err *e, kb_status st, const char *file, int line,
                  const char *fmt, ...)
{
    if (!e) return st;
    const char *base = strrchr(file, '/');
    int n = snprintf(e->msg, sizeof e->msg, "%s:%d: ", base ? base + 1 : file, line);
    if (n < 0 || (size_t)n >= sizeof e->msg) return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
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
    case KB_ERR_NOMEM: return "out of device memory";
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

kb_status kb_dtype_parse(const char *s, kb_dtype *out, kb_err *e)
{
    for (int i = 0; i < KB_NUM_DTYPES; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (kb_dtype)i;
            return KB_OK;
        }
    return KB_FAIL(e, KB_ERR_ARG, "unknown dtype '%s' (expected bf16, fp16 or fp32)", s);
}

const char *kb_err_text(const kb_err *e)
{
    /* Skip the "file.c:123: " prefix that KB_FAIL puts first. */
    const char *m = e->msg, *c = strchr(m, ':');
    if (!c || c[1] < '0' || c[1] > '9') return m;
    const char *d = c + 1;
    while (*d >= '0' && *d <= '9') d++;
    return d[0] == ':' && d[1] == ' ' ? d + 2 : m;
}
