/* cross_entropy's GPU reference: the gold loss and dx (cross_entropy_ref.h),
 * row kernels on ref_rows.cuh's reductions. The backward's saved lse is the
 * generic kb_ref_gpu_saved's (the descriptor's tensor bits). */
#include "cross_entropy_ref.h"
#include "ref_rows.cuh"

template <typename T>
static __global__ void k_ce_fwd(const T *x, const int64_t *target, int64_t M, int64_t N, T *loss)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        const double lse = row_lse(xr, N, shf, shd);
        const int64_t t = target[i];
        if (threadIdx.x == 0) loss[i] = st<T>(t >= 0 && t < N ? lse - ld(xr[t]) : NAN);
    }
}

template <typename T>
static __global__ void k_ce_bwd(const T *x, const int64_t *target, const float *dloss,
                                const float *lse, int64_t M, int64_t N, T *dx)
{
    FOR_ROWS(i) {
        const T *xr = x + i * N;
        const double l = lse[i], d = dloss[i];
        const int64_t t = target[i];
        FOR_COLS(j) dx[i * N + j] = st<T>(d * (exp(ld(xr[j]) - l) - (j == t ? 1.0 : 0.0)));
    }
}

extern "C" kb_status kb_cross_entropy_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    NEED(b->gold, who);
    NEED(t->x, who);
    NEED(t->target, who);
    if (!kb_bench_info_get(p->bench)->backward) {
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_ce_fwd<T>, (const T *)t->x, t->target, M, N, (T *)b->gold);
        });
        return KB_OK;
    }
    NEED(t->dloss, who);
    NEED(t->lse, who);
    KB_DISPATCH(p->dtype, T, {
        ROWS_LAUNCH(k_ce_bwd<T>, (const T *)t->x, t->target, t->dloss, t->lse, M, N,
                    (T *)b->gold);
    });
    return KB_OK;
}
