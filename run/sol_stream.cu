/* Read-only and write-only stream bandwidth (device.h, kb_gpu_limits): the
 * one-way points of the traffic-mix SOL (sol.h). Plain 128-bit loads and
 * stores, as the kernels under test issue them, over a buffer far larger
 * than L2, timed like a case (kb_time_fn: L2 flushed before every sample). */
#include "device.h"
#include "kb_cuda.cuh"

#include <stdint.h>

static __global__ void stream_write(uint4 *__restrict__ out, size_t n, unsigned seed)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const uint4 v = make_uint4(seed, seed + 1, seed + 2, seed + 3);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = v;
}

typedef struct {
    int write;
    uint4 *buf, *sink;
    size_t n;
    int grid, block;
} stream_arg;

static kb_status launch_stream(void *arg, cudaStream_t s, kb_err *e)
{
    const stream_arg *a = (const stream_arg *)arg;
    if (!a->write) return kb_stream_read(a->buf, a->n, a->sink, a->grid, a->block, s, e);
    stream_write<<<a->grid, a->block, 0, s>>>(a->buf, a->n, 0x01010101u);
    KB_LAUNCHED(e);
    return KB_OK;
}

extern "C" kb_status kb_sol_streams_measure(const kb_device *d, kb_flusher *f, cudaStream_t s,
                                            double *read_gbps, double *write_gbps, kb_err *e)
{
    /* The bytes a copy SOL measurement moves (2 x max(16 x L2, 1 GiB)), in
     * one direction: far beyond L2, and long enough (~0.5 ms) that the
     * event overhead stays under 1 %. */
    size_t bytes = d->l2_bytes * 16;
    if (bytes < ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    bytes *= 2;
    stream_arg a = {0, NULL, NULL, bytes / sizeof(uint4), 0, 256};
    kb_status st = KB_OK;
    cudaError_t rc = cudaMalloc((void **)&a.buf, bytes);
    if (rc == cudaSuccess) rc = cudaMalloc((void **)&a.sink, sizeof(uint4));
    if (rc == cudaSuccess) rc = cudaMemsetAsync(a.buf, 1, bytes, s);
    if (rc != cudaSuccess) {
        st = KB_FAIL(e, KB_ERR_CUDA, "SOL read/write stream measurement (%zu MiB): %s",
                     bytes >> 20, cudaGetErrorString(rc));
        goto out;
    }
    st = kb_stream_read_grid(d->sm_count, a.block, &a.grid, e);
    if (st != KB_OK) goto out;
    kb_timing_opts o;
    kb_timing_defaults(&o);
    for (int w = 0; w <= 1 && st == KB_OK; w++) {
        kb_timing t;
        a.write = w;
        st = kb_time_fn(launch_stream, &a, &o, f, s, &t, e);
        if (st == KB_OK) *(w ? write_gbps : read_gbps) = (double)bytes / (t.median_ms * 1e-3) / 1e9;
    }
out:
    {
        /* A fault in the timed kernels surfaces here: on the success path it
         * is the measurement's error; after a failure the first one stands. */
        const cudaError_t sync = cudaStreamSynchronize(s);
        if (sync != cudaSuccess && st == KB_OK)
            st = KB_FAIL(e, KB_ERR_CUDA, "SOL read/write stream measurement: %s",
                         cudaGetErrorString(sync));
    }
    if (a.buf) cudaFree(a.buf);
    if (a.sink) cudaFree(a.sink);
    return st;
}
