/* The read-only pass (timing.h, kb_stream_read): the L2 flush before every
 * timed sample (timing.cu) and the read-only point of the traffic-mix SOL
 * (sol_stream.cu). Below both, so that timing does not call up into SOL. */
#include "kb_cuda.cuh"
#include "timing.h"

#include <stdint.h>

#define UNROLL 4

/* XOR of every 16-byte word; written only when it equals a value the
 * buffer's fill cannot produce, so no load can be dropped and nothing but
 * the loads reaches DRAM. */
static __global__ void stream_read(const uint4 *__restrict__ in, size_t n, uint4 *sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) v[k] = in[i + k * stride];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            acc.x ^= v[k].x;
            acc.y ^= v[k].y;
            acc.z ^= v[k].z;
            acc.w ^= v[k].w;
        }
    }
    for (; i < n; i += stride) {
        const uint4 v = in[i];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u) *sink = acc;
}

extern "C" kb_status kb_stream_read(const void *buf, size_t n, void *sink, int grid, int block,
                                    cudaStream_t s, kb_err *e)
{
    stream_read<<<grid, block, 0, s>>>((const uint4 *)buf, n, (uint4 *)sink);
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_stream_read_grid(int sm_count, int block, int *grid, kb_err *e)
{
    int per_sm = 0;
    KB_CUDA(e, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_read, block, 0));
    *grid = (sm_count > 0 ? sm_count : 1) * (per_sm > 0 ? per_sm : 1);
    return KB_OK;
}

