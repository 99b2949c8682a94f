/* One allocation per case, carved into 256-byte aligned tensors; outputs and
 * the workspace sit between guard bands (guard.h), every tensor where it
 * would sit without them, modulo 2 MiB (base/buffers.c, "Placement"). */
#include "buffers_gpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

#define ALIGN 256

static size_t up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static void *guard_at(kb_buffers *b, char *base, size_t off, size_t bytes, size_t elem,
                      const char *name)
{
    if (!bytes) return NULL;
    char *t = base + off;
    kb_guard *g = &b->guards[b->nguards++];
    g->name = name;
    g->before = t - KB_GUARD_BYTES;
    g->after = t + bytes;
    g->after_bytes = up(bytes) - bytes + KB_GUARD_BYTES;
    g->elem_bytes = elem;
    return t;
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
    size_t off[KB_NSLOTS];
    kb_buffers_place(&l, off);
    char *base = (char *)b->block;
#define AT(i) (l.bytes[i] ? (void *)(base + off[i]) : NULL)
    /* Unguarded roles by index; out and dw between guard bands. */
    for (int r = 0; r < KB_NUM_ROLES; r++)
        if (!kb_slot_guarded(r)) b->t.role[r] = AT(r);
    b->t.out = guard_at(b, base, off[KB_R_OUT], l.bytes[KB_R_OUT], kb_dtype_size(p->dtype), "output");
    b->t.dw = (float *)guard_at(b, base, off[KB_R_DW], l.bytes[KB_R_DW], 4, "dw");
    b->gold = AT(KB_SLOT_GOLD);
    b->gold_dw = (float *)AT(KB_SLOT_GOLD_DW);
    b->t.workspace = guard_at(b, base, off[KB_SLOT_WS], l.bytes[KB_SLOT_WS], 1, "workspace");
    b->gold_scale = (float *)AT(KB_SLOT_GOLD_SCALE);
    b->t.workspace_bytes = ws;
#undef AT
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
