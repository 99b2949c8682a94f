/* --dump: copy each tensor of a case to the host and write it as .npy. */
#include "dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "npy.h"
#include "registry.h"

/* kind: 'd' dtype tensor, 'f' fp32, 'i' int64. */
static kb_status dump_one(const char *dir, const char *name, const void *dev, char kind,
                          kb_dtype dtype, int ndim, const int64_t *shape, kb_err *e)
{
    if (!dev) return KB_OK;
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    const size_t es = kind == 'd' ? kb_dtype_size(dtype) : kind == 'f' ? 4 : 8;
    /* The messages name the file (it names the case and the tensor). */
    char path[1200];
    KB_TRY(kb_path_print(path, sizeof path, "--dump", dir, e, "%s/%s.npy", dir, name));
    void *host = malloc(n * es);
    if (!host)
        return KB_FAIL(e, KB_ERR_NOMEM, "--dump %s: no host memory for %zu bytes", path, n * es);
    kb_status st = KB_OK;
    cudaError_t rc = cudaMemcpy(host, dev, n * es, cudaMemcpyDeviceToHost);
    if (rc != cudaSuccess) st = KB_FAIL(e, KB_ERR_CUDA, "--dump %s: %s", path, cudaGetErrorString(rc));
    if (st == KB_OK) {
        if (kind == 'd') st = kb_npy_write(path, dtype, host, ndim, shape, e);
        else if (kind == 'f') st = kb_npy_write_f32(path, (const float *)host, ndim, shape, e);
        else st = kb_npy_write_i64(path, (const int64_t *)host, ndim, shape, e);
    }
    free(host);
    return st;
}

kb_status kb_dump_case(const char *dir, const char *case_name, const kb_buffers *b, kb_err *e)
{
    char sub[1100];
    KB_TRY(kb_path_print(sub, sizeof sub, "--dump", dir, e, "%s/%s", dir, case_name));
    KB_TRY(kb_mkdir_p(sub, e));
    const kb_problem *p = &b->p;
    const kb_dtype d = p->dtype;
    /* Every tensor the case has, by role, in its own shape (a per-row
     * vector, a row of N, or rows x cols: the op's layout flattened to 2-D);
     * the gold beside out and dw, and the reference's error scale. The
     * saved softmax output is y_saved (y is what a forward writes). */
    for (int r = 0; r < KB_NUM_ROLES; r++) {
        if (!b->t.role[r]) continue;
        int64_t rows, cols;
        kb_tensor_dims(p, (kb_role)r, &rows, &cols);
        const int eb = kb_tensor_info_get(r)->elem_bytes;
        const char kind = eb == 8 ? 'i' : eb == 4 ? 'f' : 'd';
        const int64_t two[2] = {rows, cols}, one[1] = {rows * cols};
        const int nd = rows == 1 || cols == 1 ? 1 : 2;
        const char *name = r == KB_R_Y ? "y_saved" : kb_tensor_info_get(r)->name;
        KB_TRY(dump_one(sub, name, b->t.role[r], kind, d, nd, nd == 1 ? one : two, e));
        const void *gold = r == KB_R_OUT ? b->gold : r == KB_R_DW ? (const void *)b->gold_dw : NULL;
        if (gold)
            KB_TRY(dump_one(sub, r == KB_R_OUT ? "gold" : "gold_dw", gold, kind, d, nd,
                            nd == 1 ? one : two, e));
        if (r == KB_R_OUT && b->gold_scale)
            KB_TRY(dump_one(sub, "gold_scale", b->gold_scale, 'f', d, nd, nd == 1 ? one : two, e));
    }
    return KB_OK;
}
