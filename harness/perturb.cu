/* The output damage of KBENCH_TEST_PERTURB and the stream hold of
 * KBENCH_TEST_EXTRA_TIME (knobs.h). */
#include "kb_cuda.cuh"
#include "knobs.h"

template <typename T> __global__ void scale_kernel(T *p, int64_t n, float f)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        p[i] = kb_from_float<T>(kb_to_float(p[i]) * f);
}

extern "C" kb_status kb_perturb_output(const kb_knobs *k, kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const kb_problem *p = &b->p;
    const size_t es = kb_dtype_size(p->dtype);
    const int64_t n = kb_out_elems(p);
    if (k->perturb == KB_PERTURB_SKIP_LAST) {
        /* Re-poison the last column: what a kernel that never wrote it leaves. */
        const size_t cols = p->bench == KB_CE_FWD ? 1 : (size_t)p->N;
        const size_t rows = (size_t)(n / (int64_t)cols);
        KB_CUDA(e, cudaMemset2DAsync((char *)b->t.out + (cols - 1) * es, cols * es, 0xff, es, rows, s));
        if (b->t.dw) KB_CUDA(e, cudaMemsetAsync(b->t.dw + p->N - 1, 0xff, 4, s));
    } else if (k->perturb == KB_PERTURB_SCALE) {
        const float f = (float)(1.0 + k->scale);
        KB_DISPATCH(p->dtype, T, scale_kernel<T><<<1024, 256, 0, s>>>((T *)b->t.out, n, f));
        KB_LAUNCHED(e);
        if (b->t.dw) {
            scale_kernel<float><<<64, 256, 0, s>>>(b->t.dw, p->N, f);
            KB_LAUNCHED(e);
        }
    }
    return KB_OK;
}

/* One thread: the hold must cost the stream time, not occupy the GPU.
 * %globaltimer, not clock64(): the hold is in nanoseconds whatever the SM
 * clock does. */
__global__ void spin_kernel(uint64_t ns)
{
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

extern "C" kb_status kb_spin_ns(uint64_t ns, cudaStream_t s, kb_err *e)
{
    if (ns == 0) return KB_OK;
    spin_kernel<<<1, 1, 0, s>>>(ns);
    KB_LAUNCHED(e);
    return KB_OK;
}
