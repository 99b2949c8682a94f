/* The tuning cache's N bucket (tunekey.h). */
#include "tunekey.h"

#include <stdio.h>

void kb_tune_bucket(kb_dtype dtype, int64_t M, int64_t N, char *buf, size_t len)
{
    int64_t p2 = 1;
    while (p2 < N && p2 < ((int64_t)1 << 62)) p2 <<= 1;
    const int64_t vec = 16 / (int64_t)kb_dtype_size(dtype);
    snprintf(buf, len, "N<=%lld%s%s", (long long)p2, N % vec == 0 ? "" : ",unaligned",
             M >= KB_TUNE_TALL_M ? ",tall" : "");
}
