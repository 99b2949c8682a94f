/* One allocation per case, carved into 256-byte aligned tensors; outputs and
 * the workspace sit between guard bands (guard.h). */
#include "buffers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

#define ALIGN 256

static size_t up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

int64_t kb_out_elems(const kb_problem *p) { return kb_out_rows(p) * kb_out_cols(p); }

/* Byte size of every tensor the benchmark uses (0: not used), from its
 * descriptor; gold and gold_dw mirror out and dw. */
void kb_buffers_layout(const kb_problem *p, size_t ws, kb_layout *out)
{
    kb_layout l;
    memset(&l, 0, sizeof l);
    l.x = kb_tensor_bytes(p, KB_T_X);
    l.target = kb_tensor_bytes(p, KB_T_TARGET);
    l.dloss = kb_tensor_bytes(p, KB_T_DLOSS);
    l.dy = kb_tensor_bytes(p, KB_T_DY);
    l.w = kb_tensor_bytes(p, KB_T_W);
    l.y = kb_tensor_bytes(p, KB_T_Y);
    l.lse = kb_tensor_bytes(p, KB_T_LSE);
    l.mean = kb_tensor_bytes(p, KB_T_MEAN);
    l.rstd = kb_tensor_bytes(p, KB_T_RSTD);
    l.out = (size_t)kb_out_elems(p) * kb_dtype_size(p->dtype);
    l.dw = kb_tensor_bytes(p, KB_T_DW);
    l.gold = l.out;
    l.gold_dw = l.dw;
    l.ws = ws;
    l.up = kb_tensor_bytes(p, KB_T_UP);
    l.wts = kb_tensor_bytes(p, KB_T_WTS);
    if (kb_bench_info_get(p->bench)->scale == KB_SCALE_GEMM)
        l.gold_scale = (size_t)kb_out_elems(p) * sizeof(float);
    *out = l;
}

/* Guarded tensors: a band before, the tensor, its alignment padding and a
 * band after. */
static size_t guarded(size_t bytes) { return bytes ? up(bytes) + 2 * KB_GUARD_BYTES : 0; }

size_t kb_buffers_bytes(const kb_problem *p, size_t ws)
{
    kb_layout l;
    kb_buffers_layout(p, ws, &l);
    const size_t *f = &l.x;
    size_t total = 0;
    for (size_t i = 0; i < sizeof l / sizeof *f; i++) total += up(f[i]);
    return total - up(l.out) - up(l.dw) - up(l.ws) + guarded(l.out) + guarded(l.dw) +
           guarded(l.ws);
}

/* The tensor of `bytes` inside its bands at *cur; records the guard. */
static void *take_guarded(kb_buffers *b, char **cur, size_t bytes, size_t elem, const char *name)
{
    if (!bytes) return NULL;
    char *t = *cur + KB_GUARD_BYTES;
    kb_guard *g = &b->guards[b->nguards++];
    g->name = name;
    g->before = *cur;
    g->after = t + bytes;
    g->after_bytes = up(bytes) - bytes + KB_GUARD_BYTES;
    g->elem_bytes = elem;
    *cur += guarded(bytes);
    return t;
}

kb_status kb_buffers_fit(const kb_problem *p, size_t need, size_t free_b, kb_err *e)
{
    /* Headroom for the reference's scratch, the L2 flush buffer and cuDNN. */
    const size_t headroom = (size_t)1 << 30;
    char shape[72];
    kb_shape_format(shape, sizeof shape, p->M, p->N, p->K);
    if (need > free_b || free_b - need < headroom)
        return KB_FAIL(e, KB_ERR_DEVMEM,
                       "%s %s %s needs %.2f GB of device memory "
                       "(+1 GB headroom), only %.2f GB free: skipped",
                       kb_bench_info_get(p->bench)->name, kb_dtype_name(p->dtype), shape,
                       need / 1e9, free_b / 1e9);
    return KB_OK;
}

kb_status kb_buffers_alloc(const kb_problem *p, size_t ws, kb_buffers *b, kb_err *e)
{
    memset(b, 0, sizeof *b);
    b->p = *p;
    const size_t need = kb_buffers_bytes(p, ws);
    size_t free_b = 0, total_b = 0;
    KB_CUDA(e, cudaMemGetInfo(&free_b, &total_b));
    KB_TRY(kb_buffers_fit(p, need, free_b, e));
    cudaError_t rc = cudaMalloc(&b->block, need);
    if (rc == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return KB_FAIL(e, KB_ERR_DEVMEM, "cudaMalloc of %.2f GB failed: skipped", need / 1e9);
    }
    KB_CUDA(e, rc);
    b->bytes = need;
    kb_layout l;
    kb_buffers_layout(p, ws, &l);
    char *cur = (char *)b->block;
#define TAKE(field) (l.field ? (void *)(cur += up(l.field), cur - up(l.field)) : NULL)
    b->t.x = TAKE(x);
    b->t.up = TAKE(up);
    b->t.target = (const int64_t *)TAKE(target);
    b->t.dloss = (const float *)TAKE(dloss);
    b->t.dy = TAKE(dy);
    b->t.w = (const float *)TAKE(w);
    b->t.y = TAKE(y);
    b->t.lse = (const float *)TAKE(lse);
    b->t.mean = (const float *)TAKE(mean);
    b->t.rstd = (const float *)TAKE(rstd);
    b->t.out = take_guarded(b, &cur, l.out, kb_dtype_size(p->dtype), "output");
    b->t.dw = (float *)take_guarded(b, &cur, l.dw, 4, "dw");
    b->gold = TAKE(gold);
    b->gold_dw = (float *)TAKE(gold_dw);
    b->t.workspace = take_guarded(b, &cur, l.ws, 1, "workspace");
    b->t.wts = TAKE(wts);
    b->gold_scale = (float *)TAKE(gold_scale);
    b->t.workspace_bytes = ws;
#undef TAKE
    return KB_OK;
}

void kb_buffers_free(kb_buffers *b)
{
    if (b->block) cudaFree(b->block);
    memset(b, 0, sizeof *b);
}

kb_status kb_buffers_poison(kb_buffers *b, cudaStream_t s, kb_err *e)
{
    /* All-ones bytes are a NaN in bf16, fp16 and fp32 alike. */
    const size_t out_bytes = (size_t)kb_out_elems(&b->p) * kb_dtype_size(b->p.dtype);
    KB_CUDA(e, cudaMemsetAsync(b->t.out, 0xff, out_bytes, s));
    if (b->t.dw) KB_CUDA(e, cudaMemsetAsync(b->t.dw, 0xff, (size_t)b->p.N * 4, s));
    for (int i = 0; i < b->nguards; i++) {
        const kb_guard *g = &b->guards[i];
        KB_CUDA(e, cudaMemsetAsync(g->before, KB_GUARD_PATTERN, KB_GUARD_BYTES, s));
        KB_CUDA(e, cudaMemsetAsync(g->after, KB_GUARD_PATTERN, g->after_bytes, s));
    }
    return KB_OK;
}

int kb_buffers_guards_broken(const kb_buffers *b, char *msg, size_t len, kb_status *st,
                             kb_err *e)
{
    unsigned char before[KB_GUARD_BYTES], after[KB_GUARD_BYTES + ALIGN];
    *st = KB_OK;
    for (int i = 0; i < b->nguards; i++) {
        const kb_guard *g = &b->guards[i];
        cudaError_t rc = cudaMemcpy(before, g->before, KB_GUARD_BYTES, cudaMemcpyDeviceToHost);
        if (rc == cudaSuccess) rc = cudaMemcpy(after, g->after, g->after_bytes, cudaMemcpyDeviceToHost);
        if (rc != cudaSuccess) {
            *st = KB_FAIL(e, KB_ERR_CUDA, "reading the guard bands of %s: %s", g->name,
                          cudaGetErrorString(rc));
            return 0;
        }
        if (kb_guard_judge(g, before, after, msg, len)) return 1;
    }
    return 0;
}
