/* RMSNorm / LayerNorm forward (training) and backward through cuDNN 9's graph
 * (backend descriptor) API.
 *
 * cuDNN normalises over C,H,W for each N, so a row-major x[M,N] is the 4-D
 * tensor [M,N,1,1] with strides [N,1,N,N]; weights are [1,N,1,1], per-row
 * statistics [M,1,1,1], all fp32 except x/y/dy/dx (the problem dtype). The
 * graph is one operation:
 *   forward   CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, phase
 *             CUDNN_NORM_FWD_TRAINING (so it also writes the saved statistics:
 *             inv_variance = 1/sqrt(var+eps) = kbench's rstd, and the mean for
 *             LayerNorm), epsilon a pass-by-value fp32 scalar tensor.
 *   backward  CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR from kbench's
 *             saved mean/rstd, producing dx and dscale (= dw).
 * Tensors are set exactly as cudnn-frontend's LayerNorm/RMSNorm nodes set
 * them: LayerNorm always has a bias (forward) and a dbias (backward) -- the
 * frontend never builds one without, so neither do we: the forward's bias is
 * a zeroed fp32 [N] buffer this state allocates in setup (the harness's
 * workspace does not exist yet at setup and its contents are undefined on
 * every run), the backward's dbias goes to the workspace and is discarded.
 * RMSNorm has neither (the frontend's training/backward samples).
 *
 * Setup (untimed): dlopen cuDNN, create a handle on the case's device, build
 * and finalize the graph once, ask the engine heuristics (mode A, then
 * FALLBACK) and keep the first configuration that finalizes into an
 * execution plan; the reported workspace is the plan's plus the statistics
 * the forward emits (mean/rstd, [M] fp32 each) or the backward's dbias.
 * The heuristics and the runtime compilation of cuDNN's generated norm
 * kernels are the slow part of a case (docs/user/gpus.md), so a finalized plan is serialised (cuDNN's
 * JSON representation) into the plan cache (base/plancache.h) and later
 * runs of the case rebuild it from there: same engine, no heuristics, no
 * compilation. A cached plan that cuDNN refuses is rebuilt and rewritten;
 * an engine cuDNN cannot serialise is simply built every time. The results'
 * configuration text says which ("plan cached" / "plan built") and what
 * setup cost (handle + plan, ms).
 * Run: cudnnSetStream + cudnnBackendExecute; the variant pack is built on the
 * first run and rebuilt only if the tensor pointers change.
 *
 * Declines (KB_ERR_UNSUPPORTED, the case SKIPs, with cuDNN's own text): no
 * libcudnn, a NOT_SUPPORTED-family status anywhere, or no heuristic
 * configuration that finalizes into a plan (e.g. odd N, very long rows).
 * Other cuDNN errors are failures. The compute type is not an attribute of
 * the norm operations; cuDNN's norm engines compute in fp32. */
#include "cudnn_norm.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn_loader.h"
#include "files.h"
#include "plancache.h"
#include "registry.h"

#define ALIGN 256      /* offsets inside the workspace                  */
#define TENSOR_ALIGN 16 /* CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT we promise     */
#define MAX_DESC 16    /* tensors + op + graph + heuristics             */
#define MAX_CFG 32     /* heuristic configurations tried per mode       */
#define MAX_PACK 8
/* Part of every plan cache file name: bump it whenever the graph built below
 * changes (tensors, uids, layouts, attributes), so no plan of an older graph
 * is ever loaded for the new one. */
#define GRAPH_REV 1

/* Unique ids of the graph's tensors (variant-pack keys). */
enum { U_X = 1, U_SCALE, U_BIAS, U_EPS, U_Y, U_MEAN, U_INV, U_DY, U_DX, U_DSCALE, U_DBIAS };

typedef struct {
    kb_cudnn_api api;
    cudnnHandle_t handle;
    char name[96];
    int layer, bwd;
    cudnnBackendDescriptor_t desc[MAX_DESC]; /* destroyed in reverse order */
    int ndesc;
    cudnnBackendDescriptor_t graph, cfg, plan, pack;
    const char *heur; /* heuristics mode that offered the plan */
    int plan_cached;  /* 1: rebuilt from the plan cache        */
    int plan_unsaved; /* 1: built, and the cache write failed  */
    char key[128];    /* "<bench>-<dtype>-<M>x<N> sms=<n>": whose plan */
    double ms_handle, ms_plan; /* setup's cost: load + handle, plan */
    int cfg_index;    /* its rank in that mode's list          */
    int64_t engine;   /* cuDNN global engine index, -1 unknown */
    size_t plan_ws, off_mean, off_rstd, off_dbias, ws_total;
    float eps;        /* read by cudnnBackendExecute (by value) */
    float *zero_bias; /* LayerNorm forward                      */
    /* the variant pack's bindings */
    int npack;
    int64_t uids[MAX_PACK];
    void *ptrs[MAX_PACK];
    void *ws_ptr;
} norm_state;

static size_t up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* ---- descriptor helpers: every failure names the call and the case ------- */
static kb_status make(norm_state *st, cudnnBackendDescriptorType_t type,
                      cudnnBackendDescriptor_t *out, const char *what, kb_err *e)
{
    *out = NULL;
    if (st->ndesc == MAX_DESC)
        return KB_FAIL(e, KB_ERR_ARG, "%s: internal: more than %d descriptors", st->name,
                       MAX_DESC);
    cudnnStatus_t s = st->api.BackendCreateDescriptor(type, out);
    if (s != CUDNN_STATUS_SUCCESS) {
        *out = NULL;
        return KB_CUDNN_FAIL(&st->api, e, s, "%s: cudnnBackendCreateDescriptor(%s)", st->name,
                             what);
    }
    st->desc[st->ndesc++] = *out;
    return KB_OK;
}

static kb_status set(norm_state *st, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                     cudnnBackendAttributeType_t type, int64_t n, const void *v,
                     const char *what, kb_err *e)
{
    cudnnStatus_t s = st->api.BackendSetAttribute(d, a, type, n, v);
    if (s != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_FAIL(&st->api, e, s, "%s: cudnnBackendSetAttribute(%s)", st->name, what);
    return KB_OK;
}
#define SET(d, attr, type, n, v) set(st, (d), (attr), (type), (n), (v), #attr, e)
#define SET_DESC(d, attr, v) SET((d), (attr), CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &(v))

static kb_status finalize(norm_state *st, cudnnBackendDescriptor_t d, const char *what,
                          kb_err *e)
{
    cudnnStatus_t s = st->api.BackendFinalize(d);
    if (s != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_FAIL(&st->api, e, s, "%s: cudnnBackendFinalize(%s)", st->name, what);
    return KB_OK;
}

/* A [d0, d1, 1, 1] tensor with d1 contiguous: every tensor here has that
 * layout (x/y [M,N], weights [1,N], statistics [M,1], epsilon [1,1]). */
static kb_status tensor(norm_state *st, int64_t uid, cudnnDataType_t dt, int64_t d0, int64_t d1,
                        bool by_value, cudnnBackendDescriptor_t *out, kb_err *e)
{
    const int64_t dims[4] = {d0, d1, 1, 1}, strides[4] = {d1, 1, d1, d1};
    const int64_t align = TENSOR_ALIGN;
    KB_TRY(make(st, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out, "TENSOR", e));
    KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    if (by_value) {
        const bool yes = true;
        KB_TRY(SET(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes));
    }
    return finalize(st, *out, "TENSOR", e);
}

/* ---- the operation --------------------------------------------------------- */
static kb_status build_forward(norm_state *st, const kb_problem *p, cudnnBackendDescriptor_t *op,
                               kb_err *e)
{
    const cudnnDataType_t io = kb_cudnn_dtype(p->dtype), f32 = CUDNN_DATA_FLOAT;
    const int64_t M = p->M, N = p->N;
    const cudnnBackendNormMode_t mode = st->layer ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    const cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;
    cudnnBackendDescriptor_t x, scale, eps, y, inv, bias = NULL, mean = NULL;
    KB_TRY(tensor(st, U_X, io, M, N, false, &x, e));
    KB_TRY(tensor(st, U_SCALE, f32, 1, N, false, &scale, e));
    KB_TRY(tensor(st, U_EPS, f32, 1, 1, true, &eps, e));
    KB_TRY(tensor(st, U_Y, io, M, N, false, &y, e));
    KB_TRY(tensor(st, U_INV, f32, M, 1, false, &inv, e));
    if (st->layer) {
        KB_TRY(tensor(st, U_BIAS, f32, 1, N, false, &bias, e));
        KB_TRY(tensor(st, U_MEAN, f32, M, 1, false, &mean, e));
    }
    KB_TRY(make(st, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, op, "NORM_FORWARD", e));
    KB_TRY(SET(*op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode));
    KB_TRY(SET(*op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, x));
    if (st->layer) KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, mean));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, inv));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, scale));
    if (st->layer) KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, bias));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, eps));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, y));
    return finalize(st, *op, "NORM_FORWARD", e);
}

static kb_status build_backward(norm_state *st, const kb_problem *p,
                                cudnnBackendDescriptor_t *op, kb_err *e)
{
    const cudnnDataType_t io = kb_cudnn_dtype(p->dtype), f32 = CUDNN_DATA_FLOAT;
    const int64_t M = p->M, N = p->N;
    const cudnnBackendNormMode_t mode = st->layer ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    cudnnBackendDescriptor_t x, dy, scale, inv, dx, dscale, mean = NULL, dbias = NULL;
    KB_TRY(tensor(st, U_X, io, M, N, false, &x, e));
    KB_TRY(tensor(st, U_DY, io, M, N, false, &dy, e));
    KB_TRY(tensor(st, U_SCALE, f32, 1, N, false, &scale, e));
    KB_TRY(tensor(st, U_INV, f32, M, 1, false, &inv, e));
    KB_TRY(tensor(st, U_DX, io, M, N, false, &dx, e));
    KB_TRY(tensor(st, U_DSCALE, f32, 1, N, false, &dscale, e));
    if (st->layer) {
        KB_TRY(tensor(st, U_MEAN, f32, M, 1, false, &mean, e));
        KB_TRY(tensor(st, U_DBIAS, f32, 1, N, false, &dbias, e));
    }
    KB_TRY(make(st, CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, op, "NORM_BACKWARD", e));
    KB_TRY(SET(*op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, x));
    if (st->layer) KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, mean));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, inv));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, dy));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, scale));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, dx));
    KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, dscale));
    if (st->layer) KB_TRY(SET_DESC(*op, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, dbias));
    return finalize(st, *op, "NORM_BACKWARD", e);
}

/* ---- engine choice ------------------------------------------------------- */
/* One heuristic configuration into a finalized plan, or the status why not. */
static cudnnStatus_t try_plan(norm_state *st, cudnnBackendDescriptor_t cfg,
                              cudnnBackendDescriptor_t *out)
{
    const kb_cudnn_api *a = &st->api;
    cudnnBackendDescriptor_t plan = NULL;
    cudnnStatus_t s = a->BackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    s = a->BackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                               &st->handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = a->BackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (s == CUDNN_STATUS_SUCCESS) s = a->BackendFinalize(plan);
    if (s != CUDNN_STATUS_SUCCESS) {
        a->BackendDestroyDescriptor(plan);
        return s;
    }
    *out = plan;
    return CUDNN_STATUS_SUCCESS;
}

/* The configurations heuristics mode offers, tried in its order. Sets
 * st->plan/cfg on success; otherwise leaves the reason in why. */
static kb_status try_mode(norm_state *st, cudnnBackendHeurMode_t mode, const char *mode_name,
                          int64_t *offered, char *why, size_t why_len, kb_err *e)
{
    const kb_cudnn_api *a = &st->api;
    char text[700];
    cudnnBackendDescriptor_t heur;
    KB_TRY(make(st, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur, "ENGINEHEUR", e));
    KB_TRY(SET_DESC(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, st->graph));
    KB_TRY(SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode));
    cudnnStatus_t s = a->BackendFinalize(heur);
    int64_t n = 0;
    if (s == CUDNN_STATUS_SUCCESS)
        s = a->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL);
    if (s != CUDNN_STATUS_SUCCESS) {
        kb_cudnn_status_text(a, s, text, sizeof text);
        snprintf(why, why_len, "heuristics %s: %s", mode_name, text);
        return KB_OK;
    }
    if (n <= 0) return KB_OK;
    if (n > MAX_CFG) n = MAX_CFG;

    cudnnBackendDescriptor_t cfg[MAX_CFG] = {NULL};
    int64_t made = 0, got = 0;
    for (; made < n; made++) {
        s = a->BackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[made]);
        if (s != CUDNN_STATUS_SUCCESS) break;
    }
    kb_status rc = KB_OK;
    if (s != CUDNN_STATUS_SUCCESS)
        rc = KB_CUDNN_FAIL(a, e, s, "%s: cudnnBackendCreateDescriptor(ENGINECFG)", st->name);
    else
        s = a->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &got, cfg);
    if (rc == KB_OK && s != CUDNN_STATUS_SUCCESS) {
        kb_cudnn_status_text(a, s, text, sizeof text);
        snprintf(why, why_len, "heuristics %s results: %s", mode_name, text);
        got = 0;
    }
    if (got > made) got = made;
    *offered = got;
    for (int64_t i = 0; i < got && !st->plan; i++) {
        s = try_plan(st, cfg[i], &st->plan);
        if (s == CUDNN_STATUS_SUCCESS) {
            st->cfg = cfg[i]; /* the plan refers to it: kept until teardown */
            cfg[i] = NULL;
            st->heur = mode_name;
            st->cfg_index = (int)i;
        } else {
            kb_cudnn_status_text(a, s, text, sizeof text);
            snprintf(why, why_len, "plan from heuristics %s configuration %" PRId64 ": %s",
                     mode_name, i, text);
        }
    }
    for (int64_t i = 0; i < made; i++)
        if (cfg[i]) a->BackendDestroyDescriptor(cfg[i]);
    return rc;
}

static kb_status pick_plan(norm_state *st, kb_err *e)
{
    char why[800] = "no configuration was offered";
    int64_t offered_a = 0, offered_fb = 0;
    KB_TRY(try_mode(st, CUDNN_HEUR_MODE_A, "A", &offered_a, why, sizeof why, e));
    if (!st->plan)
        KB_TRY(try_mode(st, CUDNN_HEUR_MODE_FALLBACK, "FALLBACK", &offered_fb, why, sizeof why,
                        e));
    if (!st->plan)
        return KB_FAIL(e, KB_ERR_UNSUPPORTED,
                       "%s: cuDNN %zu has no engine for this graph (heuristics A offered %" PRId64
                       ", FALLBACK %" PRId64 " configurations, none finalized): %s",
                       st->name, st->api.version, offered_a, offered_fb, why);
    return KB_OK;
}

/* Best effort, for describe: the chosen engine's global index. */
static int64_t engine_index(norm_state *st)
{
    const kb_cudnn_api *a = &st->api;
    cudnnBackendDescriptor_t eng = NULL;
    int64_t idx = -1, n = 0;
    if (a->BackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS)
        return -1;
    if (a->BackendGetAttribute(st->cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               1, &n, &eng) != CUDNN_STATUS_SUCCESS ||
        a->BackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                               &idx) != CUDNN_STATUS_SUCCESS)
        idx = -1;
    a->BackendDestroyDescriptor(eng);
    return idx;
}

/* ---- the plan cache ---------------------------------------------------------
 * Metadata line: "case=<bench>-<dtype>-<M>x<N> sms=<n> engine=<global index>
 * heur=<A|FALLBACK> index=<rank>": whose plan it is, checked on load (a file
 * copied or renamed to another case's name is a miss), and what describe
 * reports for a plan built by the heuristics. */
static kb_status load_cached(norm_state *st, const char *path, kb_err *e)
{
    const kb_cudnn_api *a = &st->api;
    char meta[KB_PLAN_META_MAX + 1], heur[16] = "";
    char *json = NULL;
    size_t len = 0;
    int found = 0, index = -1, at = 0;
    int64_t engine = -1;
    KB_TRY(kb_plan_cache_read(path, meta, sizeof meta, &json, &len, &found, NULL, 0, e));
    if (!found) return KB_OK;
    const size_t klen = strlen(st->key);
    if (strncmp(meta, "case=", 5) != 0 || strncmp(meta + 5, st->key, klen) != 0 ||
        meta[5 + klen] != ' ' ||
        sscanf(meta + 6 + klen, "engine=%" SCNd64 " heur=%15s index=%d%n", &engine, heur, &index,
               &at) != 3 ||
        meta[6 + klen + at] != '\0' || len > INT64_MAX) {
        free(json);
        return KB_OK; /* another case's, or unreadable: rebuilt and rewritten */
    }
    cudnnBackendDescriptor_t plan = NULL;
    cudnnStatus_t s = a->BackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    if (s == CUDNN_STATUS_SUCCESS)
        s = a->BackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                   &st->handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = a->BackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                   CUDNN_TYPE_CHAR, (int64_t)len, json);
    if (s == CUDNN_STATUS_SUCCESS) s = a->BackendFinalize(plan);
    free(json);
    if (s != CUDNN_STATUS_SUCCESS) { /* another cuDNN build, a damaged file: rebuild */
        if (plan) a->BackendDestroyDescriptor(plan);
        return KB_OK;
    }
    st->plan = plan;
    st->plan_cached = 1;
    st->engine = engine;
    st->heur = strcmp(heur, "A") == 0 ? "A" : strcmp(heur, "FALLBACK") == 0 ? "FALLBACK" : "?";
    st->cfg_index = index;
    return KB_OK;
}

/* Best effort: a plan cuDNN cannot serialise only means the next run builds
 * it again; a cache folder that cannot be written is also said in describe
 * ("plan built, uncached"). */
static void store_cached(norm_state *st, const char *path)
{
    const kb_cudnn_api *a = &st->api;
    int64_t n = 0;
    if (a->BackendGetAttribute(st->plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, 0, &n, NULL) != CUDNN_STATUS_SUCCESS ||
        n <= 0)
        return;
    char *json = malloc((size_t)n + 1);
    if (!json) return;
    int64_t got = 0;
    if (a->BackendGetAttribute(st->plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, n, &got, json) == CUDNN_STATUS_SUCCESS &&
        got > 0 && got <= n) {
        json[got] = '\0';
        const size_t len = strlen(json); /* the count may include the terminator */
        char meta[256];
        snprintf(meta, sizeof meta, "case=%s engine=%" PRId64 " heur=%s index=%d", st->key,
                 st->engine, st->heur ? st->heur : "?", st->cfg_index);
        kb_err ce = {{0}};
        if (len && kb_plan_cache_write(path, meta, json, len, &ce) != KB_OK) st->plan_unsaved = 1;
    }
    free(json);
}

/* ---- setup ----------------------------------------------------------------- */
static kb_status build(norm_state *st, const kb_problem *p, const kb_setup_ctx *ctx, int device,
                       kb_err *e)
{
    const double t0 = kb_mono_s();
    KB_TRY(kb_cudnn_load(&st->api, KB_CUDNN_GRAPH, st->name, e));
    KB_TRY(kb_cudnn_handle(&st->api, device, &st->handle, st->name, e));
    const double t1 = kb_mono_s();
    st->ms_handle = 1e3 * (t1 - t0);

    char path[1400] = "";
    if (ctx && ctx->plan_dir && ctx->plan_dir[0] && ctx->gpu_name) {
        char lib[64];
        kb_err ce = {{0}};
        /* The SM count too: a partitioned GPU (MIG, an MPS limit) keeps the
         * model's name, and cuDNN builds for the SMs it sees. */
        snprintf(lib, sizeof lib, "cudnn%zu-graph%d-sm%d", st->api.version, GRAPH_REV,
                 ctx->sm_count);
        snprintf(st->key, sizeof st->key, "%s-%s-%" PRId64 "x%" PRId64 " sms=%d",
                 kb_bench_info_get(p->bench)->name, kb_dtype_name(p->dtype), p->M, p->N,
                 ctx->sm_count);
        if (kb_plan_cache_path(ctx->plan_dir, ctx->gpu_name, lib, p, path, sizeof path, &ce) !=
            KB_OK)
            path[0] = '\0';
    }
    if (path[0]) KB_TRY(load_cached(st, path, e));
    if (!st->plan) {
        cudnnBackendDescriptor_t op;
        KB_TRY(st->bwd ? build_backward(st, p, &op, e) : build_forward(st, p, &op, e));
        KB_TRY(make(st, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &st->graph, "OPERATIONGRAPH",
                    e));
        KB_TRY(
            SET(st->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &st->handle));
        KB_TRY(SET_DESC(st->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, op));
        KB_TRY(finalize(st, st->graph, "OPERATIONGRAPH", e));
        KB_TRY(pick_plan(st, e));
        st->engine = engine_index(st);
        if (path[0]) store_cached(st, path);
    }
    st->ms_plan = 1e3 * (kb_mono_s() - t1);

    int64_t ws = 0, n = 0;
    cudnnStatus_t s = st->api.BackendGetAttribute(st->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &n, &ws);
    if (s != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_FAIL(&st->api, e, s, "%s: plan workspace size", st->name);
    if (ws < 0) return KB_FAIL(e, KB_ERR_CUDA, "%s: plan workspace size %" PRId64, st->name, ws);

    /* Workspace: [plan's][mean M][rstd M] forward, [plan's][dbias N] backward. */
    const size_t M4 = (size_t)p->M * sizeof(float), N4 = (size_t)p->N * sizeof(float);
    st->plan_ws = (size_t)ws;
    size_t off = up(st->plan_ws);
    if (!st->bwd) {
        if (st->layer) st->off_mean = off, off += up(M4);
        st->off_rstd = off, off += up(M4);
    } else if (st->layer) {
        st->off_dbias = off, off += up(N4);
    }
    st->ws_total = off;

    if (st->layer && !st->bwd) {
        KB_CUDA(e, cudaMalloc((void **)&st->zero_bias, N4));
        KB_CUDA(e, cudaMemset(st->zero_bias, 0, N4));
        KB_CUDA(e, cudaDeviceSynchronize()); /* whatever stream run is given */
    }
    return KB_OK;
}

void kb_cudnn_norm_teardown(void *state)
{
    norm_state *st = state;
    if (!st) return;
    const kb_cudnn_api *a = &st->api;
    if (a->BackendDestroyDescriptor) {
        if (st->pack) a->BackendDestroyDescriptor(st->pack);
        if (st->plan) a->BackendDestroyDescriptor(st->plan);
        if (st->cfg) a->BackendDestroyDescriptor(st->cfg);
        for (int i = st->ndesc - 1; i >= 0; i--) a->BackendDestroyDescriptor(st->desc[i]);
    }
    if (st->zero_bias) cudaFree(st->zero_bias);
    if (st->handle && a->Destroy) a->Destroy(st->handle);
    kb_cudnn_unload(&st->api);
    free(st);
}

kb_status kb_cudnn_norm_setup(const kb_problem *p, const kb_setup_ctx *ctx, void **state,
                              size_t *workspace_bytes, kb_err *e)
{
    *state = NULL;
    *workspace_bytes = 0;
    int layer, bwd;
    switch (p->bench) {
    case KB_RMSNORM_FWD: layer = 0, bwd = 0; break;
    case KB_RMSNORM_BWD: layer = 0, bwd = 1; break;
    case KB_LAYERNORM_FWD: layer = 1, bwd = 0; break;
    case KB_LAYERNORM_BWD: layer = 1, bwd = 1; break;
    default: return KB_FAIL(e, KB_ERR_ARG, "cudnn norm: benchmark %d is not a norm", (int)p->bench);
    }
    if (p->M < 1 || p->N < 1)
        return KB_FAIL(e, KB_ERR_ARG, "cudnn norm: shape %" PRId64 "x%" PRId64 " is empty", p->M,
                       p->N);
    int device = 0;
    if (ctx) device = ctx->device;
    else KB_CUDA(e, cudaGetDevice(&device));

    norm_state *st = calloc(1, sizeof *st);
    if (!st) return KB_FAIL(e, KB_ERR_NOMEM, "cudnn norm: out of host memory");
    st->layer = layer;
    st->bwd = bwd;
    st->eps = KB_NORM_EPS;
    st->engine = -1;
    kb_cudnn_case_name(p, st->name, sizeof st->name);
    KB_TRY(kb_cudnn_adopt(build(st, p, ctx, device, e), st, kb_cudnn_norm_teardown, state));
    *workspace_bytes = st->ws_total;
    return KB_OK;
}

/* ---- run --------------------------------------------------------------------- */
kb_status kb_cudnn_norm_run(const kb_problem *p, const kb_tensors *t, void *state,
                            cudaStream_t s, kb_err *e)
{
    norm_state *st = state;
    if (!st) return KB_FAIL(e, KB_ERR_ARG, "cudnn norm: run before setup");
    if (st->ws_total && (!t->workspace || t->workspace_bytes < st->ws_total))
        return KB_FAIL(e, KB_ERR_ARG, "%s: workspace of %zu bytes at %p, %zu needed", st->name,
                       t->workspace_bytes, t->workspace, st->ws_total);
    char *ws = t->workspace;

    struct { int64_t uid; const void *ptr; const char *what; } b[MAX_PACK];
    int n = 0;
#define BIND(u, p_, w) (b[n].uid = (u), b[n].ptr = (p_), b[n].what = (w), n++)
    BIND(U_X, t->x, "x");
    BIND(U_SCALE, t->w, "w");
    if (!st->bwd) {
        BIND(U_Y, t->out, "out");
        BIND(U_INV, ws + st->off_rstd, "workspace rstd");
        if (st->layer) {
            BIND(U_MEAN, ws + st->off_mean, "workspace mean");
            BIND(U_BIAS, st->zero_bias, "zero bias");
        }
    } else {
        BIND(U_DY, t->dy, "dy");
        BIND(U_INV, t->rstd, "rstd");
        BIND(U_DX, t->out, "out");
        BIND(U_DSCALE, t->dw, "dw");
        if (st->layer) {
            BIND(U_MEAN, t->mean, "mean");
            BIND(U_DBIAS, ws + st->off_dbias, "workspace dbias");
        }
    }
    /* Device tensors first (checked), then the host-side epsilon. */
    for (int i = 0; i < n; i++) {
        if (!b[i].ptr) return KB_FAIL(e, KB_ERR_ARG, "%s: tensor %s is NULL", st->name, b[i].what);
        if ((uintptr_t)b[i].ptr % TENSOR_ALIGN)
            return KB_FAIL(e, KB_ERR_ARG, "%s: tensor %s at %p is not %d-byte aligned", st->name,
                           b[i].what, b[i].ptr, TENSOR_ALIGN);
    }
    if (!st->bwd) BIND(U_EPS, &st->eps, "epsilon");
#undef BIND

    const kb_cudnn_api *a = &st->api;
    int same = st->pack && st->npack == n && st->ws_ptr == t->workspace;
    for (int i = 0; same && i < n; i++)
        same = st->uids[i] == b[i].uid && st->ptrs[i] == b[i].ptr;
    if (!same) {
        if (st->pack) a->BackendDestroyDescriptor(st->pack);
        st->pack = NULL;
        st->npack = n;
        st->ws_ptr = t->workspace;
        for (int i = 0; i < n; i++) st->uids[i] = b[i].uid, st->ptrs[i] = (void *)b[i].ptr;
        cudnnBackendDescriptor_t pack = NULL;
        cudnnStatus_t cs = a->BackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = a->BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                        n, st->uids);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = a->BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                        CUDNN_TYPE_VOID_PTR, n, st->ptrs);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = a->BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                        CUDNN_TYPE_VOID_PTR, 1, &st->ws_ptr);
        if (cs == CUDNN_STATUS_SUCCESS) cs = a->BackendFinalize(pack);
        if (cs != CUDNN_STATUS_SUCCESS) {
            kb_status rc = KB_CUDNN_FAIL(a, e, cs, "%s: variant pack", st->name);
            if (pack) a->BackendDestroyDescriptor(pack);
            return rc;
        }
        st->pack = pack;
    }

    cudnnStatus_t cs = a->SetStream(st->handle, s);
    if (cs != CUDNN_STATUS_SUCCESS) return KB_CUDNN_FAIL(a, e, cs, "%s: cudnnSetStream", st->name);
    cs = a->BackendExecute(st->handle, st->plan, st->pack);
    if (cs != CUDNN_STATUS_SUCCESS)
        return KB_CUDNN_FAIL(a, e, cs, "%s: cudnnBackendExecute", st->name);
    (void)p;
    return KB_OK;
}

void kb_cudnn_norm_describe(const void *state, char *buf, size_t len)
{
    const norm_state *st = state;
    if (!len) return;
    if (!st) {
        snprintf(buf, len, "cudnn (not set up)");
        return;
    }
    /* At most 125 characters: the results' configuration column is 128. */
    snprintf(buf, len,
             "cuDNN %zu NORM_%s %s: engine %" PRId64 " (heur. %s #%d), plan %s, ws %zu B, "
             "setup %.0f+%.0f ms",
             st->api.version, st->bwd ? "BACKWARD" : "FORWARD", st->layer ? "LAYER_NORM" : "RMS_NORM",
             st->engine, st->heur ? st->heur : "?", st->cfg_index,
             st->plan_cached ? "cached" : st->plan_unsaved ? "built, uncached" : "built",
             st->plan_ws, st->ms_handle, st->ms_plan);
}
