// Shared by kernels.c and qkernels.c, not part of the public API (include/dedog_kernels.h).
#ifndef DEDOG_PACK_STORED_H
#define DEDOG_PACK_STORED_H

#include "dedog_kernels.h"

/// `dedog_pointwise_pack_stored` with the caller's scratch: `rows` holds DEDOG_PANEL × `inputs` floats when `half`
/// (one panel's rows, widened), and may be null otherwise. Allocates nothing.
void dedog_pack_stored_into(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias, int inputs,
                            int outputs, float *rows, float *packed);

#endif
