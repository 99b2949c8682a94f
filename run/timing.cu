/* Timing loop. Each sample: flush L2 (a read pass over >= 2x L2, timing.h),
 * then a kernel
 * that spins on a host-mapped flag holds the stream while the host enqueues
 * start event, the op and stop event; releasing the flag lets them run
 * back to back, so the launch latency of multi-kernel backends (eager
 * launches up to a dozen kernels) is not timed as idle GPU time. This is
 * nvbench's blocking-kernel technique. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "kb_cuda.cuh"
#include "timing.h"

void kb_timing_defaults(kb_timing_opts *o)
{
    o->warmup = 3;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->min_ms = 20.0;
    o->max_ms = 1500.0;
    o->target_rel_err = 0.005;
}

/* Threads per block of the flush's read pass. */
#define KB_FLUSH_BLOCK 512

extern "C" kb_status kb_flusher_init(kb_flusher *f, kb_err *e)
{
    int dev = 0, l2 = 0, sms = 0;
    f->buf = NULL;
    KB_CUDA(e, cudaGetDevice(&dev));
    KB_CUDA(e, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    KB_CUDA(e, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const size_t alloc = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    KB_CUDA(e, cudaMalloc(&f->buf, alloc));
    f->bytes = alloc - 16;
    /* Written once, here: from now on its lines in L2 are clean. Zeros XOR
     * to zero, which the pass never stores. */
    KB_CUDA(e, cudaMemset(f->buf, 0, alloc));
    KB_CUDA(e, cudaDeviceSynchronize());
    return kb_stream_read_grid(sms, KB_FLUSH_BLOCK, &f->grid, e);
}

extern "C" void kb_flusher_free(kb_flusher *f)
{
    if (f->buf) cudaFree(f->buf);
    f->buf = NULL;
}

extern "C" kb_status kb_flush(const kb_flusher *f, cudaStream_t s, kb_err *e)
{
    return kb_stream_read(f->buf, f->bytes / 16, (char *)f->buf + f->bytes, f->grid,
                          KB_FLUSH_BLOCK, s, e);
}

/* Spins until the host sets *flag, or ~1 s passes (never hangs the GPU if
 * the host dies between enqueue and release). */
static __global__ void hold_stream(volatile int *flag)
{
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > 1000000000ull) break;
        __nanosleep(1000);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    cudaEvent_t start, stop;
    int *flag_host, *flag_dev;
} timer_res;

static void timer_free(timer_res *r)
{
    if (r->start) cudaEventDestroy(r->start);
    if (r->stop) cudaEventDestroy(r->stop);
    if (r->flag_host) cudaFreeHost(r->flag_host);
}

/* Events and the host-mapped flag the stream-holding kernel spins on. */
static kb_status timer_init(timer_res *r, const char *what, kb_err *e)
{
    cudaError_t rc = cudaEventCreate(&r->start);
    if (rc == cudaSuccess) rc = cudaEventCreate(&r->stop);
    if (rc == cudaSuccess) rc = cudaHostAlloc((void **)&r->flag_host, sizeof(int), cudaHostAllocMapped);
    if (rc == cudaSuccess) rc = cudaHostGetDevicePointer((void **)&r->flag_dev, r->flag_host, 0);
    if (rc != cudaSuccess) return KB_FAIL(e, KB_ERR_CUDA, "%s: %s", what, cudaGetErrorString(rc));
    return KB_OK;
}

static kb_status one_sample(kb_timed_fn fn, void *arg, kb_flusher *f, cudaStream_t s,
                            timer_res *r, float *ms, kb_err *e)
{
    KB_TRY(kb_flush(f, s, e));
    *(volatile int *)r->flag_host = 0;
    hold_stream<<<1, 1, 0, s>>>(r->flag_dev);
    KB_LAUNCHED(e);
    KB_CUDA(e, cudaEventRecord(r->start, s));
    kb_status st = fn(arg, s, e);
    *(volatile int *)r->flag_host = 1; /* release even on failure */
    if (st != KB_OK) {
        cudaStreamSynchronize(s);
        return st;
    }
    KB_CUDA(e, cudaEventRecord(r->stop, s));
    KB_CUDA(e, cudaEventSynchronize(r->stop));
    KB_CUDA(e, cudaEventElapsedTime(ms, r->start, r->stop));
    return KB_OK;
}

static kb_status time_loop(kb_timed_fn fn, void *arg, const kb_timing_opts *o, kb_flusher *f,
                           cudaStream_t s, timer_res *r, double *samples, kb_timing *out,
                           kb_err *e)
{
    float ms = 0;
    for (int i = 0; i < o->warmup; i++) KB_TRY(one_sample(fn, arg, f, s, r, &ms, e));
    const double t0 = now_ms();
    double total = 0;
    int n = 0;
    double *scratch = samples + o->max_samples;
    out->converged = 0;
    while (n < o->max_samples) {
        KB_TRY(one_sample(fn, arg, f, s, r, &ms, e));
        samples[n++] = ms;
        total += ms;
        if (n >= o->min_samples && total >= o->min_ms) {
            for (int i = 0; i < n; i++) scratch[i] = samples[i];
            kb_stats(scratch, n, out);
            /* Relative standard error of the median: 1.2533 * sigma / sqrt(n). */
            double rel_err = 1.2533 * out->noise / sqrt((double)n);
            if (rel_err <= o->target_rel_err) {
                out->converged = 1;
                return KB_OK;
            }
        }
        if (now_ms() - t0 > o->max_ms && n >= o->min_samples) break;
    }
    kb_stats(samples, n, out);
    return KB_OK;
}

extern "C" kb_status kb_time_fn(kb_timed_fn fn, void *arg, const kb_timing_opts *o,
                                kb_flusher *f, cudaStream_t s, kb_timing *out, kb_err *e)
{
    timer_res r = {NULL, NULL, NULL, NULL};
    double *samples = (double *)malloc(sizeof(double) * 2 * (size_t)o->max_samples);
    if (!samples) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory for timing samples");
    kb_status st = timer_init(&r, "timer setup", e);
    if (st == KB_OK) st = time_loop(fn, arg, o, f, s, &r, samples, out, e);
    timer_free(&r);
    free(samples);
    return st;
}

static __global__ void empty_kernel(void) {}

static kb_status launch_empty(void *arg, cudaStream_t s, kb_err *e)
{
    (void)arg;
    empty_kernel<<<1, 1, 0, s>>>();
    KB_LAUNCHED(e);
    return KB_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" kb_status kb_launch_jitter(kb_flusher *f, cudaStream_t s, int samples,
                                      double *spread_ms, double *overhead_ms, kb_err *e)
{
    if (samples < 20) samples = 20;
    timer_res r = {NULL, NULL, NULL, NULL};
    double *v = (double *)malloc(sizeof(double) * (size_t)samples);
    if (!v) return KB_FAIL(e, KB_ERR_NOMEM, "out of host memory for launch-jitter samples");
    kb_status st = timer_init(&r, "launch-jitter timer setup", e);
    float ms = 0;
    for (int i = -5; st == KB_OK && i < samples; i++) {
        st = one_sample(launch_empty, NULL, f, s, &r, &ms, e);
        if (i >= 0) v[i] = ms;
    }
    if (st == KB_OK) {
        qsort(v, (size_t)samples, sizeof *v, cmp_double);
        const int lo = samples / 100, hi = samples - 1 - samples / 100;
        *spread_ms = v[hi] - v[lo];
        *overhead_ms = v[samples / 2];
    }
    timer_free(&r);
    free(v);
    return st;
}

/* ~50 us of spinning: long enough to dwarf %globaltimer's coarse ticks
 * (1 us on current GPUs), short enough to leave the clock as it was. */
static __global__ void clock_probe(unsigned long long *out)
{
    uint64_t g0, g1;
    long long c0 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    } while (g1 - g0 < 50000);
    long long c1 = clock64();
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = g1 - g0;
}

extern "C" kb_status kb_sm_clock(cudaStream_t s, double *mhz, double *max_mhz, kb_err *e)
{
    int dev = 0, khz = 0;
    unsigned long long *d = NULL, h[2] = {0, 0};
    KB_CUDA(e, cudaGetDevice(&dev));
    KB_CUDA(e, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    KB_CUDA(e, cudaMalloc(&d, sizeof h));
    clock_probe<<<1, 1, 0, s>>>(d);
    cudaError_t rc = cudaGetLastError();
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(s);
    cudaFree(d);
    if (rc != cudaSuccess) return KB_FAIL(e, KB_ERR_CUDA, "clock probe: %s", cudaGetErrorString(rc));
    *mhz = h[1] ? (double)h[0] / (double)h[1] * 1e3 : 0;
    *max_mhz = khz / 1e3;
    return KB_OK;
}

/* Tolerance and run length of the settle rule (timing.h): a probe is ~8
 * memsets of 2x L2 (~0.3 ms on an H200), its jitter on an idle GPU well
 * under 1%; the scrub traffic it must see cost the kernels ~9%. */
#define SETTLE_TOL 0.03
#define SETTLE_MEMSETS 8

static kb_status settle_probe(kb_flusher *f, cudaStream_t s, timer_res *r, float *ms, kb_err *e)
{
    KB_CUDA(e, cudaEventRecord(r->start, s));
    /* Zeros, what the buffer holds: the flush XORs it to zero. The dirty
     * lines these leave are written back by the warm-up's flushes. */
    for (int i = 0; i < SETTLE_MEMSETS; i++) KB_CUDA(e, cudaMemsetAsync(f->buf, 0, f->bytes, s));
    KB_CUDA(e, cudaEventRecord(r->stop, s));
    KB_CUDA(e, cudaEventSynchronize(r->stop));
    KB_CUDA(e, cudaEventElapsedTime(ms, r->start, r->stop));
    return KB_OK;
}

extern "C" kb_status kb_settle_wait(kb_flusher *f, cudaStream_t s, kb_settle *st, double max_ms,
                                    kb_settle_report *rep, kb_err *e)
{
    timer_res r = {NULL, NULL, NULL, NULL};
    const double t0 = now_ms();
    float ms = 0;
    kb_status rc = timer_init(&r, "settle probe setup", e);
    rep->first_slow = 0;
    rep->probes = rep->gave_up = 0;
    st->calm = 0;
    while (rc == KB_OK) {
        rc = settle_probe(f, s, &r, &ms, e);
        if (rc != KB_OK) break;
        if (rep->probes++ == 0 && st->ref_ms > 0) rep->first_slow = ms / st->ref_ms - 1;
        if (kb_settle_step(st, ms, SETTLE_TOL, KB_SETTLE_NEED)) break;
        if (now_ms() - t0 > max_ms) {
            st->ref_ms = ms;
            rep->gave_up = 1;
            break;
        }
    }
    timer_free(&r);
    rep->waited_ms = now_ms() - t0;
    return rc;
}
