/* The tuning cache's shape bucket (tunekey.h). */
#include "tunekey.h"

#include <stdio.h>

int64_t kb_tune_rows_class(int64_t M)
{
    int64_t p2 = 1;
    while (p2 < M && p2 < ((int64_t)1 << 62)) p2 <<= 1;
    return p2;
}

void kb_tune_bucket(kb_dtype dtype, int64_t M, int64_t N, int64_t K, char *buf, size_t len)
{
    const int64_t vec = 16 / (int64_t)kb_dtype_size(dtype);
    const int n = snprintf(buf, len, "N<=%lld%s,M<=%lld", (long long)kb_tune_rows_class(N),
                           N % vec == 0 ? "" : ",unaligned", (long long)kb_tune_rows_class(M));
    if (K > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ",K<=%lld", (long long)kb_tune_rows_class(K));
}
