// The instruction set a float kernel runs for a caller's set; shared by the kernel files, not part of the public API.
#ifndef DEDOG_ISA_H
#define DEDOG_ISA_H

#include "dedog_kernels.h"

/// The VNNI sets add only an 8-bit dot product: their float kernels (and packing, quantizing, peaks in floats) are
/// those of AVX2 and AVX-512.
static inline dedog_isa dedog_float_isa(dedog_isa isa) {
    return isa == DEDOG_ISA_AVX512_VNNI ? DEDOG_ISA_AVX512 : (isa == DEDOG_ISA_AVX_VNNI ? DEDOG_ISA_AVX2 : isa);
}

#endif
