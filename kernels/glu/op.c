/* GeGLU and SwiGLU, forward and backward: out = act(gate) * up, elementwise
 * (docs/reference/spec.md; its references are reference.c and reference.cu,
 * glu_ref.h: the benchmark says the activation). */
#include "glu_ref.h"
#include "registry.h"

/* The blog's [8192, 3072] (Liger vs torch.compile), the MLP widths of
 * Llama 2 7B / Llama 3 8B / Llama 2 70B at two token counts, then a sweep
 * over H at M = 8192; odd: an odd MLP width, a width one short of a power
 * of two, a single column and a single row; fp16/fp32: one aligned and one
 * odd width. */
static const kb_shape glu_default[] = {
    {8192, 3072},  {4096, 11008}, {8192, 11008}, {4096, 14336}, {8192, 14336}, {4096, 28672},
    {8192, 28672}, {8192, 1024},  {8192, 2048},  {8192, 4096},  {8192, 8192},  {8192, 16384},
};
static const kb_shape glu_odd[] = {{8192, 11007}, {8192, 4095}, {4096, 1}, {1, 14336}};
static const kb_shape glu_short[] = {{8192, 3072}, {4096, 11007}};
static const kb_shape_lists glu_shapes = {
    {glu_default, glu_odd, glu_short, NULL},
    {KB_COUNT(glu_default), KB_COUNT(glu_odd), KB_COUNT(glu_short), 0}};

/* out = act(x) * up: 2 reads + 1 write of M*N elements */
#define GLU_FWD(SCALE)                                                                        \
    .family = "glu", .backward = 0, .x_dist = KB_X_ACT,                                       \
    .tensors = KB_T_X | KB_T_UP, .ref_reads = KB_T_X | KB_T_UP, .bytes = {.mn = 3},           \
    .inputs = KB_KINDS_ACT, .sweep = (int)KB_COUNT(glu_default), .shapes = &glu_shapes,       \
    .scale = SCALE, .mutant = KB_MUTANT_NONE, .ref_cpu = kb_glu_ref_cpu,                     \
    .selftest = KB_SELFTEST_ROWS
/* dgate = dy * up * act'(x), dup = dy * act(x): 3 reads + 2 writes */
#define GLU_BWD(SCALE)                                                                        \
    .family = "glu", .backward = 1, .x_dist = KB_X_ACT,                                       \
    .tensors = KB_T_X | KB_T_UP | KB_T_DY, .ref_reads = KB_T_X | KB_T_UP | KB_T_DY,            \
    .out_pair = 1, .bytes = {.mn = 5}, .inputs = KB_KINDS_ACT,                                \
    .sweep = (int)KB_COUNT(glu_default), .shapes = &glu_shapes, .scale = SCALE,                \
    .mutant = KB_MUTANT_NONE, .ref_cpu = kb_glu_ref_cpu, .selftest = KB_SELFTEST_ROWS

KB_OP(KB_GEGLU_FWD, geglu_forward, GLU_FWD(KB_SCALE_GEGLU));
KB_OP(KB_GEGLU_BWD, geglu_backward, GLU_BWD(KB_SCALE_GEGLU));
KB_OP(KB_SWIGLU_FWD, swiglu_forward, GLU_FWD(KB_SCALE_SWIGLU));
KB_OP(KB_SWIGLU_BWD, swiglu_backward, GLU_BWD(KB_SCALE_SWIGLU));
