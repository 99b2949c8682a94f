/* What the tuner's own files share and nothing else includes: config.c
 * (parse/format), cache.c (the cache file), search.c (coordinate descent)
 * and tuner.c (the kb_impl glue that runs the other three). */
#ifndef KB_TUNE_INT_H
#define KB_TUNE_INT_H

#include "tuner.h"

/* Longest cache line kept; a longer one is an error, never truncated. */
#define KB_TUNE_LINE_MAX 1024

/* s past blanks and tabs. */
const char *kb_tune_skip_space(const char *s);
/* kb_tune_cache_lookup, and the line the entry is on (*lineno). */
kb_status kb_tune_cache_find(const char *path, const kb_tune_key *k, char *cfg, size_t cfg_len,
                             double *gbps, int *found, int *lineno, kb_err *e);
/* 1 if sp's kernel can run c on p (sp->valid, or every c without one). */
int kb_tune_valid(const kb_tune_space *sp, const kb_problem *p, const kb_setup_ctx *ctx,
                  const kb_tune_cfg *c);

#endif
