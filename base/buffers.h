/* Device buffers of one case: inputs, saved forward statistics, outputs,
 * gold and the backend's workspace, in one allocation: the type the
 * references and the harness share, and the layout rules (base/buffers.c,
 * pure). Allocating, poisoning and checking the guard bands is the run
 * layer's (run/buffers_gpu.h). */
#ifndef KB_BUFFERS_H
#define KB_BUFFERS_H

#include "guard.h"
#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kb_buffers {
    kb_problem p;
    kb_tensors t;       /* what the backend sees                            */
    void *gold;         /* reference output, same dtype/size as t.out       */
    float *gold_dw;     /* reference dw [N] (norm backward)                 */
    float *gold_scale;  /* KB_SCALE_GEMM: per-element error scale of the gold,
                           fp32, out's shape (the reference writes it)      */
    void *block;        /* one cudaMalloc holding everything                */
    size_t bytes;
    int inputs;         /* kb_inputs (registry.h) the generator draws x from */
    kb_guard guards[3]; /* around out, dw, workspace (those that exist)     */
    int nguards;
} kb_buffers;

/* The block's slots: every tensor role (kb_role, kbench.h), then the gold
 * outputs, the workspace and the gold's error scale. */
enum { KB_SLOT_GOLD = KB_NUM_ROLES, KB_SLOT_GOLD_DW, KB_SLOT_WS, KB_SLOT_GOLD_SCALE, KB_NSLOTS };
/* Byte size of every slot a case allocates (0: not used), before alignment
 * and guard bands; ws is the workspace. Host only. */
typedef struct {
    size_t bytes[KB_NSLOTS];
} kb_layout;
void kb_buffers_layout(const kb_problem *p, size_t ws, kb_layout *out);
/* The order slots are placed in the block: the roles the first ops had in
 * the order they were first laid out (a tensor's place inside a 2 MiB page
 * is part of what a library kernel's timing was measured with, see
 * buffers.c), then the later roles; and whether each is guarded (out, dw,
 * the workspace). */
extern const int kb_slot_order[KB_NSLOTS];
int kb_slot_guarded(int slot);
/* Every tensor sits at its offset in the band-free layout modulo this
 * (buffers.c says why). */
#define KB_PLACE_PERIOD ((size_t)2 << 20)
/* Offsets of l's tensors in the block (those of 0 bytes are left unset) and
 * the block's size; SIZE_MAX (the offsets then unusable) when the block would
 * not fit in size_t, which kb_buffers_fit refuses like any block too large for
 * the device. Pure. */
size_t kb_buffers_place(const kb_layout *l, size_t off[KB_NSLOTS]);

/* Bytes kb_buffers_alloc would take for p with ws bytes of workspace. */
size_t kb_buffers_bytes(const kb_problem *p, size_t ws);
/* KB_ERR_DEVMEM (with the sizes in the message: the case SKIPs) when need
 * bytes and 1 GB of headroom do not fit in free_b bytes of free device
 * memory. Pure: the rule kb_buffers_alloc applies. */
kb_status kb_buffers_fit(const kb_problem *p, size_t need, size_t free_b, kb_err *e);
/* Number of elements / bytes of t.out for p. */
int64_t kb_out_elems(const kb_problem *p);

#ifdef __cplusplus
}
#endif
#endif
