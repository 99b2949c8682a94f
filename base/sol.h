/* Speed of light by traffic mix (CUDA-free, pure).
 *
 * A kernel's time floor depends on how its bytes split between reads and
 * writes: HBM reads alone stream faster than a copy (read and write turns
 * share the bus), writes alone at their own rate. kbench measures three
 * streams per GPU (device.h: copy, read-only, write-only) and models a mix
 * of R bytes read and W written as
 *
 *     R >= W:  t = 2W / copy + (R - W) / read
 *     R <  W:  t = 2R / copy + (W - R) / write
 *     mix SOL = (R + W) / t
 *
 * the paired bytes stream as a copy, the excess as a one-way stream, one
 * after the other (the bus is shared, so the parts do not overlap). It is
 * exact at the three measured points (R = W: copy; W = 0: read; R = 0:
 * write) and in between it interpolates the time per byte linearly in the
 * read fraction R/(R+W). */
#ifndef KB_SOL_H
#define KB_SOL_H

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GB/s of the three streams; <= 0 or NaN: not measured. */
typedef struct {
    double copy_gbps, read_gbps, write_gbps;
} kb_sol_streams;

/* The SOL in GB/s of R read and W written bytes under the model above; NaN
 * when a stream the mix needs is not measured, or R + W <= 0. */
double kb_sol_mix_gbps(double read_bytes, double write_bytes, const kb_sol_streams *s);

/* The byte model split by direction: written = the output (kb_out_cols
 * columns per row, the case's dtype) plus dw when the benchmark has it;
 * read = kb_bytes_moved - written. */
double kb_bytes_written(const kb_problem *p);
double kb_bytes_read(const kb_problem *p);

/* kb_sol_mix_gbps for p's byte model. */
double kb_sol_mix_for(const kb_problem *p, const kb_sol_streams *s);

#ifdef __cplusplus
}
#endif
#endif
