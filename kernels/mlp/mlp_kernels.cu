/* The elementwise kernels of mlp_forward's own (kernels/mlp/mlp.h):
 *   kb_mlp_mul: out = a * b, [M, H] rows of stride H (cublaslt_epilogue's
 *   multiply after the GEMM applied GELU), 128-bit accesses where the
 *   pointers allow, one grid-stride loop; math in fp32, rounded once.
 * Limits: any n >= 0 elements, int64 indices; 256-thread CTAs, at most
 * 8 per SM (the loop strides past that: the multiply is a small share of
 * the block's time, so its launch is kept simple rather than tuned). */
#include "kb_cuda.cuh"
#include "mlp.h"

template <typename T>
static __global__ void k_mul(const T *a, const T *b, T *out, int64_t n)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = kb_from_float<T>(kb_to_float(a[i]) * kb_to_float(b[i]));
}

/* 8 bf16/fp16 per 16-byte vector. */
template <typename T>
static __global__ void k_mul_vec(const uint4 *a, const uint4 *b, uint4 *out, int64_t nvec)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride) {
        uint4 va = a[i], vb = b[i], vo;
        const T *pa = (const T *)&va, *pb = (const T *)&vb;
        T *po = (T *)&vo;
        for (int k = 0; k < (int)(16 / sizeof(T)); k++)
            po[k] = kb_from_float<T>(kb_to_float(pa[k]) * kb_to_float(pb[k]));
        out[i] = vo;
    }
}

extern "C" kb_status kb_mlp_mul(kb_dtype dt, const void *a, const void *b, void *out, int64_t n,
                                int sm_count, cudaStream_t s, kb_err *e)
{
    const int threads = 256;
    const int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 132) * 8;
    const size_t es = kb_dtype_size(dt);
    const int aligned = ((uintptr_t)a | (uintptr_t)b | (uintptr_t)out) % 16 == 0 &&
                        (n * (int64_t)es) % 16 == 0;
    const int64_t work = aligned ? n * (int64_t)es / 16 : n;
    int64_t blocks = kb_cdiv(work, threads);
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    KB_DISPATCH(dt, T, {
        if (aligned)
            k_mul_vec<T><<<(unsigned)blocks, threads, 0, s>>>((const uint4 *)a, (const uint4 *)b,
                                                              (uint4 *)out, work);
        else
            k_mul<T><<<(unsigned)blocks, threads, 0, s>>>((const T *)a, (const T *)b, (T *)out, n);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}
