/* kbench --describe: one JSON document read from the op descriptors.
 *
 * {"format": 1,
 *  "dtype_bytes": {"bf16": 2, "fp16": 2, "fp32": 4},
 *  "byte_model": "<how terms combine>",
 *  "benchmarks": [
 *   {"name", "family", "direction": "forward"|"backward", "backends": [...],
 *    "tensors": [{"name", "role": "read"|"write"|"setup", "shape": ["M","N"],
 *                 "elem_bytes": 4 | "s"}],        s: the case's dtype size
 *    "dims": 2 | 3,                                3: shapes MxNxK
 *    "flops": {"formula": "6*M*N*K", "M*N*K": 6},  compute-bound ops only
 *    "bytes": {"formula": "2*M*N*s + 12*M",
 *              "terms": {"M*N*s": 2, "M*s": 0, "M": 12, "N": 0, "N*K*s": 0, "M*K*s": 0}},
 *    "input_kinds": ["randn", ...],
 *    "sets": {"default"|"odd"|"short": {"dtypes": [...], "shapes": [SHAPE]},
 *             "inputs": {"kinds": {"shifted": ["bf16"], ...}, "dtypes": [...],
 *                        "shapes": [SHAPE]}}}]}
 * SHAPE = {"M", "N"[, "K" of a 3-D op], "bytes": {"<dtype>": kb_bytes_moved, ...},
 *          "written": {"<dtype>": kb_bytes_written, ...},
 *          "tune_bucket": {"<dtype>": "N<=4096,M<=32768", ...}} for the set's
 * dtypes: the exact numbers kbench divides by, next to the terms that give
 * them for any other shape or dtype; the bytes of them the case writes (the
 * rest it reads: sol.h's traffic mix); the tuning cache's bucket (ci/tune;
 * 2-D ops only). */
#include "describe.h"

#include <inttypes.h>

#include "results.h"
#include "sol.h"
#include "tunekey.h"

static const char *const set_names[] = {"default", "odd", "short", "inputs"};
#define NUM_SETS (sizeof set_names / sizeof set_names[0])

/* The byte model's monomials, in kb_byte_model's field order. */
static const char *const term_names[] = {"M*N*s", "M*s", "M", "N", "N*K*s", "M*K*s"};
#define NUM_TERMS (sizeof term_names / sizeof term_names[0])

static void string_list(FILE *f, const char *const *names, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        kb_json_string(f, names[i]);
    }
    fputc(']', f);
}

static void dims(FILE *f, kb_dims d)
{
    fputs(d == KB_DIM_MN    ? "[\"M\", \"N\"]"
          : d == KB_DIM_M   ? "[\"M\"]"
          : d == KB_DIM_3KN ? "[\"3\", \"K\", \"N\"]"
                            : "[\"N\"]",
          f);
}

/* A role's shape: the op's own text where it has its own sizes, else the
 * role table's dims. */
static void shape_of(FILE *f, const kb_bench_info *bi, kb_role r, kb_dims d)
{
    if (bi->tensor_shapes && bi->tensor_shapes[r]) fputs(bi->tensor_shapes[r], f);
    else dims(f, d);
}

static void tensors(FILE *f, const kb_bench_info *bi)
{
    fputs("\"tensors\": [", f);
    for (int i = 0; i < KB_NUM_ROLES; i++) {
        const kb_tensor_info *t = kb_tensor_info_get(i);
        if (i == KB_R_OUT || !(bi->tensors & KB_T(i))) continue;
        /* dw is an output; a tensor no reference reads only serves to make
         * another (softmax backward's x, for the saved y). */
        const char *role = i == KB_R_DW ? "write" : bi->ref_reads & KB_T(i) ? "read" : "setup";
        fprintf(f, "{\"name\": \"%s\", \"role\": \"%s\", \"shape\": ", t->name, role);
        shape_of(f, bi, (kb_role)i, t->dims);
        if (t->elem_bytes) fprintf(f, ", \"elem_bytes\": %d}, ", t->elem_bytes);
        else fputs(", \"elem_bytes\": \"s\"}, ", f);
    }
    fputs("{\"name\": \"out\", \"role\": \"write\", \"shape\": ", f);
    if (bi->tensor_shapes && bi->tensor_shapes[KB_R_OUT])
        fputs(bi->tensor_shapes[KB_R_OUT], f);
    else if (bi->out_pair)
        fputs("[2, \"M\", \"N\"]", f); /* two outputs, one after the other */
    else
        dims(f, bi->out_per_row ? KB_DIM_M : KB_DIM_MN);
    fputs(", \"elem_bytes\": \"s\"}]", f);
}

static void byte_model(FILE *f, const kb_byte_model *b)
{
    const double c[] = {b->mn, b->m_dtype, b->m_bytes, b->n_bytes, b->nk, b->mk};
    int any = 0;
    fputs("\"bytes\": {\"formula\": \"", f);
    for (size_t i = 0; i < NUM_TERMS; i++) {
        if (c[i] == 0) continue;
        fprintf(f, "%s%.17g*%s", any ? " + " : "", c[i], term_names[i]);
        any = 1;
    }
    fputs(any ? "\", \"terms\": {" : "0\", \"terms\": {", f);
    for (size_t i = 0; i < NUM_TERMS; i++)
        fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", term_names[i], c[i]);
    fputs("}}", f);
}

static void dtype_list(FILE *f, const int *on)
{
    fputc('[', f);
    for (int d = 0, n = 0; d < KB_NUM_DTYPES; d++)
        if (on[d]) fprintf(f, "%s\"%s\"", n++ ? ", " : "", kb_dtype_name((kb_dtype)d));
    fputc(']', f);
}

/* "dtypes" and "shapes" of one set; on[d]: the set runs in dtype d. */
static void shapes(FILE *f, const kb_bench_info *bi, kb_shape_set set, const int *on)
{
    const kb_shape *list;
    const size_t n = kb_shapes(bi->id, set, &list);
    fputs("\"dtypes\": ", f);
    dtype_list(f, on);
    fputs(", \"shapes\": [", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"M\": %" PRId64 ", \"N\": %" PRId64, i ? ",\n        " : "", list[i].M,
                list[i].N);
        if (list[i].K > 0) fprintf(f, ", \"K\": %" PRId64, list[i].K);
        fputs(", \"bytes\": {", f);
        /* tune_bucket: where the tuned backend takes cache entries (it has a
         * search space). The MLP block's does not: its GLU runs its heuristic
         * on the GEMM's output, so ci/tune has nothing to search for it. */
        const kb_impl *tuned = kb_impl_get(bi->id, "tuned");
        const int nwhat = tuned && tuned->tune_space ? 3 : 2;
        for (int what = 0; what < nwhat; what++) {
            if (what) fputs(what == 1 ? "}, \"written\": {" : "}, \"tune_bucket\": {", f);
            for (int d = 0, k = 0; d < KB_NUM_DTYPES; d++) {
                if (!on[d]) continue;
                const kb_problem p = {bi->id, (kb_dtype)d, list[i].M, list[i].N, list[i].K};
                fprintf(f, "%s\"%s\": ", k++ ? ", " : "", kb_dtype_name((kb_dtype)d));
                if (what < 2) {
                    fprintf(f, "%.17g", what ? kb_bytes_written(&p) : kb_bytes_moved(&p));
                } else {
                    char bucket[64];
                    kb_tune_bucket(p.dtype, p.M, p.N, p.K, bucket, sizeof bucket);
                    kb_json_string(f, bucket);
                }
            }
        }
        fputs("}}", f);
    }
    fputc(']', f);
}

static void input_kinds(FILE *f, const kb_bench_info *bi)
{
    int on[KB_NUM_DTYPES] = {0}, n = 0;
    fputs("\"kinds\": {", f);
    for (int k = 1; k < KB_NUM_INPUTS; k++) {
        if (!kb_inputs_apply((kb_inputs)k, bi->id)) continue;
        int kd[KB_NUM_DTYPES] = {0};
        for (int d = 0; d < KB_NUM_DTYPES; d++)
            on[d] |= kd[d] = kb_inputs_dtype((kb_inputs)k, (kb_dtype)d);
        fprintf(f, "%s\"%s\": ", n++ ? ", " : "", kb_inputs_name((kb_inputs)k));
        dtype_list(f, kd);
    }
    fputs("}, ", f);
    shapes(f, bi, KB_SHAPES_INPUTS, on);
}

static void bench(FILE *f, const kb_bench_info *bi)
{
    const char *names[KB_NUM_BACKENDS > KB_NUM_INPUTS ? KB_NUM_BACKENDS : KB_NUM_INPUTS];
    int n = 0;
    fputs("    {\"name\": ", f);
    kb_json_string(f, bi->name);
    fputs(", \"family\": ", f);
    kb_json_string(f, bi->family);
    fprintf(f, ", \"direction\": \"%s\",\n     \"backends\": ",
            bi->backward ? "backward" : "forward");
    for (int be = 0; be < KB_NUM_BACKENDS; be++)
        if (kb_impl_at(bi->id, be)) names[n++] = kb_backend_name(be);
    string_list(f, names, n);
    fputs(",\n     ", f);
    tensors(f, bi);
    fprintf(f, ",\n     \"dims\": %d", bi->dims == 3 ? 3 : 2);
    if (bi->flops_mnk > 0)
        fprintf(f, ",\n     \"flops\": {\"formula\": \"%.17g*M*N*K\", \"M*N*K\": %.17g}",
                bi->flops_mnk, bi->flops_mnk);
    fputs(",\n     ", f);
    byte_model(f, &bi->bytes);
    fputs(",\n     \"input_kinds\": ", f);
    n = 0;
    for (int k = 0; k < KB_NUM_INPUTS; k++)
        if (kb_inputs_apply((kb_inputs)k, bi->id)) names[n++] = kb_inputs_name((kb_inputs)k);
    string_list(f, names, n);
    fputs(",\n     \"sets\": {", f);
    for (size_t s = 0; s < NUM_SETS; s++) {
        fprintf(f, "%s\n      \"%s\": {", s ? "," : "", set_names[s]);
        int on[KB_NUM_DTYPES];
        for (int d = 0; d < KB_NUM_DTYPES; d++) on[d] = kb_shapes_dtype((kb_shape_set)s, (kb_dtype)d);
        if (s == KB_SHAPES_INPUTS) input_kinds(f, bi);
        else shapes(f, bi, (kb_shape_set)s, on);
        fputc('}', f);
    }
    fputs("}}", f);
}

kb_status kb_describe(FILE *f, kb_err *e)
{
    fputs("{\"format\": 1,\n \"dtype_bytes\": {", f);
    for (int d = 0; d < KB_NUM_DTYPES; d++)
        fprintf(f, "%s\"%s\": %zu", d ? ", " : "", kb_dtype_name((kb_dtype)d),
                kb_dtype_size((kb_dtype)d));
    fputs("},\n \"byte_model\": \"bytes = sum of terms[t] * t, s = dtype_bytes[dtype]; the "
          "shapes' bytes are kbench's numbers\",\n \"benchmarks\": [\n",
          f);
    for (int b = 0; b < KB_NUM_BENCH; b++) {
        if (b) fputs(",\n", f);
        bench(f, kb_bench_info_get((kb_bench_id)b));
    }
    fputs("\n ]}\n", f);
    if (fflush(f) != 0 || ferror(f))
        return KB_FAIL(e, KB_ERR_IO, "--describe: cannot write the description to standard output");
    return KB_OK;
}
