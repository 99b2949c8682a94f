/* Whether the hardware can run a launch (hwfit.h). */
#include "hwfit.h"

kb_launch_need kb_launch_need_init(int block, int cluster, size_t dyn_smem)
{
    kb_launch_need n = {block, cluster, dyn_smem, -1, 0, 0, 0, -1, -1};
    return n;
}

const char *kb_launch_fits(const kb_launch_need *n)
{
    if (n->block < 1) return "no threads in the block";
    /* maxThreadsPerBlock shrinks with the registers a thread uses. */
    if (n->max_threads >= 0 && n->block > n->max_threads) return "block larger than the kernel's registers allow";
    /* A kernel that spills is never what a tuned configuration means. */
    if (n->local_bytes > 0) return "kernel spills registers to local memory";
    if (n->smem_optin && n->static_smem + n->dyn_smem > n->smem_optin)
        return "shared memory above the per-block opt-in limit";
    if (n->blocks_per_sm == 0) return "no block fits on an SM";
    /* 8 is the portable cluster size, 16 the most any GPU schedules; the
     * occupancy API says whether this kernel's clusters fit. */
    if (n->cluster > 16) return "cluster larger than 16 CTAs";
    if (n->cluster > 1 && n->active_clusters == 0) return "no cluster of this size can be scheduled";
    return 0;
}
