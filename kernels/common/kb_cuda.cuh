/* Device helpers shared by every backend: dtype conversion, 128-bit vector
 * access, warp and block reductions, dtype dispatch. Header-only so each
 * kernel file stays self-contained for the compiler. */
#ifndef KB_CUDA_CUH
#define KB_CUDA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kbench.h"

/* kb_impl.kernels of a backend that always launches N kernels per call. */
template <int N> static int kb_kernels_fixed(const kb_problem *, const void *) { return N; }

typedef __nv_bfloat16 kb_bf16;
typedef __half kb_fp16;

/* ---- scalar conversion: all math is fp32 ------------------------------- */
__device__ __forceinline__ float kb_to_float(float v) { return v; }
__device__ __forceinline__ float kb_to_float(kb_bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float kb_to_float(kb_fp16 v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T kb_from_float(float v);
template <> __device__ __forceinline__ float kb_from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ kb_bf16 kb_from_float<kb_bf16>(float v)
{
    return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ kb_fp16 kb_from_float<kb_fp16>(float v)
{
    return __float2half_rn(v);
}

/* ---- 128-bit vectors ----------------------------------------------------
 * kb_vec<T> is 16 bytes: 8 bf16/fp16 or 4 fp32. Use when the row start is
 * 16-byte aligned (N * sizeof(T) % 16 == 0 and the base pointer aligned). */
template <typename T> struct alignas(16) kb_vec {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

template <typename T> __device__ __forceinline__ kb_vec<T> kb_load_vec(const T *p)
{
    kb_vec<T> r;
    *reinterpret_cast<uint4 *>(&r) = __ldg(reinterpret_cast<const uint4 *>(p));
    return r;
}

/* Streaming load: data read once, keep it out of L1 (evict-first in L2). */
template <typename T> __device__ __forceinline__ kb_vec<T> kb_load_vec_stream(const T *p)
{
    kb_vec<T> r;
    *reinterpret_cast<uint4 *>(&r) = __ldcs(reinterpret_cast<const uint4 *>(p));
    return r;
}

/* Through an explicit uint4 store: a plain struct assignment lets nvcc 13 split
 * the 16-byte store into four 4-byte ones. */
template <typename T> __device__ __forceinline__ void kb_store_vec(T *p, const kb_vec<T> &v)
{
    __stwb(reinterpret_cast<uint4 *>(p), *reinterpret_cast<const uint4 *>(&v));
}

template <typename T> __device__ __forceinline__ void kb_store_vec_stream(T *p, const kb_vec<T> &v)
{
    __stcs(reinterpret_cast<uint4 *>(p), *reinterpret_cast<const uint4 *>(&v));
}

/* ---- reductions ----------------------------------------------------------
 * Warp reductions by butterfly shuffles: every lane ends with the result. */
__device__ __forceinline__ float kb_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float kb_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block-wide reductions; every thread gets the result. scratch holds at
 * least 32 floats; blockDim.x a multiple of 32. Contains __syncthreads, so
 * all threads of the block must call it. */
__device__ __forceinline__ float kb_block_sum(float v, float *scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = kb_warp_sum(v);
    __syncthreads(); /* scratch may still be read by a previous call */
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : 0.f;
    return kb_warp_sum(v);
}

__device__ __forceinline__ float kb_block_max(float v, float *scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = kb_warp_max(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : -INFINITY;
    return kb_warp_max(v);
}

/* ---- dtype dispatch --------------------------------------------------------
 * KB_DISPATCH(p->dtype, T, { launch<T>(...); }) instantiates the body once
 * per storage type. */
#define KB_DISPATCH(dtype, T, ...)                                            \
    switch (dtype) {                                                          \
    case KB_BF16: { typedef kb_bf16 T; __VA_ARGS__; } break;                  \
    case KB_FP16: { typedef kb_fp16 T; __VA_ARGS__; } break;                  \
    case KB_FP32: { typedef float T; __VA_ARGS__; } break;                    \
    default: break;                                                           \
    }

static inline __host__ __device__ int64_t kb_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
