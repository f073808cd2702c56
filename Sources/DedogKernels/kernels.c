// Instantiates kernels_impl.h once per instruction set and dispatches between the builds. The AVX2 and
// AVX-512 builds carry per-function target attributes, so the file compiles for baseline x86-64 and the
// binary runs on any x86-64 CPU; on other architectures only the portable build exists.
#include "dedog_kernels.h"
#include "pack_stored.h"

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

int dedog_isa_supported(dedog_isa isa) {
    switch (isa) {
    case DEDOG_ISA_PORTABLE:
        return 1;
#if defined(__x86_64__)
    case DEDOG_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case DEDOG_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    default:
        return 0;
    }
}

// Callers choose the instruction set once, after dedog_isa_supported; an unsupported one falls back to the
// portable kernels rather than executing instructions the CPU lacks.
void dedog_pointwise(dedog_isa isa, const dedog_pointwise_args *args) {
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_pointwise(args); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_pointwise(args); return; }
#endif
    (void)isa;
    portable_pointwise(args);
}

void dedog_depthwise(dedog_isa isa, const dedog_depthwise_args *args) {
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
static void pack(const float *weight, const double *scale, const float *bias, int inputs, int outputs,
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

void dedog_pointwise_pack(const float *weight, const float *bias, int inputs, int outputs, float *packed) {
    pack(weight, 0, bias, inputs, outputs, 1, (size_t)inputs, packed);
}

void dedog_pack_stored_into(const void *weight, int half, const double *scale, const float *bias, int inputs,
                            int outputs, float *rows, float *packed) {
    if (!half) {
        pack((const float *)weight, scale, bias, inputs, outputs, 1, (size_t)inputs, packed);
        return;
    }
    // Halves are widened a panel's 16 rows at a time, into a buffer that stays in cache: no float copy of the tensor.
    const size_t panels = ((size_t)outputs + DEDOG_PANEL - 1) / DEDOG_PANEL;
    for (size_t p = 0; p < panels; p++) {
        const size_t first = p * DEDOG_PANEL;
        const int width = outputs - (int)first < DEDOG_PANEL ? outputs - (int)first : DEDOG_PANEL;
        dedog_f16_to_f32((const uint16_t *)weight + first * (size_t)inputs, rows, (size_t)width * (size_t)inputs);
        pack(rows, scale ? scale + first : 0, bias ? bias + first : 0, inputs, width, 1, (size_t)inputs,
             packed + p * DEDOG_PANEL * ((size_t)inputs + 1));
    }
}

int dedog_pointwise_pack_stored(const void *weight, int half, const double *scale, const float *bias, int inputs,
                                int outputs, float *packed) {
    float *rows = half ? malloc(sizeof(float) * DEDOG_PANEL * (size_t)inputs) : 0;
    if (half && !rows) return -1;
    dedog_pack_stored_into(weight, half, scale, bias, inputs, outputs, rows, packed);
    free(rows);
    return 0;
}

void dedog_pointwise_pack_columns(const float *weight, const float *bias, int inputs, int outputs, float *packed) {
    pack(weight, 0, bias, inputs, outputs, (size_t)outputs, 1, packed);
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
    __builtin_cpu_init();
    if (__builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2")) { f16_to_f32_f16c(in, out, count); return; }
#endif
    for (size_t i = 0; i < count; i++) out[i] = half_to_float(in[i]);
}

