/* One measured case and the files results are written to.
 *
 * Results CSV schema (header row, libcsv, one row per case; the report reads
 * it, peers' scripts write it):
 *   benchmark,backend,dtype,M,N,median_ms,min_ms,max_ms,noise,gbps,sol_gbps,
 *   sol_pct,samples,accuracy,mismatches,max_err,baseline_gbps,verdict,gpu,
 *   config,date,version,env,kernels,kernel_names,kernel_us,sol_read_gbps,
 *   sol_write_gbps,mix_sol_gbps,mix_sol_pct,K,tflops,peak_tflops,message
 * env: the environment banner without the GPU name (envinfo.h).
 * message: why the verdict is what it is (NOISY's reason, SLOWER's numbers),
 * a skip's or a failure's reason; empty when there is nothing to say (older
 * files lack it).
 * accuracy: PASS | FAIL | SKIP. verdict: SAME | FASTER | SLOWER | NOISY |
 * NO_BASELINE | FUSION_CHANGED | (empty when not checked); a reader refuses
 * any other text. Unmeasured numbers are empty; median_ms, min_ms, max_ms
 * and gbps are > 0 and noise >= 0 when present. kernels: how many kernels one call launched (CUPTI,
 * kernel_check.h); kernel_names their short names and kernel_us their
 * durations in microseconds, both ';'-joined in launch order; empty when not
 * recorded (older files lack the three columns: read as not recorded).
 * sol_read_gbps/sol_write_gbps: the GPU's read-only and write-only streams;
 * mix_sol_gbps: the SOL for the case's own read:write byte mix (sol.h) and
 * mix_sol_pct = gbps as % of it (older files and peers lack them: empty).
 * backend is the series name: "eager", "tuned", "tuned:<custom-name>",
 * or a peer ("torch_eager", "torch_compile", "liger", ...).
 * K: the third size of a 3-D op (mlp_forward: M = T, N = D, K = H), empty
 * (read as 0) for the 2-D ops and in older files. tflops: a compute-bound
 * op's FLOP rate (the descriptor's flops_mnk * M*N*K / median), peak_tflops
 * the measured bf16 GEMM peak of the GPU (run/gemm_sol.h), and sol_pct
 * is then tflops / peak_tflops; for the memory-bound ops both are empty and
 * sol_pct is gbps / sol_gbps. */
#ifndef KB_RESULTS_H
#define KB_RESULTS_H

#include <stdio.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A result's accuracy state; in files its text is kb_acc_name's (PASS FAIL
 * SKIP, empty when not checked: a peer's row may leave it so). */
typedef enum { KB_ACC_NONE = 0, KB_ACC_PASS, KB_ACC_FAIL, KB_ACC_SKIP, KB_NUM_ACC } kb_acc;
const char *kb_acc_name(kb_acc a);
/* "", "PASS", "FAIL", "SKIP"; anything else is KB_ERR_PARSE. */
kb_status kb_acc_parse(const char *s, kb_acc *a, kb_err *e);

typedef struct {
    char benchmark[48];
    char backend[48];
    char dtype[8];
    int64_t M, N;
    int64_t K;            /* 0: a 2-D op */
    double median_ms, min_ms, max_ms, noise; /* NaN when not timed */
    double sm_mhz; /* SM clock right after the final samples; NaN when not timed
                      (kept in memory and in baselines, not in results files) */
    double q1_ms, q3_ms;  /* quartiles of the samples (for baselines; not in the CSV) */
    double gbps, sol_gbps, sol_pct;
    double tflops, peak_tflops; /* compute-bound ops; NaN otherwise */
    int samples;
    kb_acc accuracy;
    int64_t mismatches;
    double max_err;       /* worst |out-gold| / (atol + rtol|gold|) */
    double baseline_gbps; /* NaN: no baseline row */
    char verdict[16];
    char gpu[64];
    char config[128];     /* tuned launch parameters etc. */
    char date[32];        /* ISO 8601 UTC */
    char version[16];
    char env[256];        /* kbench, CUDA runtime/driver, cuDNN, clocks (envinfo.h) */
    int kernels;              /* kernels per call (CUPTI); 0: not recorded */
    char kernel_names[1024];  /* ';'-joined short names, launch order */
    char kernel_us[512];      /* ';'-joined durations in us, same order */
    double sol_read_gbps, sol_write_gbps; /* one-way streams (device.h); NaN: unknown */
    double mix_sol_gbps, mix_sol_pct;     /* SOL for the byte mix (sol.h) and % of it */
    char message[512];    /* verdict reason / skip reason / failure text */
} kb_result;

typedef struct {
    kb_result *v;
    size_t n, cap;
} kb_results;

void kb_results_init(kb_results *r);
kb_status kb_results_push(kb_results *r, const kb_result *x, kb_err *e);
void kb_results_free(kb_results *r);

/* Write all results: CSV through libcsv, JSON by hand (an array of objects,
 * NaN as null). Written to a temp file and renamed into place. */
kb_status kb_results_write_csv(const kb_results *r, const char *path, kb_err *e);
kb_status kb_results_write_json(const kb_results *r, const char *path, kb_err *e);
/* The pieces of those files, for writers that add rows as cases finish
 * (rowfile.h): the CSV header line, one CSV row, one JSON object. */
void kb_results_csv_header(FILE *f);
void kb_result_csv_row(FILE *f, const kb_result *x);
void kb_result_json_object(FILE *f, const kb_result *x);
/* s as a JSON string, always valid UTF-8: bytes that are not part of a
 * well-formed UTF-8 sequence become \u00XX (their Latin-1 reading). */
void kb_json_string(FILE *f, const char *s);
/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none (a NUL
 * included). Writers of text that must be UTF-8 (JSON, report.md/.html)
 * decide with it what to do with a byte that is not. */
size_t kb_utf8_len(const char *s);
/* Read a results CSV (ours or a peer's); header names columns, order free,
 * unknown columns ignored; required: benchmark,backend,dtype,M,N,median_ms.
 * Errors name the file and line. Appends to r. */
kb_status kb_results_read_csv(const char *path, kb_results *r, kb_err *e);

/* One line per result, as --print-benchmark-result shows it. */
void kb_result_print(FILE *f, const kb_result *x);

#ifdef __cplusplus
}
#endif
#endif
