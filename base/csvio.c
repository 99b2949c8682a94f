/* Atomic writes and a line-aware libcsv reader (see csvio.h). */
#include "csvio.h"
#include "files.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- atomic write ------------------------------------------------------- */

kb_status kb_atomic_write(const char *path, kb_write_fn write, void *ctx, kb_err *e)
{
    /* Per-process temp name: two processes updating one baseline must not
     * write into the same temp file (the later rename would publish a mix). */
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return KB_FAIL(e, KB_ERR_ARG, "path too long: %s", path);

    /* Made new (O_EXCL), never through a symbolic link (files.h): a caches
     * folder may be shared. One already there is a writer's of an earlier
     * process with this pid that died before its rename, or was planted:
     * its name is removed (unlink never follows a link), once. */
    kb_err why = {{0}};
    int fd = kb_open_shared(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666, NULL, &why);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = kb_open_shared(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666, NULL, &why);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            remove(tmp);
        }
        return KB_FAIL(e, KB_ERR_IO, "cannot create %s", fd >= 0 ? tmp : kb_err_text(&why));
    }

    kb_status st = write(f, ctx, e);
    if (st == KB_OK && (fflush(f) != 0 || ferror(f)))
        st = KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    /* The data must be on disk before the rename makes it the file. */
    if (st == KB_OK && fsync(fileno(f)) != 0 && errno != EINVAL)
        st = KB_FAIL(e, KB_ERR_IO, "cannot sync %s: %s", tmp, strerror(errno));
    if (fclose(f) != 0 && st == KB_OK)
        st = KB_FAIL(e, KB_ERR_IO, "cannot close %s: %s", tmp, strerror(errno));
    if (st == KB_OK && rename(tmp, path) != 0)
        st = KB_FAIL(e, KB_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (st != KB_OK) remove(tmp);
    return st;
}

/* ---- growable arrays ---------------------------------------------------- */

void *kb_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap) return v;
    /* A count whose bytes no size_t holds is out of memory too, never a
     * wrapped (small) allocation. */
    if (*cap > SIZE_MAX / 2) return NULL;
    size_t c = *cap ? 2 * *cap : first;
    if (elem && c > SIZE_MAX / elem) return NULL;
    void *nv = realloc(v, c * elem);
    if (nv) *cap = c;
    return nv;
}

/* ---- reader ------------------------------------------------------------- */

typedef struct {
    const char *path;
    kb_csv_row_fn fn;
    void *ctx;
    kb_err *e;
    char **f; /* fields of the row being assembled */
    size_t n, cap;
    size_t row;     /* rows delivered so far */
    long line;      /* physical line being fed (1-based) */
    long row_start; /* line the current row started on */
    int row_open;   /* a row has started and not yet ended */
    kb_status st;
} reader;

static void clear_fields(reader *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->f[i]);
    r->n = 0;
}

static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    if (r->st != KB_OK) return;
    if (!r->row_open) { /* only with bare-CR line ends: a row began mid-chunk */
        r->row_open = 1;
        r->row_start = r->line;
    }
    /* Fields are handed on as C strings: a NUL would cut one short without
     * a word ("100\0junk" read as 100, a name read as its first letters). */
    if (len && memchr(s, '\0', len)) {
        r->st = KB_FAIL(r->e, KB_ERR_PARSE,
                        "%s:%ld: field %zu holds a NUL byte (a binary file, or text saved as "
                        "UTF-16? CSV files must be UTF-8 or ASCII)",
                        r->path, r->line, r->n + 1);
        return;
    }
    char **nf = kb_grow(r->f, r->n, &r->cap, sizeof *nf, 16);
    if (!nf) {
        r->st = KB_FAIL(r->e, KB_ERR_NOMEM, "%s: out of host memory", r->path);
        return;
    }
    r->f = nf;
    char *c = malloc(len + 1);
    if (!c) {
        r->st = KB_FAIL(r->e, KB_ERR_NOMEM, "%s: out of host memory", r->path);
        return;
    }
    if (len) memcpy(c, s, len);
    c[len] = '\0';
    r->f[r->n++] = c;
}

static void on_row(int c, void *data)
{
    reader *r = data;
    if (r->st == KB_OK)
        r->st = r->fn(r->ctx, r->row++, r->f, r->n, r->row_start, r->e);
    clear_fields(r);
    r->row_open = 0;
}

/* libcsv skips lines holding only spaces and tabs: they start no row. */
static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

static kb_status slurp(const char *path, char **buf, size_t *len, int *missing, kb_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        if (missing) *missing = err == ENOENT;
        return KB_FAIL(e, KB_ERR_IO, "cannot open %s: %s", path, strerror(err));
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    kb_status st = KB_OK;
    while (b) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(b, cap * 2);
        if (!nb) {
            free(b);
            b = NULL;
        } else {
            b = nb;
            cap *= 2;
        }
    }
    if (!b)
        st = KB_FAIL(e, KB_ERR_NOMEM, "%s: out of host memory", path);
    else if (ferror(f))
        st = KB_FAIL(e, KB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (st != KB_OK) {
        free(b);
        return st;
    }
    *buf = b;
    *len = n;
    return KB_OK;
}

kb_status kb_csv_read(const char *path, kb_csv_row_fn row, void *ctx, int *missing, kb_err *e)
{
    if (missing) *missing = 0;
    char *buf = NULL;
    size_t len = 0;
    KB_TRY(slurp(path, &buf, &len, missing, e));

    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        free(buf);
        return KB_FAIL(e, KB_ERR_NOMEM, "%s: cannot initialise libcsv", path);
    }
    reader r = {.path = path, .fn = row, .ctx = ctx, .e = e, .st = KB_OK};

    /* Fed one physical line at a time so the callbacks know the line. */
    size_t pos = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* UTF-8 BOM */
    while (pos < len && r.st == KB_OK) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) + 1 : len;
        r.line++;
        if (!r.row_open && !blank(buf + pos, end - pos)) {
            r.row_open = 1;
            r.row_start = r.line;
        }
        size_t got = csv_parse(&p, buf + pos, end - pos, on_field, on_row, &r);
        if (r.st == KB_OK && got != end - pos)
            r.st = KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: malformed CSV (%s): a quote inside an unquoted field "
                           "or text after a closing quote",
                           path, r.line, csv_strerror(csv_error(&p)));
        pos = end;
    }
    if (r.st == KB_OK && csv_fini(&p, on_field, on_row, &r) != 0 && r.st == KB_OK)
        r.st = KB_FAIL(e, KB_ERR_PARSE,
                       "%s:%ld: unterminated quoted field (row starting on line %ld runs "
                       "to end of file)",
                       path, r.row_start, r.row_start);
    if (r.st == KB_OK && r.row == 0)
        r.st = KB_FAIL(e, KB_ERR_PARSE, "%s:1: empty file: header row missing", path);

    clear_fields(&r);
    free(r.f);
    csv_free(&p);
    free(buf);
    return r.st;
}

kb_status kb_csv_map_header(const char *path, long line, char *const *fields, size_t n,
                            const char *const *names, size_t nnames, size_t nrequired,
                            int *idx, kb_err *e)
{
    for (size_t j = 0; j < nnames; j++) idx[j] = -1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < nnames; j++) {
            if (strcmp(fields[i], names[j]) != 0) continue;
            if (idx[j] >= 0)
                return KB_FAIL(e, KB_ERR_PARSE, "%s:%ld: header names column '%s' twice",
                               path, line, names[j]);
            idx[j] = (int)i;
        }
    for (size_t j = 0; j < nrequired; j++)
        if (idx[j] < 0)
            return KB_FAIL(e, KB_ERR_PARSE,
                           "%s:%ld: header lacks required column '%s' (first row must be "
                           "a header naming at least the required columns)",
                           path, line, names[j]);
    return KB_OK;
}

/* ---- writing ------------------------------------------------------------ */

int kb_csv_put(FILE *f, const char *s, int sep)
{
    if (sep && fputc(',', f) == EOF) return -1;
    size_t n = strlen(s);
    /* libcsv trims unquoted leading/trailing blanks on read: quote those too. */
    int quote = n && (strpbrk(s, ",\"\r\n") || s[0] == ' ' || s[0] == '\t' ||
                      s[n - 1] == ' ' || s[n - 1] == '\t');
    if (quote) return csv_fwrite(f, s, n) == 0 ? 0 : -1;
    return fputs(s, f) == EOF ? -1 : 0;
}

void kb_format_double(char *buf, size_t len, double v)
{
    if (!isfinite(v)) {
        if (len) buf[0] = '\0';
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

int kb_csv_put_double(FILE *f, double v, int sep)
{
    char b[40];
    kb_format_double(b, sizeof b, v);
    return kb_csv_put(f, b, sep);
}

/* ---- numbers ------------------------------------------------------------ */

static int only_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return *s == '\0';
}

int kb_csv_control_char(const char *s)
{
    for (const unsigned char *q = (const unsigned char *)s; *q; q++)
        if (*q < 0x20 || *q == 0x7f) return *q;
    return 0;
}

int kb_parse_double(const char *s, double *out)
{
    char *end;
    if (strpbrk(s, "xX")) return -1; /* no hex floats */
    double v = strtod(s, &end);
    if (end == s || !only_space(end) || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int kb_parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && errno == 0 && only_space(end)) {
        *out = (int64_t)v;
        return 0;
    }
    /* Tools that store integers as floats write "57.0": accept exact ones. */
    double d;
    if (kb_parse_double(s, &d) != 0 || d != floor(d) || fabs(d) > 9007199254740992.0) return -1;
    *out = (int64_t)d;
    return 0;
}
