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
