/* Inputs on which a CPU reference can be checked exactly, shared by the unit
 * suites and the ops' own suites (kernels/<op>/test_<op>.c): deterministic
 * multiples of 2^-8 in [-2, 2). They are exact in fp32 and fp16, not always
 * in bf16 (9 significant bits: a test that needs dtype values rounds them),
 * and x +- h stays exact in float for the finite-difference steps. Arrays
 * come from malloc/calloc, checked; the caller frees them. */
#ifndef KB_QFILL_H
#define KB_QFILL_H
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

static inline float kb_qrand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int)((*s >> 33) % 1024u) - 512) / 256.0f;
}

/* n values from kb_qrand, the stream seeded with seed. */
static inline float *kb_qfill(int64_t n, uint64_t seed)
{
    float *a = malloc((size_t)n * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (int64_t i = 0; i < n; i++) a[i] = kb_qrand(&seed);
    return a;
}

static inline float *kb_qzeros(int64_t n)
{
    float *a = calloc((size_t)n, sizeof *a);
    ck_assert_ptr_nonnull(a);
    return a;
}

#endif
