/* NumPy .npy writer (format 1.0) and a header reader for checking it. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvio.h"
#include "half.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_PREFIX 10 /* magic, version, uint16 header length */

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Header bytes into hdr (cap >= 64 * 8 is plenty for 8 dims); returns the
 * total length (a multiple of 64) or 0 if it does not fit. */
static size_t build_header(char *hdr, size_t cap, const char *descr, int ndim,
                           const int64_t *shape)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int i = 0; i < ndim && n > 0 && (size_t)n < sizeof dict; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)shape[i]);
    if (n > 0 && (size_t)n < sizeof dict)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", ndim == 1 ? "," : "");
    if (n < 0 || (size_t)n >= sizeof dict) return 0;

    size_t total = (NPY_PREFIX + (size_t)n + 1 + 63) / 64 * 64; /* +1: the '\n' */
    if (total > cap || total - NPY_PREFIX > 65535) return 0;
    size_t hlen = total - NPY_PREFIX;
    memcpy(hdr, NPY_MAGIC, 6);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (char)(hlen & 0xff);
    hdr[9] = (char)(hlen >> 8);
    memcpy(hdr + NPY_PREFIX, dict, (size_t)n);
    memset(hdr + NPY_PREFIX + n, ' ', total - NPY_PREFIX - (size_t)n - 1);
    hdr[total - 1] = '\n';
    return total;
}

typedef struct {
    const char *hdr;
    size_t hdr_len;
    const void *data;
    size_t count, elem_size;
    int bf16_to_f32; /* widen bf16 while writing */
} npy_job;

static kb_status write_npy(FILE *f, void *ctx, kb_err *e)
{
    const npy_job *j = ctx;
    if (fwrite(j->hdr, 1, j->hdr_len, f) != j->hdr_len) return KB_OK; /* caught by ferror */
    if (!j->bf16_to_f32) {
        if (j->count) fwrite(j->data, j->elem_size, j->count, f);
        return KB_OK;
    }
    /* Streamed in chunks: a dump can be billions of elements. */
    const uint16_t *src = j->data;
    float chunk[4096];
    for (size_t i = 0; i < j->count; i += 4096) {
        size_t m = j->count - i < 4096 ? j->count - i : 4096;
        for (size_t k = 0; k < m; k++) chunk[k] = kb_bf16_to_float(src[i + k]);
        if (fwrite(chunk, sizeof(float), m, f) != m) break;
    }
    return KB_OK;
}

static kb_status write_any(const char *path, const char *descr, size_t elem_size,
                           const void *data, int ndim, const int64_t *shape, int bf16,
                           kb_err *e)
{
    if (!little_endian())
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "%s: .npy writer assumes a little-endian host", path);
    if (ndim < 0 || ndim > KB_NPY_MAX_DIMS || (ndim > 0 && !shape))
        return KB_FAIL(e, KB_ERR_ARG, "%s: ndim %d not in 0..%d", path, ndim, KB_NPY_MAX_DIMS);
    if (!descr || !*descr || strlen(descr) >= sizeof(((kb_npy_header *)0)->descr) ||
        strpbrk(descr, "'\\\n") || elem_size == 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s: bad dtype descr or element size", path);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return KB_FAIL(e, KB_ERR_ARG, "%s: negative dimension %lld", path, (long long)shape[i]);
        if (shape[i] && count > SIZE_MAX / elem_size / (size_t)shape[i])
            return KB_FAIL(e, KB_ERR_ARG, "%s: array too large", path);
        count *= (size_t)shape[i];
    }
    if (count && !data) return KB_FAIL(e, KB_ERR_ARG, "%s: no data", path);

    char hdr[1024];
    size_t hlen = build_header(hdr, sizeof hdr, descr, ndim, shape);
    if (!hlen) return KB_FAIL(e, KB_ERR_ARG, "%s: .npy header too long", path);
    npy_job j = {hdr, hlen, data, count, elem_size, bf16};
    return kb_atomic_write(path, write_npy, &j, e);
}

kb_status kb_npy_write_raw(const char *path, const char *descr, size_t elem_size,
                           const void *host_data, int ndim, const int64_t *shape, kb_err *e)
{
    return write_any(path, descr, elem_size, host_data, ndim, shape, 0, e);
}

kb_status kb_npy_write(const char *path, kb_dtype dtype, const void *host_data, int ndim,
                       const int64_t *shape, kb_err *e)
{
    switch (dtype) {
    case KB_FP32: return write_any(path, "<f4", 4, host_data, ndim, shape, 0, e);
    case KB_FP16: return write_any(path, "<f2", 2, host_data, ndim, shape, 0, e);
    case KB_BF16: return write_any(path, "<f4", 2, host_data, ndim, shape, 1, e);
    default: break;
    }
    return KB_FAIL(e, KB_ERR_ARG, "%s: unknown dtype %d", path, (int)dtype);
}

kb_status kb_npy_write_f32(const char *path, const float *host_data, int ndim,
                           const int64_t *shape, kb_err *e)
{
    return write_any(path, "<f4", sizeof(float), host_data, ndim, shape, 0, e);
}

kb_status kb_npy_write_i64(const char *path, const int64_t *host_data, int ndim,
                           const int64_t *shape, kb_err *e)
{
    return write_any(path, "<i8", sizeof(int64_t), host_data, ndim, shape, 0, e);
}

/* ---- header reader ------------------------------------------------------ */

static const char *after_key(const char *dict, const char *key)
{
    const char *p = strstr(dict, key);
    if (!p) return NULL;
    p += strlen(key);
    while (*p == ' ') p++;
    return p;
}

kb_status kb_npy_read_header(const char *path, kb_npy_header *h, kb_err *e)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen(path, "rb");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    unsigned char pre[12];
    char *dict = NULL;
    kb_status st = KB_OK;
    size_t prefix = NPY_PREFIX, hlen = 0;
    if (fread(pre, 1, NPY_PREFIX, f) != NPY_PREFIX || memcmp(pre, NPY_MAGIC, 6) != 0) {
        st = KB_FAIL(e, KB_ERR_PARSE, "%s: not a .npy file (bad magic)", path);
    } else if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if ((pre[6] == 2 || pre[6] == 3) && fread(pre + NPY_PREFIX, 1, 2, f) == 2) {
        prefix = 12;
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        st = KB_FAIL(e, KB_ERR_PARSE, "%s: unsupported .npy version %d.%d", path, pre[6], pre[7]);
    }
    if (st == KB_OK && (hlen == 0 || hlen > (1u << 20)))
        st = KB_FAIL(e, KB_ERR_PARSE, "%s: implausible header length %zu", path, hlen);
    if (st == KB_OK && !(dict = malloc(hlen + 1)))
        st = KB_FAIL(e, KB_ERR_NOMEM, "%s: out of host memory", path);
    if (st == KB_OK && fread(dict, 1, hlen, f) != hlen)
        st = KB_FAIL(e, KB_ERR_PARSE, "%s: truncated header", path);
    fclose(f);
    if (st != KB_OK) {
        free(dict);
        return st;
    }
    dict[hlen] = '\0';
    h->major = pre[6];
    h->minor = pre[7];
    h->data_offset = prefix + hlen;

    int ok = 0;
    const char *p = after_key(dict, "'descr':");
    if (p && *p == '\'') {
        size_t dn = 0;
        p++;
        while (p[dn] && p[dn] != '\'' && dn < sizeof h->descr - 1) dn++;
        if (p[dn] == '\'') {
            memcpy(h->descr, p, dn);
            ok = 1;
        }
    }
    const char *fo = after_key(dict, "'fortran_order':");
    if (fo && strncmp(fo, "True", 4) == 0) h->fortran_order = 1;
    else if (!fo || strncmp(fo, "False", 5) != 0) ok = 0;
    const char *s = after_key(dict, "'shape':");
    if (!s || *s != '(') ok = 0;
    while (ok) { /* "(3, 4)", "(5,)" or "()" */
        s++;
        while (*s == ' ') s++;
        if (*s == ')') break;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || h->ndim == KB_NPY_MAX_DIMS) ok = 0;
        else if (errno || v < 0 || *s == '-' || *s == '+') { /* NumPy writes sizes, unsigned */
            const int n = (int)(end - s);
            const kb_status bad = KB_FAIL(e, KB_ERR_PARSE,
                                          "%s: .npy shape holds '%.*s', not a size (0 or more)",
                                          path, n > 40 ? 40 : n, s);
            free(dict);
            return bad;
        } else h->shape[h->ndim++] = v;
        s = end;
        while (*s == ' ') s++;
        if (*s == ')') break;
        if (*s != ',') ok = 0;
    }
    free(dict);
    if (!ok) return KB_FAIL(e, KB_ERR_PARSE, "%s: malformed .npy header dict", path);
    return KB_OK;
}
