/* The CTest resource spec kbench's build hands to ctest (GENERATED_RESOURCE_SPEC_FILE,
 * CMake >= 3.28): one 'gpus' resource per GPU, so plain `ctest -jN` spreads
 * cases over every GPU of the host and puts at most KB_GPUSPEC_SLOTS cases
 * on one GPU at a time. Those few processes only overlap their start-up and
 * exit (CUDA context creation and teardown: ~350 ms of a ~450 ms case on an
 * H200); everything a case does on the GPU, accuracy and timing included,
 * runs under the per-GPU lock (gpulock.h), one case at a time. The ids are
 * CUDA ordinals as kbench sees them (the same CUDA_VISIBLE_DEVICES), which
 * kbench maps back from CTEST_RESOURCE_GROUP_0_GPUS. Pure C, unit tested. */
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
/* Cases started per GPU at once: enough that the next ones are ready when
 * the lock frees, few enough not to crowd GPU memory with idle contexts. */
#define KB_GPUSPEC_SLOTS 4

/* The spec's JSON for ngpu GPUs (0: the no-GPU placeholder). KB_ERR_ARG for
 * ngpu < 0, KB_ERR_IO when buf is too small. */
kb_status kb_gpuspec_format(int ngpu, char *buf, size_t len, kb_err *e);

/* Writes it to path atomically (temp file + rename). */
kb_status kb_gpuspec_write(const char *path, int ngpu, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
