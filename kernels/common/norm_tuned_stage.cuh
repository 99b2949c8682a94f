/* fwd_stage: the tuned RMSNorm / LayerNorm forward with rows staged in
 * shared memory by bulk asynchronous copies (reload = 2, norm_tuned.cuh).
 *
 * Why: the register kernel (fwd_reg) keeps a CTA's next rows in flight in
 * registers, so the bytes in flight per SM are bounded by the register
 * file and the occupancy it leaves; on mid-length rows (2K-32K) that kept
 * it 3-8 % under torch.compile's one-row-per-program Triton kernel
 * (kernels/README.md). Here the TMA engine moves the rows: thread 0 issues
 * one cp.async.bulk per row group into a ring of S stage buffers, each
 * completing on its own mbarrier, so S groups per CTA are in flight at any
 * time whatever the register count, and the compute threads read the row
 * from shared memory as often as they need (no re-read from L2).
 *
 * Strategy: persistent grid (occ CTAs per SM, from the occupancy
 * calculator with the stage buffers' dynamic shared memory); CTA b takes
 * row groups g = b, b + grid, ...; a group is R consecutive rows (one
 * contiguous copy of R*N elements; blockDim = (tpr, R), row y of the group
 * to threads (., y)). Per group: wait for its stage's mbarrier, reduce from
 * shared memory (RMS: sum of squares; LN: the mean of x - x[0], then the
 * centred sum of squares: exact two-pass, and a constant row gives exactly
 * its value as mean, so 0 out), then y = (x - mean) * rstd * w, stored
 * 128-bit (w fp32 by __ldg, L1), with evict-first (H = 0) or plain stores;
 * a barrier, and thread 0 refills the stage with group g + S*grid.
 *
 * Limits: aligned rows only (N % VEC == 0 and 16-byte aligned tensors: a
 * bulk copy moves 16-byte multiples between 16-byte aligned addresses);
 * S*R*N*sizeof(T) bytes of dynamic shared memory (at most the opt-in
 * limit, ~227 KB: bf16 rows up to ~56K elements with 2 stages); cluster 1;
 * a group's copy is at most R*N*sizeof(T) < 2^20 bytes (the mbarrier's
 * transaction count). sm_90 only. */
#ifndef KB_NORM_TUNED_STAGE_CUH
#define KB_NORM_TUNED_STAGE_CUH

#include "norm_tuned_fwd.cuh"

namespace {

constexpr int kMaxStages = 8;

template <typename T, bool LN, int H> __global__ void __launch_bounds__(1024) fwd_stage(const fwd_args a)
{
    constexpr int VEC = vec_of<T>();
    extern __shared__ __align__(128) unsigned char stage_mem[];
    __shared__ uint64_t bar[kMaxStages];
    __shared__ red_smem<1> rsm;
    const int tpr = (int)blockDim.x, R = (int)blockDim.y, S = a.stages;
    const int tid = (int)(threadIdx.y * blockDim.x + threadIdx.x);
    const int N = (int)a.N, npk = N / VEC;
    const float n = (float)a.N;
    const int64_t G = gridDim.x;
    const size_t row_bytes = (size_t)N * sizeof(T), stage_bytes = (size_t)R * row_bytes;
    const T *x = static_cast<const T *>(a.x);
    T *y = static_cast<T *>(a.y);
    row_reducer<1> reduce(rsm, tpr, 1);

    /* Thread 0: group g's rows (those below M) into stage s. */
    auto issue = [&](int64_t g, int s) {
        const int64_t r0 = g * R, left = a.M - r0;
        const unsigned bytes = (unsigned)((left < R ? left : R) * (int64_t)row_bytes);
        kb_mbar_arrive_expect(&bar[s], bytes);
        kb_bulk_g2s(stage_mem + (size_t)s * stage_bytes, x + r0 * a.N, bytes, &bar[s]);
    };
    if (tid == 0) {
        for (int s = 0; s < S; s++) kb_mbar_init(&bar[s], 1);
        kb_mbar_init_fence();
    }
    __syncthreads();
    if (tid == 0)
        for (int s = 0; s < S; s++)
            if (blockIdx.x + s * G < a.ngroups) issue(blockIdx.x + s * G, s);

    int s = 0;
    unsigned phase = 0;
    for (int64_t g = blockIdx.x; g < a.ngroups; g += G) {
        const int64_t row = g * R + threadIdx.y;
        const bool live = row < a.M;
        const uint4 *src = reinterpret_cast<const uint4 *>(stage_mem + (size_t)s * stage_bytes +
                                                           threadIdx.y * row_bytes);
        kb_mbar_wait(&bar[s], phase);
        float f[VEC], sum[1] = {0.f}, mean = 0.f;
        if constexpr (LN) {
            /* Shifted by the row's first element: exact for constant rows. */
            float k0 = 0.f;
            if (live) {
                kb_unpack<T>(src[0], f);
                k0 = f[0];
                for (int k = threadIdx.x; k < npk; k += tpr) {
                    kb_unpack<T>(src[k], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++) sum[0] += f[j] - k0;
                }
            }
            reduce(sum);
            mean = k0 + sum[0] / n;
            sum[0] = 0.f;
        }
        if (live)
            for (int k = threadIdx.x; k < npk; k += tpr) {
                kb_unpack<T>(src[k], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) sum[0] += (f[j] - mean) * (f[j] - mean);
            }
        reduce(sum);
        const float rstd = 1.f / sqrtf(sum[0] / n + KB_NORM_EPS);
        if (live) {
            T *dst = y + row * a.N;
            for (int k = threadIdx.x; k < npk; k += tpr) {
                float wv[VEC];
                kb_unpack<T>(src[k], f);
                ld_w<VEC, true>(a.w + k * VEC, VEC, true, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
                st_pack<T, true, H == 0>(dst + k * VEC, kb_pack<T>(f), VEC);
            }
        }
        /* Every thread is done with stage s: refill it. */
        __syncthreads();
        if (tid == 0 && g + S * G < a.ngroups) {
            kb_fence_proxy_async();
            issue(g + S * G, s);
        }
        if (++s == S) {
            s = 0;
            phase ^= 1u;
        }
    }
    reduce.finish();
}

/* The staged kernel for dtype d and hint (0 evict-first stores, 1 and 2
 * plain: the loads are bulk copies, so 2 is 1). */
template <bool LN> fwd_fn fwd_stage_kernel(kb_dtype d, int hint)
{
    fwd_fn f = nullptr;
    if (hint < 0 || hint > 2) return nullptr;
    KB_DISPATCH(d, T, { f = hint ? fwd_stage<T, LN, 1> : fwd_stage<T, LN, 0>; });
    return f;
}

} /* namespace */
#endif
