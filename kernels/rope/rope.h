/* Rotary position embedding (rope_forward / rope_backward): what the three
 * backends, the references and the tests share. C11 and CUDA C.
 *
 * Layout (HF / Liger's apply_rotary_pos_emb, batch 1): a case M x N x K is
 * M positions (0..M-1), N query heads, K key/value heads, head_dim D =
 * KB_ROPE_HEAD_DIM. x = [q; k]: q is [N, M, D], k is [K, M, D], one tensor
 * of N + K heads, element (h, m, d) at (h*M + m)*D + d; q and k share that
 * formula, so the op is uniform over the N + K heads. cs = [cos; sin], each
 * [M, D] in the activations' dtype, row m for position m.
 *   forward, d < D/2:   out[d]     = x[d]*cos[d]         - x[d+D/2]*sin[d]
 *                       out[d+D/2] = x[d+D/2]*cos[d+D/2] + x[d]*sin[d+D/2]
 *   backward (the transpose), g = dy:
 *                       dx[d]      = g[d]*cos[d]         + g[d+D/2]*sin[d+D/2]
 *                       dx[d+D/2]  = g[d+D/2]*cos[d+D/2] - g[d]*sin[d]
 * HF's table duplicates the D/2 frequencies (cos[m][d] == cos[m][d+D/2]);
 * nothing here relies on it: both halves of cos and sin are read.
 * Bytes moved (the benchmark's model): 2*D*M*(N+K)*s + 2*D*M*s. */
#ifndef KB_ROPE_H
#define KB_ROPE_H

#include <stdint.h>

#include "buffers.h"
#include "kbench.h"
#include "reference.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* head_dim: a constant of the op. The kernels take it as a template
 * parameter (even; another value is a change of this line). */
#define KB_ROPE_HEAD_DIM 128
/* HF's rope_theta for Llama 2 (inv_freq[i] = base^(-2i/D)). */
#define KB_ROPE_BASE 10000.0

/* Heads of a case: q's and k's together. */
static inline int64_t kb_rope_heads(const kb_problem *p) { return p->N + p->K; }

/* KB_OK when p is a rope case the kernels run: M, N, K >= 1, a known dtype,
 * and the (N+K)*M*D elements (and their bytes) well inside int64_t. Else
 * KB_ERR_ARG for a bad problem, KB_ERR_UNSUPPORTED (a SKIP) for one too
 * large, each message naming who and the shape. */
static inline kb_status kb_rope_check(const kb_problem *p, const char *who, kb_err *e)
{
    const int64_t lim = ((int64_t)1 << 56) / KB_ROPE_HEAD_DIM;
    char shape[72];
    kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
    if (p->M < 1 || p->N < 1 || p->K < 1 || (unsigned)p->dtype >= KB_NUM_DTYPES)
        return KB_FAIL(e, KB_ERR_ARG, "%s: bad problem %s dtype %d (M, N, K >= 1)", who, shape,
                       (int)p->dtype);
    /* A SKIP, as any shape whose tensors do not fit: 2^56 elements is more
     * than any device holds, and each backend says so alike. */
    if (p->N > lim || p->K > lim || p->M > lim / (p->N + p->K))
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "%s: problem %s too large (more than 2^56 elements in q and k)", who,
                       shape);
    return KB_OK;
}

/* ---- reference (reference.c, reference.cu) ---------------------------------- */
/* HF's table at position m, dimension d (0 <= d < D): inv_freq[i] =
 * base^(-2i/D) for i < D/2, angle = m * inv_freq[d mod D/2]; *c = cos,
 * *s = sin of it, in double. M is the table's length (m < M). */
void kb_rope_ref_cos_sin(int64_t M, int64_t D, double base, int64_t m, int64_t d, double *c,
                         double *s);

/* p's op (p->bench KB_ROPE_FWD or KB_ROPE_BWD) on host floats, in double,
 * rounded to float: the forward reads in->x and in->cs, the backward in->dy
 * and in->cs; out->out gets (N+K)*M*D floats. KB_ERR_ARG naming the shape
 * for a bad problem or a missing array. */
kb_status kb_rope_ref_cpu(const kb_problem *p, const kb_ref_in *in, kb_ref_out *out, kb_err *e);

/* b->t.cs filled from kb_rope_ref_cos_sin (double, rounded to the dtype):
 * deterministic, the same on every GPU. */
kb_status kb_rope_ref_gpu_inputs(kb_buffers *b, cudaStream_t s, kb_err *e);
/* b->gold from the stored inputs (double math, rounded to fp32, then to the
 * dtype) and b->gold_scale (fp32, out's shape): |a*cos| + |b*sin| of the two
 * terms each element adds. */
kb_status kb_rope_ref_gpu_gold(kb_buffers *b, cudaStream_t s, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
