/* What markdown.c (report.md's frame, overview and tables of numbers) and
 * md_verdicts.c (its verdict sections: regressions, accuracy failures,
 * skipped cases) share. The helpers are static inline: a few lines each,
 * private to the two files, so they stay out of the library's symbols. */
#ifndef KB_MD_INT_H
#define KB_MD_INT_H

#include <math.h>
#include <stdio.h>

#include "report_int.h"

#define DASH "\xe2\x80\x94" /* em dash: "no value" in a table cell */

static inline void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

static inline const char *num(char *b, size_t n, const char *fmt, double v)
{
    if (isfinite(v)) snprintf(b, n, fmt, v);
    else snprintf(b, n, DASH);
    return b;
}

static inline int is_fail(const kb_result *x) { return x->accuracy == KB_ACC_FAIL; }

/* Tables longer than a screen are folded, so a PR comment or job summary
 * shows the verdicts and the speedup matrix without scrolling past them. */
#define FOLD_ROWS 20

static inline void fold_open(FILE *f, size_t rows, const char *what)
{
    if (rows > FOLD_ROWS) fprintf(f, "<details><summary>%s (%zu rows)</summary>\n\n", what, rows);
}

static inline void fold_close(FILE *f, size_t rows)
{
    if (rows > FOLD_ROWS) fprintf(f, "</details>\n\n");
}

/* What report.md counts over the judged rows (markdown.c's count_all): the
 * overview and the verdict sections speak of the same numbers. */
typedef struct {
    size_t rows, timed, untimed, fails, peer_fails, acc_checked;
    size_t slower, faster, same, noisy, nobase, verdicts, fusion;
} kb_md_counts;

/* "## Regressions vs baseline", and "## Accuracy failures" with "## Skipped"
 * (md_verdicts.c). */
void kb_md_write_regressions(FILE *f, const kb_report_model *m, const kb_report_judged *j,
                             const kb_md_counts *c, const kb_report_baseline_info *bl);
void kb_md_write_accuracy(FILE *f, const kb_report_model *m, const kb_md_counts *c);

#endif
