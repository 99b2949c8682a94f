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
    const int64_t mn[2] = {p->M, p->N}, m[1] = {p->M}, n[1] = {p->N};
    const int64_t on[2] = {kb_out_rows(p), p->N}; /* [2M, N]: a pair of outputs */
    const int out_nd = kb_bench_info_get(p->bench)->out_per_row ? 1 : 2;
    const kb_dtype d = p->dtype;
    const kb_tensors *t = &b->t;
    KB_TRY(dump_one(sub, "x", t->x, 'd', d, 2, mn, e));
    KB_TRY(dump_one(sub, "up", t->up, 'd', d, 2, mn, e));
    KB_TRY(dump_one(sub, "target", t->target, 'i', d, 1, m, e));
    KB_TRY(dump_one(sub, "dloss", t->dloss, 'f', d, 1, m, e));
    KB_TRY(dump_one(sub, "dy", t->dy, 'd', d, 2, mn, e));
    KB_TRY(dump_one(sub, "w", t->w, 'f', d, 1, n, e));
    KB_TRY(dump_one(sub, "y_saved", t->y, 'd', d, 2, mn, e));
    KB_TRY(dump_one(sub, "lse", t->lse, 'f', d, 1, m, e));
    KB_TRY(dump_one(sub, "mean", t->mean, 'f', d, 1, m, e));
    KB_TRY(dump_one(sub, "rstd", t->rstd, 'f', d, 1, m, e));
    KB_TRY(dump_one(sub, "out", t->out, 'd', d, out_nd, out_nd == 1 ? m : on, e));
    KB_TRY(dump_one(sub, "gold", b->gold, 'd', d, out_nd, out_nd == 1 ? m : on, e));
    KB_TRY(dump_one(sub, "dw", t->dw, 'f', d, 1, n, e));
    KB_TRY(dump_one(sub, "gold_dw", b->gold_dw, 'f', d, 1, n, e));
    /* mlp_forward: [Wg; Wu; Wd] as one [3, K, N] array (Wd's [N, K] rows
     * reshaped) and the reference's error scale. */
    const int64_t w3[3] = {3, p->K, p->N};
    KB_TRY(dump_one(sub, "wts", t->wts, 'd', d, 3, w3, e));
    KB_TRY(dump_one(sub, "gold_scale", b->gold_scale, 'f', d, 2, mn, e));
    return KB_OK;
}
