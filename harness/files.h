/* Small file-system helpers shared by the harness, the tuner and the report. */
#ifndef KB_FILES_H
#define KB_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mkdir -p: path and every missing parent; KB_ERR_IO naming the component
 * that could not be made, or when path exists but is not a directory. */
kb_status kb_mkdir_p(const char *path, kb_err *e);
/* kb_mkdir_p of the directory that holds file path (nothing without a '/'). */
kb_status kb_mkdir_parent(const char *path, kb_err *e);

/* A GPU name as one path component ("NVIDIA H200" -> "NVIDIA_H200"): blanks
 * and separators become '_', an empty name "unknown_gpu". Baselines, the SOL
 * cache and the tuning cache all name their files this way. */
void kb_gpu_file_name(const char *gpu_name, char *buf, size_t len);

/* Whether an input file a run reads may be used, before any GPU work; what
 * names it in messages ("baseline file", "tuning cache"). A path the user
 * named (explicit) must exist unless the run will write it (will_write),
 * else KB_ERR_ARG, with missing_hint (the caller's own options) in
 * parentheses when not NULL; a default path may be absent. *missing = 1
 * when it does not exist. A directory or an unreadable file is an error. */
kb_status kb_input_file_check(const char *what, const char *path, int explicit_path,
                              int will_write, const char *missing_hint, int *missing, kb_err *e);

/* printf(fmt, ...) into path[len], a file or folder name. Cut to fit it
 * would name another file (a parent, another case's, one read or written
 * in place of the one meant), so a name that does not fit is KB_ERR_ARG:
 * "<what> '<named, first 60 characters>...': path longer than <len-1>
 * characters", what being the option or variable the user named it by. */
kb_status kb_path_print(char *path, size_t len, const char *what, const char *named, kb_err *e,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Seconds on the monotonic clock, for wall-time phases and waits. */
double kb_mono_s(void);

/* FNV-1a (64-bit) of n bytes, continuing from h (KB_FNV1A_BASIS to start):
 * file checksums and names made from what they must match. */
#define KB_FNV1A_BASIS 0xcbf29ce484222325ull
uint64_t kb_fnv1a(uint64_t h, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
