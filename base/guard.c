/* Guard-band scans (guard.h). */
#include "guard.h"

#include <inttypes.h>
#include <stdio.h>

int64_t kb_guard_first_after(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != KB_GUARD_PATTERN) return (int64_t)i;
    return -1;
}

int64_t kb_guard_first_before(const unsigned char *p, size_t n)
{
    for (size_t i = n; i > 0; i--)
        if (p[i - 1] != KB_GUARD_PATTERN) return (int64_t)(n - i + 1);
    return -1;
}

int kb_guard_judge(const kb_guard *g, const unsigned char *before, const unsigned char *after,
                   char *msg, size_t len)
{
    const size_t es = g->elem_bytes ? g->elem_bytes : 1;
    const int64_t a = kb_guard_first_after(after, g->after_bytes);
    if (a >= 0) {
        snprintf(msg, len,
                 "%s: written past its end: first damaged guard byte at offset %" PRId64
                 " after the end (element %" PRId64 " past the last)",
                 g->name, a, a / (int64_t)es);
        return 1;
    }
    const int64_t b = kb_guard_first_before(before, KB_GUARD_BYTES);
    if (b >= 0) {
        snprintf(msg, len,
                 "%s: written before its start: first damaged guard byte %" PRId64
                 " bytes before the start (element -%" PRId64 ")",
                 g->name, b, (b + (int64_t)es - 1) / (int64_t)es);
        return 1;
    }
    return 0;
}
