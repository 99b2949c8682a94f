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
#include <string.h>

#include <type_traits>

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

/* ---- 16-byte packs ---------------------------------------------------------
 * The one 16-byte pack: 8 bf16/fp16 or 4 fp32 elements, 16-byte aligned in
 * memory (N * sizeof(T) % 16 == 0 and the base pointer aligned: kb_aligned16).
 * Two views of the same bytes:
 *   kb_vec<T>   element view (v[k]), for code that converts element by element;
 *   uint4       raw view, for code that holds packs in registers: four 32-bit
 *               registers (an element view of 16-bit types can take eight),
 *               converted to / from fp32 where used by kb_unpack / kb_pack,
 *               two elements a word (low half = lower address).
 * kb_load_vec / kb_store_vec go through the raw view: a plain struct copy lets
 * nvcc 13 split a 16-byte store into four 4-byte ones, and read shared memory
 * 16 bits at a time. */
template <typename T> struct alignas(16) kb_vec {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

static inline __host__ __device__ bool kb_aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* Word w's low / high element as fp32; two fp32 rounded into one word. */
template <typename T> __device__ __forceinline__ float kb_word_lo(uint32_t w)
{
    if constexpr (std::is_same<T, kb_bf16>::value)
        return __uint_as_float(w << 16);
    else
        return __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
}
template <typename T> __device__ __forceinline__ float kb_word_hi(uint32_t w)
{
    if constexpr (std::is_same<T, kb_bf16>::value)
        return __uint_as_float(w & 0xffff0000u);
    else
        return __half2float(__ushort_as_half((unsigned short)(w >> 16)));
}
/* One packing conversion (F2FP) per word. */
template <typename T> __device__ __forceinline__ uint32_t kb_word_of(float lo, float hi)
{
    uint32_t u;
    if constexpr (std::is_same<T, kb_bf16>::value) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        memcpy(&u, &h, 4);
    } else {
        const __half2 h = __floats2half2_rn(lo, hi);
        memcpy(&u, &h, 4);
    }
    return u;
}

template <typename T> __device__ __forceinline__ void kb_unpack(uint4 u, float (&f)[kb_vec<T>::n])
{
    if constexpr (sizeof(T) == 4) {
        f[0] = __uint_as_float(u.x), f[1] = __uint_as_float(u.y);
        f[2] = __uint_as_float(u.z), f[3] = __uint_as_float(u.w);
    } else {
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if constexpr (std::is_same<T, kb_bf16>::value) {
                f[2 * i] = kb_word_lo<T>(w[i]), f[2 * i + 1] = kb_word_hi<T>(w[i]);
            } else { /* both halves in one conversion (the tuned norms' SASS) */
                __half2 h;
                memcpy(&h, &w[i], 4);
                const float2 v = __half22float2(h);
                f[2 * i] = v.x, f[2 * i + 1] = v.y;
            }
        }
    }
}

template <typename T> __device__ __forceinline__ uint4 kb_pack(const float (&f)[kb_vec<T>::n])
{
    if constexpr (sizeof(T) == 4)
        return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                          __float_as_uint(f[3]));
    else
        return make_uint4(kb_word_of<T>(f[0], f[1]), kb_word_of<T>(f[2], f[3]),
                          kb_word_of<T>(f[4], f[5]), kb_word_of<T>(f[6], f[7]));
}

/* Raw loads: read-only path (ld.global.nc), or streaming (evict-first) for
 * data read once. Stores: write-back, or streaming for data written once. */
template <typename T> __device__ __forceinline__ uint4 kb_ld128(const T *p)
{
    return __ldg(reinterpret_cast<const uint4 *>(p));
}
template <typename T> __device__ __forceinline__ uint4 kb_ld128_stream(const T *p)
{
    return __ldcs(reinterpret_cast<const uint4 *>(p));
}
/* L2 evict-last policy operand (create once per kernel), and a read-only
 * 16-byte load under it: for a first pass whose bytes a later pass of the
 * same CTA re-reads from L2 (Triton's eviction_policy="evict_last"); that
 * later pass then reads with kb_ld128_stream. */
__device__ __forceinline__ uint64_t kb_policy_evict_last()
{
    uint64_t p;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
template <typename T> __device__ __forceinline__ uint4 kb_ld128_last(const T *p, uint64_t pol)
{
    uint4 u;
    asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
        : "l"(p), "l"(pol));
    return u;
}
/* How a load treats the caches. STREAM: read once (evict-first, ld.cs).
 * KEEP: read-only path, default caching. LAST: L2 evict-last policy
 * (operand from kb_policy_evict_last), for a first pass whose bytes a later
 * pass re-reads from L2; that later pass then reads with STREAM. Only the
 * 16-byte load below honours LAST; kb_rows.cuh's one-element loads read a
 * LAST slot as KEEP (no cache-hint form for them there). */
enum kb_cache { KB_LD_KEEP, KB_LD_STREAM, KB_LD_LAST };

/* One 16-byte load under cache treatment C (pol: LAST's policy, else unused). */
template <kb_cache C, typename T> __device__ __forceinline__ uint4 kb_ld128_c(const T *p, uint64_t pol)
{
    if constexpr (C == KB_LD_STREAM) return kb_ld128_stream(p);
    else if constexpr (C == KB_LD_LAST) return kb_ld128_last(p, pol);
    else return kb_ld128(p);
}
/* A tuned kernel's `hint` parameter on its 16-byte loads and stores (GLU,
 * rope): HINT 0 streams both (evict-first), 1 streams the loads and stores
 * plainly, 2 loads and stores plainly. */
template <int HINT> __device__ __forceinline__ uint4 kb_ld128_hint(const uint4 *p)
{
    if constexpr (HINT <= 1)
        return __ldcs(p);
    else
        return *p;
}
template <int HINT> __device__ __forceinline__ void kb_st128_hint(uint4 *p, const uint4 &v)
{
    if constexpr (HINT == 0)
        __stcs(p, v);
    else
        *p = v;
}
template <typename T> __device__ __forceinline__ void kb_st128(T *p, uint4 u)
{
    __stwb(reinterpret_cast<uint4 *>(p), u);
}
template <typename T> __device__ __forceinline__ void kb_st128_stream(T *p, uint4 u)
{
    __stcs(reinterpret_cast<uint4 *>(p), u);
}
/* Per-thread asynchronous copy of 16 bytes into shared memory (cp.async,
 * L1 bypassed): the bytes are in flight without holding registers, so a
 * kernel can prefetch a whole next row group while it reduces the current
 * one, or stage a whole row. kb_cp_async16n reads the first `bytes` (0-16)
 * and zero-fills the rest (a pack at the end of a tensor, whose 16 bytes
 * would run past it); kb_cp_async16 all 16, or with ok = false none (the
 * destination zero-filled; p must still be a valid address). Completion:
 * kb_cp_async_commit() closes the thread's group, kb_cp_async_wait_all()
 * waits for its groups; a thread that reads back only its own copies needs
 * no barrier. */
template <typename T> __device__ __forceinline__ void kb_cp_async16n(void *smem, const T *p, int bytes)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(p), "r"(bytes)
                 : "memory");
#else
    unsigned char *d = static_cast<unsigned char *>(smem);
    const unsigned char *q = reinterpret_cast<const unsigned char *>(p);
    for (int i = 0; i < 16; i++) d[i] = i < bytes ? q[i] : 0;
#endif
}
template <typename T> __device__ __forceinline__ void kb_cp_async16(void *smem, const T *p, bool ok)
{
    kb_cp_async16n(smem, p, ok ? 16 : 0);
}
__device__ __forceinline__ void kb_cp_async_commit()
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void kb_cp_async_wait_all()
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

/* Written once. STREAM: evict-first (.cs), which keeps the L2 for rows a
 * kernel re-reads (softmax's two-pass loop, the norms' reload kernels);
 * otherwise a plain write-back store, cheaper in a single-pass kernel
 * (docs/dev/device-layer.md, "Cache treatments": both measured on the H200). */
template <bool STREAM, typename W> __device__ __forceinline__ void kb_st_op(W *p, W v)
{
    if constexpr (STREAM)
        __stcs(p, v);
    else
        __stwb(p, v);
}

template <typename T> __device__ __forceinline__ kb_vec<T> kb_load_vec(const T *p)
{
    kb_vec<T> r;
    *reinterpret_cast<uint4 *>(&r) = kb_ld128(p);
    return r;
}

template <typename T> __device__ __forceinline__ kb_vec<T> kb_load_vec_stream(const T *p)
{
    kb_vec<T> r;
    *reinterpret_cast<uint4 *>(&r) = kb_ld128_stream(p);
    return r;
}

template <typename T> __device__ __forceinline__ void kb_store_vec(T *p, const kb_vec<T> &v)
{
    kb_st128(p, *reinterpret_cast<const uint4 *>(&v));
}

template <typename T> __device__ __forceinline__ void kb_store_vec_stream(T *p, const kb_vec<T> &v)
{
    kb_st128_stream(p, *reinterpret_cast<const uint4 *>(&v));
}

/* n fp32 values (a multiple of 4) at a 16-byte aligned p, as float4s. */
template <int n> __device__ __forceinline__ void kb_ld_f32(const float *p, float (&f)[n])
{
#pragma unroll
    for (int c = 0; c < n / 4; c++) {
        const float4 q = __ldg(reinterpret_cast<const float4 *>(p) + c);
        f[4 * c] = q.x, f[4 * c + 1] = q.y, f[4 * c + 2] = q.z, f[4 * c + 3] = q.w;
    }
}

template <int n> __device__ __forceinline__ void kb_st_f32(float *p, const float (&f)[n])
{
#pragma unroll
    for (int c = 0; c < n / 4; c++)
        __stwb(reinterpret_cast<float4 *>(p) + c,
               make_float4(f[4 * c], f[4 * c + 1], f[4 * c + 2], f[4 * c + 3]));
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

/* Register caps (__maxnreg__), for every kernel that holds rows in
 * registers. Left alone, ptxas spends registers on instruction-level
 * parallelism (converting a whole held row to fp32 ahead of use, say) and
 * halves occupancy; the cap is the held data (32-bit words) plus what the
 * rest of the kernel needs, checked spill-free with -Xptxas -v (and at run
 * time: a kernel using local memory is never launched). */
constexpr int kb_reg_cap(int data_words, int rest) { return (data_words + rest + 7) / 8 * 8; }

#endif
