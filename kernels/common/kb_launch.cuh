/* The one launch helper of the tuned kernels (kb_rows.cuh, norm_tuned.cuh):
 * cudaLaunchKernelEx with an optional thread-block cluster (sizes above 8
 * are non-portable and must be allowed per kernel) and programmatic
 * dependent launch, and the one cluster-occupancy query. Host code only. */
#ifndef KB_LAUNCH_CUH
#define KB_LAUNCH_CUH

#include "kb_cuda.cuh"

/* What a launch of fn with cs-CTA clusters and dyn_smem bytes of dynamic
 * shared memory needs set first: non-portable cluster sizes (> 8) allowed,
 * and the dynamic shared memory limit raised whenever dynamic memory is
 * used: static + dynamic above 48 KB needs it even when the dynamic part
 * alone is below (docs/dev/device-layer.md, H200 measurements). */
static inline cudaError_t kb_launch_prepare(const void *fn, int cs, size_t dyn_smem)
{
    cudaError_t rc = cudaSuccess;
    if (cs > 8) rc = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (rc == cudaSuccess && dyn_smem > 0)
        rc = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn_smem);
    return rc;
}

static inline void kb_cluster_attr(cudaLaunchAttribute *a, int cs)
{
    a->id = cudaLaunchAttributeClusterDimension;
    a->val.clusterDim.x = (unsigned)cs;
    a->val.clusterDim.y = 1;
    a->val.clusterDim.z = 1;
}

/* Clusters of cs CTAs of `block` threads that can be co-resident (0: none,
 * or the query failed; its error is cleared so that it cannot surface at a
 * later launch). */
static inline int kb_active_clusters(const void *fn, dim3 block, size_t dyn_smem, int cs)
{
    if (kb_launch_prepare(fn, cs, dyn_smem) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)cs);
    lc.blockDim = block;
    lc.dynamicSmemBytes = dyn_smem;
    cudaLaunchAttribute at[1];
    kb_cluster_attr(&at[0], cs);
    lc.attrs = at;
    lc.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, fn, &lc) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* fn<<<grid, block, smem, s>>>(args...) in clusters of cs CTAs (cs > 1), as
 * a programmatic dependent launch when pdl. */
template <typename... KArgs, typename... Args>
static cudaError_t kb_launch(void (*fn)(KArgs...), dim3 grid, dim3 block, size_t smem, int cs,
                             bool pdl, cudaStream_t s, const Args &...args)
{
    cudaError_t rc = kb_launch_prepare(reinterpret_cast<const void *>(fn), cs, smem);
    if (rc != cudaSuccess) return rc;
    if (pdl) {
        /* Programmatic dependent launch exists from compute capability 9.0
         * on. Below it (a build for other GPUs) the launch is an ordinary
         * one: stream order then holds the kernel back as the wait it
         * compiles without (griddepcontrol) would have. */
        int dev = 0, major = 0;
        rc = cudaGetDevice(&dev);
        if (rc == cudaSuccess)
            rc = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        if (rc != cudaSuccess) return rc;
        pdl = major >= 9;
    }
    cudaLaunchConfig_t lc = {};
    lc.gridDim = grid;
    lc.blockDim = block;
    lc.dynamicSmemBytes = smem;
    lc.stream = s;
    cudaLaunchAttribute at[2];
    unsigned na = 0;
    if (cs > 1) kb_cluster_attr(&at[na++], cs);
    if (pdl) {
        at[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[na].val.programmaticStreamSerializationAllowed = 1;
        na++;
    }
    lc.attrs = at;
    lc.numAttrs = na;
    return cudaLaunchKernelEx(&lc, fn, args...);
}

#endif
