/* Block sum in double, for the reference and the accuracy check (the
 * backends reduce in fp32: kb_cuda.cuh). Every thread gets the block's sum;
 * all warps add sh[] in the same order, so they agree bit for bit.
 * blockDim.x is a multiple of 32; sh holds 32 doubles. */
#ifndef KB_DSUM_CUH
#define KB_DSUM_CUH

static __device__ __forceinline__ double kb_block_sum_d(double v, double *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads(); /* sh may still be read by the previous call */
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < nw ? sh[lane] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

#endif
