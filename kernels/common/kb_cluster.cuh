/* Cross-CTA reduction over a thread-block cluster (sm_90, distributed shared
 * memory): the one implementation behind the tuned softmax and cross-entropy
 * kernels (kb_cluster_reduce below, through kb_rows.cuh) and the tuned
 * RMSNorm / LayerNorm kernels (row_reducer, norm_tuned_dev.cuh).
 *
 * Exchange, without a cluster-wide barrier per reduction: every CTA pushes
 * its partial (W 32-bit words) into its slot in every peer's (and its own)
 * shared memory with st.async, which counts the bytes on the receiver's
 * mbarrier; one thread per CTA arms its own mbarrier with the bytes the CTA
 * is to receive (arrive.expect_tx; pushes that land first leave the
 * transaction count negative, on which the phase cannot complete); each CTA
 * waits on its own mbarrier and combines the slots in rank order, so every
 * CTA of the cluster ends with the same bits. No fence and no L1
 * invalidation: only the pushed words are ordered, by the mbarrier's
 * transaction count.
 *
 * Setup: thread 0 initialises the mbarriers once per kernel and makes them
 * visible to the cluster (fence.mbarrier_init); a cluster barrier separates
 * that from any peer's first push. The norms take it whole
 * (cg::this_cluster().sync()); the row kernels split it (kb_cluster_begin
 * arrives at kernel start, kb_cluster_reduce waits just before its first
 * push: the loads in between hide it, and the wait also tells that every
 * peer is running).
 *
 * Rounds: a kernel that reduces more than once alternates two parities
 * (slots and mbarrier each), the phase bit of each flipping with each of its
 * rounds. Slot s of a parity is rewritten (round r+2) only by a peer that
 * has received our round r+1 partial, which we push only after every thread
 * of our CTA has read round r's slots (row_reducer states why that holds for
 * it), so no partial overwrites one still unread and no round's bytes are
 * counted on another round's phase. The softmax and cross-entropy kernels
 * reduce once per CTA (their grids are not persistent; the forward's max and
 * sum travel together as one kb_ms): one parity, phase 0.
 *
 * Exit: a CTA's shared memory is written only by pushes into it, all of
 * which have landed when its last wait returns, so the row kernels exit
 * right after their reduction; the norms' persistent kernels end with a
 * relaxed cluster barrier (kb_cluster_exit_sync).
 *
 * A second protocol, for the row kernels only (kb_cluster_reduce's XCHG =
 * KB_XCHG_BARRIER): plain DSMEM stores of the partials, then a cluster
 * barrier (arrive.release / wait.acquire) instead of the mbarrier. Same
 * slots, same rank-order fold, same bits. It stays because neither wins
 * everywhere: softmax backward's streaming kernel on a grid of few clusters
 * (few long rows) runs faster with it, every other measured case with the
 * push (docs/dev/device-layer.md, "One cluster reduction, two protocols"); softmax
 * backward exposes the choice to the tuner (xchg). */
#ifndef KB_CLUSTER_CUH
#define KB_CLUSTER_CUH

#include <stdint.h>

/* Inline PTX that exists from sm_90 on: emitted for such targets only. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define KB_SM90(...) __VA_ARGS__
#else
#define KB_SM90(...)
#endif

/* CTAs of a cluster (16 is a non-portable size; kb_launch opts in). */
#define KB_MAX_CLUSTER 16
/* Row-group x cluster partials a CTA of the row kernels keeps
 * (rows * cs <= KB_MAX_PARTS). */
#define KB_MAX_PARTS 64

/* ---- PTX: shared addresses, cluster barrier, mbarrier, st.async ----------- */
__device__ __forceinline__ uint32_t kb_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* The address of the same shared variable in cluster CTA `rank`. */
__device__ __forceinline__ uint32_t kb_peer_addr(uint32_t a, int rank)
{
    uint32_t r = 0;
    KB_SM90(asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)));
    return r;
}

/* Split cluster barrier. Not .aligned: callers reach these after divergent
 * loops and must not depend on reconvergence. */
__device__ __forceinline__ void kb_cluster_arrive_relaxed()
{
    KB_SM90(asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory"));
}
__device__ __forceinline__ void kb_cluster_arrive_release()
{
    KB_SM90(asm volatile("barrier.cluster.arrive.release;\n" ::: "memory"));
}
__device__ __forceinline__ void kb_cluster_wait()
{
    KB_SM90(asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory"));
}

/* Last barrier of a kernel whose peers may still touch this CTA's shared
 * memory. A relaxed arrive suffices (a release one would first wait for all
 * our outstanding global stores). */
__device__ __forceinline__ void kb_cluster_exit_sync()
{
    KB_SM90(asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory"));
}

__device__ __forceinline__ void kb_mbar_init(uint64_t *bar, unsigned count)
{
    KB_SM90(asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(kb_smem_addr(bar)),
                         "r"(count)
                         : "memory"));
}

/* Makes this thread's mbarrier inits visible to the cluster's async
 * proxy; a cluster barrier must follow before any peer pushes. */
__device__ __forceinline__ void kb_mbar_init_fence()
{
    KB_SM90(asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"));
}

__device__ __forceinline__ void kb_mbar_arrive_expect(uint64_t *bar, unsigned bytes)
{
    KB_SM90(asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                             kb_smem_addr(bar)),
                         "r"(bytes)
                         : "memory"));
}

__device__ __forceinline__ void kb_mbar_wait(uint64_t *bar, unsigned phase)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uint32_t a = kb_smem_addr(bar);
    uint32_t done = 0;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(a), "r"(phase)
                     : "memory");
    } while (!done);
#endif
}

/* One float into a peer's shared memory (address from kb_peer_addr),
 * counted as 4 bytes on that peer's mbarrier. */
__device__ __forceinline__ void kb_st_async(uint32_t dst, float v, uint32_t peer_bar)
{
    KB_SM90(asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(dst),
        "r"(__float_as_uint(v)), "r"(peer_bar)
        : "memory"));
}

/* ---- the exchange ------------------------------------------------------------
 * A round works on one parity's mbarrier and slots, wherever the caller
 * keeps them (kb_rows_buf below for the row kernels, red_smem for the
 * norms). */

/* Thread 0 of the CTA: the NP mbarriers (one arrival per phase: the arming
 * thread's), made visible to the cluster. A cluster barrier must follow. */
template <int NP> __device__ __forceinline__ void kb_cluster_init(uint64_t (&bar)[NP])
{
    if (threadIdx.x == 0 && threadIdx.y == 0) {
#pragma unroll
        for (int p = 0; p < NP; p++) kb_mbar_init(&bar[p], 1);
        kb_mbar_init_fence();
    }
}

/* One thread per CTA and round: this CTA receives `parts` partials of W
 * words on bar. */
template <int W> __device__ __forceinline__ void kb_cluster_expect(uint64_t *bar, int parts)
{
    kb_mbar_arrive_expect(bar, (unsigned)(parts * W * 4));
}

/* w into cluster CTA peer's copy of dst (a slot), counted on peer's bar. */
template <int W>
__device__ __forceinline__ void kb_cluster_push(uint64_t *bar, float *dst, const float (&w)[W],
                                                int peer)
{
    const uint32_t pb = kb_peer_addr(kb_smem_addr(bar), peer);
#pragma unroll
    for (int k = 0; k < W; k++) kb_st_async(kb_peer_addr(kb_smem_addr(dst + k), peer), w[k], pb);
}

/* Every thread: wait until the round on parity p (mbarrier bar) has all its
 * partials. phase: bit p is the phase of parity p to wait for; flipped for
 * the parity's next round. */
__device__ __forceinline__ void kb_cluster_wait_round(uint64_t *bar, int p, unsigned &phase)
{
    kb_mbar_wait(bar, (phase >> p) & 1u);
    phase ^= 1u << p;
}

/* ---- row groups (softmax, cross entropy) -------------------------------------
 * A partial result of type P as W 32-bit words, and how two combine
 * (commutative bit for bit): specialised by the payload's owner (kb_rows.cuh:
 * float sums, kb_ms (max, sum of exp) pairs). */
template <typename P> struct kb_payload;

/* A row CTA's shared state: a slot per (row group, rank), one mbarrier. */
template <typename P> struct kb_rows_buf {
    float slot[KB_MAX_PARTS * kb_payload<P>::W];
    uint64_t bar[1];
};

/* How kb_cluster_reduce exchanges the partials (header comment). */
enum { KB_XCHG_PUSH = 0, KB_XCHG_BARRIER = 1 };

/* Kernel start, every thread, when cs > 1: before any kb_cluster_reduce of
 * the same protocol. */
template <int XCHG = KB_XCHG_PUSH, typename P>
__device__ __forceinline__ void kb_cluster_begin(kb_rows_buf<P> &b)
{
    if (XCHG == KB_XCHG_PUSH) kb_cluster_init(b.bar); /* the barrier protocol has no mbarrier */
    kb_cluster_arrive_relaxed();
}

/* One 32-bit word into a peer's shared memory (address from kb_peer_addr),
 * ordered by the cluster barrier that follows, not by an mbarrier. */
__device__ __forceinline__ void kb_st_cluster(uint32_t dst, float v)
{
    KB_SM90(asm volatile("st.shared::cluster.b32 [%0], %1;" ::"r"(dst), "r"(__float_as_uint(v))
                         : "memory"));
}

/* Combine v over the cs CTAs of the cluster for row group g: `rows` groups
 * of tpr threads per CTA (rows * cs <= KB_MAX_PARTS), this thread t of its
 * group, this CTA rank `rank`. Every thread of every CTA calls it exactly
 * once per kernel, after kb_cluster_begin(b). The group's threads t < cs
 * push (a thread several peers when tpr < cs); all of them fold the cs
 * slots in rank order. */
template <int XCHG = KB_XCHG_PUSH, typename P>
__device__ __forceinline__ P kb_cluster_reduce(P v, int cs, int rows, int rank, int g, int t,
                                               int tpr, kb_rows_buf<P> &b)
{
    typedef kb_payload<P> X;
    uint64_t *bar = &b.bar[0];
    float *slot = b.slot + g * cs * X::W; /* this group's cs slots */
    kb_cluster_wait(); /* every peer runs (and has its mbarrier) */
    float w[X::W];
    X::to_words(v, w);
    if (XCHG == KB_XCHG_BARRIER) {
        for (int peer = t; peer < cs; peer += tpr)
#pragma unroll
            for (int k = 0; k < X::W; k++)
                kb_st_cluster(kb_peer_addr(kb_smem_addr(slot + rank * X::W + k), peer), w[k]);
        /* Release our stores, acquire every peer's: all slots written. The
         * slots are written once per kernel, so nothing follows the read. */
        kb_cluster_arrive_release();
        kb_cluster_wait();
    } else {
        if (threadIdx.x == 0) kb_cluster_expect<X::W>(bar, rows * cs);
        for (int peer = t; peer < cs; peer += tpr) kb_cluster_push(bar, slot + rank * X::W, w, peer);
        unsigned phase = 0;
        kb_cluster_wait_round(bar, 0, phase);
    }
    const float *s = slot;
    P r = X::of_words(s);
    /* Serial anyway; unrolled further, the loads in flight cost registers
     * that the held row needs. */
#pragma unroll 2
    for (int i = 1; i < cs; i++) r = X::combine(r, X::of_words(s + i * X::W));
    return r;
}

#endif
