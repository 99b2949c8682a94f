/* assert_close semantics, shared by the GPU comparison kernel and the unit
 * tests: |out - gold| <= atol + rtol*|gold|; NaN or Inf in out passes only
 * where gold has the same value at the same place. */
#ifndef KB_TOLERANCE_H
#define KB_TOLERANCE_H

#include <math.h>

#include "kbench.h"

#if defined(__CUDACC__)
#define KB_HD __host__ __device__
#else
#define KB_HD
#endif

typedef struct {
    double atol, rtol;
} kb_tol;

/* SPEC's defaults by output dtype (torch.testing's for bf16/fp16/fp32). */
static inline kb_tol kb_tol_default(kb_dtype d)
{
    kb_tol t = {1e-5, 1.3e-6};
    if (d == KB_BF16) t.rtol = 1.6e-2;
    if (d == KB_FP16) t.rtol = 1e-3;
    return t;
}

/* dw is a sum over M rows whose order differs between backends. On top of
 * atol + rtol*|gold| it may differ by KB_DW_ROUNDING fp32 unit roundoffs
 * times the sum of the absolute terms sum_i |dy*xhat|: the error bound of
 * fp32 summation whose partial sums each see a bounded number of roundings. */
#define KB_DW_ROUNDING 8.0
#define KB_FP32_UNIT_ROUNDOFF 5.9604644775390625e-8
/* Rows per CTA row of the dw tolerance scale's column sums (run/accuracy.cu:
 * grid.y = cdiv(M, rows)): KB_DW_SCALE_ROWS, or more where that many rows
 * would need more CTA rows than CUDA's 65535 in y (M above 67,107,840, which a
 * norm backward with N = 1 reaches in about 1 GB of buffers). */
#define KB_DW_SCALE_ROWS 1024
static inline KB_HD int64_t kb_dw_scale_rows(int64_t M)
{
    const int64_t fit = M / 65535 + (M % 65535 != 0);
    return fit > KB_DW_SCALE_ROWS ? fit : KB_DW_SCALE_ROWS;
}
/* Norm backward dx: allowance for fp32 evaluation where the formula's terms
 * cancel (see run/accuracy.cu, dx_allowance). */
#define KB_DX_ROUNDING 8.0

/* A reduction over K in the dtype's precision (mlp_forward's GEMMs, whose
 * intermediates gate, up and h are rounded to bf16 as PyTorch's are): on
 * top of atol + rtol*|gold|, an element may differ by KB_GEMM_ROUNDING
 * unit roundoffs of the dtype times gold_scale = sqrt(sum_k (h_k*Wd_k)^2),
 * the root-sum-square of the K terms of the last GEMM (the reference writes
 * it beside the gold). Rounding errors of the terms are independent, of
 * relative size <= ~3u each (gate, up, the product), so their sum has a
 * standard deviation below ~1.7u*gold_scale, which grows as sqrt(K) with the
 * reduction length; 8 is > 4.5 such deviations, where the worst-case bound
 * (3u times sum_k |h_k*Wd_k|, growing as K) would be ~sqrt(K) times looser.
 * The normwise check (4u per row) still catches a systematic error. */
#define KB_GEMM_ROUNDING 8.0

/* An op whose reference writes each element's error scale (KB_SCALE_TERMS:
 * the sum of the |terms| its formula adds, e.g. rope's |x cos| + |x' sin|):
 * on top of atol + rtol*|gold|, an element may differ by KB_TERMS_ROUNDING
 * unit roundoffs of the dtype times that scale. PyTorch's eager evaluation
 * rounds each product to the dtype before it adds them (two roundings,
 * each up to u times a term); where the terms cancel, that is all the
 * error there is, and |gold| says nothing about it. 4 covers both
 * roundings twice over; a wrong formula (a swapped sign, cos for sin) is
 * off by the size of the terms, 1/(4u) times more. */
#define KB_TERMS_ROUNDING 4.0

/* Equal values sum exactly in fp32 while their count k is at most
 * 2^(24-p), p the significant bits of the value's type: every partial sum
 * j * v (j <= k) then fits fp32's 24 bits, in any order. LayerNorm's exact
 * mean on constant rows rests on it (kernels/common/norm_tuned_fwd.cuh);
 * unit.tolerance checks both bounds on the worst values. */
#define KB_F32_EXACT_EQUAL_SUM_FP16 8192  /* 2^(24-11) */
#define KB_F32_EXACT_EQUAL_SUM_BF16 65536 /* 2^(24-8) */

/* How far out is from gold in units of the allowed error: <= 1 passes.
 * Infinite when out is NaN/Inf and gold is not the same non-finite value. */
static inline KB_HD double kb_excess(double out, double gold, double allowed)
{
    if (isnan(gold)) return isnan(out) ? 0.0 : INFINITY;
    if (isinf(gold)) return out == gold ? 0.0 : INFINITY;
    if (!isfinite(out)) return INFINITY;
    double d = fabs(out - gold);
    if (d == 0.0) return 0.0;
    return allowed > 0 ? d / allowed : INFINITY;
}

static inline KB_HD int kb_close(double out, double gold, double atol, double rtol)
{
    return kb_excess(out, gold, atol + rtol * fabs(gold)) <= 1.0;
}

/* ---- normwise criterion ------------------------------------------------------
 * Beside assert_close, a row (or the whole output where rows are not
 * independent: the loss vector of cross-entropy forward, dw) fails when
 *
 *   ||out - gold||_2  >  KB_NORMWISE_C * u(dtype) * ||gold||_2
 *                        + KB_NORMWISE_C32 * u_fp32 * ||s||_2
 *
 * u(dtype) is the unit roundoff of the output dtype (bf16 2^-8, fp16 2^-11,
 * fp32 2^-24). The gold is the exact result rounded once to the dtype, so
 * it is within u relative of the exact value element by element; a kernel
 * that computes in fp32 and rounds once is within u plus its fp32 error.
 * Their difference is at most 2u relative per element, so at most 2u in
 * norm: KB_NORMWISE_C = 4 leaves a factor 2 over that worst case (where
 * every element lands on opposite sides of a rounding boundary; typical
 * differences are far smaller). 4u is about SPEC's bf16 rtol
 * (1.6e-2 = 4.1u): in norm, the criterion asks of a whole row what
 * assert_close asks of each element above atol, and a 3 % scale error
 * (> 4 * 2^-8 = 1.56 %) fails every bf16 row, including rows whose values
 * are all below atol.
 *
 * s is the magnitude of the terms the fp32 evaluation combines, element by
 * element (kb_normwise in run/accuracy.cu): |gold| for the forwards, and
 * for outputs that are differences of larger terms (norm backward dx,
 * softmax and cross-entropy backward, the loss lse - x[target], dw summed
 * over rows) the size of those terms. An fp32 kernel's error is a few fp32
 * roundings of s (sums over N in fp32: tree reductions keep it to about
 * log2 of the terms per thread; exp2/rsqrt approximations are <= 4 u_fp32);
 * KB_NORMWISE_C32 = 32 covers that with margin, and is what matters for fp32
 * outputs and for rows whose result cancels (a near one-hot softmax
 * backward row, dx of a norm where g and xh*mean(g*xh) cancel).
 *
 * Below the dtype's smallest normal number rounding is absolute, not
 * relative: an element there is rounded to a multiple of the smallest
 * subnormal eta (fp16 2^-24; a softmax row of 10^6 fp16 values is mostly
 * subnormal), so two correct roundings of nearly equal values can differ by
 * eta whatever u says. Each of the nsub elements whose gold or output lies
 * below the smallest normal adds eta to the worst-case difference, with the
 * same factor-2 margin as the relative part: KB_NORMWISE_C/2 * eta *
 * sqrt(nsub). It vanishes for rows in the normal range.
 *
 * Rows whose gold is exactly zero (LayerNorm of a constant row, a zero
 * RMSNorm row) have no relative error: assert_close's atol judges them, and
 * they are counted, not failed. Non-finite elements are left to
 * assert_close (which fails them unless gold has the same value). */
#define KB_NORMWISE_C 4.0
#define KB_NORMWISE_C32 32.0

static inline KB_HD double kb_unit_roundoff(kb_dtype d)
{
    return d == KB_BF16 ? 0x1p-8 : d == KB_FP16 ? 0x1p-11 : 0x1p-24;
}

/* Smallest normal number and smallest subnormal spacing of a dtype. */
static inline KB_HD double kb_min_normal(kb_dtype d) { return d == KB_FP16 ? 0x1p-14 : 0x1p-126; }
static inline KB_HD double kb_subnormal_step(kb_dtype d)
{
    return d == KB_BF16 ? 0x1p-133 : d == KB_FP16 ? 0x1p-24 : 0x1p-149;
}

/* The relative part of the bound, KB_NORMWISE_C * u(dtype). */
static inline KB_HD double kb_normwise_bound(kb_dtype d) { return KB_NORMWISE_C * kb_unit_roundoff(d); }

/* One row from its sums of squares: err2 = sum (out-gold)^2, gold2 = sum
 * gold^2, s2 = sum s^2, and nsub elements below the smallest normal. Returns ||out-gold|| over the allowed norm (<= 1
 * passes), 0 for an exact row, NAN for a row that is not judged (gold all
 * zero). */
static inline KB_HD double kb_normwise_excess(double err2, double gold2, double s2, double nsub,
                                              kb_dtype d)
{
    if (err2 == 0.0) return 0.0;
    if (gold2 == 0.0) return NAN;
    const double allowed = kb_normwise_bound(d) * sqrt(gold2) +
                           KB_NORMWISE_C32 * KB_FP32_UNIT_ROUNDOFF * sqrt(s2) +
                           0.5 * KB_NORMWISE_C * kb_subnormal_step(d) * sqrt(nsub);
    return sqrt(err2) / allowed;
}

#endif
