/* --dump DIR: a case's inputs, saved statistics, outputs and gold as .npy
 * files in DIR/<case-name>/, for inspection with NumPy elsewhere. */
#ifndef KB_DUMP_H
#define KB_DUMP_H

#include "buffers.h"

#ifdef __cplusplus
extern "C" {
#endif

kb_status kb_dump_case(const char *dir, const char *case_name, const kb_buffers *b, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
