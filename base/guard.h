/* Guard bands: a region of a known byte pattern just before and just after
 * every output and workspace buffer of a case (run/buffers.c places
 * them). After the checked run a byte that is no longer the pattern is a
 * write outside the buffer; the case fails, naming the buffer, the side and
 * the first offset. The scan is plain host code over host copies of the
 * bands (unit tested); the timed runs never look at them. */
#ifndef KB_GUARD_H
#define KB_GUARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 4 KiB each side: wider than any vector store or tail overrun a kernel
 * makes, small next to the tensors. A multiple of the 256-byte alignment, so
 * the buffer after a band stays aligned. */
#ifndef KB_GUARD_BYTES /* -DKB_GUARD_BYTES=0: placement experiments only */
#define KB_GUARD_BYTES 4096
#endif
/* Not 0x00 (a zero store), not 0xff (the NaN poison of outputs). */
#define KB_GUARD_PATTERN 0xA5

typedef struct {
    const char *name;   /* "output", "dw", "workspace" */
    void *before;       /* KB_GUARD_BYTES just before the buffer           */
    void *after;        /* from the buffer's last byte + 1, after_bytes    */
    size_t after_bytes; /* KB_GUARD_BYTES plus the alignment padding       */
    size_t elem_bytes;  /* element size, to say which element was hit      */
} kb_guard;

/* First byte of p[0, n) that is not the pattern, scanning forwards (the
 * band after a buffer: offset from its end) or backwards (the band before:
 * distance from its start, 1 = the byte just before). -1: intact. */
int64_t kb_guard_first_after(const unsigned char *p, size_t n);
int64_t kb_guard_first_before(const unsigned char *p, size_t n);

/* Given host copies of one guard's bands: 0 when intact, else 1 with
 * "output: written past its end: first damaged byte at offset 2 after the
 * end (element 1 past the last)" in msg. */
int kb_guard_judge(const kb_guard *g, const unsigned char *before, const unsigned char *after,
                   char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
