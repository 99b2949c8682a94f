/* rope's CPU reference (C11, no CUDA): the table HF builds and the rotation
 * (forward) or its transpose (backward) on host floats, in double, rounded
 * to float at the end. Used by the unit tests and to check the GPU
 * reference on small shapes. Layout and formulas: rope.h.
 * Limits: any M, N, K >= 1 (kb_rope_check), D = KB_ROPE_HEAD_DIM. */
#include <math.h>

#include "rope.h"

void kb_rope_ref_cos_sin(int64_t M, int64_t D, double base, int64_t m, int64_t d, double *c,
                         double *s)
{
    (void)M; /* the angle depends on m alone; M is the table's length */
    const int64_t half = D / 2;
    const int64_t i = d % half; /* HF: emb = cat(freqs, freqs) */
    /* inv_freq = 1 / base^(arange(0, D, 2) / D) */
    const double inv_freq = 1.0 / pow(base, (double)(2 * i) / (double)D);
    const double a = (double)m * inv_freq;
    *c = cos(a);
    *s = sin(a);
}

kb_status kb_rope_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e)
{
    static const char who[] = "cpu reference rope";
    KB_TRY(kb_rope_check(p, who, e));
    char shape[72];
    kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
    const int bwd = p->bench == KB_ROPE_BWD;
    if (p->bench != KB_ROPE_FWD && !bwd)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: benchmark %d is not rope", who, shape,
                       (int)p->bench);
    const float *src = bwd ? (in ? in->dy : NULL) : (in ? in->x : NULL);
    if (!src || !in->cs || !out || !out->out)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: missing %s, cs or out", who, shape,
                       bwd ? "dy" : "x");
    const int64_t D = KB_ROPE_HEAD_DIM, H = D / 2, M = p->M, heads = kb_rope_heads(p);
    const float *cosv = in->cs, *sinv = in->cs + M * D;
    for (int64_t h = 0; h < heads; h++)
        for (int64_t m = 0; m < M; m++) {
            const float *a = src + (h * M + m) * D;
            const float *c = cosv + m * D, *s = sinv + m * D;
            float *o = out->out + (h * M + m) * D;
            for (int64_t d = 0; d < H; d++) {
                const double lo = a[d], hi = a[d + H];
                double olo, ohi;
                if (bwd) {
                    olo = lo * c[d] + hi * s[d + H];
                    ohi = hi * c[d + H] - lo * s[d];
                } else {
                    olo = lo * c[d] - hi * s[d];
                    ohi = hi * c[d + H] + lo * s[d + H];
                }
                o[d] = (float)olo;
                o[d + H] = (float)ohi;
            }
        }
    return KB_OK;
}
