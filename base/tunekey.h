/* The tuning cache's shape bucket (CUDA-free, in kb_base so that kbench
 * --describe can list every registered shape's bucket for ci/tune). */
#ifndef KB_TUNEKEY_H
#define KB_TUNEKEY_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bucket of a cache key: N rounded up to a power of two, ",unaligned" when N
 * is not a multiple of the 16-byte vector width of dtype, then M rounded up
 * to a power of two: "N<=4096,M<=32768", "N<=65536,unaligned,M<=4096". M is
 * part of the key because the best launch follows the grid as much as the
 * row (measured on the H200: a configuration tuned at 8192x262144 costs
 * 1024x151936 8-13 %, one tuned at 32768x32768 costs 1x32768 up to 30 %).
 * A problem without an entry of its own takes the entry of an M class
 * within two powers of two, the larger first (kb_tuned_setup), else the
 * heuristic. A 3-D problem (K > 0: rope's kv heads) adds K rounded up to a
 * power of two, ",K<=8": rope's 8192x32x8 and 8192x32x32 move a third more
 * and less of their bytes through k, and one entry must not serve both. */
int64_t kb_tune_rows_class(int64_t M); /* M rounded up to a power of two */
void kb_tune_bucket(kb_dtype dtype, int64_t M, int64_t N, int64_t K, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
