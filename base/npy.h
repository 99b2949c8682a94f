/* NumPy .npy files (format version 1.0) for --dump: a failing case's inputs,
 * outputs and gold, loadable with numpy.load() elsewhere.
 *
 * Layout: "\x93NUMPY" 1 0, uint16 LE header length, a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (M, N), } padded with
 * spaces and ended by '\n' so the data starts at a multiple of 64 bytes, then
 * the raw little-endian data in C order. Files are written atomically. */
#ifndef KB_NPY_H
#define KB_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_NPY_MAX_DIMS 8

/* dtype data from host memory: fp32 -> '<f4', fp16 -> '<f2', bf16 -> '<f4'
 * (NumPy has no bf16; every bf16 value is exactly a float). ndim 0 writes a
 * scalar (one element, shape ()). */
kb_status kb_npy_write(const char *path, kb_dtype dtype, const void *host_data, int ndim,
                       const int64_t *shape, kb_err *e);
/* Any element type: descr is NumPy's type string ("<i8", "<f4", "|u1", ...). */
kb_status kb_npy_write_raw(const char *path, const char *descr, size_t elem_size,
                           const void *host_data, int ndim, const int64_t *shape, kb_err *e);
kb_status kb_npy_write_f32(const char *path, const float *host_data, int ndim,
                           const int64_t *shape, kb_err *e);
kb_status kb_npy_write_i64(const char *path, const int64_t *host_data, int ndim,
                           const int64_t *shape, kb_err *e);

/* What a .npy header says; data_offset is where the data starts. */
typedef struct {
    int major, minor;
    char descr[16];
    int fortran_order;
    int ndim;
    int64_t shape[KB_NPY_MAX_DIMS];
    size_t data_offset;
} kb_npy_header;

/* Parses the header of a version 1.x/2.x .npy file (the format written
 * here; not every dict NumPy accepts). */
kb_status kb_npy_read_header(const char *path, kb_npy_header *h, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
