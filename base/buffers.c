/* Where a case's tensors sit in its one allocation: the layout, the
 * placement and the fit rule, pure C (the allocation, poison and guard bands
 * are run/buffers.c's). */
#include "buffers.h"


#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

#define ALIGN 256

static size_t up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* Saturating size arithmetic: a shape --shape accepts (kb_shape_too_large
 * bounds M*N, M*K and N*K) can still need more bytes than size_t holds, and
 * a count that wrapped around could come out small enough for
 * kb_buffers_fit to pass (add_rmsnorm_forward fp32 2^30 x 2^30 came to 4.3
 * GB): the case would then write far past its block. SIZE_MAX instead never
 * fits, so such a case SKIPs naming what it needs. */
static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
static size_t mul_sat(size_t a, size_t b) { return a && b > SIZE_MAX / a ? SIZE_MAX : a * b; }

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
    if (sc == KB_SCALE_GEMM || sc == KB_SCALE_TERMS) {
        /* rows * cols, not kb_out_elems: that int64 product overflows for
         * the shapes whose bytes saturate */
        int64_t rows, cols;
        kb_tensor_dims(p, KB_R_OUT, &rows, &cols);
        l.bytes[KB_SLOT_GOLD_SCALE] = mul_sat(mul_sat((size_t)rows, (size_t)cols), sizeof(float));
    }
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
        /* a tensor within a page of SIZE_MAX: its end, padded and banded,
         * overflows below */
        if (bytes > SIZE_MAX - 2 * PAGE) return SIZE_MAX;
        const size_t band = kb_slot_guarded(i) ? KB_GUARD_BYTES : 0;
        const size_t min = add_sat(at, band);
        const size_t pad = (plain % PAGE + PAGE - min % PAGE) % PAGE;
        off[i] = add_sat(min, pad);
        plain = add_sat(plain, up(bytes));
        at = add_sat(add_sat(off[i], up(bytes)), band);
        if (at == SIZE_MAX) return SIZE_MAX;
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

