/* The value of every input element, as a pure function of (seed, tensor,
 * index): shared by the GPU generator (inputs.cu) and the host copy the unit
 * tests use (inputs_host.c). C and CUDA.
 *
 *   key(seed, t) = mix(mix(seed) + t * golden)        one key per tensor
 *   h(i)         = mix(key + (i + 1) * golden)        splitmix64 step i
 *   randn        = Box-Muller on the top/bottom 24 bits of h, cosine branch
 *   column       = floor(h * N / 2^64)                uniform in [0, N)
 *
 * Input kinds change x only (dy, w, dloss, target and GLU's up are SPEC's
 * in every kind); r is the row, j the column, z = randn(h_x(r*N + j)); the
 * scale by the benchmark's kb_x_dist (logits, norms, GLU activations):
 *   randn     0.1 z (cross entropy, softmax), z (norms, GLU gate)  SPEC
 *   shifted   1000 + z: exp(x) overflows fp32 without max subtraction.
 *             z has sigma 1, not 0.1, so that the row keeps a spread once
 *             stored (bf16's spacing at 1000 is 4, fp16's 0.5)
 *   wide      20 z (near one-hot probabilities, losses far from log N;
 *             GLU: tanh and sigmoid saturate, exp(-x) overflows fp32);
 *             1000 z for the norms (sums of squares past fp16's range)
 *   masked    -inf where bit 63 of h_mask(r*N + j) is set (about half the
 *             row), except at the row's anchor column (the target for cross
 *             entropy, a uniform column for softmax: the same hash), so no
 *             row is masked whole and the target never is; 0.1 z elsewhere
 *   constant  every 4th row (r % 4 == 0) all zeros, the others one value
 *             randn(h_row(r)) repeated: variance exactly 0
 *   small     1e-3 z: variance 1e-6, the size of eps */
#ifndef KB_INPUT_VALUES_H
#define KB_INPUT_VALUES_H

#include <math.h>
#include <stdint.h>

#include "registry.h"

#if defined(__CUDACC__)
#define KB_IV static __host__ __device__ __forceinline__
#else
#define KB_IV static inline
#endif

/* Tensor ids: part of the generator's key, so never renumber them. */
enum { KB_TID_X = 1, KB_TID_TARGET = 2, KB_TID_DLOSS = 3, KB_TID_DY = 4, KB_TID_W = 5,
       KB_TID_MASK = 6, KB_TID_ROW = 7, KB_TID_UP = 8, KB_TID_WGU = 9, KB_TID_WD = 10,
       KB_TID_RES = 11, KB_TID_DRES = 12 };

#define KB_GOLDEN 0x9e3779b97f4a7c15ull /* 2^64 / phi */

KB_IV uint64_t kb_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

KB_IV uint64_t kb_tensor_key(uint64_t seed, int tid)
{
    return kb_mix64(kb_mix64(seed) + (uint64_t)tid * KB_GOLDEN);
}

KB_IV uint64_t kb_elem_hash(uint64_t key, int64_t i)
{
    return kb_mix64(key + ((uint64_t)i + 1u) * KB_GOLDEN);
}

/* Box-Muller with u1 in (0, 1] (so log(u1) is finite, |z| <= 5.77) and u2
 * in [0, 1); both exact 24-bit fractions. The device uses cospif; the host
 * copy (unit tests only) cos(2 pi u2), which may differ in the last bit. */
KB_IV float kb_randn_of(uint64_t h)
{
    const float u1 = (float)((uint32_t)(h >> 40) + 1u) * 0x1p-24f;
    const float u2 = (float)((uint32_t)(h >> 8) & 0xffffffu) * 0x1p-24f;
#if defined(__CUDA_ARCH__)
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
#else
    return sqrtf(-2.0f * logf(u1)) * (float)cos(6.283185307179586 * (double)u2);
#endif
}

/* floor(h * N / 2^64): uniform in [0, N). */
KB_IV int64_t kb_column_of(uint64_t h, int64_t N)
{
#if defined(__CUDA_ARCH__)
    return (int64_t)__umul64hi(h, (uint64_t)N);
#else
    return (int64_t)(((unsigned __int128)h * (uint64_t)N) >> 64);
#endif
}

typedef struct {
    uint64_t x, target, mask, row; /* tensor keys */
} kb_input_keys;

KB_IV kb_input_keys kb_input_keys_of(uint64_t seed)
{
    kb_input_keys k = {kb_tensor_key(seed, KB_TID_X), kb_tensor_key(seed, KB_TID_TARGET),
                       kb_tensor_key(seed, KB_TID_MASK), kb_tensor_key(seed, KB_TID_ROW)};
    return k;
}

/* x[r, j] before rounding to the dtype; dist: the benchmark's kb_x_dist. */
KB_IV float kb_input_x(kb_inputs kind, kb_x_dist dist, const kb_input_keys *k, int64_t r,
                       int64_t j, int64_t N)
{
    const int64_t i = r * N + j;
    const int norm = dist == KB_X_NORM, unit = dist != KB_X_LOGITS;
    switch (kind) {
    case KB_INPUTS_SHIFTED: return 1000.0f + kb_randn_of(kb_elem_hash(k->x, i));
    case KB_INPUTS_WIDE: return (norm ? 1000.0f : 20.0f) * kb_randn_of(kb_elem_hash(k->x, i));
    case KB_INPUTS_MASKED:
        if (j != kb_column_of(kb_elem_hash(k->target, r), N) && (kb_elem_hash(k->mask, i) >> 63))
            return -INFINITY;
        return 0.1f * kb_randn_of(kb_elem_hash(k->x, i));
    case KB_INPUTS_CONSTANT: return r % 4 == 0 ? 0.0f : kb_randn_of(kb_elem_hash(k->row, r));
    case KB_INPUTS_SMALL: return 1e-3f * kb_randn_of(kb_elem_hash(k->x, i));
    default: return (unit ? 1.0f : 0.1f) * kb_randn_of(kb_elem_hash(k->x, i));
    }
}

#endif
