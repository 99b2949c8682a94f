/* The environment banner (envinfo.h). */
#include "envinfo.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* cuDNN is loaded at run time by its backend; here it is only asked its
 * version, so the banner needs neither cudnn.h nor a link dependency. */
static size_t cudnn_version(void)
{
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
        if (!lib) continue;
        size_t (*get)(void) = NULL;
        *(void **)&get = dlsym(lib, "cudnnGetVersion");
        size_t v = get ? get() : 0;
        dlclose(lib);
        if (v) return v;
    }
    return 0;
}

/* CUPTI only if something in this process already loaded it. */
static unsigned cupti_version(void)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!lib) continue;
        int (*get)(uint32_t *) = NULL;
        *(void **)&get = dlsym(lib, "cuptiGetVersion");
        uint32_t v = 0;
        if (get && get(&v) != 0) v = 0;
        dlclose(lib);
        if (v) return v;
    }
    return 0;
}

void kb_env_collect(const kb_device *d, kb_env *env)
{
    memset(env, 0, sizeof *env);
    if (cudaRuntimeGetVersion(&env->runtime) != cudaSuccess) env->runtime = 0;
    if (cudaDriverGetVersion(&env->driver) != cudaSuccess) env->driver = 0;
    env->cudnn = cudnn_version();
    env->cupti = cupti_version();
    if (d) {
        int khz = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d->ordinal) == cudaSuccess)
            env->sm_mhz = khz / 1000;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d->ordinal) == cudaSuccess)
            env->mem_mhz = khz / 1000;
    }
}

/* 13000 -> "13.0", 12080 -> "12.8" (CUDA's encoding: 1000*major + 10*minor). */
static void cuda_ver(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

void kb_env_compact(const kb_env *env, char *buf, size_t len)
{
    char rt[16] = "?", drv[16] = "none", dnn[24] = "not found", cupti[24] = "";
    if (env->runtime) cuda_ver(env->runtime, rt, sizeof rt);
    if (env->driver) cuda_ver(env->driver, drv, sizeof drv);
    /* cuDNN 9 encodes 10000*major + 100*minor + patch. */
    if (env->cudnn)
        snprintf(dnn, sizeof dnn, "%zu.%zu.%zu", env->cudnn / 10000, env->cudnn / 100 % 100,
                 env->cudnn % 100);
    if (env->cupti) snprintf(cupti, sizeof cupti, " | CUPTI API %u", env->cupti);
    int n = snprintf(buf, len, "kbench %s | CUDA runtime %s, driver %s | cuDNN %s%s", KB_VERSION,
                     rt, drv, dnn, cupti);
    if (n > 0 && (size_t)n < len && (env->sm_mhz || env->mem_mhz))
        snprintf(buf + n, len - (size_t)n, " | SM clock %d MHz, memory clock %d MHz (peak)",
                 env->sm_mhz, env->mem_mhz);
}

void kb_env_banner(const kb_env *env, const kb_device *d, char *buf, size_t len)
{
    char compact[384], gpu[384] = "GPU: none";
    kb_env_compact(env, compact, sizeof compact);
    if (d)
        snprintf(gpu, sizeof gpu, "GPU %d: %s (sm_%d%d, %d SMs, %.0f GB)", d->ordinal, d->name,
                 d->cc_major, d->cc_minor, d->sm_count, (double)d->total_mem / 1e9);
    /* The GPU goes before the clocks: "... | cuDNN x | GPU ... | SM clock ..." */
    const char *clocks = strstr(compact, " | SM clock");
    if (clocks)
        snprintf(buf, len, "%.*s | %s%s", (int)(clocks - compact), compact, gpu, clocks);
    else
        snprintf(buf, len, "%s | %s", compact, gpu);
}
