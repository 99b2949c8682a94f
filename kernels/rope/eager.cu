/* Rotary position embedding, forward and backward, eager backend: the
 * kernels PyTorch eager (2.x, CUDA) launches for HF's apply_rotary_pos_emb
 *     q_embed = (q * cos) + (rotate_half(q) * sin)
 *     k_embed = (k * cos) + (rotate_half(k) * sin)
 *     rotate_half(x) = cat((-x[..., D/2:], x[..., :D/2]), dim=-1)
 * and for its backward as autograd runs it. The other backends' speedups are
 * measured against these, so they copy PyTorch's decomposition and launch
 * shape, not anything faster. cos, sin are [M, D] broadcast over the heads
 * ([1, 1, M, D] against [1, heads, M, D]).
 *
 * Kernels per tensor t (q: N heads, then k: K heads), each through the
 * elementwise launcher (aten's mul / neg / cat / add / fill / copy kernels):
 *   forward, 5 (10 per call):
 *     A = t * cos                       mul   [heads, M, D]
 *     Nn = -t[..., D/2:]                neg   [heads, M, D/2], strided read
 *     C = cat(Nn, t[..., :D/2])         cat   (CatArrayBatchedCopy: one
 *                                             kernel for both inputs)
 *     B = C * sin                       mul
 *     out = A + B                       add
 *   backward, 9 (18 per call), in the autograd engine's order (highest
 *   sequence number first: k's graph, built after q's, runs first; within a
 *   graph AddBackward, then MulBackward0 of C*sin, CatBackward (views, no
 *   kernel), NegBackward, the two SliceBackwards (x2 = t[..., D/2:] sliced
 *   after x1), last MulBackward0 of t*cos), g the incoming gradient:
 *     G1 = g * sin                      mul   (grad of C)
 *     Ng = -G1[..., :D/2]               neg   (grad of x2, contiguous)
 *     dt = 0                            fill  \ slice_backward of x2:
 *     dt[..., D/2:] = Ng                copy  / zeros + copy_ into the slice
 *     Z1 = 0                            fill  \ slice_backward of x1
 *     Z1[..., :D/2] = G1[..., D/2:]     copy  /
 *     dt += Z1                          add   (InputBuffer accumulation, in
 *                                             place: the buffer is its own)
 *     P = g * cos                       mul   (grad of t through t * cos)
 *     dt += P                           add
 *   The gradient buffer that collects t's three contributions is the
 *   output itself (dt, in out); every other intermediate is a dtype tensor
 *   making an HBM round trip through the workspace and is rounded to the
 *   dtype as PyTorch's are. q's and k's phases reuse one workspace (stream
 *   order: the caching allocator would hand the same blocks back).
 * Launch: the eager backends' elementwise kernel (kernels/common/
 * kb_eager.cuh: 128 threads, tiles of 128 x 8 elements, all loads of a tile
 * before its stores); the copies into a slice write through the slice's
 * strides as TensorIterator's OffsetCalculator does (ew_to below, the same
 * tile shape). Broadcast and slice indices from the flat index: the row by
 * a corrected double reciprocal (RowOf) for M*D, shifts for D and D/2.
 * Workspace: 3.5 [max(N, K), M, D] dtype planes, each 256-byte aligned.
 * Limits: any M, N, K >= 1, 64-bit indices; D = KB_ROPE_HEAD_DIM, even. */
#include "kb_eager.cuh"
#include "rope_math.cuh"

namespace {

constexpr int64_t kD = KB_ROPE_HEAD_DIM, kH = kD / 2;

/* a[i] * tab[i mod M*D]: a [heads, M, D] times a [M, D] table broadcast
 * over the heads. */
template <typename T> struct mul_bcast {
    const T *a, *tab;
    RowOf plane; /* n = M*D */
    __device__ __forceinline__ float operator()(int64_t i) const
    {
        const int64_t j = i - plane(i) * plane.n;
        return kb_to_float(a[i]) * kb_to_float(tab[j]);
    }
};

/* Element i of a [rows, D/2] view: p[(i / (D/2)) * ld + off + i % (D/2)]
 * (ld = D, off = 0 or D/2: a half of each row of a [rows, D] tensor; ld =
 * D/2, off = 0: a contiguous [rows, D/2] tensor). */
template <typename T> struct half_view {
    const T *p;
    int64_t ld, off;
    __device__ __forceinline__ int64_t at(int64_t i) const
    {
        const int64_t r = i / kH;
        return r * ld + off + (i - r * kH);
    }
    __device__ __forceinline__ float operator()(int64_t i) const { return kb_to_float(p[at(i)]); }
};

template <typename T> struct neg_f {
    half_view<T> a;
    __device__ __forceinline__ float operator()(int64_t i) const { return -a(i); }
};

/* cat((lo, hi), dim=-1) of two [rows, D/2] views into [rows, D]. */
template <typename T> struct cat_f {
    half_view<T> lo, hi;
    __device__ __forceinline__ float operator()(int64_t i) const
    {
        const int64_t r = i / kD, c = i - r * kD;
        return c < kH ? lo(r * kH + c) : hi(r * kH + (c - kH));
    }
};

template <typename T> struct add_f {
    const T *a, *b;
    __device__ __forceinline__ float operator()(int64_t i) const
    {
        return kb_to_float(a[i]) + kb_to_float(b[i]);
    }
};

struct zero_f {
    __device__ __forceinline__ float operator()(int64_t) const { return 0.f; }
};

/* dst[..., off:off+D/2] = f over [rows, D/2]. */
template <typename T, typename F>
kb_status copy_to_half(T *dst, int64_t rows, int64_t off, const F &f, cudaStream_t s, kb_err *e)
{
    const int64_t total = rows * kH;
    const half_view<T> map = {dst, kD, off};
    const unsigned grid = grid_for(kb_cdiv(total, (int64_t)EW_THREADS * EW_UNROLL));
    ew_to_kernel<T, F, half_view<T>><<<grid, EW_THREADS, 0, s>>>(dst, total, f, map);
    KB_LAUNCHED(e);
    return KB_OK;
}

/* ---- workspace: 3.5 planes of max(N, K) heads ------------------------------ */
struct ws_layout {
    size_t plane, half, off[4], total; /* offsets of the 3 planes and the half */
};

ws_layout ws_of(const kb_problem *p)
{
    const int64_t hmax = p->N > p->K ? p->N : p->K;
    ws_layout L = {};
    L.plane = align256((size_t)hmax * (size_t)p->M * kD * kb_dtype_size(p->dtype));
    L.half = align256((size_t)hmax * (size_t)p->M * kH * kb_dtype_size(p->dtype));
    L.off[0] = 0;
    L.off[1] = L.plane;
    L.off[2] = 2 * L.plane;
    L.off[3] = 3 * L.plane; /* the [heads, M, D/2] intermediate */
    L.total = 3 * L.plane + L.half;
    return L;
}

template <typename T> T *ws_at(const kb_tensors *t, const ws_layout &L, int k)
{
    return (T *)((char *)t->workspace + L.off[k]);
}

/* One tensor (q or k) of hn heads: x, out at its first head. */
template <typename T>
kb_status fwd_one(const T *x, T *out, int64_t hn, int64_t M, const T *cosv, const T *sinv,
                  T *A, T *C, T *B, T *Nn, cudaStream_t s, kb_err *e)
{
    const int64_t n = hn * M * kD, rows = hn * M;
    const RowOf plane = {M * kD, 1.0 / (double)(M * kD)};
    KB_TRY(ew<T>(A, n, mul_bcast<T>{x, cosv, plane}, s, e));
    KB_TRY(ew<T>(Nn, rows * kH, neg_f<T>{{x, kD, kH}}, s, e));
    KB_TRY(ew<T>(C, n, cat_f<T>{{Nn, kH, 0}, {x, kD, 0}}, s, e));
    KB_TRY(ew<T>(B, n, mul_bcast<T>{C, sinv, plane}, s, e));
    return ew<T>(out, n, add_f<T>{A, B}, s, e);
}

template <typename T>
kb_status bwd_one(const T *g, T *dt, int64_t hn, int64_t M, const T *cosv, const T *sinv, T *G1,
                  T *Z1, T *P, T *Ng, cudaStream_t s, kb_err *e)
{
    const int64_t n = hn * M * kD, rows = hn * M;
    const RowOf plane = {M * kD, 1.0 / (double)(M * kD)};
    KB_TRY(ew<T>(G1, n, mul_bcast<T>{g, sinv, plane}, s, e));
    KB_TRY(ew<T>(Ng, rows * kH, neg_f<T>{{G1, kD, 0}}, s, e));
    KB_TRY(ew<T>(dt, n, zero_f{}, s, e));
    KB_TRY(copy_to_half<T>(dt, rows, kH, half_view<T>{Ng, kH, 0}, s, e));
    KB_TRY(ew<T>(Z1, n, zero_f{}, s, e));
    KB_TRY(copy_to_half<T>(Z1, rows, 0, half_view<T>{G1, kD, kH}, s, e));
    KB_TRY(ew<T>(dt, n, add_f<T>{dt, Z1}, s, e));
    KB_TRY(ew<T>(P, n, mul_bcast<T>{g, cosv, plane}, s, e));
    return ew<T>(dt, n, add_f<T>{dt, P}, s, e);
}

/* ---- what KB_EAGER_IMPLS wants ---------------------------------------------- */
kb_status check(const kb_problem *p, kb_err *e) { return kb_rope_check(p, "eager rope", e); }

size_t workspace(const kb_problem *p, bool) { return ws_of(p).total; }

kb_status tensors_ok(const kb_problem *p, const kb_tensors *t, const void *src, kb_err *e)
{
    if (!src || !t->cs || !t->out || !t->workspace || t->workspace_bytes < ws_of(p).total)
        return KB_FAIL(e, KB_ERR_ARG,
                       "eager rope: needs its input, cs, out and %zu workspace bytes (got %zu)",
                       ws_of(p).total, t->workspace_bytes);
    return KB_OK;
}

template <typename T>
kb_status fwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    KB_TRY(tensors_ok(p, t, t->x, e));
    const ws_layout L = ws_of(p);
    const int64_t M = p->M, qn = p->N * M * kD;
    const T *x = (const T *)t->x, *cosv = (const T *)t->cs, *sinv = cosv + M * kD;
    T *out = (T *)t->out;
    T *A = ws_at<T>(t, L, 0), *C = ws_at<T>(t, L, 1), *B = ws_at<T>(t, L, 2),
      *Nn = ws_at<T>(t, L, 3);
    KB_TRY(fwd_one<T>(x, out, p->N, M, cosv, sinv, A, C, B, Nn, s, e));
    return fwd_one<T>(x + qn, out + qn, p->K, M, cosv, sinv, A, C, B, Nn, s, e);
}

template <typename T>
kb_status bwd(const kb_problem *p, const kb_tensors *t, cudaStream_t s, kb_err *e)
{
    KB_TRY(tensors_ok(p, t, t->dy, e));
    const ws_layout L = ws_of(p);
    const int64_t M = p->M, qn = p->N * M * kD;
    const T *g = (const T *)t->dy, *cosv = (const T *)t->cs, *sinv = cosv + M * kD;
    T *out = (T *)t->out;
    T *G1 = ws_at<T>(t, L, 0), *Z1 = ws_at<T>(t, L, 1), *P = ws_at<T>(t, L, 2),
      *Ng = ws_at<T>(t, L, 3);
    /* k's graph first (see the header) */
    KB_TRY(bwd_one<T>(g + qn, out + qn, p->K, M, cosv, sinv, G1, Z1, P, Ng, s, e));
    return bwd_one<T>(g, out, p->N, M, cosv, sinv, G1, Z1, P, Ng, s, e);
}

} /* namespace */

KB_EAGER_IMPLS(rope, KB_ROPE_FWD, KB_ROPE_BWD, 10, 18)
