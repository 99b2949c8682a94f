/* On-disk cache of a vendor library's execution plans, one file per case.
 *
 * Why: building a cuDNN norm plan (engine heuristics, then the runtime
 * compilation of its generated kernels) was most of the whole suite's wall
 * time (docs/user/gpus.md), and cuDNN can serialise a finalized plan and rebuild it
 * from that text without compiling again. kbench keeps each case's
 * serialised plan in the user's cache folder (kb_plan_cache_dir).
 *
 * A file is "kbench-plan 2 bytes=<n> fnv=<16 hex> <meta>\n" followed by
 * exactly n bytes of payload (the library's serialised plan) whose FNV-1a
 * 64-bit hash is fnv (a cache on a shared file system written by two hosts
 * at once must not hand out a mixed plan); meta is one line of the
 * backend's own key=value text (which engine, found how), shown in results
 * as it was when the plan was built. The file name carries everything the
 * plan depends on: GPU model, library and version, benchmark, dtype, shape;
 * a file that does not parse, or is truncated, is a miss and is rewritten.
 * Writes go through a temporary file and rename, so concurrent cases never
 * read half a plan. CUDA-free, unit tested. */
#ifndef KB_PLANCACHE_H
#define KB_PLANCACHE_H

#include <stddef.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The folder plan caches live in: $KBENCH_CACHE_DIR, else
 * $XDG_CACHE_HOME/kbench, else $HOME/.cache/kbench (a user's cache outlives
 * build folders, so a fresh clone on the same machine reuses the plans),
 * else fallback (the build folder). Empty values count as unset.
 * KBENCH_PLAN_CACHE off (0, off, false, no: kb_env_switch), or a folder name
 * that does not fit in len, gives "" (no plan cache: every plan is built). */
void kb_plan_cache_dir(const char *fallback, char *buf, size_t len);

/* "<dir>/plans/<GPU file name>/<lib>-<bench>-<dtype>-<M>x<N>.plan"; lib
 * names the library and its version (e.g. "cudnn91400"). KB_ERR_ARG when
 * it does not fit. */
kb_status kb_plan_cache_path(const char *dir, const char *gpu_name, const char *lib,
                             const kb_problem *p, char *buf, size_t len, kb_err *e);

/* Reads path. Absent, unreadable, malformed or truncated: *found = 0 and
 * KB_OK (why in *why when non-NULL: "" for absent). Found: *found = 1, meta
 * (NUL-terminated, cut at meta_len - 1) and *payload (malloc'd, NUL added
 * after *payload_len bytes; the caller frees it). KB_ERR_NOMEM only when the
 * payload cannot be allocated. */
kb_status kb_plan_cache_read(const char *path, char *meta, size_t meta_len, char **payload,
                             size_t *payload_len, int *found, char *why, size_t why_len,
                             kb_err *e);

/* Writes the file (making its folders); meta must be one line of at most
 * KB_PLAN_META_MAX characters (what the reader takes back). */
#define KB_PLAN_META_MAX 512
kb_status kb_plan_cache_write(const char *path, const char *meta, const char *payload,
                              size_t payload_len, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
