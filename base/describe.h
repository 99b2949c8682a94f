/* kbench --describe: the op descriptor table (registry.h) as JSON, so that
 * tools outside kbench (ci/peers/torch_peers.py) take the benchmark list,
 * tensors, byte models and registered shapes from kbench instead of keeping
 * copies. Needs no GPU. */
#ifndef KB_DESCRIBE_H
#define KB_DESCRIBE_H

#include <stdio.h>

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole document (format in the function's comment, describe.c);
 * KB_ERR_IO when f cannot be written. */
kb_status kb_describe(FILE *f, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
