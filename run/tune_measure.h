/* The measurer the harness hands the tuner (kb_setup_ctx.measurer): a
 * candidate is checked against the GPU reference in case buffers and timed
 * as a case is (tuner.h, kb_tune_measurer). */
#ifndef KB_TUNE_MEASURE_H
#define KB_TUNE_MEASURE_H

#include "tuner.h"

extern const kb_tune_measurer kb_tune_measure;

#endif
