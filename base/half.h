/* Host-side bf16/fp16 <-> float conversion (round to nearest even), for the
 * CPU reference checks, .npy dumps and unit tests. Bit-exact with the CUDA
 * intrinsics __float2bfloat16_rn / __float2half_rn for finite values. */
#ifndef KB_HALF_H
#define KB_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kbench.h"

static inline float kb_bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t kb_float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float kb_bf16_to_float(uint16_t h) { return kb_bits_to_float((uint32_t)h << 16); }

static inline uint16_t kb_float_to_bf16(float f)
{
    uint32_t u = kb_float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float kb_fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return kb_bits_to_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) { /* zero or subnormal: man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return kb_bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t kb_float_to_fp16(float f)
{
    uint32_t u = kb_float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;            /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;           /* overflow to inf */
    if (a < 0x38800000u) {                                 /* subnormal or zero */
        float v = kb_bits_to_float(a) * 16777216.0f;       /* scale by 2^24 */
        float r = nearbyintf(v);                           /* ties to even (default mode) */
        return sign | (uint16_t)r;
    }
    uint32_t man = a + 0xc8000fffu + ((a >> 13) & 1u);    /* rebias, round to nearest even */
    return sign | (uint16_t)(man >> 13);
}

/* Element i of a dtype array as float. */
static inline float kb_load_as_float(kb_dtype d, const void *p, size_t i)
{
    switch (d) {
    case KB_BF16: return kb_bf16_to_float(((const uint16_t *)p)[i]);
    case KB_FP16: return kb_fp16_to_float(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* Round v to dtype and back: what a dtype-stored value of v reads as. */
static inline float kb_round_to(kb_dtype d, float v)
{
    switch (d) {
    case KB_BF16: return kb_bf16_to_float(kb_float_to_bf16(v));
    case KB_FP16: return kb_fp16_to_float(kb_float_to_fp16(v));
    default: return v;
    }
}

#endif
