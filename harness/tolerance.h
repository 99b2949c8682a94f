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
/* Norm backward dx: allowance for fp32 evaluation where the formula's terms
 * cancel (see harness/accuracy.cu, dx_allowance). */
#define KB_DX_ROUNDING 8.0

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

#endif
