/* Inputs of a case from a fixed seed, on the GPU.
 *
 * Counter-based: element i of tensor t is a pure function of (seed, t, i)
 * (input_values.h), so the bytes are the same on every run whatever the
 * launch configuration (and a case with fewer rows of the same N sees a
 * prefix of the larger case's x and dy).
 *
 * Distributions (SPEC): cross entropy / softmax x = 0.1 randn, norms and
 * GLU gates x = randn; w = randn[N] fp32; dy, GLU's up = randn[M,N] (dtype); dloss = randn[M]
 * fp32; target int64 uniform in [0, N); mlp weights (wts = [Wg; Wu; Wd],
 * kernels/reference/mlp_math.h) randn / sqrt(fan-in): Wg, Wu randn/sqrt(D),
 * Wd randn/sqrt(H), so gate, up and y are about unit size. Input kinds other than randn change
 * x only (input_values.h), and the residual that is added to it (res: drawn
 * as x is, from its own keys, so that a kind's rows stay what they are in
 * h = x + res); dres = randn like dy. Roles only one op has and whose
 * values are no draw (rope's cos/sin table) are filled by the op's own GPU
 * reference (kb_op_gpu.inputs). Sizes are the roles' (kb_tensor_dims).
 * Values are rounded to the dtype on store (round to nearest even). */
#include "input_values.h"
#include "kb_cuda.cuh"
#include "reference.h"
#include "registry.h"

/* Grid-stride, one element per thread per step, int64 indices. */
template <typename T>
static __global__ void k_randn(T *out, int64_t n, uint64_t key, float scale)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = kb_from_float<T>(scale * kb_randn_of(kb_elem_hash(key, i)));
}

template <typename T>
static __global__ void k_x(T *out, int64_t M, int64_t N, kb_inputs kind, kb_x_dist dist,
                           kb_input_keys keys)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < M * N; i += stride)
        out[i] = kb_from_float<T>(kb_input_x(kind, dist, &keys, i / N, i % N, N));
}

static __global__ void k_target(int64_t *out, int64_t n, int64_t N, uint64_t key)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = kb_column_of(kb_elem_hash(key, i), N);
}

static const int GEN_THREADS = 256;

static unsigned gen_blocks(int64_t n)
{
    const int64_t cap = 1 << 16; /* enough to fill any GPU; the loop covers the rest */
    const int64_t b = kb_cdiv(n, GEN_THREADS);
    return (unsigned)(b < cap ? b : cap);
}

static kb_status gen_randn(kb_dtype d, void *p, int64_t n, uint64_t key, float scale,
                           cudaStream_t s, kb_err *e)
{
    if (!p) return KB_OK;
    KB_DISPATCH(d, T, {
        k_randn<T><<<gen_blocks(n), GEN_THREADS, 0, s>>>((T *)p, n, key, scale);
    });
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_inputs_generate(kb_buffers *b, uint64_t seed, cudaStream_t s, kb_err *e)
{
    if (!b) return KB_FAIL(e, KB_ERR_ARG, "input generator: no buffers");
    const kb_problem *p = &b->p;
    const kb_tensors *t = &b->t;
    if (!kb_bench_info_get(p->bench) || (unsigned)p->dtype >= KB_NUM_DTYPES ||
        p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG,
                       "input generator: bad problem (bench %d, dtype %d, %lldx%lld)",
                       (int)p->bench, (int)p->dtype, (long long)p->M, (long long)p->N);
    const int64_t M = p->M, N = p->N;
    const kb_x_dist dist = kb_bench_info_get(p->bench)->x_dist;
    if ((unsigned)b->inputs >= KB_NUM_INPUTS || !kb_inputs_apply((kb_inputs)b->inputs, p->bench))
        return KB_FAIL(e, KB_ERR_ARG, "input generator: input kind %s does not apply to %s",
                       kb_inputs_name((kb_inputs)b->inputs), kb_bench_info_get(p->bench)->name);
    int64_t xr, xc, dr, dc;
    kb_tensor_dims(p, KB_R_X, &xr, &xc);
    kb_tensor_dims(p, KB_R_DY, &dr, &dc);
    /* x, then res from keys of its own, with the case's kind and x's
     * distribution. */
    const struct { void *p; uint64_t seed; } xs[] = {
        {(void *)t->x, seed}, {(void *)t->res, kb_tensor_key(seed, KB_TID_RES)}};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        if (!xs[k].p) continue;
        KB_DISPATCH(p->dtype, T, {
            k_x<T><<<gen_blocks(xr * xc), GEN_THREADS, 0, s>>>(
                (T *)xs[k].p, xr, xc, (kb_inputs)b->inputs, dist, kb_input_keys_of(xs[k].seed));
        });
        KB_LAUNCHED(e);
    }
    KB_TRY(gen_randn(p->dtype, (void *)t->dy, dr * dc, kb_tensor_key(seed, KB_TID_DY), 1.0f, s, e));
    KB_TRY(gen_randn(p->dtype, (void *)t->dres, M * N, kb_tensor_key(seed, KB_TID_DRES), 1.0f, s,
                     e));
    KB_TRY(gen_randn(p->dtype, (void *)t->up, M * N, kb_tensor_key(seed, KB_TID_UP), 1.0f, s, e));
    KB_TRY(gen_randn(KB_FP32, (void *)t->w, N, kb_tensor_key(seed, KB_TID_W), 1.0f, s, e));
    KB_TRY(gen_randn(KB_FP32, (void *)t->dloss, M, kb_tensor_key(seed, KB_TID_DLOSS), 1.0f, s,
                     e));
    if (t->wts) {
        const int64_t HD = p->K * N;
        KB_TRY(gen_randn(p->dtype, (void *)t->wts, 2 * HD, kb_tensor_key(seed, KB_TID_WGU),
                         (float)(1.0 / sqrt((double)N)), s, e));
        KB_TRY(gen_randn(p->dtype, (char *)t->wts + 2 * HD * (int64_t)kb_dtype_size(p->dtype),
                         HD, kb_tensor_key(seed, KB_TID_WD), (float)(1.0 / sqrt((double)p->K)),
                         s, e));
    }
    if (t->target) {
        k_target<<<gen_blocks(M), GEN_THREADS, 0, s>>>((int64_t *)t->target, M, N,
                                                        kb_tensor_key(seed, KB_TID_TARGET));
        KB_LAUNCHED(e);
    }
    const kb_op_gpu *own = kb_op_gpu_get(p->bench);
    if (own && own->inputs) KB_TRY(own->inputs(b, s, e));
    return KB_OK;
}
