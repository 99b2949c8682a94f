/* GPU comparison: a grid-stride pass that counts mismatches and tracks the
 * worst element (largest excess over the allowed error, lowest index on
 * ties, so the report is deterministic), reduced per block and finished on
 * the host. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"
#include "kb_cuda.cuh"
#include "kb_dsum.cuh"
#include "registry.h"

#define CMP_THREADS 256
#define CMP_BLOCKS 1024

struct cmp_partial {
    unsigned long long mismatches;
    double excess;
    long long index;
};

__device__ __forceinline__ void better(double &ex, long long &ix, double oex, long long oix)
{
    if (oex > ex || (oex == ex && oix >= 0 && (ix < 0 || oix < ix))) {
        ex = oex;
        ix = oix;
    }
}

/* Norm backward dx = rstd*(g - mean(g) - xh*mean(g*xh)), g = dy*w: where
 * the terms cancel (N = 1 LayerNorm: exactly 0) an fp32 kernel is left with
 * rounding noise of size u*rstd*(|g| + |mean g| + |xh*mean(g*xh)|), which
 * rstd (up to 1/sqrt(eps) = 1000) can lift above atol. The allowance below
 * is KB_DX_ROUNDING such roundings, bounded with A = mean|g|, B = mean|g*xh|
 * of the row; far below rtol*|dx| wherever dx is not a cancellation. */
template <typename T> struct norm_scale {
    const T *x, *dy;
    const float *w, *mean, *rstd, *A, *B;
    int64_t N;
};

template <typename T>
__global__ void row_scale_kernel(norm_scale<T> ns, int64_t M, float *A, float *B)
{
    __shared__ float scratch[32];
    for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
        const float mu = ns.mean ? ns.mean[r] : 0.f, rs = ns.rstd[r];
        float a = 0.f, b = 0.f;
        for (int64_t j = threadIdx.x; j < ns.N; j += blockDim.x) {
            const float g = fabsf(kb_to_float(ns.dy[r * ns.N + j]) * ns.w[j]);
            a += g;
            b += g * fabsf((kb_to_float(ns.x[r * ns.N + j]) - mu) * rs);
        }
        a = kb_block_sum(a, scratch);
        b = kb_block_sum(b, scratch);
        if (threadIdx.x == 0) {
            A[r] = a / (float)ns.N;
            B[r] = b / (float)ns.N;
        }
    }
}

template <typename T>
__device__ __forceinline__ double dx_allowance(const norm_scale<T> &ns, int64_t i)
{
    const int64_t r = i / ns.N, j = i - r * ns.N;
    const float mu = ns.mean ? ns.mean[r] : 0.f, rs = ns.rstd[r];
    const double g = fabs((double)kb_to_float(ns.dy[i]) * ns.w[j]);
    const double xh = fabs(((double)kb_to_float(ns.x[i]) - mu) * rs);
    return KB_DX_ROUNDING * KB_FP32_UNIT_ROUNDOFF * rs * (g + ns.A[r] + xh * ns.B[r]);
}

/* abs_sum (dw, mlp): per-element extra allowance abs_coef*abs_sum (dw:
 * KB_DW_ROUNDING*u_fp32, mlp: KB_GEMM_ROUNDING*u(dtype)); ns.rstd (norm dx
 * only): dx_allowance. */
template <typename T, typename G>
__global__ void compare_kernel(const G *out, const G *gold, const float *abs_sum,
                               double abs_coef, norm_scale<T> ns, int64_t n, double atol,
                               double rtol, cmp_partial *partials)
{
    unsigned long long bad = 0;
    double ex = -1.0;
    long long ix = -1;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double g = kb_to_float(gold[i]), o = kb_to_float(out[i]);
        double allowed = atol + rtol * fabs(g);
        if (abs_sum) allowed += abs_coef * abs_sum[i];
        if (ns.rstd) allowed += dx_allowance(ns, i);
        const double x = kb_excess(o, g, allowed);
        if (x > 1.0) bad++;
        better(ex, ix, x, i);
    }
    __shared__ unsigned long long s_bad[CMP_THREADS];
    __shared__ double s_ex[CMP_THREADS];
    __shared__ long long s_ix[CMP_THREADS];
    s_bad[threadIdx.x] = bad;
    s_ex[threadIdx.x] = ex;
    s_ix[threadIdx.x] = ix;
    __syncthreads();
    for (int stride = CMP_THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            s_bad[threadIdx.x] += s_bad[threadIdx.x + stride];
            better(s_ex[threadIdx.x], s_ix[threadIdx.x], s_ex[threadIdx.x + stride],
                   s_ix[threadIdx.x + stride]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = {s_bad[0], s_ex[0], s_ix[0]};
}

/* abs_sum[j] += sum over a chunk of rows of |dy * xhat|; atomics are fine:
 * this only scales the tolerance. */
template <typename T>
__global__ void dw_abs_kernel(const T *x, const T *dy, const float *mean, const float *rstd,
                              int64_t M, int64_t N, int64_t rows_per_chunk, float *abs_sum)
{
    const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (j >= N) return;
    const int64_t r0 = blockIdx.y * rows_per_chunk;
    const int64_t r1 = min(M, r0 + rows_per_chunk);
    float acc = 0.f;
    for (int64_t r = r0; r < r1; r++) {
        const float mu = mean ? mean[r] : 0.f;
        const float xh = (kb_to_float(x[r * N + j]) - mu) * rstd[r];
        acc += fabsf(kb_to_float(dy[r * N + j]) * xh);
    }
    atomicAdd(&abs_sum[j], acc);
}

static double host_value(kb_dtype d, const void *p, int64_t i, kb_err *e, kb_status *st)
{
    unsigned char buf[4] = {0};
    size_t es = kb_dtype_size(d);
    cudaError_t rc = cudaMemcpy(buf, (const char *)p + i * es, es, cudaMemcpyDeviceToHost);
    if (rc != cudaSuccess) {
        *st = KB_FAIL(e, KB_ERR_CUDA, "cudaMemcpy: %s", cudaGetErrorString(rc));
        return NAN;
    }
    if (d == KB_FP32) return *(float *)buf;
    uint16_t h = (uint16_t)(buf[0] | buf[1] << 8);
    return d == KB_BF16 ? (double)__bfloat162float(*(__nv_bfloat16 *)&h)
                        : (double)__half2float(*(__half *)&h);
}

/* d: dtype of out/gold; ns (may be all NULL) in the case's dtype nd. */
static kb_status compare(kb_dtype d, const void *out, const void *gold, const float *abs_sum,
                         double abs_coef, kb_dtype nd, const norm_scale<char> *ns, int64_t n,
                         kb_tol tol, cudaStream_t s, kb_accuracy *acc, kb_err *e)
{
    cmp_partial *dev = NULL;
    cmp_partial host[CMP_BLOCKS];
    const int blocks = (int)(n < (int64_t)CMP_BLOCKS * CMP_THREADS
                                 ? kb_cdiv(n, CMP_THREADS) : CMP_BLOCKS);
    KB_CUDA(e, cudaMalloc(&dev, sizeof(cmp_partial) * CMP_BLOCKS));
    kb_status st = KB_OK;
    KB_DISPATCH(nd, T, {
        const norm_scale<T> nst = {(const T *)ns->x, (const T *)ns->dy, ns->w, ns->mean,
                                   ns->rstd, ns->A, ns->B, ns->N};
        KB_DISPATCH(d, G, compare_kernel<T, G><<<blocks, CMP_THREADS, 0, s>>>(
                              (const G *)out, (const G *)gold, abs_sum, abs_coef, nst, n, tol.atol,
                              tol.rtol, dev));
    });
    cudaError_t rc = cudaGetLastError();
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(host, dev, sizeof(cmp_partial) * blocks,
                                                cudaMemcpyDeviceToHost, s);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(s);
    cudaFree(dev);
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "accuracy comparison: %s", cudaGetErrorString(rc));
    acc->n = n;
    acc->mismatches = 0;
    acc->worst_excess = -1;
    acc->worst_index = -1;
    acc->tol = tol;
    for (int i = 0; i < blocks; i++) {
        acc->mismatches += (int64_t)host[i].mismatches;
        if (host[i].excess > acc->worst_excess ||
            (host[i].excess == acc->worst_excess && host[i].index < acc->worst_index)) {
            acc->worst_excess = host[i].excess;
            acc->worst_index = host[i].index;
        }
    }
    acc->worst_out = acc->worst_gold = NAN;
    if (acc->worst_index >= 0) {
        acc->worst_out = host_value(d, out, acc->worst_index, e, &st);
        acc->worst_gold = host_value(d, gold, acc->worst_index, e, &st);
    }
    return st;
}

/* ---- normwise criterion (tolerance.h) ---------------------------------------
 * One CTA per row sums (out-gold)^2, gold^2 and s^2 in double; the host
 * judges each row with kb_normwise_excess. s is the magnitude of the terms
 * the fp32 evaluation combines at each element (tolerance.h):
 *   cross-entropy fwd  |loss| + 2|x[target]|     (loss = lse - x[target])
 *   cross-entropy bwd  |dloss| * (p + [j = target])
 *   softmax bwd        y * (|dy| + sum_k |dy_k| y_k)
 *   norm bwd dx        rstd * (|g| + mean|g| + |xh| * mean|g xh|)
 *   dw                 sum over rows of |dy * xh|
 *   LayerNorm fwd      (|x| + |mean|) * rstd * |w|   (y = (x - mean) * rstd * w:
 *                      a row whose spread is small against its mean cancels,
 *                      and any fp32 kernel loses u_fp32 * |mean| / std there)
 *   GeGLU, SwiGLU      the terms of act(x) * up and of its derivatives
 *                      (glu_scale): 0.5 x (1 + tanh) cancels for x < 0,
 *                      1 - tanh^2 and 1 + x (1 - sigmoid) cancel in dgate
 *   other forwards     |gold|                   (no cancellation)
 * A fourth sum counts the elements below the dtype's smallest normal. */
#define KB_NW_SUMS 4
template <typename T> struct nw_ctx {
    kb_err_scale scale; /* the op's descriptor says which */
    const T *x, *dy, *y, *up;
    const int64_t *target;
    const float *dloss, *lse, *w, *mean, *rstd, *A, *B, *abs_sum;
    int64_t M, N;
    /* KB_SCALE_TERMS on an output: abs_sum is the reference's sum of
     * |terms| and may carry KB_TERMS_ROUNDING roundings of the dtype, as the
     * element-wise check allows; kb_normwise_excess allows
     * KB_NORMWISE_C32 fp32 roundings of the scale, so the scale is taken
     * times t_coef = KB_TERMS_ROUNDING u(dtype) / (KB_NORMWISE_C32 u_fp32)
     * where that is more (bf16, fp16: PyTorch's eager chain rounds its
     * intermediates). In fp32 the fp32 allowance stays (t_coef 1): a kernel's
     * fp32 row sums are its error there (an fp32 row of 50257 equal values
     * comes back 13 u off, H100, 2026-12-06). 1 for dw (its own fp32 sums). */
    double t_coef;
};

/* GLU: the magnitude of the terms an fp32 evaluation of PyTorch's formulas
 * combines. Rows r >= M of a backward are dup (the output is [2, M, N]). */
template <typename T>
__device__ __forceinline__ double glu_scale(const nw_ctx<T> &c, int64_t r, int64_t j)
{
    const int dup = r >= c.M;
    const int64_t i = (dup ? r - c.M : r) * c.N + j;
    const double x = kb_to_float(c.x[i]), u = kb_to_float(c.up[i]), ax = fabs(x);
    const double g = c.dy ? fabs((double)kb_to_float(c.dy[i])) : 1.0;
    double act, dact; /* |terms| of act(x) and of act'(x) */
    if (c.scale == KB_SCALE_GEGLU) {
        const double k = 0.7978845608028654, t = tanh(k * (x + 0.044715 * x * x * x));
        act = 0.5 * ax * (1.0 + fabs(t));
        dact = 0.5 * (1.0 + fabs(t)) + 0.5 * ax * (1.0 + t * t) * k * (1.0 + 3 * 0.044715 * x * x);
    } else {
        const double sg = 1.0 / (1.0 + exp(-x));
        act = ax * sg;
        dact = sg * (1.0 + ax * (1.0 - sg));
    }
    if (!c.dy) return act * fabs(u);      /* forward */
    return dup ? g * act : g * fabs(u) * dact;
}

/* dot: the row's sum |dy| y (softmax dx); mean, rstd: the row's statistics
 * of x in double (LayerNorm forward). */
template <typename T>
__device__ __forceinline__ double nw_scale(const nw_ctx<T> &c, int64_t r, int64_t j, double g,
                                           double dot, double mean, double rstd)
{
    const int64_t i = r * c.N + j;
    switch (c.scale) {
    case KB_SCALE_LOSS: /* one row of M losses: j is the problem's row */
        return fabs(g) + 2.0 * fabs((double)kb_to_float(c.x[j * c.N + c.target[j]]));
    case KB_SCALE_CE_GRAD:
        return fabs((double)c.dloss[r]) *
               (exp((double)kb_to_float(c.x[i]) - (double)c.lse[r]) + (j == c.target[r] ? 1.0 : 0.0));
    case KB_SCALE_SOFTMAX_GRAD:
        return (double)kb_to_float(c.y[i]) * (fabs((double)kb_to_float(c.dy[i])) + dot);
    case KB_SCALE_GEGLU:
    case KB_SCALE_SWIGLU:
        return glu_scale(c, r, j);
    case KB_SCALE_CENTERED:
        return (fabs((double)kb_to_float(c.x[i])) + fabs(mean)) * rstd * fabs((double)c.w[j]);
    case KB_SCALE_NORM_GRAD: {
        if (c.abs_sum) return c.abs_sum[j]; /* dw */
        const double mu = c.mean ? c.mean[r] : 0.0, rs = c.rstd[r];
        const double gg = fabs((double)kb_to_float(c.dy[i]) * c.w[j]);
        const double xh = fabs(((double)kb_to_float(c.x[i]) - mu) * rs);
        return rs * (gg + c.A[r] + xh * c.B[r]);
    }
    default: return fabs(g);
    }
}

template <typename T, typename G>
__global__ void normwise_kernel(const G *out, const G *gold, nw_ctx<T> c, int64_t rows,
                                int64_t cols, double tiny, double *sums)
{
    __shared__ double sh[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        double dot = 0.0, mean = 0.0, rstd = 0.0;
        if (c.scale == KB_SCALE_SOFTMAX_GRAD) {
            for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
                dot += fabs((double)kb_to_float(c.dy[r * c.N + j])) *
                       (double)kb_to_float(c.y[r * c.N + j]);
            dot = kb_block_sum_d(dot, sh);
        } else if (c.scale == KB_SCALE_CENTERED) { /* two passes, in double */
            for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
                mean += (double)kb_to_float(c.x[r * c.N + j]);
            mean = kb_block_sum_d(mean, sh) / (double)cols;
            double var = 0.0;
            for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
                const double d = (double)kb_to_float(c.x[r * c.N + j]) - mean;
                var += d * d;
            }
            var = kb_block_sum_d(var, sh) / (double)cols;
            rstd = 1.0 / sqrt(var + (double)KB_NORM_EPS);
        }
        double e2 = 0.0, g2 = 0.0, s2 = 0.0, nsub = 0.0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const double o = kb_to_float(out[r * cols + j]), g = kb_to_float(gold[r * cols + j]);
            if (!isfinite(o) || !isfinite(g)) continue; /* assert_close's business */
            const double sc = c.scale == KB_SCALE_TERMS ? c.t_coef * (double)c.abs_sum[r * cols + j]
                                                        : nw_scale(c, r, j, g, dot, mean, rstd);
            e2 += (o - g) * (o - g);
            g2 += g * g;
            s2 += sc * sc;
            nsub += (fabs(o) < tiny || fabs(g) < tiny) && o != g ? 1.0 : 0.0;
        }
        e2 = kb_block_sum_d(e2, sh);
        g2 = kb_block_sum_d(g2, sh);
        s2 = kb_block_sum_d(s2, sh);
        nsub = kb_block_sum_d(nsub, sh);
        if (threadIdx.x == 0) {
            sums[KB_NW_SUMS * r] = e2;
            sums[KB_NW_SUMS * r + 1] = g2;
            sums[KB_NW_SUMS * r + 2] = s2;
            sums[KB_NW_SUMS * r + 3] = nsub;
        }
    }
}

/* Judges every row on the host (kb_normwise_excess, unit tested). */
static void normwise_judge(const double *sums, int64_t rows, kb_dtype d, kb_accuracy *acc)
{
    acc->nw_rows = rows;
    acc->nw_zero_rows = acc->nw_bad_rows = 0;
    acc->nw_worst_row = -1;
    acc->nw_worst_excess = 0.0;
    acc->nw_worst_rel = 0.0;
    acc->nw_bound = kb_normwise_bound(d);
    for (int64_t r = 0; r < rows; r++) {
        const double *v = sums + KB_NW_SUMS * r;
        const double x = kb_normwise_excess(v[0], v[1], v[2], v[3], d);
        if (isnan(x)) {
            acc->nw_zero_rows++;
            continue;
        }
        if (x > 1.0) acc->nw_bad_rows++;
        if (acc->nw_worst_row < 0 || x > acc->nw_worst_excess) {
            acc->nw_worst_row = r;
            acc->nw_worst_excess = x;
            acc->nw_worst_rel = sqrt(v[0] / v[1]);
        }
    }
}

/* d: dtype of out/gold (fp32 for dw); c in the case's dtype. rows x cols. */
static kb_status normwise(kb_dtype d, const void *out, const void *gold, kb_dtype cd,
                          const nw_ctx<char> &cc, int64_t rows, int64_t cols, cudaStream_t s,
                          kb_accuracy *acc, kb_err *e)
{
    double *dev = NULL;
    const size_t bytes = KB_NW_SUMS * (size_t)rows * sizeof(double);
    double *host = (double *)malloc(bytes);
    if (!host) return KB_FAIL(e, KB_ERR_NOMEM, "normwise check: host malloc of %zu bytes", bytes);
    cudaError_t rc = cudaMalloc(&dev, bytes);
    if (rc == cudaSuccess) {
        const unsigned grid = (unsigned)(rows < 65536 ? rows : 65536);
        KB_DISPATCH(cd, T, {
            const nw_ctx<T> c = {cc.scale, (const T *)cc.x, (const T *)cc.dy, (const T *)cc.y,
                                 (const T *)cc.up, cc.target, cc.dloss, cc.lse, cc.w, cc.mean,
                                 cc.rstd, cc.A, cc.B, cc.abs_sum, cc.M, cc.N, cc.t_coef};
            KB_DISPATCH(d, G, normwise_kernel<T, G><<<grid, 256, 0, s>>>(
                                  (const G *)out, (const G *)gold, c, rows, cols, kb_min_normal(d), dev));
        });
        rc = cudaGetLastError();
    }
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(s);
    cudaFree(dev);
    if (rc == cudaSuccess) normwise_judge(host, rows, d, acc);
    free(host);
    if (rc != cudaSuccess)
        return KB_FAIL(e, KB_ERR_CUDA, "normwise check: %s", cudaGetErrorString(rc));
    return KB_OK;
}

static nw_ctx<char> nw_of(const kb_buffers *b, const float *A, const float *B, const float *abs_sum,
                          double t_coef = 1.0)
{
    const kb_tensors *t = &b->t;
    return {kb_bench_info_get(b->p.bench)->scale, (const char *)t->x, (const char *)t->dy,
            (const char *)t->y, (const char *)t->up, t->target, t->dloss, t->lse, t->w,
            t->mean, t->rstd, A, B, abs_sum, b->p.M, b->p.N, t_coef};
}

extern "C" kb_status kb_check_output(const kb_buffers *b, kb_tol tol, cudaStream_t s,
                                     kb_accuracy *acc, kb_err *e)
{
    const kb_problem *p = &b->p;
    norm_scale<char> ns = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, p->N};
    const kb_bench_info *bi = kb_bench_info_get(p->bench);
    const int norm_bwd = bi->scale == KB_SCALE_NORM_GRAD;
    /* The loss vector is judged as one: a row's loss alone is one number. */
    const int64_t rows = bi->out_per_row ? 1 : kb_out_rows(p), cols = kb_out_elems(p) / rows;
    if (!norm_bwd) {
        /* A GEMM's gold, and an op's own reference, bring their own error
         * scale (tolerance.h). */
        const int gemm = bi->scale == KB_SCALE_GEMM, terms = bi->scale == KB_SCALE_TERMS;
        if ((gemm || terms) && !b->gold_scale)
            return KB_FAIL(e, KB_ERR_ARG, "accuracy %s: no gold_scale buffer", bi->name);
        KB_TRY(compare(p->dtype, b->t.out, b->gold, gemm || terms ? b->gold_scale : NULL,
                       (gemm ? KB_GEMM_ROUNDING : KB_TERMS_ROUNDING) * kb_unit_roundoff(p->dtype),
                       p->dtype, &ns, kb_out_elems(p), tol, s, acc, e));
        return normwise(p->dtype, b->t.out, b->gold, p->dtype,
                        nw_of(b, NULL, NULL, terms ? b->gold_scale : NULL,
                              fmax(1.0, KB_TERMS_ROUNDING * kb_unit_roundoff(p->dtype) /
                                            (KB_NORMWISE_C32 * KB_FP32_UNIT_ROUNDOFF))),
                        rows, cols, s, acc, e);
    }
    float *rs = NULL;
    KB_CUDA(e, cudaMalloc(&rs, 2 * (size_t)p->M * sizeof(float)));
    ns = {(const char *)b->t.x, (const char *)b->t.dy, b->t.w, b->t.mean, b->t.rstd, rs,
          rs + p->M, p->N};
    const unsigned grid = (unsigned)(p->M < 65536 ? p->M : 65536);
    KB_DISPATCH(p->dtype, T, {
        const norm_scale<T> nst = {(const T *)ns.x, (const T *)ns.dy, ns.w, ns.mean, ns.rstd,
                                   NULL, NULL, p->N};
        row_scale_kernel<T><<<grid, 256, 0, s>>>(nst, p->M, rs, rs + p->M);
    });
    cudaError_t rc = cudaGetLastError();
    kb_status st = rc == cudaSuccess
                       ? compare(p->dtype, b->t.out, b->gold, NULL, 0.0, p->dtype, &ns,
                                 kb_out_elems(p), tol, s, acc, e)
                       : KB_FAIL(e, KB_ERR_CUDA, "dx tolerance scale: %s", cudaGetErrorString(rc));
    if (st == KB_OK)
        st = normwise(p->dtype, b->t.out, b->gold, p->dtype, nw_of(b, rs, rs + p->M, NULL), rows,
                      cols, s, acc, e);
    cudaFree(rs);
    return st;
}

extern "C" kb_status kb_check_dw(const kb_buffers *b, kb_tol tol, cudaStream_t s,
                                 kb_accuracy *acc, kb_err *e)
{
    const kb_problem *p = &b->p;
    const norm_scale<char> none = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, p->N};
    float *abs_sum = NULL;
    KB_CUDA(e, cudaMalloc(&abs_sum, (size_t)p->N * sizeof(float)));
    cudaError_t rc = cudaMemsetAsync(abs_sum, 0, (size_t)p->N * sizeof(float), s);
    const int64_t rows = kb_dw_scale_rows(p->M); /* grid.y <= 65535 */
    const dim3 grid((unsigned)kb_cdiv(p->N, 256), (unsigned)kb_cdiv(p->M, rows));
    if (rc == cudaSuccess) {
        KB_DISPATCH(p->dtype, T, dw_abs_kernel<T><<<grid, 256, 0, s>>>(
                                     (const T *)b->t.x, (const T *)b->t.dy, b->t.mean, b->t.rstd,
                                     p->M, p->N, rows, abs_sum));
        rc = cudaGetLastError();
    }
    kb_status st = rc == cudaSuccess
                       ? compare(KB_FP32, b->t.dw, b->gold_dw, abs_sum,
                                 KB_DW_ROUNDING * KB_FP32_UNIT_ROUNDOFF, p->dtype, &none, p->N,
                                 tol, s, acc, e)
                       : KB_FAIL(e, KB_ERR_CUDA, "dw tolerance scale: %s", cudaGetErrorString(rc));
    if (st == KB_OK)
        st = normwise(KB_FP32, b->t.dw, b->gold_dw, p->dtype, nw_of(b, NULL, NULL, abs_sum), 1,
                      p->N, s, acc, e);
    cudaFree(abs_sum);
    return st;
}

extern "C" void kb_accuracy_describe(const kb_accuracy *a, int64_t N, const char *what,
                                     char *buf, size_t len)
{
    if (a->worst_index < 0) {
        snprintf(buf, len, "%s: %" PRId64 " elements, all exact", what, a->n);
        return;
    }
    snprintf(buf, len,
             "%s: %" PRId64 " of %" PRId64 " elements mismatch (atol %g, rtol %g); worst at "
             "index %" PRId64 " (row %" PRId64 ", col %" PRId64 "): got %.9g, gold %.9g, "
             "%.3gx the allowed error",
             what, a->mismatches, a->n, a->tol.atol, a->tol.rtol, a->worst_index,
             a->worst_index / N, a->worst_index % N, a->worst_out, a->worst_gold,
             a->worst_excess);
}

extern "C" void kb_normwise_describe(const kb_accuracy *a, const char *what, char *buf,
                                     size_t len)
{
    snprintf(buf, len,
             "%s: normwise error exceeds its bound in %" PRId64 " of %" PRId64 " rows; worst row "
             "%" PRId64 ": ||out-gold||/||gold|| = %.3g against %g (%g x unit roundoff, plus the "
             "fp32 allowance), %.3gx the allowed norm",
             what, a->nw_bad_rows, a->nw_rows, a->nw_worst_row, a->nw_worst_rel, a->nw_bound,
             KB_NORMWISE_C, a->nw_worst_excess);
}
