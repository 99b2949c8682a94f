/* Results files written row by row (rowfile.h). */
#include "rowfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

kb_status kb_rowfile_init(kb_rowfile *w, const char *path, kb_rows_format format, kb_err *e)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    if (strlen(path) >= sizeof w->path)
        return KB_FAIL(e, KB_ERR_ARG, "results path too long: %s", path);
    strcpy(w->path, path);
    snprintf(w->partial, sizeof w->partial, "%s.partial", path);
    return KB_OK;
}

static kb_status io_error(kb_rowfile *w, const char *what, kb_err *e)
{
    w->failed = 1;
    return KB_FAIL(e, KB_ERR_IO, "cannot %s %s: %s", what, w->partial, strerror(errno));
}

/* The closing "]" (JSON) goes after the last row, so the file is complete
 * at every flush; the next row is written over it. */
static kb_status end_and_flush(kb_rowfile *w, kb_err *e)
{
    if (w->format == KB_ROWS_JSON) {
        w->json_end = ftell(w->f);
        fputs(w->rows ? "\n]\n" : "]\n", w->f);
    }
    if (fflush(w->f) != 0 || ferror(w->f)) return io_error(w, "write", e);
    return KB_OK;
}

static kb_status open_partial(kb_rowfile *w, kb_err *e)
{
    w->f = fopen(w->partial, "wb");
    if (!w->f) return io_error(w, "create", e);
    if (w->format == KB_ROWS_CSV) kb_results_csv_header(w->f);
    else fputc('[', w->f);
    return end_and_flush(w, e);
}

kb_status kb_rowfile_add(kb_rowfile *w, const kb_result *x, kb_err *e)
{
    if (w->failed) return KB_OK; /* reported once, at the failure and at commit */
    if (!w->f) KB_TRY(open_partial(w, e));
    if (w->format == KB_ROWS_JSON) {
        if (fseek(w->f, w->json_end, SEEK_SET) != 0) return io_error(w, "seek in", e);
        fputs(w->rows ? ",\n  " : "\n  ", w->f);
        kb_result_json_object(w->f, x);
    } else {
        kb_result_csv_row(w->f, x);
    }
    w->rows++;
    return end_and_flush(w, e);
}

kb_status kb_rowfile_commit(kb_rowfile *w, kb_err *e)
{
    if (w->failed) {
        kb_rowfile_abandon(w);
        return KB_FAIL(e, KB_ERR_IO, "%s not written: writing %s failed earlier", w->path,
                       w->partial);
    }
    if (!w->f) KB_TRY(open_partial(w, e));
    kb_status st = KB_OK;
    /* The data must be on disk before the rename makes it the file. */
    if (fsync(fileno(w->f)) != 0 && errno != EINVAL) st = io_error(w, "sync", e);
    if (fclose(w->f) != 0 && st == KB_OK) st = io_error(w, "close", e);
    w->f = NULL;
    if (st == KB_OK && rename(w->partial, w->path) != 0)
        st = KB_FAIL(e, KB_ERR_IO, "cannot rename %s to %s: %s", w->partial, w->path,
                     strerror(errno));
    return st;
}

void kb_rowfile_abandon(kb_rowfile *w)
{
    if (w->f) fclose(w->f);
    w->f = NULL;
}
