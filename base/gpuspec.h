/* The CTest resource spec kbench's build hands to ctest (GENERATED_RESOURCE_SPEC_FILE,
 * CMake >= 3.28): one 'gpus' resource per GPU with one slot, so plain
 * `ctest -jN` spreads cases over every GPU of the host and runs one case per
 * GPU at a time, start-up and exit included. Overlapping only the start-up
 * and exit of other cases with a timed case (4 slots per GPU, GPU work
 * serialised by the lock) was measured on an H200 and rejected: 12 of 694
 * timed cases came out SLOWER, their samples uniformly 10-17 % slow
 * (docs/user/gpus.md). The ids are CUDA ordinals as kbench sees them (the
 * same CUDA_VISIBLE_DEVICES), which kbench maps back from
 * CTEST_RESOURCE_GROUP_0_GPUS. Pure C, unit tested. */
#ifndef KB_GPUSPEC_H
#define KB_GPUSPEC_H

#include <stddef.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots of the placeholder resource written when there is no GPU: every GPU
 * case then only reports SKIP, so nothing needs to be kept apart, and a
 * spec without any 'gpus' would leave the cases "Not Run". */
#define KB_GPUSPEC_NOGPU_SLOTS 4096
/* Cases per GPU at once (see above for why one). */
#define KB_GPUSPEC_SLOTS 1

/* The spec's JSON for ngpu GPUs (0: the no-GPU placeholder). KB_ERR_ARG for
 * ngpu < 0, KB_ERR_IO when buf is too small. */
kb_status kb_gpuspec_format(int ngpu, char *buf, size_t len, kb_err *e);

/* Writes it to path atomically (temp file + rename). */
kb_status kb_gpuspec_write(const char *path, int ngpu, kb_err *e);

/* Why no GPU can be used, in the words of every kbench tool (kbench's
 * "SKIP: ...", kbench-gpu-spec's note): KB_ERR_NODEV, what is missing first
 * and CUDA's words as the detail. rc: cudaGetDeviceCount's result
 * (cudaSuccess: it counted 0), rc_text: cudaGetErrorString(rc),
 * driver_found: kb_cuda_driver_found(). Pure: unit tested. */
kb_status kb_no_gpu(cudaError_t rc, const char *rc_text, int driver_found, kb_err *e);
/* 1 when the CUDA driver library (libcuda.so.1) can be loaded. */
int kb_cuda_driver_found(void);

#ifdef __cplusplus
}
#endif
#endif
