/* The tuner's configuration texts: "threads=256,rows=2" parsed against a
 * kernel's kb_tune_space (every key known, every value among its choices)
 * and formatted back, in the space's parameter order. */
#include "tune_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int param_index(const kb_tune_space *sp, const char *name, size_t len)
{
    for (int i = 0; i < sp->nparams; i++)
        if (strlen(sp->names[i]) == len && strncmp(sp->names[i], name, len) == 0) return i;
    return -1;
}

static int choice_ok(const kb_tune_space *sp, int i, int v)
{
    for (int k = 0; k < sp->nchoices[i]; k++)
        if (sp->choices[i][k] == v) return 1;
    return 0;
}

static void choices_text(const kb_tune_space *sp, int i, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < sp->nchoices[i] && n < len; k++) {
        int w = snprintf(buf + n, len - n, "%s%d", k ? "|" : "", sp->choices[i][k]);
        if (w < 0) break;
        n += (size_t)w;
    }
}

const char *kb_tune_skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

kb_status kb_tune_parse(const kb_tune_space *sp, const char *text, const kb_tune_cfg *base,
                        kb_tune_cfg *out, kb_err *e)
{
    kb_tune_cfg c;
    int seen[KB_TUNE_MAX_PARAMS] = {0};
    memset(&c, 0, sizeof c);
    if (base) c = *base;
    const char *s = text ? text : "";
    s = kb_tune_skip_space(s);
    while (*s) {
        const char *key = s;
        while (*s && *s != '=' && *s != ',' && *s != ' ' && *s != '\t') s++;
        size_t klen = (size_t)(s - key);
        s = kb_tune_skip_space(s);
        if (klen == 0 || *s != '=')
            return KB_FAIL(e, KB_ERR_ARG, "%s: expected key=value in '%s'", sp->op, text);
        int i = param_index(sp, key, klen);
        if (i < 0) {
            char names[128] = "";
            size_t n = 0;
            for (int k = 0; k < sp->nparams && n < sizeof names; k++) {
                int w = snprintf(names + n, sizeof names - n, "%s%s", k ? "," : "", sp->names[k]);
                if (w < 0) break;
                n += (size_t)w;
            }
            return KB_FAIL(e, KB_ERR_ARG, "%s: unknown launch parameter '%.*s' (known: %s)", sp->op,
                           (int)klen, key, names);
        }
        if (seen[i])
            return KB_FAIL(e, KB_ERR_ARG, "%s: launch parameter '%s' given twice", sp->op,
                           sp->names[i]);
        seen[i] = 1;
        s = kb_tune_skip_space(s + 1);
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno != 0 || v < -1000000 || v > 1000000)
            return KB_FAIL(e, KB_ERR_ARG, "%s: '%s' needs an integer value", sp->op, sp->names[i]);
        if (!choice_ok(sp, i, (int)v)) {
            char ch[160];
            choices_text(sp, i, ch, sizeof ch);
            return KB_FAIL(e, KB_ERR_ARG, "%s: %s=%ld is not one of %s", sp->op, sp->names[i], v,
                           ch);
        }
        c.v[i] = (int)v;
        s = kb_tune_skip_space(end);
        if (*s == ',') {
            s = kb_tune_skip_space(s + 1);
            if (!*s)
                return KB_FAIL(e, KB_ERR_ARG, "%s: trailing ',' in '%s'", sp->op, text);
        } else if (*s) {
            return KB_FAIL(e, KB_ERR_ARG, "%s: unexpected '%c' after %s's value", sp->op, *s,
                           sp->names[i]);
        }
    }
    if (!base)
        for (int i = 0; i < sp->nparams; i++)
            if (!seen[i])
                return KB_FAIL(e, KB_ERR_ARG, "%s: launch parameter '%s' missing", sp->op,
                               sp->names[i]);
    if (sp->canon) sp->canon(&c);
    *out = c;
    return KB_OK;
}

void kb_tune_format(const kb_tune_space *sp, const kb_tune_cfg *c, char *buf, size_t len)
{
    size_t n = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < sp->nparams && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s=%d", i ? "," : "", sp->names[i], c->v[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
}
