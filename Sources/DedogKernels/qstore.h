// The rounding store every 8-bit kernel build shares (qkernels.c, qstem.c); not part of the public API.
#ifndef DEDOG_QSTORE_H
#define DEDOG_QSTORE_H

#include <stdint.h>

/// Round to nearest, ties to even, for |x| < 2^22 (the store clamps first): adding and taking away 1.5 · 2^23
/// leaves no fraction bits, in the default rounding mode, as `cvtps2dq` does.
static inline int32_t round_even(float x) {
    volatile float big = 12582912.0f;  // volatile: the compiler must not fold (x + big) − big into x
    return (int32_t)((x + big) - big);
}

/// max then min as `maxps` and `minps` compute them (the second operand when they compare equal), so that a
/// zero's sign comes out as in the vector builds.
static inline float clampf(float x, float lo, float hi) {
    x = x > lo ? x : lo;
    return x < hi ? x : hi;
}

/// A real value t (in steps of the output's scale) as its byte: clamped to lo…hi, rounded, plus the zero point.
static inline uint8_t store_u8(float t, float lo, float hi, int zero) {
    return (uint8_t)(round_even(clampf(t, lo, hi)) + zero);
}

#endif
