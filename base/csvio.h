/* Internal helpers shared by baseline.c, results.c and npy.c: atomic file
 * writes, a libcsv reader that knows physical line numbers, header-to-column
 * mapping, the growth of row arrays and strict number parsing. Not part of
 * the public contract.
 *
 * Line numbers: a row is reported by the physical line it starts on (a quoted
 * field may span lines; blank lines are skipped). Parse errors inside a row
 * (stray quote) name the line where libcsv stopped; an unterminated quote at
 * end of file names the line its row starts on. */
#ifndef KB_CSVIO_H
#define KB_CSVIO_H

#include <stdio.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes path via "<path>.<pid>.tmp" + rename(). write() fills the stream; on any
 * failure (its status, a stream error, fclose, rename) the temp file is
 * removed and path is left as it was. */
typedef kb_status (*kb_write_fn)(FILE *f, void *ctx, kb_err *e);
kb_status kb_atomic_write(const char *path, kb_write_fn write, void *ctx, kb_err *e);

/* Called once per CSV row (row 0 is the header). fields[i] are NUL-terminated
 * and live until the callback returns. A non-OK status stops the read. */
typedef kb_status (*kb_csv_row_fn)(void *ctx, size_t row, char *const *fields, size_t n,
                                   long line, kb_err *e);
/* Reads path with libcsv (strict). *missing (if non-NULL) is set when the file
 * does not exist; the call then returns KB_ERR_IO without calling row(). */
kb_status kb_csv_read(const char *path, kb_csv_row_fn row, void *ctx, int *missing,
                      kb_err *e);

/* Maps header names to column indices: idx[i] = column of names[i] or -1.
 * The first nrequired names must be present; a name given twice is an error.
 * Unknown columns are ignored. */
kb_status kb_csv_map_header(const char *path, long line, char *const *fields, size_t n,
                            const char *const *names, size_t nnames, size_t nrequired,
                            int *idx, kb_err *e);

/* Field writers for csv rows: quote (csv_fwrite) only when the text needs
 * it, so plain names and numbers stay readable. sep: write ',' first. */
int kb_csv_put(FILE *f, const char *s, int sep);
/* Shortest "%.Ng" (N = 15..17) that reads back to the same double; NaN and
 * infinities give an empty field. */
int kb_csv_put_double(FILE *f, double v, int sep);
void kb_format_double(char *buf, size_t len, double v);

/* Room for one more element in a growable array v holding n of *cap
 * elements of elem bytes: when full, *cap doubles (first when 0) and the
 * reallocated array is returned; v itself when there is room; NULL, with v
 * and *cap untouched, when out of host memory or when the doubled size
 * would not fit a size_t. The one growth policy of the
 * arrays rows are read into (fields of a row, results, baseline rows). */
void *kb_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first);

/* The first control character (below 0x20, or 0x7f) of s, else 0: a key
 * column (benchmark, backend, dtype) holds none, since keys name plot files,
 * report headings and the plots' data comments, which a line break splits. */
int kb_csv_control_char(const char *s);

/* Strict number parsing: whole string, finite. Return 0 on success. */
int kb_parse_double(const char *s, double *out);
int kb_parse_int64(const char *s, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
