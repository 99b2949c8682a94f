/* rope: rotary position embedding of q and k, HF's apply_rotary_pos_emb and
 * Liger's liger_rotary_pos_emb (batch 1): a case MxNxK is M positions, N
 * query heads and K key/value heads of head_dim KB_ROPE_HEAD_DIM; rope.h has
 * the layout and the formulas, reference.c and reference.cu its references,
 * and the error scale is the two terms each element adds. */
#include "rope.h"

/* x, dy and out are [N+K, M, D]; cs is [cos; sin], [2M, D]. */
static int rope_dims(const kb_problem *p, kb_role r, int64_t *rows, int64_t *cols)
{
    if (r == KB_R_X || r == KB_R_DY || r == KB_R_OUT) *rows = kb_rope_heads(p) * p->M;
    else if (r == KB_R_CS) *rows = 2 * p->M;
    else return 0;
    *cols = KB_ROPE_HEAD_DIM;
    return 1;
}

#define ROPE_HEADS "[\"N+K\", \"M\", 128]"
static const char *const rope_shapes[KB_NUM_ROLES] = {
    [KB_R_X] = ROPE_HEADS, [KB_R_DY] = ROPE_HEADS, [KB_R_OUT] = ROPE_HEADS,
    [KB_R_CS] = "[2, \"M\", 128]"};

/* Llama 3 8B's 32 query and 8 key/value heads at 4K to 32K positions, Llama
 * 2 7B's 32 + 32 (no GQA), Llama 3 70B's 64 + 8; odd: an odd length, a
 * single position, odd head counts; fp16 and fp32: one of each. */
static const kb_shape rope_default[] = {
    {4096, 32, 8}, {8192, 32, 8}, {16384, 32, 8}, {32768, 32, 8}, {8192, 32, 32}, {8192, 64, 8},
};
static const kb_shape rope_odd[] = {{4097, 32, 8}, {1, 32, 8}, {1023, 5, 3}, {7, 1, 1}};
static const kb_shape rope_short[] = {{8192, 32, 8}, {1023, 5, 3}};
static const kb_shape rope_inputs[] = {{1000, 4, 2}};
static const kb_shape_lists rope_shapes_lists = {
    {rope_default, rope_odd, rope_short, rope_inputs},
    {KB_COUNT(rope_default), KB_COUNT(rope_odd), KB_COUNT(rope_short), KB_COUNT(rope_inputs)}};

/* x (or dy) read and out written, D = 128 elements per head and position:
 * 256 M (N + K) s; cos and sin read: 256 M s */
#define ROPE(DIR, IN)                                                                          \
    .family = "rope", .backward = DIR, .x_dist = KB_X_NORM, .tensors = IN | KB_T_CS,           \
    .ref_reads = IN | KB_T_CS, .bytes = {.mn = 256, .mk = 256, .m_dtype = 256},                \
    .inputs = KB_IN(KB_INPUTS_RANDN) | KB_IN(KB_INPUTS_WIDE),                                  \
    .sweep = (int)KB_COUNT(rope_default), .shapes = &rope_shapes_lists,                        \
    .scale = KB_SCALE_TERMS, .mutant = KB_MUTANT_NONE, .dims = 3, .tensor_dims = rope_dims,    \
    .tensor_shapes = rope_shapes, .ref_cpu = kb_rope_ref_cpu

KB_OP(KB_ROPE_FWD, rope_forward, ROPE(0, KB_T_X));
KB_OP(KB_ROPE_BWD, rope_backward, ROPE(1, KB_T_DY));
