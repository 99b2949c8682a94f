/* report.html: report.md rendered as one self-contained page for CI
 * artifacts -- inline CSS, each plot's SVG inlined where report.md links its
 * PNG, nothing fetched from anywhere. It is rendered from report.md itself,
 * so the two cannot disagree; the renderer knows only the Markdown that
 * markdown.c writes: headings, bullet lists, pipe tables (with alignment),
 * raw <details>/<summary> lines, images, links, **bold**, `code`, rules.
 * Nothing of the results' text becomes markup: it is escaped wherever it
 * lands, a link it spells only with a harmless target (safe_href). */
#include "report_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* HTML-escaped and UTF-8 (the page says charset=utf-8; the title is a GPU
 * name from the results, which promise no encoding). */
static void esc(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: {
            const size_t k = kb_utf8_len(s + i);
            const size_t take = k > 1 && k <= n - i ? k : 1;
            kb_report_put_utf8(f, s + i, take);
            i += take - 1;
        }
        }
    }
}

/* A link target report.html may hold: an anchor, an http(s) URL or a
 * relative path (markdown.c's links: #sections, plots/, --image-base). Text
 * from the results can spell a link too ("[x](javascript:...)" in a
 * message), which is then shown as text. */
static int safe_href(const char *s, size_t n)
{
    if ((n >= 7 && strncmp(s, "http://", 7) == 0) || (n >= 8 && strncmp(s, "https://", 8) == 0))
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ':') return 0; /* a scheme of another kind */
        if (s[i] == '/' || s[i] == '?' || s[i] == '#') break;
    }
    return 1;
}

/* Inline Markdown of one span: **bold**, `code`, [text](url), \| escapes. */
static void inline_md(FILE *f, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const char *rest = s + i;
        size_t left = n - i;
        if (left >= 2 && rest[0] == '\\' && (rest[1] == '|' || rest[1] == '\\')) {
            fputc(rest[1], f);
            i += 2;
        } else if (left >= 4 && strncmp(rest, "**", 2) == 0) {
            const char *end = strstr(rest + 2, "**");
            if (!end || end >= s + n) goto plain;
            fputs("<strong>", f);
            inline_md(f, rest + 2, (size_t)(end - rest - 2));
            fputs("</strong>", f);
            i += (size_t)(end - rest) + 2;
        } else if (rest[0] == '`') {
            const char *end = memchr(rest + 1, '`', left - 1);
            if (!end) goto plain;
            fputs("<code>", f);
            esc(f, rest + 1, (size_t)(end - rest - 1));
            fputs("</code>", f);
            i += (size_t)(end - rest) + 1;
        } else if (rest[0] == '[') {
            const char *close = memchr(rest, ']', left);
            if (!close || close + 1 >= s + n || close[1] != '(') goto plain;
            const char *paren = memchr(close, ')', (size_t)(s + n - close));
            if (!paren || !safe_href(close + 2, (size_t)(paren - close - 2))) goto plain;
            fputs("<a href=\"", f);
            esc(f, close + 2, (size_t)(paren - close - 2));
            fputs("\">", f);
            inline_md(f, rest + 1, (size_t)(close - rest - 1));
            fputs("</a>", f);
            i += (size_t)(paren - rest) + 1;
        } else {
        plain: {
            /* one character: a UTF-8 sequence whole, or one byte */
            size_t k = kb_utf8_len(rest);
            if (k < 1 || k > left) k = 1;
            esc(f, rest, k);
            i += k;
        }
        }
    }
}

/* Splits a pipe-table row into cells (an escaped \| stays in its cell). */
static size_t table_cells(const char *line, const char **cell, size_t *len, size_t cap)
{
    size_t n = 0;
    const char *p = line + 1; /* past the leading '|' */
    while (*p && n < cap) {
        const char *q = p;
        while (*q && !(*q == '|' && q[-1] != '\\')) q++;
        if (!*q) break;
        const char *a = p, *b = q;
        while (a < b && *a == ' ') a++;
        while (b > a && b[-1] == ' ') b--;
        cell[n] = a;
        len[n] = (size_t)(b - a);
        n++;
        p = q + 1;
    }
    return n;
}

/* The SVG gnuplot wrote beside the PNG report.md links, inlined from its
 * <svg element on; 0 when there is none (the link is kept as an image). */
static int inline_svg(FILE *f, const char *dir, const char *link, size_t n)
{
    char path[4096], buf0[4096];
    /* plots/<stem>.png, relative or under --image-base: the local file. */
    if (n >= sizeof buf0) return 0;
    memcpy(buf0, link, n);
    buf0[n] = '\0';
    const char *png = NULL;
    for (const char *p = strstr(buf0, "plots/"); p; p = strstr(p + 1, "plots/")) png = p;
    size_t len0 = png ? strlen(png) : 0;
    if (!png || len0 < 11 || strcmp(png + len0 - 4, ".png") != 0 || strchr(png + 6, '/'))
        return 0;
    snprintf(path, sizeof path, "%s/%.*s.svg", dir, (int)(len0 - 4), png);
    FILE *in = fopen(path, "rb");
    if (!in) return 0;
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len + 65536 > cap) {
            char *nb = realloc(buf, cap = len + 65536 + 1);
            if (!nb) break;
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, in);
        len += got;
    } while (got > 0);
    fclose(in);
    if (!buf) return 0;
    buf[len] = '\0';
    const char *svg = strstr(buf, "<svg");
    if (svg) kb_report_put_utf8(f, svg, strlen(svg)); /* its title holds the GPU name */
    free(buf);
    return svg != NULL;
}

static void heading(FILE *f, int level, const char *text)
{
    /* GitHub's anchor rule, so report.md's (#accuracy-failures) links work */
    fprintf(f, "<h%d id=\"", level);
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') fputc(c - 'A' + 'a', f);
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') fputc(c, f);
        else if (c == ' ') fputc('-', f);
    }
    fputs("\">", f);
    inline_md(f, text, strlen(text));
    fprintf(f, "</h%d>\n", level);
}

static const char *const style =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1320px;color:#222;"
    "line-height:1.45}table{border-collapse:collapse;margin:.6em 0 1.2em}"
    "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}th{background:#f3f3f3}"
    "tr:nth-child(even) td{background:#fafafa}code{background:#f3f3f3;padding:0 3px}"
    "summary{cursor:pointer;margin:.4em 0}svg{max-width:100%;height:auto}"
    "h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}";

/* The one raw HTML markdown.c writes: a fold, "<details><summary>what</summary>"
 * and "</details>" on lines of their own. */
#define DETAILS "<details><summary>"
#define DETAILS_LEN (sizeof DETAILS - 1)
#define SUMMARY_END "</summary>"
#define SUMMARY_END_LEN (sizeof SUMMARY_END - 1)

typedef enum { B_NONE, B_PARA, B_LIST, B_TABLE } block;

static void end_block(FILE *f, block *b)
{
    if (*b == B_PARA) fputs("</p>\n", f);
    else if (*b == B_LIST) fputs("</ul>\n", f);
    else if (*b == B_TABLE) fputs("</tbody></table>\n", f);
    *b = B_NONE;
}

kb_status kb_report_write_html(const char *md_path, const char *html_path, const char *dir,
                               const char *title, kb_err *e)
{
    FILE *in = fopen(md_path, "r");
    if (!in) return KB_FAIL(e, KB_ERR_IO, "cannot read %s: %s", md_path, strerror(errno));
    FILE *f = fopen(html_path, "w");
    if (!f) {
        fclose(in);
        return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", html_path, strerror(errno));
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    esc(f, title, strlen(title));
    fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n", style);
    char line[65536], align[64][8];
    const char *cell[64];
    size_t clen[64], ncols = 0;
    int table_row = 0;
    block b = B_NONE;
    while (fgets(line, sizeof line, in)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (n == 0) {
            end_block(f, &b);
        } else if (strcmp(line, "</details>") == 0) {
            end_block(f, &b);
            fputs("</details>\n", f);
        } else if (n > DETAILS_LEN + SUMMARY_END_LEN &&
                   strncmp(line, DETAILS, DETAILS_LEN) == 0 &&
                   strcmp(line + n - SUMMARY_END_LEN, SUMMARY_END) == 0) {
            /* The raw HTML markdown.c writes, its summary escaped: a
             * benchmark name from the results is part of it. Any other line
             * starting with '<' is text (the paragraph below). */
            end_block(f, &b);
            fputs(DETAILS, f);
            inline_md(f, line + DETAILS_LEN, n - DETAILS_LEN - SUMMARY_END_LEN);
            fputs(SUMMARY_END "\n", f);
        } else if (line[0] == '#') {
            end_block(f, &b);
            int level = 0;
            while (line[level] == '#') level++;
            heading(f, level, line + level + (line[level] == ' '));
        } else if (strcmp(line, "---") == 0) {
            end_block(f, &b);
            fputs("<hr>\n", f);
        } else if (line[0] == '!' && line[1] == '[') {
            end_block(f, &b);
            const char *close = strstr(line, "](");
            const char *paren = close ? strrchr(close, ')') : NULL;
            if (!close || !paren) {
                fprintf(f, "<p>");
                inline_md(f, line, n);
                fprintf(f, "</p>\n");
                continue;
            }
            fputs("<figure>", f);
            if (!inline_svg(f, dir, close + 2, (size_t)(paren - close - 2))) {
                fputs("<img src=\"", f);
                esc(f, close + 2, (size_t)(paren - close - 2));
                fputs("\" alt=\"", f);
                esc(f, line + 2, (size_t)(close - line - 2));
                fputs("\">", f);
            }
            fputs("</figure>\n", f);
        } else if (line[0] == '|') {
            size_t k = table_cells(line, cell, clen, 64);
            if (b != B_TABLE) {
                end_block(f, &b);
                fputs("<table><thead><tr>", f);
                for (size_t i = 0; i < k; i++) {
                    fputs("<th>", f);
                    inline_md(f, cell[i], clen[i]);
                    fputs("</th>", f);
                }
                fputs("</tr></thead><tbody>\n", f);
                b = B_TABLE;
                ncols = k;
                table_row = 0;
                for (size_t i = 0; i < 64; i++) strcpy(align[i], "left");
                continue;
            }
            if (table_row++ == 0 && k && cell[0][0] == '-') { /* |---|--:| alignment row */
                for (size_t i = 0; i < k && i < 64; i++)
                    snprintf(align[i], sizeof align[i], "%s",
                             clen[i] && cell[i][clen[i] - 1] == ':' ? "right" : "left");
                continue;
            }
            fputs("<tr>", f);
            for (size_t i = 0; i < k; i++) {
                fprintf(f, "<td style=\"text-align:%s\">", i < ncols && i < 64 ? align[i] : "left");
                inline_md(f, cell[i], clen[i]);
                fputs("</td>", f);
            }
            fputs("</tr>\n", f);
        } else if (line[0] == '-' && line[1] == ' ') {
            if (b != B_LIST) {
                end_block(f, &b);
                fputs("<ul>\n", f);
                b = B_LIST;
            }
            fputs("<li>", f);
            inline_md(f, line + 2, n - 2);
            fputs("</li>\n", f);
        } else {
            if (b != B_PARA) {
                end_block(f, &b);
                fputs("<p>", f);
                b = B_PARA;
            } else {
                fputc('\n', f);
            }
            inline_md(f, line, n);
        }
    }
    end_block(f, &b);
    fputs("</body></html>\n", f);
    int bad = ferror(in);
    fclose(in);
    if (fclose(f) != 0 || bad) return KB_FAIL(e, KB_ERR_IO, "cannot write %s", html_path);
    return KB_OK;
}
