// The 256-bit byte dot products the 8-bit kernels are built with (qkernels256_impl.h, qstem256_impl.h): each adds to
// every int32 lane of `a` the dot product of the lane's 4 unsigned bytes of `x` and 4 signed bytes of `w`. Not part of
// the public API.
#ifndef DEDOG_QDOT4_H
#define DEDOG_QDOT4_H

#include <stdint.h>

/// The bias `DEDOG_DOT4_SGN`'s builds start from (they sum (x − 128) · w): `bias` + 128 · `weight_sum`; sets `*fit`
/// to 0 (and gives 0) where that does not fit in 32 bits. Every layout's packing computes it here.
static inline int32_t dedog_signed_bias(int32_t bias, int64_t weight_sum, int32_t *fit) {
    const int64_t b = (int64_t)bias + 128 * weight_sum;
    if (b > INT32_MAX || b < INT32_MIN) {
        *fit = 0;
        return 0;
    }
    return (int32_t)b;
}

#if defined(__x86_64__)
#include <immintrin.h>

/// AVX-VNNI: one `vpdpbusd`.
#define DEDOG_DOT4_VNNI(a, x, w) _mm256_dpbusd_avx_epi32(a, x, w)

/// AVX2: `vpmaddubsw` (pairs of products summed with saturation to 16 bits), then `vpmaddwd` by ones; exact where no
/// pair sum passes 2^15 − 1: 7-bit weights (2 · 255 · 63) or 7-bit inputs (2 · 127 · 127).
#define DEDOG_DOT4_UBS(a, x, w) _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1)))

/// x − 128 as a signed byte, for `DEDOG_DOT4_SGN_OF`.
#define DEDOG_X_SIGNED(x) _mm256_xor_si256(x, _mm256_set1_epi8((char)0x80))

/// AVX2, exact for weights within ±127 (the layers' weights are): x · w = (x − 128) · w + 128 · w, the second term
/// folded into the bias the layout keeps for this build (`XSIGNED`), the first a signed byte product that
/// `vpmaddubsw` takes as |x − 128| (`ax`) times w with x − 128's sign (`xs`, `DEDOG_X_SIGNED`; `vpsignb`): pair sums
/// within 2 · 128 · 127 < 2^15. `DEDOG_DOT4_SGN_OF` takes xs and ax made beforehand (once for every weight vector
/// they meet); `DEDOG_DOT4_SGN` makes them: one instruction more than `DEDOG_DOT4_UBS`; the same integers as
/// `vpdpbusd`.
#define DEDOG_DOT4_SGN_OF(a, xs, ax, w)                                                                               \
    _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w, xs)), _mm256_set1_epi16(1)))
#define DEDOG_DOT4_SGN(a, x, w) DEDOG_DOT4_SGN_OF(a, DEDOG_X_SIGNED(x), _mm256_abs_epi8(DEDOG_X_SIGNED(x)), w)

/// AVX2, exact for any bytes: each input byte split into its low 7 bits and its top bit, each half through
/// `vpmaddubsw` (pair sums within 2 · 127 · 127 and 2 · 127), the top bit's sums weighted by 128: twice the multiplies.
#define DEDOG_DOT4_UBS8(a, x, w)                                                                                      \
    _mm256_add_epi32(a, _mm256_add_epi32(                                                                               \
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(x, _mm256_set1_epi8(0x7F)), w), _mm256_set1_epi16(1)),  \
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(x, 7), _mm256_set1_epi8(1)), w),      \
                          _mm256_set1_epi16(128))))
#endif

#endif
