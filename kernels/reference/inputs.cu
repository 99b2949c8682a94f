/* Inputs of a case from a fixed seed, on the GPU.
 *
 * Counter-based: element i of tensor t is a pure function of (seed, t, i),
 * so the bytes are the same on every run whatever the launch configuration
 * (and a case with fewer rows of the same N sees a prefix of the larger
 * case's x and dy).
 *
 *   key(seed, t) = mix(mix(seed) + t * golden)        one key per tensor
 *   h(i)         = mix(key + (i + 1) * golden)        splitmix64 step i
 *   randn        = Box-Muller on the top/bottom 24 bits of h, cosine branch
 *   target       = floor(h * N / 2^64)                uniform in [0, N)
 *
 * Distributions (SPEC): cross entropy / softmax x = 0.1 randn, norms
 * x = randn; w = randn[N] fp32; dy = randn[M,N] (dtype); dloss = randn[M]
 * fp32; target int64 uniform in [0, N). Values are rounded to the dtype on
 * store (round to nearest even). */
#include "kb_cuda.cuh"
#include "reference.h"

/* Tensor ids: part of the generator's key, so never renumber them. */
enum { TID_X = 1, TID_TARGET = 2, TID_DLOSS = 3, TID_DY = 4, TID_W = 5 };

static constexpr uint64_t GOLDEN = 0x9e3779b97f4a7c15ull; /* 2^64 / phi */

static __host__ __device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t tensor_key(uint64_t seed, int tid) { return mix64(mix64(seed) + (uint64_t)tid * GOLDEN); }

static __device__ __forceinline__ uint64_t elem_hash(uint64_t key, int64_t i)
{
    return mix64(key + ((uint64_t)i + 1u) * GOLDEN);
}

/* Box-Muller with u1 in (0, 1] (so log(u1) is finite, |z| <= 5.77) and u2
 * in [0, 1); both exact 24-bit fractions. No fast-math: logf/cospif are
 * the accurate library versions, deterministic for a given build. */
static __device__ __forceinline__ float randn_of(uint64_t h)
{
    const float u1 = (float)((uint32_t)(h >> 40) + 1u) * 0x1p-24f;
    const float u2 = (float)((uint32_t)(h >> 8) & 0xffffffu) * 0x1p-24f;
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

/* Grid-stride, one element per thread per step, int64 indices. */
template <typename T>
static __global__ void k_randn(T *out, int64_t n, uint64_t key, float scale)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = kb_from_float<T>(scale * randn_of(elem_hash(key, i)));
}

static __global__ void k_target(int64_t *out, int64_t n, int64_t N, uint64_t key)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = (int64_t)__umul64hi(elem_hash(key, i), (uint64_t)N);
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
    if (!b) return KB_FAIL(e, KB_ERR_ARG, "kb_inputs_generate: buffers is NULL");
    const kb_problem *p = &b->p;
    const kb_tensors *t = &b->t;
    if ((unsigned)p->bench >= KB_NUM_BENCH || (unsigned)p->dtype >= KB_NUM_DTYPES ||
        p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG,
                       "kb_inputs_generate: bad problem (bench %d, dtype %d, %lldx%lld)",
                       (int)p->bench, (int)p->dtype, (long long)p->M, (long long)p->N);
    const int64_t M = p->M, N = p->N, MN = M * N;
    const int norm = p->bench >= KB_RMSNORM_FWD;
    const float xscale = norm ? 1.0f : 0.1f;

    KB_TRY(gen_randn(p->dtype, (void *)t->x, MN, tensor_key(seed, TID_X), xscale, s, e));
    KB_TRY(gen_randn(p->dtype, (void *)t->dy, MN, tensor_key(seed, TID_DY), 1.0f, s, e));
    KB_TRY(gen_randn(KB_FP32, (void *)t->w, N, tensor_key(seed, TID_W), 1.0f, s, e));
    KB_TRY(gen_randn(KB_FP32, (void *)t->dloss, M, tensor_key(seed, TID_DLOSS), 1.0f, s, e));
    if (t->target) {
        k_target<<<gen_blocks(M), GEN_THREADS, 0, s>>>((int64_t *)t->target, M, N,
                                                        tensor_key(seed, TID_TARGET));
        KB_LAUNCHED(e);
    }
    return KB_OK;
}
