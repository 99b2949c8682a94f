/* add_rmsnorm: the residual add fused into RMSNorm, as vLLM's
 * fused_add_rms_norm and Liger's LigerFusedAddRMSNorm compute it:
 *   forward  h = x + res (stored in the dtype), y = h * rstd * w;
 *            out = [h; y], both written
 *   backward dx = rstd * (g - xh * mean(g * xh)) + dres, g = dy * w,
 *            xh = h * rstd (the gradient of x and of res: one tensor),
 *            dw = sum over rows of dy * xh
 * Its references are its own (reference.c, reference.cu; add_rmsnorm_ref.h
 * has the formulas), its error scale the terms each output adds. */
#include "add_rmsnorm_ref.h"
#include "registry.h"

/* Hidden sizes of Llama 3 8B (4096), Llama 2 13B (5120) and Llama 3 70B
 * (8192) at 4K to 32K tokens; odd: a width one short of a power of two, an
 * odd token count beside an odd width, a single column and a single row;
 * fp16 and fp32: one aligned and one odd shape. */
static const kb_shape ar_default[] = {
    {4096, 4096}, {8192, 4096}, {16384, 4096}, {32768, 4096}, {4096, 5120},
    {16384, 5120}, {32768, 5120}, {4096, 8192}, {16384, 8192}, {32768, 8192},
};
static const kb_shape ar_odd[] = {{32768, 4095}, {4099, 5121}, {4096, 1}, {1, 8192}};
static const kb_shape ar_short[] = {{16384, 4096}, {4099, 5121}};
static const kb_shape_lists ar_shapes = {
    {ar_default, ar_odd, ar_short, NULL},
    {KB_COUNT(ar_default), KB_COUNT(ar_odd), KB_COUNT(ar_short), 0}};

/* x and res read, h and y written: 4 M N s; w read: 4 N */
KB_OP(KB_ADD_RMSNORM_FWD, add_rmsnorm_forward, .family = "add_rmsnorm", .backward = 0,
      .x_dist = KB_X_NORM, .tensors = KB_T_X | KB_T_RES | KB_T_W,
      .ref_reads = KB_T_X | KB_T_RES | KB_T_W, .out_pair = 1, .bytes = {.mn = 4, .n_bytes = 4},
      .inputs = KB_KINDS_NORM, .sweep = (int)KB_COUNT(ar_default), .shapes = &ar_shapes,
      .scale = KB_SCALE_TERMS, .mutant = KB_MUTANT_NONE, .ref_cpu = kb_add_rmsnorm_ref_cpu);

/* h, dy and dres read, dx written: 4 M N s; w read, dw written: 8 N (the
 * saved rstd, like the norms', is not counted) */
KB_OP(KB_ADD_RMSNORM_BWD, add_rmsnorm_backward, .family = "add_rmsnorm", .backward = 1,
      .x_dist = KB_X_NORM, .tensors = KB_T_X | KB_T_W | KB_T_DY | KB_T_DRES | KB_T_RSTD | KB_T_DW,
      .ref_reads = KB_T_X | KB_T_W | KB_T_DY | KB_T_DRES | KB_T_RSTD | KB_T_DW,
      .bytes = {.mn = 4, .n_bytes = 8}, .inputs = KB_KINDS_NORM,
      .sweep = (int)KB_COUNT(ar_default), .shapes = &ar_shapes, .scale = KB_SCALE_TERMS,
      .mutant = KB_MUTANT_NONE, .ref_cpu = kb_add_rmsnorm_ref_cpu);
