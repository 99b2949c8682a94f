/* The backends this build of the kernels library holds, registered with the
 * registry (registry.h, kb_register) by the program that links them, at
 * start-up: the registry itself refers to no kernel. */
#ifndef KB_BACKENDS_H
#define KB_BACKENDS_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every backend built (cuDNN's only when configured with it).
 * Calling it again registers nothing new. */
kb_status kb_kernels_register(kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
