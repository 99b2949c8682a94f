/* softmax's GPU reference: the gold y and dx (softmax_ref.h), row kernels on
 * ref_rows.cuh's reductions; the forward is ref_rows.cuh's k_softmax, which
 * the generic kb_ref_gpu_saved runs for the backward's saved y too. */
#include "ref_rows.cuh"
#include "softmax_ref.h"

template <typename T>
static __global__ void k_softmax_bwd(const T *y, const T *dy, int64_t M, int64_t N, T *dx)
{
    __shared__ double sh[32];
    FOR_ROWS(i) {
        const T *yr = y + i * N, *dyr = dy + i * N;
        const double s = row_sum(N, sh, [&](int64_t j) { return ld(dyr[j]) * ld(yr[j]); });
        FOR_COLS(j) dx[i * N + j] = st<T>(ld(yr[j]) * (ld(dyr[j]) - s));
    }
}

extern "C" kb_status kb_softmax_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    REF_BEGIN(b, e, "GPU reference");
    NEED(b->gold, who);
    if (!kb_bench_info_get(p->bench)->backward) {
        NEED(t->x, who);
        KB_DISPATCH(p->dtype, T, {
            ROWS_LAUNCH(k_softmax<T>, (const T *)t->x, (T *)b->gold, M, N);
        });
        return KB_OK;
    }
    NEED(t->y, who);
    NEED(t->dy, who);
    KB_DISPATCH(p->dtype, T, {
        ROWS_LAUNCH(k_softmax_bwd<T>, (const T *)t->y, (const T *)t->dy, M, N, (T *)b->gold);
    });
    return KB_OK;
}
