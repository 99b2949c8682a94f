/* One allocation per case, carved into 256-byte aligned tensors; outputs and
 * the workspace sit between guard bands (guard.h), every tensor where it
 * would sit without them, modulo 2 MiB (see "Placement" below). */
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
    for (int r = 0; r < KB_NUM_ROLES; r++) l.bytes[r] = kb_tensor_bytes(p, KB_T(r));
    l.bytes[KB_SLOT_GOLD] = l.bytes[KB_R_OUT];
    l.bytes[KB_SLOT_GOLD_DW] = l.bytes[KB_R_DW];
    l.bytes[KB_SLOT_WS] = ws;
    const kb_err_scale sc = kb_bench_info_get(p->bench)->scale;
    if (sc == KB_SCALE_GEMM || sc == KB_SCALE_TERMS)
        l.bytes[KB_SLOT_GOLD_SCALE] = (size_t)kb_out_elems(p) * sizeof(float);
    *out = l;
}

const int kb_slot_order[KB_NSLOTS] = {
    KB_R_X,   KB_R_UP,  KB_R_TARGET, KB_R_DLOSS,   KB_R_DY,         KB_R_W,
    KB_R_Y,   KB_R_LSE, KB_R_MEAN,   KB_R_RSTD,    KB_R_OUT,        KB_R_DW,
    KB_SLOT_GOLD, KB_SLOT_GOLD_DW, KB_SLOT_WS, KB_R_WTS, KB_SLOT_GOLD_SCALE,
    KB_R_RES, KB_R_DRES, KB_R_CS,
};
_Static_assert(KB_NSLOTS == 20, "kb_slot_order lists every slot once");

int kb_slot_guarded(int slot) { return slot == KB_R_OUT || slot == KB_R_DW || slot == KB_SLOT_WS; }

/* Placement. A library kernel can be sensitive to where its tensors sit
 * relative to each other inside a 2 MiB page (the GPU's large page, inside
 * which virtual and physical address bits agree, so the DRAM channel
 * interleave sees the same offsets): cuDNN's RMSNorm backward lost time once
 * guard bands shifted the outputs by 4 KiB, and the same build with the bands
 * compiled out did not (docs/dev/architecture.md, "Where a case's tensors sit", has
 * the measurement). So every tensor sits at its offset in the band-free layout
 * (tensors back to back, 256-byte aligned) modulo 2 MiB: a band costs padding
 * (under 2 MiB per tensor after it), never a shift within the page. Without
 * bands the two layouts are the same. */
#define PAGE KB_PLACE_PERIOD

size_t kb_buffers_place(const kb_layout *l, size_t off[KB_NSLOTS])
{
    size_t plain = 0, at = 0; /* ends of the band-free and the real layout */
    for (int k = 0; k < KB_NSLOTS; k++) {
        const int i = kb_slot_order[k];
        const size_t bytes = l->bytes[i];
        if (!bytes) continue;
        const size_t band = kb_slot_guarded(i) ? KB_GUARD_BYTES : 0;
        const size_t min = at + band;
        off[i] = min + (plain % PAGE + PAGE - min % PAGE) % PAGE;
        plain += up(bytes);
        at = off[i] + up(bytes) + band;
    }
    return at;
}

size_t kb_buffers_bytes(const kb_problem *p, size_t ws)
{
    kb_layout l;
    kb_buffers_layout(p, ws, &l);
    size_t off[KB_NSLOTS];
    return kb_buffers_place(&l, off);
}

/* The guarded tensor of `bytes` at base + off: records its bands. */
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
