/* The rotation of one (d, d + D/2) pair, shared by the rope backends, in
 * fp32 (the backends' opmath; the reference is double). lo = x[d], hi =
 * x[d+D/2] (the forward) or g[d], g[d+D/2] (the backward), with cos and sin
 * at both dimensions (the halves are not assumed equal).
 *   forward:  olo = lo*clo - hi*slo,   ohi = hi*chi + lo*shi
 *   backward: olo = lo*clo + hi*shi,   ohi = hi*chi - lo*slo   (the transpose) */
#ifndef KB_ROPE_MATH_CUH
#define KB_ROPE_MATH_CUH

#include "kb_cuda.cuh"
#include "rope.h"

static_assert(KB_ROPE_HEAD_DIM % 2 == 0, "head_dim pairs d with d + D/2: it must be even");

template <bool BWD>
__device__ __forceinline__ void rope_pair(float lo, float hi, float clo, float chi, float slo,
                                          float shi, float &olo, float &ohi)
{
    if constexpr (BWD) {
        olo = lo * clo + hi * shi;
        ohi = hi * chi - lo * slo;
    } else {
        olo = lo * clo - hi * slo;
        ohi = hi * chi + lo * shi;
    }
}

#endif
