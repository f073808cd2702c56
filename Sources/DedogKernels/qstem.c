// The network's first convolution (3×3, stride 2, 3 → 32 channels) in bytes, straight from the photo's pixels:
// the preprocessing's mean and 1/std are folded into the int8 weights and the int32 biases, so the kernels multiply
// the 0–255 pixel bytes themselves (TF-SAME padding is a border of the mean's byte, the value that normalises to 0).
// In planar order one kernel row of a window in one channel is 3 contiguous bytes: a dword whose fourth byte meets
// a zero weight, 9 dwords a window (K = 36) with no gathering and no interleaving of channels. The AVX-512 VNNI
// build adds 4 bytes per vpdpbusd lane; the others sum the same integers. Every build multiplies each sum by the
// same float scale and stores it as `dedog_quantize` does, so all store the same bytes.
#include "dedog_kernels.h"
#include "isa.h"
#include "qdot4.h"
#include "qstore.h"

#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define SO DEDOG_QSTEM_OUTPUTS
#define STAPS 12  // bytes per kernel row: 4 per channel (3 columns, then one that meets a zero weight)
// Layout: [ky][channel c][half h] 64 bytes (16 outputs × the 4 weight bytes of a dword) for VNNI; then
// [ky][c · 4 + kx][output] int16 for the other builds; then the 32 int32 biases, the 32 float scales, an int32, 1
// when every weight is within ±63 (AVX2's vpmaddubsw cannot saturate on them), an int32, 1 when every weight is within
// ±127 (AVX2's signed build runs them), and the 32 int32 biases of that build (bias + 128 · Σ w, DEDOG_DOT4_SGN).
#define S_VNNI 0
#define S_WIDE (3 * 3 * 2 * 64)
#define S_BIAS (S_WIDE + 3 * STAPS * SO * 2)
#define S_SCALE (S_BIAS + SO * 4)
#define S_NARROW (S_SCALE + SO * 4)
#define S_SIGNED (S_NARROW + 4)
#define S_SBIAS (S_SIGNED + 4)
#define S_SIZE (S_SBIAS + SO * 4)

size_t dedog_qstem_packed_size(void) { return S_SIZE; }

void dedog_qstem_pack(const int8_t *weight, const int32_t *bias, const float *scale, void *packed) {
    uint8_t *p = packed;
    memset(p, 0, S_SIZE);
    int16_t *wide = (int16_t *)(p + S_WIDE);
    for (int o = 0; o < SO; o++)
        for (int ky = 0; ky < 3; ky++)
            for (int c = 0; c < 3; c++)
                for (int kx = 0; kx < 3; kx++) {
                    const int8_t w = weight[((o * 3 + c) * 3 + ky) * 3 + kx];
                    p[S_VNNI + ((ky * 3 + c) * 2 + o / 16) * 64 + (o % 16) * 4 + kx] = (uint8_t)w;
                    wide[(ky * STAPS + c * 4 + kx) * SO + o] = w;
                }
    memcpy(p + S_BIAS, bias, SO * 4);
    memcpy(p + S_SCALE, scale, SO * 4);
    int32_t narrow = 1;
    for (int i = 0; i < SO * 27; i++) narrow &= weight[i] >= -63 && weight[i] <= 63;
    memcpy(p + S_NARROW, &narrow, 4);
    int32_t within = 1, sbias[SO];
    for (int o = 0; o < SO; o++) {
        int64_t sum = 0;
        for (int i = 0; i < 27; i++) {
            within &= weight[o * 27 + i] >= -127;
            sum += weight[o * 27 + i];
        }
        sbias[o] = dedog_signed_bias(bias[o], sum, &within);
    }
    memcpy(p + S_SIGNED, &within, 4);
    memcpy(p + S_SBIAS, sbias, sizeof sbias);
}

/// One padded row's image columns of one channel: round(x · s + m) clamped to 0…255, rounded to nearest, ties to
/// even, by adding and taking away 1.5 · 2^23 (as the portable kernels' QROUND; without `round_even`'s volatile,
/// which would keep the loop from vectorising). Once per build, for its vector width; the same bytes from each (the
/// product is its own statement, so that no build fuses it with the sum).
#define QSTEM_ROW(name, target)                                                                                          \
    target static void name(const float *row, float s, float m, int n, uint8_t *o) {                                   \
        for (int x = 0; x < n; x++) {                                                                                    \
            const float scaled = row[x] * s;                                                                             \
            o[x] = (uint8_t)(int32_t)((clampf(scaled + m, 0, 255) + 12582912.0f) - 12582912.0f);                         \
        }                                                                                                                \
    }
QSTEM_ROW(portable_stem_row, )
#if defined(__x86_64__)
QSTEM_ROW(avx2_stem_row, __attribute__((target("avx2"))))
QSTEM_ROW(avx512_stem_row, __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2"))))
#endif

void dedog_qstem_bytes(dedog_isa isa, const float *in, int height, int width, const float *mean, const float *std,
                       int pad_top, int pad_left, int padded_height, int padded_width, int first_row, int end_row,
                       uint8_t *out) {
    isa = dedog_float_isa(isa);
    void (*convert)(const float *, float, float, int, uint8_t *) = portable_stem_row;
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) convert = avx512_stem_row;
    else if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) convert = avx2_stem_row;
#endif
    (void)isa;
    // The image's columns: x in [x0, x1) of the padded row.
    const int x0 = pad_left < 0 ? 0 : (pad_left > padded_width ? padded_width : pad_left);
    const int x1 = pad_left + width < x0 ? x0 : (pad_left + width > padded_width ? padded_width : pad_left + width);
    for (int c = 0; c < 3; c++) {
        const uint8_t border = (uint8_t)round_even(clampf(mean[c], 0, 255));  // what normalises to 0
        for (int y = first_row; y < end_row; y++) {
            uint8_t *o = out + ((size_t)c * padded_height + (size_t)y) * padded_width;
            const int iy = y - pad_top;
            if (iy < 0 || iy >= height) {
                memset(o, border, (size_t)padded_width);
                continue;
            }
            memset(o, border, (size_t)x0);
            memset(o + x1, border, (size_t)(padded_width - x1));
            convert(in + ((size_t)c * height + (size_t)iy) * width + (x0 - pad_left), std[c], mean[c], x1 - x0, o + x0);
        }
    }
    if (end_row == padded_height) memset(out + (size_t)3 * padded_height * padded_width, 0, 4);  // past the last window
}

/// Output rows of `g` summed in int32 a pixel at a time over the 16-bit weights (vectorised across the 32 outputs
/// by the compiler), then scaled and stored by `dedog_quantize`: the portable build.
#define QSTEM_PLAIN(name, target, isa)                                                                                   \
    target static void name(const dedog_qstem_args *g) {                                                                \
        const uint8_t *p = g->packed;                                                                                    \
        const int16_t *wide = (const int16_t *)(p + S_WIDE);                                                             \
        int32_t bias[SO];                                                                                                \
        float scale[SO];                                                                                                 \
        memcpy(bias, p + S_BIAS, sizeof bias);                                                                           \
        memcpy(scale, p + S_SCALE, sizeof scale);                                                                        \
        const size_t plane = (size_t)g->padded_height * (size_t)g->padded_width;                                         \
        for (int oy = g->first_row; oy < g->end_row; oy++)                                                               \
            for (int ox = 0; ox < g->out_width; ox++) {                                                                  \
                int32_t acc[SO];                                                                                         \
                for (int o = 0; o < SO; o++) acc[o] = bias[o];                                                           \
                for (int ky = 0; ky < 3; ky++)                                                                           \
                    for (int c = 0; c < 3; c++) {                                                                        \
                        const uint8_t *x = g->in + c * plane + (size_t)(2 * oy + ky) * g->padded_width + (size_t)ox * 2; \
                        for (int kx = 0; kx < 3; kx++) {                                                                 \
                            const int32_t v = x[kx];                                                                     \
                            const int16_t *w = wide + (ky * STAPS + c * 4 + kx) * SO;                                    \
                            for (int o = 0; o < SO; o++) acc[o] += v * w[o];                                             \
                        }                                                                                                \
                    }                                                                                                    \
                float t[SO];                                                                                             \
                for (int o = 0; o < SO; o++) t[o] = (float)acc[o] * scale[o];                                            \
                dedog_quantize(isa, t, SO, 1.0f, g->out_zero, g->out_min, g->out_max,                                    \
                               g->out + ((size_t)(oy - g->out_first_row) * g->out_width + (size_t)ox) * SO);             \
            }                                                                                                            \
    }

QSTEM_PLAIN(portable_qstem, , DEDOG_ISA_PORTABLE)
#if defined(__x86_64__)

#define SV static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#define SPX 6  // pixels per step: 12 accumulators

/// `px` (≤ SPX, a constant where inlined) pixels of row `oy` from column `ox`.
SV void vnni_stem_pixels(const dedog_qstem_args *g, const int px, int oy, int ox) {
    const uint8_t *p = g->packed;
    const size_t plane = (size_t)g->padded_height * (size_t)g->padded_width;
    __m512i acc[SPX][2];
    const __m512i b0 = _mm512_loadu_si512(p + S_BIAS), b1 = _mm512_loadu_si512(p + S_BIAS + 64);
    _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++) { acc[i][0] = b0; acc[i][1] = b1; }
    _Pragma("clang loop unroll(full)") for (int ky = 0; ky < 3; ky++) {
        _Pragma("clang loop unroll(full)") for (int c = 0; c < 3; c++) {
            const uint8_t *x = g->in + c * plane + (size_t)(2 * oy + ky) * g->padded_width + (size_t)ox * 2;
            const __m512i w0 = _mm512_loadu_si512(p + S_VNNI + ((ky * 3 + c) * 2) * 64);
            const __m512i w1 = _mm512_loadu_si512(p + S_VNNI + ((ky * 3 + c) * 2 + 1) * 64);
            _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++) {
                int32_t v;
                memcpy(&v, x + i * 2, 4);
                const __m512i a = _mm512_set1_epi32(v);
                acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], a, w0);
                acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], a, w1);
            }
        }
    }
    const __m512 s0 = _mm512_loadu_ps((const float *)(p + S_SCALE)), s1 = _mm512_loadu_ps((const float *)(p + S_SCALE + 64));
    const __m512 lo = _mm512_set1_ps((float)(g->out_min - g->out_zero)), hi = _mm512_set1_ps((float)(g->out_max - g->out_zero));
    const __m512i zero = _mm512_set1_epi32(g->out_zero);
    uint8_t *out = g->out + ((size_t)(oy - g->out_first_row) * g->out_width + (size_t)ox) * SO;
    _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++)
        _Pragma("clang loop unroll(full)") for (int h = 0; h < 2; h++) {
            __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i][h]), h ? s1 : s0);
            t = _mm512_min_ps(_mm512_max_ps(t, lo), hi);  // then rounded: the order of `store_u8`
            const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(t), zero);
            _mm_storeu_si128((__m128i *)(out + (size_t)i * SO + 16 * h), _mm512_cvtepi32_epi8(q));
        }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
static void vnni_qstem(const dedog_qstem_args *g) {
    for (int oy = g->first_row; oy < g->end_row; oy++) {
        int ox = 0;
        for (; ox + SPX <= g->out_width; ox += SPX) vnni_stem_pixels(g, SPX, oy, ox);
        for (; ox < g->out_width; ox++) vnni_stem_pixels(g, 1, oy, ox);
    }
}
#endif

#if defined(__x86_64__)
#define QIMPL_256 "qstem256_impl.h"
#include "q256_builds.h"
#endif

void dedog_qstem(dedog_isa isa, const dedog_qstem_args *args) {
#if defined(__x86_64__)
    if (dedog_isa_supported(isa)) {
        int32_t narrow, within;
        memcpy(&narrow, (const uint8_t *)args->packed + S_NARROW, 4);
        memcpy(&within, (const uint8_t *)args->packed + S_SIGNED, 4);
        if (isa == DEDOG_ISA_AVX512_VNNI) { vnni_qstem(args); return; }
        if (isa == DEDOG_ISA_AVX_VNNI) { vnni256_qstem(args); return; }
        if (isa == DEDOG_ISA_AVX2 || isa == DEDOG_ISA_AVX512) {
            if (narrow) ubs256_qstem(args);
            else if (within) sgn256_qstem(args);
            else ubs8_qstem(args);
            return;
        }
    }
#endif
    (void)isa;
    portable_qstem(args);
}
