/* Stored baselines: baselines/<gpu-name>.csv, one row per
 * (benchmark, backend, dtype, M, N, K).
 *
 * Schema (header row required, libcsv):
 *   benchmark,backend,dtype,M,N,median_ms,gbps,noise,samples,q1_ms,q3_ms,
 *   date,version,kernels,kernel_names[,K[,sm_mhz]]
 * noise is the robust relative spread of the recording run (1.4826*MAD/median);
 * q1/q3 the quartiles of its samples; kernels/kernel_names what one call
 * launched (CUPTI; kernel_names ';'-joined), which the kernel check compares
 * with. Columns after the required ones (benchmark..noise) may be empty or
 * absent in older files. K: the third size of a 3-D op (mlp_forward), empty or
 * absent (0) for the 2-D ops; the column is written only when a row has one.
 * sm_mhz: the SM clock read right after the recording's samples, kept for the
 * compute-bound cases (a GEMM's time follows the clock, and a power-capped
 * GPU runs it at different clocks from run to run): the verdict compares their times
 * at equal clocks (gate.h). Empty or absent: not recorded; written only when
 * a row has one. */
#ifndef KB_BASELINE_H
#define KB_BASELINE_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char benchmark[48], backend[48], dtype[8];
    int64_t M, N;
    int64_t K;               /* 0: a 2-D op */
    double median_ms, gbps, noise;
    int samples;
    double q1_ms, q3_ms; /* NaN when absent */
    char date[32], version[16];
    int kernels;             /* 0: not recorded */
    char kernel_names[1024]; /* "" when not recorded */
    double sm_mhz;           /* NaN or 0 when not recorded */
} kb_baseline_row;

typedef struct {
    kb_baseline_row *v;
    size_t n, cap;
} kb_baseline;

void kb_baseline_init(kb_baseline *b);
void kb_baseline_free(kb_baseline *b);

/* A missing file is an empty baseline (KB_OK); a malformed one (bad header,
 * wrong field count, non-numeric number, unterminated quote, truncated last
 * row, duplicate key) is KB_ERR_PARSE naming file and line, and so is a
 * results CSV (a header with accuracy, verdict or baseline_gbps). */
kb_status kb_baseline_read(const char *path, kb_baseline *b, kb_err *e);
/* Whether a baseline path may be used, before any GPU work. A path the user
 * typed (explicit) must exist unless the run will write it (will_write:
 * --update-baseline starts a new file): KB_ERR_ARG, with missing_hint (the
 * caller's own options, e.g. kbench's "--baseline names the file to gate
 * against; ...") in parentheses after it when not NULL. The default per-GPU
 * file may be absent (a GPU model with no baseline yet). *missing = 1 when
 * it does not exist (the caller warns: nothing will be gated). A directory
 * or an unreadable file is an error. */
kb_status kb_baseline_check_path(const char *path, int explicit_path, int will_write,
                                 const char *missing_hint, int *missing, kb_err *e);
/* Row for the key or NULL. */
const kb_baseline_row *kb_baseline_find(const kb_baseline *b, const char *benchmark,
                                        const char *backend, const char *dtype, int64_t M,
                                        int64_t N, int64_t K);
/* Insert or replace by key; other rows untouched. */
kb_status kb_baseline_upsert(kb_baseline *b, const kb_baseline_row *row, kb_err *e);
/* Sorted by key, written to <path>.<pid>.tmp then renamed: a crash never leaves a
 * half-written file. */
kb_status kb_baseline_write(const char *path, const kb_baseline *b, kb_err *e);
/* A read-modify-write of the baseline file at path, safe against other
 * writers of it (processes on two GPUs of one model write one file): under
 * kb_lock_parent's lock on its folder, the file is re-read (absent:
 * empty), merge(b, ctx, e) changes the rows, and kb_baseline_write puts the
 * result in place (temp, fsync, rename). An error from any step leaves the
 * file as it was (a failed write's message says so). *rows (may be NULL): the rows in the
 * file written. */
typedef kb_status (*kb_baseline_merge_fn)(kb_baseline *b, void *ctx, kb_err *e);
kb_status kb_baseline_update(const char *path, kb_baseline_merge_fn merge, void *ctx,
                             size_t *rows, kb_err *e);
/* "NVIDIA H200" -> "<dir>/NVIDIA_H200.csv" */
void kb_baseline_path(const char *dir, const char *gpu_name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
