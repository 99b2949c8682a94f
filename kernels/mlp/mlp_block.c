/* mlp_forward, y = (act(x Wg^T) * (x Wu^T)) Wd^T, by four backends that
 * differ only around the GEMMs (all GEMMs are cuBLASLt's, lt_gemm.h; the
 * GLU kernels are kernels/glu's):
 *
 *   eager              gate = GEMM, up = GEMM, a = act(gate), h = a * up
 *                      (kb_glu_eager_launch: PyTorch eager's two kernels),
 *                      y = GEMM(h): 5 kernels
 *   fused              gate, up = two GEMMs, h = act(gate) * up in one kernel
 *                      (kb_glu_fwd_launch "fused", Liger's design), y: 4
 *   tuned              gu = ONE GEMM against the concatenated [2H, D] weight
 *                      [Wg; Wu] (x read once), the tuned GLU kernel reading
 *                      gate = gu, up = gu + H with ld_in = 2H, y: 3
 *   cublaslt_epilogue  a = GEMM with cuBLASLt's GELU epilogue (tanh GELU,
 *                      applied before the store: no gate tensor), up = GEMM,
 *                      h = a * up (kb_mlp_mul), y: 4. GeGLU only: cuBLASLt
 *                      has no SiLU epilogue (SwiGLU cases would SKIP).
 *
 * One file because the difference between backends is the point: it is the
 * switch in run. Intermediates live in the case's workspace (256-byte
 * aligned slices), after cuBLASLt's own workspace. Limits: those of
 * cuBLASLt (any T, D, H >= 1; unaligned leading dimensions pick slower
 * algorithms) and of the GLU kernels (any M, H). bf16 is what is
 * registered; fp16 and fp32 would run. */
#include <stdlib.h>
#include <string.h>

#include "../glu/glu.h"
#include "lt_gemm.h"
#include "mlp.h"
#include "mlp_ref.h"
#include "registry.h"

enum { MLP_EAGER, MLP_FUSED, MLP_TUNED, MLP_EPILOGUE };

typedef struct {
    int backend, act, sm_count;
    kb_lt lt;          /* cuBLASLt, loaded for this case */
    kb_lt_gemm up;     /* x Wu^T, [T,H] (tuned: x [Wg;Wu]^T, [T,2H]) */
    kb_lt_gemm gate;   /* x Wg^T, [T,H] (epilogue: with GELU); unused by tuned */
    kb_lt_gemm down;   /* h Wd^T, [T,D] */
    size_t off[4];     /* workspace slices: gate (tuned: gu), up, a, h */
    double saved;      /* bytes of HBM round trip avoided against eager */
} mlp_state;

static size_t align256(size_t v) { return (v + 255) / 256 * 256; }

static int backend_of(const char *name)
{
    static const char *const names[] = {"eager", "fused", "tuned", "cublaslt_epilogue"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

double kb_mlp_intermediate_bytes(const char *backend, kb_dtype dt, int64_t T, int64_t D,
                                 int64_t H)
{
    const double s = (double)kb_dtype_size(dt), TH = (double)T * (double)H, TD = (double)T * D;
    switch (backend_of(backend)) {
    /* gate, up, a, h: each written once and read back once; x read twice */
    case MLP_EAGER: return 8 * TH * s + TD * s;
    /* gate, up, h (eager's a never exists); x read twice */
    case MLP_FUSED:
    case MLP_EPILOGUE: return 6 * TH * s + TD * s;
    /* gu = [gate | up] and h; x read once */
    case MLP_TUNED: return 6 * TH * s;
    }
    return 0;
}

static void teardown(void *state)
{
    mlp_state *st = state;
    if (!st) return;
    if (st->lt.lib) {
        kb_lt_gemm_destroy(&st->lt, &st->up);
        kb_lt_gemm_destroy(&st->lt, &st->gate);
        kb_lt_gemm_destroy(&st->lt, &st->down);
        kb_lt_close(&st->lt);
    }
    free(st);
}

/* Byte alignment of wts + off (wts is 256-byte aligned), at most 256. */
static uint32_t align_at(size_t off)
{
    uint32_t a = 256;
    while (a > 1 && off % a) a /= 2;
    return a;
}

static kb_status plan(const kb_problem *p, mlp_state *st, kb_err *e)
{
    const int64_t T = p->M, D = p->N, H = p->K;
    const size_t hd = (size_t)H * (size_t)D * kb_dtype_size(p->dtype);
    KB_TRY(kb_lt_open(&st->lt, e));
    if (st->backend == MLP_TUNED)
        KB_TRY(kb_lt_gemm_plan(&st->lt, &st->up, p->dtype, T, 2 * H, D, 2 * H, 0, 256, e));
    else {
        KB_TRY(kb_lt_gemm_plan(&st->lt, &st->up, p->dtype, T, H, D, H, 0, align_at(hd), e));
        KB_TRY(kb_lt_gemm_plan(&st->lt, &st->gate, p->dtype, T, H, D, H,
                               st->backend == MLP_EPILOGUE, 256, e));
    }
    return kb_lt_gemm_plan(&st->lt, &st->down, p->dtype, T, D, H, D, 0, align_at(2 * hd), e);
}

static kb_status setup(const kb_problem *p, const kb_setup_ctx *ctx, const char *backend,
                       void **state, size_t *ws, kb_err *e)
{
    if (p->K < 1) return KB_FAIL(e, KB_ERR_ARG, "mlp_forward needs MxNxK (T x D x H)");
    mlp_state *st = calloc(1, sizeof *st);
    if (!st) return KB_FAIL(e, KB_ERR_NOMEM, "mlp_forward: out of host memory");
    st->backend = backend_of(backend);
    /* mlp_forward is GeGLU, mlp_swiglu_forward SwiGLU */
    st->act = kb_mlp_ref_act(p->bench);
    st->sm_count = ctx->sm_count;
    if (st->backend == MLP_EPILOGUE && st->act != KB_MLP_GELU_TANH) {
        free(st);
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "cuBLASLt has no SiLU epilogue (only GELU, tanh approximation)");
    }
    kb_status rc = plan(p, st, e);
    if (rc != KB_OK) {
        teardown(st);
        return rc;
    }
    const size_t th = (size_t)p->M * (size_t)p->K * kb_dtype_size(p->dtype);
    size_t cur = align256(KB_LT_WORKSPACE);
    const size_t sizes[4] = {st->backend == MLP_TUNED      ? 2 * th
                             : st->backend == MLP_EPILOGUE ? 0 /* GELU lands in a */
                                                           : th,
                             st->backend == MLP_TUNED ? 0 : th,
                             st->backend == MLP_EAGER || st->backend == MLP_EPILOGUE ? th : 0, th};
    for (int i = 0; i < 4; i++) {
        st->off[i] = cur;
        cur += align256(sizes[i]);
    }
    st->saved = kb_mlp_intermediate_bytes("eager", p->dtype, p->M, p->N, p->K) -
                kb_mlp_intermediate_bytes(backend, p->dtype, p->M, p->N, p->K);
    *state = st;
    *ws = cur;
    return KB_OK;
}

static kb_status run(const kb_problem *p, const kb_tensors *t, void *state, cudaStream_t s,
                     kb_err *e)
{
    const mlp_state *st = state;
    const int64_t T = p->M, D = p->N, H = p->K;
    const size_t es = kb_dtype_size(p->dtype);
    char *w = t->workspace;
    void *lt_ws = w, *gate = w + st->off[0], *up = w + st->off[1], *a = w + st->off[2],
         *h = w + st->off[3];
    const char *Wg = t->wts, *Wu = Wg + (size_t)H * D * es, *Wd = Wu + (size_t)H * D * es;
    const kb_glu_act act = (kb_glu_act)st->act;
    switch (st->backend) {
    case MLP_EAGER:
    case MLP_FUSED:
        KB_TRY(kb_lt_gemm_run(&st->lt, &st->gate, t->x, Wg, gate, lt_ws, s, e));
        KB_TRY(kb_lt_gemm_run(&st->lt, &st->up, t->x, Wu, up, lt_ws, s, e));
        if (st->backend == MLP_EAGER)
            KB_TRY(kb_glu_eager_launch(p->dtype, act, gate, up, H, a, h, T, H, s, e));
        else
            KB_TRY(kb_glu_fwd_launch("fused", p->dtype, act, gate, up, H, h, T, H, s, e));
        break;
    case MLP_TUNED: /* Wg and Wu are adjacent: the [2H, D] weight */
        KB_TRY(kb_lt_gemm_run(&st->lt, &st->up, t->x, Wg, gate, lt_ws, s, e));
        KB_TRY(kb_glu_fwd_launch("tuned", p->dtype, act, gate, (char *)gate + (size_t)H * es,
                                 2 * H, h, T, H, s, e));
        break;
    case MLP_EPILOGUE:
        KB_TRY(kb_lt_gemm_run(&st->lt, &st->gate, t->x, Wg, a, lt_ws, s, e));
        KB_TRY(kb_lt_gemm_run(&st->lt, &st->up, t->x, Wu, up, lt_ws, s, e));
        KB_TRY(kb_mlp_mul(p->dtype, a, up, h, T * H, st->sm_count, s, e));
        break;
    }
    return kb_lt_gemm_run(&st->lt, &st->down, h, Wd, t->out, lt_ws, s, e);
}

/* What cuBLASLt picked (lt_gemm.h's notation) and the HBM bytes saved. */
static void describe(const void *state, char *buf, size_t len)
{
    const mlp_state *st = state;
    const double mb = st->saved / 1e6;
    if (st->backend == MLP_TUNED)
        snprintf(buf, len, "lt gu=%s down=%s; saved %.0f MB", st->up.text, st->down.text, mb);
    else
        snprintf(buf, len, "lt %s=%s up=%s down=%s; saved %.0f MB",
                 st->backend == MLP_EPILOGUE ? "gelu" : "gate", st->gate.text, st->up.text,
                 st->down.text, mb);
}

#define MLP_IMPL(be)                                                                           \
    static kb_status setup_##be(const kb_problem *p, const kb_setup_ctx *ctx, void **state,     \
                                size_t *ws, kb_err *e)                                         \
    {                                                                                          \
        return setup(p, ctx, #be, state, ws, e);                                               \
    }                                                                                          \
    const kb_impl kb_mlp_##be##_fwd = {#be, KB_MLP_FWD, setup_##be, run, describe, teardown,   \
                                       NULL};
/* mlp_swiglu_forward: the same backends but the epilogue one (no SiLU epilogue). */
#define MLP_SWIGLU_IMPL(be)                                                                    \
    const kb_impl kb_mlp_swiglu_##be##_fwd = {#be, KB_MLP_SWIGLU_FWD, setup_##be, run,         \
                                              describe, teardown, NULL};

MLP_IMPL(eager)
MLP_IMPL(fused)
MLP_IMPL(tuned)
MLP_IMPL(cublaslt_epilogue)
MLP_SWIGLU_IMPL(eager)
MLP_SWIGLU_IMPL(fused)
MLP_SWIGLU_IMPL(tuned)
