/* Results files written row by row: each finished case is appended and
 * flushed to "<path>.partial" at once, and the file is renamed to <path>
 * when the run ends. A run that is killed or crashes an hour in keeps every
 * finished row in the .partial file: a complete CSV (header and whole rows)
 * or, for JSON, a complete array (the closing bracket is rewritten after
 * each object). */
#ifndef KB_ROWFILE_H
#define KB_ROWFILE_H

#include <stdio.h>

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KB_ROWS_CSV = 0, KB_ROWS_JSON } kb_rows_format;

typedef struct {
    FILE *f;                 /* NULL until the first row (or commit)      */
    kb_rows_format format;
    size_t rows;
    long json_end;           /* JSON: offset where the closing "]" starts */
    int failed;              /* a write failed: commit reports it         */
    char path[1024], partial[1040];
} kb_rowfile;

/* No file is touched until the first row: a run that never starts a case
 * (no GPU) leaves nothing behind. KB_ERR_ARG if path is too long. */
kb_status kb_rowfile_init(kb_rowfile *w, const char *path, kb_rows_format format, kb_err *e);
/* Append x and flush. KB_ERR_IO naming the .partial file on failure. */
kb_status kb_rowfile_add(kb_rowfile *w, const kb_result *x, kb_err *e);
/* Sync and rename <path>.partial to <path> (a file with no rows if none
 * came). */
kb_status kb_rowfile_commit(kb_rowfile *w, kb_err *e);
/* Close without renaming: the .partial file stays for the user. */
void kb_rowfile_abandon(kb_rowfile *w);

#ifdef __cplusplus
}
#endif
#endif
