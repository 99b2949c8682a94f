/* The environment banner: what a result depends on besides the kernel
 * (kbench version, CUDA runtime and driver, cuDNN and CUPTI when present,
 * GPU, its peak SM and memory clocks), printed first by kbench and stored
 * with every result row (the `env` column), as the seed suite prints its
 * Python/PyTorch/CUDA versions first. */
#ifndef KB_ENVINFO_H
#define KB_ENVINFO_H

#include <stddef.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int runtime;   /* cudaRuntimeGetVersion, e.g. 13000; 0 unknown         */
    int driver;    /* cudaDriverGetVersion (CUDA API the driver supports); 0: none */
    size_t cudnn;  /* cudnnGetVersion, e.g. 91400; 0: not found            */
    unsigned cupti;/* cuptiGetVersion when CUPTI is loaded; 0: not loaded  */
    int sm_mhz, mem_mhz; /* peak clocks; 0 unknown                         */
} kb_env;

/* Reads the versions (and, with d non-NULL, d's clocks). Never fails: what
 * cannot be read stays 0. */
void kb_env_collect(const kb_device *d, kb_env *env);
/* "kbench 0.1.0 | CUDA runtime 13.0, driver 13.0 | cuDNN 9.14.0 | GPU 0:
 * NVIDIA H200 (sm_90, 132 SMs, 141 GB) | SM clock 1980 MHz, memory clock
 * 3201 MHz (peak)"; d may be NULL (no GPU). */
void kb_env_banner(const kb_env *env, const kb_device *d, char *buf, size_t len);
/* The same without the GPU name (results have a gpu column). */
void kb_env_compact(const kb_env *env, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
