/* Whether the hardware can run a kernel launch, decided from what the CUDA
 * runtime reports about the compiled kernel (cudaFuncGetAttributes), the
 * device (shared-memory opt-in) and the occupancy API (CTAs per SM,
 * schedulable clusters). The tuner prunes a candidate configuration this
 * rejects before timing it. The queries live with the kernels
 * (kb_launchable in kb_rows.cuh, nt_kernel_fits in norm_tuned_space.cuh); the
 * decision is here, pure and unit tested (CUDA-free, kb_base). */
#ifndef KB_HWFIT_H
#define KB_HWFIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int block;           /* threads per CTA                                      */
    int cluster;         /* CTAs per cluster; <= 1: no cluster                   */
    size_t dyn_smem;     /* dynamic shared memory per CTA (bytes)                */
    int max_threads;     /* cudaFuncAttributes.maxThreadsPerBlock; < 0: not asked */
    size_t local_bytes;  /* cudaFuncAttributes.localSizeBytes: > 0 = spills      */
    size_t static_smem;  /* cudaFuncAttributes.sharedSizeBytes                   */
    size_t smem_optin;   /* device's opt-in limit per CTA; 0: not checked        */
    int blocks_per_sm;   /* occupancy API's resident CTAs per SM; < 0: not asked */
    int active_clusters; /* occupancy API's co-resident clusters; < 0: not asked */
} kb_launch_need;

/* A need with nothing measured yet: every query "not asked" (max_threads,
 * blocks_per_sm, active_clusters < 0; smem_optin 0), no spill and no static
 * shared memory, so only block and cluster themselves can refuse it. */
kb_launch_need kb_launch_need_init(int block, int cluster, size_t dyn_smem);

/* NULL when n can run; else why not (a static string for logs). */
const char *kb_launch_fits(const kb_launch_need *n);

#ifdef __cplusplus
}
#endif
#endif
