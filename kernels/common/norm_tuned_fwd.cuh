/* Forward kernels of the tuned RMSNorm / LayerNorm (norm_tuned.cuh).
 *
 * fwd_reg: a CTA (or cluster) loops over groups of R rows, g = its index,
 * g += the number of CTAs (clusters); the grid is either one CTA per group
 * or persistent (SMs x occupancy), see the launch. A thread holds its NV
 * packs of the row raw in registers (128-bit __ldcs loads); RMS: sum of
 * squares; LN: mean, then the centred sum of squares from the registers
 * (exact two-pass); rstd = 1/sqrt(s/N + eps); y = (x - mean) * rstd * w
 * streamed out (__stcs), w (fp32) by 128-bit __ldg (L1).
 * The next group's packs are in flight while this one is reduced and
 * written, so a CTA always has loads outstanding:
 *   DB = false (rolling): pack i of the next group is loaded into pack i's
 *     registers right after pack i of this group is stored (no extra
 *     registers; the loads overlap the stores, not the reduction);
 *   DB = true (double buffer): the next group's packs are loaded into a
 *     second set of registers before this group's reduction starts (twice
 *     the registers; the reduction's barriers and DSMEM exchange are then
 *     hidden behind loads).
 * Reductions: row_reducer (norm_tuned_dev.cuh): shuffles within a warp,
 * one __syncthreads only when a row spans several warps, an mbarrier
 * exchange across a cluster.
 *
 * fwd_loop (fallback, any N): one CTA per row, the row re-read per pass
 * (RMS 2, LN 3; L2 serves the re-reads while rows in flight fit in it). */
#ifndef KB_NORM_TUNED_FWD_CUH
#define KB_NORM_TUNED_FWD_CUH

#include "norm_tuned_dev.cuh"

namespace {

struct fwd_args {
    const void *x;
    const float *w;
    void *y;
    int64_t M, N, ngroups; /* ngroups = ceil(M / R) (register kernel), M (fallback) */
    int cl;
};

/* The kernel body; fwd_reg below wraps it with or without a register cap. */
template <typename T, bool LN, int NV, bool AL, bool DB>
__device__ __forceinline__ void fwd_reg_body(const fwd_args &a)
{
    constexpr int VEC = vec_of<T>();
    __shared__ red_smem<1> rsm;
    const lane_map lm(a.N, VEC, a.cl);
    row_reducer<1> reduce(rsm, lm.tpr, lm.cl);
    const float n = (float)a.N;
    const float *wb = a.w + lm.first;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    const T *x = static_cast<const T *>(a.x);
    T *y = static_cast<T *>(a.y);
    const int64_t step = gridDim.x / lm.cl, R = blockDim.y;
    int64_t g = blockIdx.x / lm.cl;

    /* Packs of group gg for this thread: count (lm.mine or 0) and offset. */
    auto locate = [&](int64_t gg, int &cnt, int64_t &off) {
        const int64_t row = gg * R + threadIdx.y;
        const bool ok = gg < a.ngroups && row < a.M;
        cnt = ok ? lm.mine : 0;
        off = (ok ? row : 0) * a.N + lm.first;
    };
    auto load = [&](uint4 &dst, int i, int cnt, int64_t off) {
        dst = i < cnt ? ld_pack<T, AL, true>(x + off + i * lm.stride, lm.valid(i))
                      : make_uint4(0u, 0u, 0u, 0u);
    };

    int cnt;
    int64_t off;
    locate(g, cnt, off);
    uint4 xv[NV], xn[DB ? NV : 1];
#pragma unroll
    for (int i = 0; i < NV; i++) load(xv[i], i, cnt, off);

    for (; g < a.ngroups; g += step) {
        int cntn;
        int64_t offn;
        locate(g + step, cntn, offn);
        if constexpr (DB) {
#pragma unroll
            for (int i = 0; i < NV; i++) load(xn[i], i, cntn, offn);
        }
        float mean = 0.f, s[1] = {0.f}, f[VEC];
        if constexpr (LN) {
#pragma unroll
            for (int i = 0; i < NV; i++) {
                unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j];
            }
            reduce(s);
            mean = s[0] / n;
            s[0] = 0.f;
#pragma unroll
            for (int i = 0; i < NV; i++)
                if (i < cnt) {
                    unpack<T>(xv[i], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        if (AL || j < lm.valid(i)) s[0] += (f[j] - mean) * (f[j] - mean);
                }
        } else {
#pragma unroll
            for (int i = 0; i < NV; i++) {
                unpack<T>(xv[i], f);
#pragma unroll
                for (int j = 0; j < VEC; j++) s[0] += f[j] * f[j];
            }
        }
        reduce(s);
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (i < cnt) {
                float wv[VEC];
                unpack<T>(xv[i], f);
                ld_w<VEC, AL>(wb + i * lm.stride, lm.valid(i), w16, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
                st_pack<T, AL>(y + off + i * lm.stride, repack<T>(f), lm.valid(i));
            }
            if constexpr (DB) xv[i] = xn[i];
            else load(xv[i], i, cntn, offn);
        }
        cnt = cntn;
        off = offn;
    }
    reduce.finish();
}

/* NV <= 4 with 128-bit packs (double-buffered too) fits 64 registers:
 * capped, so 1024-thread blocks run; bigger or element-wise (AL = false,
 * not tuned for speed) kernels are left uncapped (a cap there makes ptxas
 * trade registers for spills). */
template <int NV, bool AL> constexpr bool fwd_capped() { return AL && NV <= 4; }

template <typename T, bool LN, int NV, bool AL, bool DB>
__global__ void __launch_bounds__(1024) fwd_reg_cap(const fwd_args a)
{
    fwd_reg_body<T, LN, NV, AL, DB>(a);
}

template <typename T, bool LN, int NV, bool AL, bool DB> __global__ void fwd_reg_free(const fwd_args a)
{
    fwd_reg_body<T, LN, NV, AL, DB>(a);
}

typedef void (*fwd_fn)(const fwd_args);

template <typename T, bool LN, int NV, bool AL, bool DB> constexpr fwd_fn fwd_reg()
{
    if constexpr (fwd_capped<NV, AL>()) return fwd_reg_cap<T, LN, NV, AL, DB>;
    else return fwd_reg_free<T, LN, NV, AL, DB>;
}

template <typename T, bool LN, bool AL> __global__ void fwd_loop(const fwd_args a)
{
    constexpr int VEC = vec_of<T>();
    __shared__ red_smem<1> rsm;
    const int tpr = (int)blockDim.x;
    row_reducer<1> reduce(rsm, tpr, 1);
    const float n = (float)a.N;
    const bool w16 = (reinterpret_cast<uintptr_t>(a.w) & 15u) == 0;
    for (int64_t row = blockIdx.x; row < a.M; row += gridDim.x) {
        const T *xr = static_cast<const T *>(a.x) + row * a.N;
        float mean = 0.f, s[1] = {0.f}, f[VEC];
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
#pragma unroll
            for (int j = 0; j < VEC; j++) s[0] += LN ? f[j] : f[j] * f[j];
        }
        reduce(s);
        if constexpr (LN) {
            mean = s[0] / n;
            s[0] = 0.f;
            for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
                const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
                unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (j < valid) s[0] += (f[j] - mean) * (f[j] - mean);
            }
            reduce(s);
        }
        const float rstd = 1.f / sqrtf(s[0] / n + KB_NORM_EPS);
        T *yr = static_cast<T *>(a.y) + row * a.N;
        for (int64_t e = threadIdx.x * VEC; e < a.N; e += (int64_t)tpr * VEC) {
            const int valid = (int)(a.N - e < VEC ? a.N - e : VEC);
            float wv[VEC];
            unpack<T>(ld_pack<T, AL, false>(xr + e, valid), f);
            ld_w<VEC, AL>(a.w + e, valid, w16, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) f[j] = (f[j] - mean) * rstd * wv[j];
            st_pack<T, AL>(yr + e, repack<T>(f), valid);
        }
    }
}

} /* namespace */
#endif
