// Instantiates kernels_impl.h once per instruction set and dispatches between the builds. The AVX2 and
// AVX-512 builds carry per-function target attributes, so the file compiles for baseline x86-64 and the
// binary runs on any x86-64 CPU; on other architectures only the portable build exists.
#include "dedog_kernels.h"
#include "isa.h"
#include "pack_stored.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Portable: 4-wide vectors, which any target lowers to its own SIMD or to scalars.
#define KTARGET
#define KFN(name) portable_##name
#define KFUSED 0
#define VW 4
#define MR 4
#define NP 1
#define PX1 4
#define PX2 2
#include "kernels_impl.h"

#if defined(__x86_64__)
// AVX2 + FMA: 16 ymm registers hold a 6 × 16 tile (12 accumulators, 2 weight vectors, 1 broadcast).
#define KTARGET __attribute__((target("avx2,fma")))
#define KFN(name) avx2_##name
#define KFUSED 1
#define VW 8
#define MR 6
#define NP 1
#define PX1 4
#define PX2 4
#include "kernels_impl.h"

// AVX-512: 32 zmm registers hold an 8 × 32 tile (16 accumulators, 2 weight vectors, broadcasts).
#define KTARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define KFN(name) avx512_##name
#define KFUSED 1
#define KMASK
#define KMASK_STORE(p, v, n) _mm512_mask_storeu_ps(p, (__mmask16)((1u << (n)) - 1), (__m512)(v))
#define KMASK_LOAD(p, n) ((V)_mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1), p))
#define VW 16
#define MR 8
#define NP 2
#define PX1 8
#define PX2 4
#include "kernels_impl.h"
#endif

// What the CPU offers, asked once: every kernel call consults it (issue 53 found `__builtin_cpu_init` and the
// feature loads run for each call). Threads that race to the first call compute the same bits; the atomic keeps
// the sharing well defined.
enum { CPU_AVX2 = 1, CPU_AVX512 = 2, CPU_VNNI = 4, CPU_F16C = 8, CPU_AVX_VNNI = 16, CPU_KNOWN = 1 << 30 };

static int cpu_features(void) {
    static _Atomic int known = 0;
    int bits = atomic_load_explicit(&known, memory_order_relaxed);
    if (bits) return bits;
    bits = CPU_KNOWN;
#if defined(__x86_64__)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
    if (avx2) bits |= CPU_AVX2;
    if (avx512) bits |= CPU_AVX512;
    if (avx512 && __builtin_cpu_supports("avx512vnni")) bits |= CPU_VNNI;
    if (avx2 && __builtin_cpu_supports("avxvnni")) bits |= CPU_AVX_VNNI;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) bits |= CPU_F16C;
#endif
    atomic_store_explicit(&known, bits, memory_order_relaxed);
    return bits;
}

int dedog_isa_supported(dedog_isa isa) {
    switch (isa) {
    case DEDOG_ISA_PORTABLE:
        return 1;
    case DEDOG_ISA_AVX2:
        return (cpu_features() & CPU_AVX2) != 0;
    case DEDOG_ISA_AVX512:
        return (cpu_features() & CPU_AVX512) != 0;
    case DEDOG_ISA_AVX_VNNI:
        return (cpu_features() & CPU_AVX_VNNI) != 0;
    case DEDOG_ISA_AVX512_VNNI:
        return (cpu_features() & CPU_VNNI) != 0;
    default:
        return 0;
    }
}

// Callers choose the instruction set once, after dedog_isa_supported; an unsupported one falls back to the
// portable kernels rather than executing instructions the CPU lacks.
void dedog_pointwise(dedog_isa isa, const dedog_pointwise_args *args) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_pointwise(args); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_pointwise(args); return; }
#endif
    (void)isa;
    portable_pointwise(args);
}

void dedog_depthwise(dedog_isa isa, const dedog_depthwise_args *args) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_depthwise(args); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_depthwise(args); return; }
#endif
    (void)isa;
    portable_depthwise(args);
}

size_t dedog_pointwise_packed_count(int inputs, int outputs) {
    size_t panels = ((size_t)outputs + DEDOG_PANEL - 1) / DEDOG_PANEL;
    return panels * DEDOG_PANEL * ((size_t)inputs + 1);
}

// Only the padding of a partial last panel needs zeros; everything else is written once.
static void pack_portable(const float *weight, const double *scale, const float *bias, int inputs, int outputs,
                          size_t input_step, size_t output_step, float *packed) {
    const size_t panels = ((size_t)outputs + DEDOG_PANEL - 1) / DEDOG_PANEL;
    for (size_t p = 0; p < panels; p++) {
        float *panel = packed + p * DEDOG_PANEL * ((size_t)inputs + 1);
        const size_t first = p * DEDOG_PANEL;
        const int width = outputs - (int)first < DEDOG_PANEL ? outputs - (int)first : DEDOG_PANEL;
        if (width < DEDOG_PANEL) memset(panel, 0, DEDOG_PANEL * ((size_t)inputs + 1) * sizeof(float));
        for (int j = 0; j < width; j++) panel[j] = bias ? bias[first + (size_t)j] : 0.0f;
        for (int k = 0; k < inputs; k++) {
            float *row = panel + DEDOG_PANEL * ((size_t)k + 1);
            const float *w = weight + (size_t)k * input_step + first * output_step;
            if (scale)
                for (int j = 0; j < width; j++) row[j] = (float)((double)w[(size_t)j * output_step] * scale[first + (size_t)j]);
            else
                for (int j = 0; j < width; j++) row[j] = w[(size_t)j * output_step];
        }
    }
}

#if defined(__x86_64__)
#define PACK512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))

/// Transposes the 16 × 16 floats in `r` (r[i][c] becomes r[c][i]): pairs interleaved within 128-bit lanes, then
/// quads, then the lanes moved across registers.
PACK512 static inline void transpose16(__m512 r[16]) {
    __m512 t[16], u[16];
    for (int m = 0; m < 8; m++) {
        t[2 * m] = _mm512_unpacklo_ps(r[2 * m], r[2 * m + 1]);
        t[2 * m + 1] = _mm512_unpackhi_ps(r[2 * m], r[2 * m + 1]);
    }
    // u[4g + c] holds, in 128-bit lane L, column 4L + c of rows 4g…4g+3.
    for (int g = 0; g < 4; g++) {
        const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
        u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int c = 0; c < 4; c++) {
        const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
        const __m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44), w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
        r[8 + c] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
    }
}

/// `v` times the 16 scales in `low` and `high` in double precision, rounded once to float (as `pack_portable`).
PACK512 static inline __m512 scaled16(__m512 v, __m512d low, __m512d high) {
    const __m256 a = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), low));
    const __m256 b = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)), high));
    return _mm512_insertf32x8(_mm512_castps256_ps512(a), b, 1);
}

// The same, 16 outputs at a time: rows stored contiguously (the checkpoint's [outputs × inputs]) are read 16 inputs
// at a time and transposed in registers; columns stored contiguously are loaded as they are. Lanes past the panel's
// real outputs are masked to 0.
PACK512 static void pack_avx512(const float *weight, const double *scale, const float *bias, int inputs, int outputs,
                                size_t input_step, size_t output_step, float *packed) {
    const size_t panels = ((size_t)outputs + DEDOG_PANEL - 1) / DEDOG_PANEL;
    for (size_t p = 0; p < panels; p++) {
        float *panel = packed + p * DEDOG_PANEL * ((size_t)inputs + 1);
        const size_t first = p * DEDOG_PANEL;
        const int width = outputs - (int)first < DEDOG_PANEL ? outputs - (int)first : DEDOG_PANEL;
        const __mmask16 live = (__mmask16)((1u << width) - 1);
        _mm512_storeu_ps(panel, bias ? _mm512_maskz_loadu_ps(live, bias + first) : _mm512_setzero_ps());
        __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
        if (scale) {
            low = _mm512_maskz_loadu_pd((__mmask8)live, scale + first);
            high = _mm512_maskz_loadu_pd((__mmask8)(live >> 8), scale + first + 8);
        }
        const float *w = weight + first * output_step;
        if (output_step == 1) {
            for (int k = 0; k < inputs; k++) {
                const __m512 v = _mm512_maskz_loadu_ps(live, w + (size_t)k * input_step);
                _mm512_storeu_ps(panel + DEDOG_PANEL * ((size_t)k + 1), scale ? scaled16(v, low, high) : v);
            }
            continue;
        }
        for (int k0 = 0; k0 < inputs; k0 += 16) {
            const int count = inputs - k0 < 16 ? inputs - k0 : 16;
            const __mmask16 columns = (__mmask16)((1u << count) - 1);
            __m512 r[16];
            for (int j = 0; j < 16; j++)
                r[j] = j < width ? _mm512_maskz_loadu_ps(columns, w + (size_t)j * output_step + (size_t)k0 * input_step)
                                 : _mm512_setzero_ps();
            transpose16(r);
            for (int c = 0; c < count; c++)
                _mm512_storeu_ps(panel + DEDOG_PANEL * ((size_t)(k0 + c) + 1), scale ? scaled16(r[c], low, high) : r[c]);
        }
    }
}
#endif

static void pack(dedog_isa isa, const float *weight, const double *scale, const float *bias, int inputs, int outputs,
                 size_t input_step, size_t output_step, float *packed) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    // The AVX-512 build reads rows or columns that lie contiguously (every caller's layout).
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa) && (input_step == 1 || output_step == 1)) {
        pack_avx512(weight, scale, bias, inputs, outputs, input_step, output_step, packed);
        return;
    }
#endif
    (void)isa;
    pack_portable(weight, scale, bias, inputs, outputs, input_step, output_step, packed);
}

void dedog_pointwise_pack(dedog_isa isa, const float *weight, const float *bias, int inputs, int outputs, float *packed) {
    pack(isa, weight, 0, bias, inputs, outputs, 1, (size_t)inputs, packed);
}

void dedog_pack_stored_into(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias,
                            int inputs, int outputs, float *rows, float *packed) {
    if (!half) {
        pack(isa, (const float *)weight, scale, bias, inputs, outputs, 1, (size_t)inputs, packed);
        return;
    }
    // Halves are widened a panel's 16 rows at a time, into a buffer that stays in cache: no float copy of the tensor.
    const size_t panels = ((size_t)outputs + DEDOG_PANEL - 1) / DEDOG_PANEL;
    for (size_t p = 0; p < panels; p++) {
        const size_t first = p * DEDOG_PANEL;
        const int width = outputs - (int)first < DEDOG_PANEL ? outputs - (int)first : DEDOG_PANEL;
        dedog_f16_to_f32((const uint16_t *)weight + first * (size_t)inputs, rows, (size_t)width * (size_t)inputs);
        pack(isa, rows, scale ? scale + first : 0, bias ? bias + first : 0, inputs, width, 1, (size_t)inputs,
             packed + p * DEDOG_PANEL * ((size_t)inputs + 1));
    }
}

int dedog_pointwise_pack_stored(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias,
                                int inputs, int outputs, float *packed) {
    float *rows = half ? malloc(sizeof(float) * DEDOG_PANEL * (size_t)inputs) : 0;
    if (half && !rows) return -1;
    dedog_pack_stored_into(isa, weight, half, scale, bias, inputs, outputs, rows, packed);
    free(rows);
    return 0;
}

void dedog_pointwise_pack_columns(dedog_isa isa, const float *weight, const float *bias, int inputs, int outputs,
                                  float *packed) {
    pack(isa, weight, 0, bias, inputs, outputs, (size_t)outputs, 1, packed);
}

void dedog_linear(dedog_isa isa, const dedog_linear_args *args) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_linear(args); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_linear(args); return; }
#endif
    (void)isa;
    portable_linear(args);
}

void dedog_stem_patches(const float *in, int channels, int height, int width, int kernel, int stride,
                        int pad_top, int pad_left, int row, int out_width, float *patches) {
    const int taps = channels * kernel * kernel;
    // Tap by tap, so that the loop along the row has no bounds checks but at its two ends.
    for (int c = 0; c < channels; c++) {
        const float *plane = in + (size_t)c * height * width;
        for (int ky = 0; ky < kernel; ky++) {
            const int iy = row * stride - pad_top + ky;
            for (int kx = 0; kx < kernel; kx++) {
                float *out = patches + (c * kernel + ky) * kernel + kx;
                if (iy < 0 || iy >= height) {
                    for (int ox = 0; ox < out_width; ox++) out[(size_t)ox * taps] = 0;
                    continue;
                }
                const float *src = plane + (size_t)iy * width;
                const int shift = kx - pad_left;  // ix = ox * stride + shift
                int first = shift < 0 ? (-shift + stride - 1) / stride : 0;  // first ox with ix >= 0
                int end = (width - shift + stride - 1) / stride;             // first ox with ix >= width
                if (first > out_width) first = out_width;
                if (end > out_width) end = out_width;
                if (end < first) end = first;
                for (int ox = 0; ox < first; ox++) out[(size_t)ox * taps] = 0;
                for (int ox = first; ox < end; ox++) out[(size_t)ox * taps] = src[ox * stride + shift];
                for (int ox = end; ox < out_width; ox++) out[(size_t)ox * taps] = 0;
            }
        }
    }
}

int dedog_f16_finite(const uint16_t *in, size_t count) {
    uint16_t special = 0;  // no branch per value: the loop vectorizes
    for (size_t i = 0; i < count; i++) special |= (uint16_t)((in[i] & 0x7C00) == 0x7C00);
    return !special;
}

// Half to single precision: exact for every value (subnormals, infinities and NaNs included).
static float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    uint32_t bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000 | (mantissa << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else {  // subnormal: normalise
        uint32_t m = mantissa, e = 113;
        while (!(m & 0x400)) { m <<= 1; e--; }
        bits = sign | (e << 23) | ((m & 0x3FF) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#if defined(__x86_64__)
__attribute__((target("avx2,f16c"))) static void f16_to_f32_f16c(const uint16_t *in, float *out, size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    for (; i < count; i++) out[i] = half_to_float(in[i]);
}
#endif

void dedog_f16_to_f32(const uint16_t *in, float *out, size_t count) {
#if defined(__x86_64__)
    if (cpu_features() & CPU_F16C) { f16_to_f32_f16c(in, out, count); return; }
#endif
    for (size_t i = 0; i < count; i++) out[i] = half_to_float(in[i]);
}

