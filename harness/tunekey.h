/* The tuning cache's N bucket (CUDA-free, in kb_base so that kbench
 * --describe can list every registered shape's bucket for ci/tune). */
#ifndef KB_TUNEKEY_H
#define KB_TUNEKEY_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* N bucket of a cache key: N rounded up to a power of two, plus whether N is
 * a multiple of the 16-byte vector width of dtype, plus ",tall" when M >=
 * KB_TUNE_TALL_M: "N<=4096", "N<=4096,unaligned", "N<=512,tall". Tall
 * problems have their own entries because the best grid differs (measured on
 * the H200: norm forward at 576000x512 gains 6 % from a non-persistent grid
 * that costs 32768x512 3 %); without one they use the plain entry. */
#define KB_TUNE_TALL_M 262144
void kb_tune_bucket(kb_dtype dtype, int64_t M, int64_t N, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
