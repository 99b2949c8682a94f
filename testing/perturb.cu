/* The output damage and the mutants of KBENCH_TEST_PERTURB, the stream
 * hold of KBENCH_TEST_EXTRA_TIME and the faults of KBENCH_TEST_FAULT
 * (knobs.h). */
#include "kb_cuda.cuh"
#include "knobs.h"
#include "registry.h"

template <typename T> __global__ void scale_kernel(T *p, int64_t n, float f)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        p[i] = kb_from_float<T>(kb_to_float(p[i]) * f);
}

/* ---- mutants: the output recomputed from the inputs with a buggy formula --
 * A kernel's arithmetic cannot be changed from outside it, so these planted
 * bugs are emulated: after the backend's run, its output is overwritten by
 * what a kernel with the bug would have written (one CTA of 256 threads per
 * row, fp32 math except where the bug says otherwise). They measure the
 * accuracy check, not the backends: every backend gets the same mutant. */
#define MUT_THREADS 256

/* sum_j exp(x_j) over the row, no max subtracted: inf once a logit passes
 * ~88.7. */
template <typename T> __device__ float sum_exp_no_max(const T *xr, int64_t N, float *sh)
{
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) s += expf(kb_to_float(xr[j]));
    return kb_block_sum(s, sh);
}

/* target == NULL: softmax forward into out [M,N]; else cross-entropy
 * forward, loss into out [M]. */
template <typename T>
__global__ void k_no_max(const T *x, const int64_t *target, T *out, int64_t M, int64_t N)
{
    __shared__ float sh[32];
    for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
        const T *xr = x + r * N;
        const float s = sum_exp_no_max(xr, N, sh);
        if (target && threadIdx.x == 0)
            out[r] = kb_from_float<T>(logf(s) - kb_to_float(xr[target[r]]));
        for (int64_t j = threadIdx.x; !target && j < N; j += blockDim.x)
            out[r * N + j] = kb_from_float<T>(expf(kb_to_float(xr[j])) / s);
    }
}

/* a + b rounded to the dtype: accumulation in bf16/fp16. */
template <typename T> __device__ __forceinline__ T add_t(T a, float b)
{
    return kb_from_float<T>(kb_to_float(a) + kb_to_float(kb_from_float<T>(b)));
}

/* Tree over the CTA's per-thread sums, every step rounded to the dtype. */
template <typename T> __device__ float block_sum_t(T v, T *sh)
{
    __syncthreads();
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = MUT_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = add_t(sh[threadIdx.x], kb_to_float(sh[threadIdx.x + s]));
        __syncthreads();
    }
    return kb_to_float(sh[0]);
}

/* Softmax forward with the sum of exp accumulated in the dtype. */
template <typename T> __global__ void k_softmax_half(const T *x, T *y, int64_t M, int64_t N)
{
    __shared__ float sh[32];
    __shared__ T sht[MUT_THREADS];
    for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
        const T *xr = x + r * N;
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, kb_to_float(xr[j]));
        m = kb_block_max(m, sh);
        T acc = kb_from_float<T>(0.f);
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
            acc = add_t(acc, expf(kb_to_float(xr[j]) - m));
        const float s = block_sum_t(acc, sht);
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
            y[r * N + j] = kb_from_float<T>(expf(kb_to_float(xr[j]) - m) / s);
    }
}

/* RMSNorm / LayerNorm forward with a given eps, the row sums in fp32 or
 * (HALF) accumulated in the dtype. */
template <typename T, bool LN, bool HALF>
__global__ void k_norm_fwd(const T *x, const float *w, T *y, int64_t M, int64_t N, float eps)
{
    __shared__ float sh[32];
    __shared__ T sht[MUT_THREADS];
    for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
        const T *xr = x + r * N;
        float mean = 0.f;
        if (LN) {
            float a = 0.f;
            T at = kb_from_float<T>(0.f);
            for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
                if (HALF) at = add_t(at, kb_to_float(xr[j]));
                else a += kb_to_float(xr[j]);
            }
            mean = (HALF ? block_sum_t(at, sht) : kb_block_sum(a, sh)) / (float)N;
        }
        float q = 0.f;
        T qt = kb_from_float<T>(0.f);
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const float d = kb_to_float(xr[j]) - mean;
            if (HALF) qt = add_t(qt, d * d);
            else q += d * d;
        }
        const float var = (HALF ? block_sum_t(qt, sht) : kb_block_sum(q, sh)) / (float)N;
        const float rs = 1.f / sqrtf(var + eps);
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
            y[r * N + j] = kb_from_float<T>((kb_to_float(xr[j]) - mean) * rs * w[j]);
    }
}

extern "C" int kb_perturb_applies(kb_perturb k, kb_bench_id b)
{
    const kb_bench_info *bi = kb_bench_info_get(b);
    const kb_mutant m = bi ? bi->mutant : KB_MUTANT_NONE;
    const bool norm = m == KB_MUTANT_RMSNORM || m == KB_MUTANT_LAYERNORM;
    switch (k) {
    case KB_PERTURB_NO_MAX: return m == KB_MUTANT_SOFTMAX || m == KB_MUTANT_LOSS;
    case KB_PERTURB_HALF_ACC: return m == KB_MUTANT_SOFTMAX || norm;
    case KB_PERTURB_EPS: return norm;
    default: return 1;
    }
}

static kb_status mutant(const kb_knobs *k, kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const kb_problem *p = &b->p;
    const kb_tensors *t = &b->t;
    const unsigned grid = (unsigned)(p->M < 65535 ? p->M : 65535);
    const kb_mutant m = kb_bench_info_get(p->bench)->mutant;
    const bool ln = m == KB_MUTANT_LAYERNORM;
    KB_DISPATCH(p->dtype, T, {
        const T *x = (const T *)t->x;
        T *out = (T *)t->out;
        if (k->perturb == KB_PERTURB_NO_MAX)
            k_no_max<T><<<grid, MUT_THREADS, 0, s>>>(
                x, m == KB_MUTANT_LOSS ? t->target : NULL, out, p->M, p->N);
        else if (k->perturb == KB_PERTURB_HALF_ACC && m == KB_MUTANT_SOFTMAX)
            k_softmax_half<T><<<grid, MUT_THREADS, 0, s>>>(x, out, p->M, p->N);
        else if (k->perturb == KB_PERTURB_HALF_ACC && ln)
            k_norm_fwd<T, true, true><<<grid, MUT_THREADS, 0, s>>>(x, t->w, out, p->M, p->N,
                                                                   KB_NORM_EPS);
        else if (k->perturb == KB_PERTURB_HALF_ACC)
            k_norm_fwd<T, false, true><<<grid, MUT_THREADS, 0, s>>>(x, t->w, out, p->M, p->N,
                                                                    KB_NORM_EPS);
        else if (ln)
            k_norm_fwd<T, true, false><<<grid, MUT_THREADS, 0, s>>>(x, t->w, out, p->M, p->N,
                                                                    1e-5f);
        else
            k_norm_fwd<T, false, false><<<grid, MUT_THREADS, 0, s>>>(x, t->w, out, p->M, p->N,
                                                                     1e-5f);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_perturb_output(const kb_knobs *k, kb_buffers *b, cudaStream_t s, kb_err *e)
{
    const kb_problem *p = &b->p;
    const size_t es = kb_dtype_size(p->dtype);
    const int64_t n = kb_out_elems(p);
    if (!kb_perturb_applies(k->perturb, p->bench))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED, "KBENCH_TEST_PERTURB: %s does not apply to %s",
                       kb_perturb_name(k->perturb), kb_bench_info_get(p->bench)->name);
    if (k->perturb == KB_PERTURB_NO_MAX || k->perturb == KB_PERTURB_HALF_ACC ||
        k->perturb == KB_PERTURB_EPS)
        return mutant(k, b, s, e);
    if (k->perturb == KB_PERTURB_WRITE_PAST_END) {
        /* One element just past the end of out, as an off-by-one tail would. */
        KB_CUDA(e, cudaMemsetAsync((char *)b->t.out + (size_t)n * es, 0, es, s));
        return KB_OK;
    }
    if (k->perturb == KB_PERTURB_SKIP_LAST) {
        /* Re-poison the last column: what a kernel that never wrote it leaves. */
        const size_t cols = (size_t)kb_out_cols(p);
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
static __global__ void spin_kernel(uint64_t ns)
{
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

/* KBENCH_TEST_SPLIT: the kernel a fusion that came apart would add. Its
 * name is what the kernel check prints. */
static __global__ void split_noop_kernel() {}

extern "C" kb_status kb_test_split_noop(cudaStream_t s, kb_err *e)
{
    split_noop_kernel<<<1, 1, 0, s>>>();
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_spin_ns(uint64_t ns, cudaStream_t s, kb_err *e)
{
    if (ns == 0) return KB_OK;
    spin_kernel<<<1, 1, 0, s>>>(ns);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* KBENCH_TEST_FAULT=illegal_address: one store to addr, an address no
 * allocation has (passed in, so that the compiler cannot see the store is
 * bad and drop it or trap instead). */
static __global__ void bad_store_kernel(unsigned long long addr)
{
    *reinterpret_cast<volatile int *>(addr) = 1;
}

extern "C" kb_status kb_test_fault(const kb_knobs *k, cudaStream_t s, kb_err *e)
{
    switch (k->fault) {
    case KB_FAULT_HANG: return kb_spin_ns(UINT64_MAX, s, e); /* %globaltimer never gets there */
    case KB_FAULT_ILLEGAL_ADDRESS:
        /* The first page: CUDA never maps it (a null pointer's page). */
        bad_store_kernel<<<1, 1, 0, s>>>(0x100ull);
        KB_LAUNCHED(e);
        return KB_OK;
    default: return KB_OK;
    }
}
