// The 8-bit pointwise and depthwise convolutions: unsigned activation bytes times signed weight bytes, summed exactly
// in int32, then one float multiply per output channel and a rounding store. The builds: portable C; AVX-512 VNNI,
// whose `vpdpbusd` multiplies 4 byte pairs and adds them into an int32 lane in one instruction; and on 256 bits
// (qkernels256_impl.h) AVX-VNNI's `vpdpbusd`, and AVX2's `vpmaddubsw` then `vpmaddwd` by ones, exact where its 16-bit
// pair sums cannot saturate (7-bit weights or 7-bit inputs), on inputs less 128 with their sign moved onto the weights
// where the weights are within ±127, as every layer's are (`DEDOG_DOT4_SGN`, one instruction more), and otherwise
// with each input byte split in two (twice the multiplies). All read the same packed layouts and store the same bytes.
#include "dedog_kernels.h"
#include "isa.h"
#include "pack_stored.h"
#include "qdot4.h"
#include "qstore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// A panel: 16 outputs' [int32 bias′][float scale][int32 output zero][int32 residual zero][float residual scale],
// 64 bytes each, then 64 bytes of which the first int32 is 1 when AVX2's `vpmaddubsw` cannot saturate on the panel
// (`pairs_fit`) and the second 1 when its signed build can run it (`signed_fit`), then the 16 int32 biases′ of that
// build (bias′ + 128 · Σ w, `DEDOG_DOT4_SGN`), then ⌈inputs/4⌉ × 64 weight bytes.
#define QPANEL DEDOG_PANEL
#define QSCALE 64
#define QZERO 128
#define QRZERO 192
#define QRSCALE 256
#define QFLAGS 320
#define QSBIAS 384
#define QHEAD 448  // bytes before the weights

static size_t groups_of(int inputs) { return ((size_t)inputs + 3) / 4; }
static size_t panel_bytes(int inputs) { return 64 * (groups_of(inputs) + 7); }

/// Whether `vpmaddubsw`'s pair sums x₀w₀ + x₁w₁ fit in 16 bits for inputs up to `input_max` and weights up to
/// `widest` in magnitude: 7-bit weights (2 · 255 · 63) or 7-bit inputs (2 · 127 · 127) do.
static int32_t pairs_fit(int widest, int input_max) { return 2 * input_max * widest < 32768; }

/// The largest magnitude among `count` signed weight bytes.
static int widest_byte(const uint8_t *w, size_t count) {
    int widest = 0;
    for (size_t i = 0; i < count; i++) widest = abs((int8_t)w[i]) > widest ? abs((int8_t)w[i]) : widest;
    return widest;
}

/// The header of panel `panel` of `inputs` inputs (its weights written already), whose outputs start at `first`:
/// its 16 biases′ and scales as given, then each output's zero point and its residual's encoding (zeros past the
/// `width` real outputs; the residual's left 0 when not given), and whether vpmaddubsw's pair sums fit for inputs up
/// to `input_max`.
static void pack_header(uint8_t *panel, int inputs, int input_max, const int32_t *bias, const float *scale, size_t first,
                        int width, const int32_t *out_zero, const int32_t *residual_zero, const float *residual_scale) {
    const int widest = widest_byte(panel + QHEAD, groups_of(inputs) * 64);
    const int32_t fit = pairs_fit(widest, input_max);
    int32_t sfit = widest <= 127, sbias[QPANEL];
    for (int j = 0; j < QPANEL; j++) {
        int64_t sum = 0;
        for (size_t k = 0; k < 4 * groups_of(inputs); k++) sum += (int8_t)panel[QHEAD + (k / 4) * 64 + (size_t)j * 4 + k % 4];
        sbias[j] = dedog_signed_bias(bias[j], sum, &sfit);
    }
    memcpy(panel + QFLAGS, &fit, 4);
    memcpy(panel + QFLAGS + 4, &sfit, 4);
    memcpy(panel + QSBIAS, sbias, sizeof sbias);
    memcpy(panel, bias, sizeof(int32_t) * QPANEL);
    memcpy(panel + QSCALE, scale, sizeof(float) * QPANEL);
    int32_t z[QPANEL] = {0}, rz[QPANEL] = {0};
    float rs[QPANEL] = {0};
    for (int j = 0; j < width; j++) {
        z[j] = out_zero ? out_zero[first + (size_t)j] : 0;
        rz[j] = residual_zero ? residual_zero[first + (size_t)j] : 0;
        rs[j] = residual_scale ? residual_scale[first + (size_t)j] : 0;
    }
    memcpy(panel + QZERO, z, sizeof z);
    memcpy(panel + QRZERO, rz, sizeof rz);
    memcpy(panel + QRSCALE, rs, sizeof rs);
}

size_t dedog_qpointwise_packed_size(int inputs, int outputs) {
    return ((size_t)outputs + QPANEL - 1) / QPANEL * panel_bytes(inputs);
}

int dedog_qpointwise_widest_weight(const void *packed, int inputs, int outputs) {
    const size_t panels = ((size_t)outputs + QPANEL - 1) / QPANEL, size = panel_bytes(inputs);
    int widest = 0;
    for (size_t p = 0; p < panels; p++) {
        const int w = widest_byte((const uint8_t *)packed + p * size + QHEAD, groups_of(inputs) * 64);
        widest = w > widest ? w : widest;
    }
    return widest;
}

void dedog_qpointwise_pack(const int8_t *weight, const int32_t *bias, const float *scale, const int32_t *input_zero,
                           const int32_t *out_zero, const int32_t *residual_zero, const float *residual_scale, int inputs,
                           int outputs, int input_max, void *packed) {
    const size_t size = panel_bytes(inputs), panels = ((size_t)outputs + QPANEL - 1) / QPANEL;
    for (size_t p = 0; p < panels; p++) {
        uint8_t *panel = (uint8_t *)packed + p * size;
        memset(panel, 0, size);
        int32_t b[QPANEL] = {0};
        float s[QPANEL] = {0};
        const size_t first = p * QPANEL;
        const int width = outputs - (int)first < QPANEL ? outputs - (int)first : QPANEL;
        for (int j = 0; j < width; j++) {
            const int8_t *w = weight + (first + (size_t)j) * (size_t)inputs;
            int64_t zeros = 0;
            for (int k = 0; k < inputs; k++) {
                zeros += (int64_t)input_zero[k] * w[k];
                panel[QHEAD + (size_t)(k / 4) * 64 + (size_t)j * 4 + (size_t)(k % 4)] = (uint8_t)w[k];
            }
            int64_t folded = (int64_t)(bias ? bias[first + (size_t)j] : 0) - zeros;
            b[j] = folded > INT32_MAX ? INT32_MAX : (folded < INT32_MIN ? INT32_MIN : (int32_t)folded);
            s[j] = scale[first + (size_t)j];
        }
        pack_header(panel, inputs, input_max, b, s, first, width, out_zero, residual_zero, residual_scale);
    }
}

/// The weight bytes of a panel quantized from float panel `fp` (16 biases, then a row of 16 weights per input), each
/// output's weight scale `ws[j]`, Σ_k q · input_zero[k] in `zeros[j]` and Σ_k |q| in `magnitude[j]`, q within
/// ±`limit`. Each input's scale multiplies its weights first: w′ = w · s_x[k] is what a byte step of input k is
/// worth. The weight bytes past `inputs` must be zero already.
static void quantize_weights_portable(const float *fp, int inputs, const float *input_scale, const int32_t *input_zero,
                                      int limit, uint8_t *panel, float *ws, int32_t *zeros, int32_t *magnitude) {
    // Row by row, the 16 outputs side by side (the float panel's layout), so that the loops over j vectorize.
    float top[QPANEL] = {0}, inverse[QPANEL];
    for (int k = 0; k < inputs; k++)
        for (int j = 0; j < QPANEL; j++) {
            const float w = fabsf(fp[QPANEL * ((size_t)k + 1) + (size_t)j] * input_scale[k]);
            top[j] = w > top[j] ? w : top[j];
        }
    for (int j = 0; j < QPANEL; j++) {
        ws[j] = top[j] > 0 ? top[j] / (float)limit : 1;
        inverse[j] = 1 / ws[j];
        zeros[j] = magnitude[j] = 0;
    }
    for (int k = 0; k < inputs; k++) {
        uint8_t *group = panel + QHEAD + (size_t)(k / 4) * 64 + (size_t)(k % 4);
        for (int j = 0; j < QPANEL; j++) {
            const float x = fp[QPANEL * ((size_t)k + 1) + (size_t)j] * input_scale[k] * inverse[j];
            const float q = x < 0 ? -(float)(int32_t)(0.5f - x) : (float)(int32_t)(x + 0.5f);  // half away from 0
            const float l = (float)limit;
            const int32_t w = (int32_t)(q > l ? l : (q < -l ? -l : q));
            zeros[j] += w * input_zero[k];
            magnitude[j] += w < 0 ? -w : w;
            group[4 * j] = (uint8_t)(int8_t)w;
        }
    }
}

#if defined(__x86_64__)
/// The same, a row of 16 outputs per instruction: the same float operations in the same order (no fused
/// multiply-add), so the same bytes; 4 inputs' bytes are merged into one 64-byte store.
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq"))) static void
quantize_weights_avx512(const float *fp, int inputs, const float *input_scale, const int32_t *input_zero, int limit,
                        uint8_t *panel, float *ws, int32_t *zeros, int32_t *magnitude) {
    __m512 top = _mm512_setzero_ps();
    for (int k = 0; k < inputs; k++) {
        const __m512 w = _mm512_abs_ps(_mm512_mul_ps(_mm512_loadu_ps(fp + QPANEL * ((size_t)k + 1)),
                                                     _mm512_set1_ps(input_scale[k])));
        top = _mm512_max_ps(w, top);  // w > top ? w : top, as above
    }
    const __mmask16 positive = _mm512_cmp_ps_mask(top, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 scale = _mm512_mask_div_ps(_mm512_set1_ps(1), positive, top, _mm512_set1_ps((float)limit));
    const __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1), scale);
    _mm512_storeu_ps(ws, scale);
    __m512i zsum = _mm512_setzero_si512(), msum = _mm512_setzero_si512();
    for (int g = 0; g < (int)groups_of(inputs); g++) {
        __m512i bytes = _mm512_setzero_si512();
        for (int r = 0; r < 4 && 4 * g + r < inputs; r++) {
            const int k = 4 * g + r;
            const __m512 x = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(fp + QPANEL * ((size_t)k + 1)),
                                                         _mm512_set1_ps(input_scale[k])), inverse);
            // 0.5 − x for negative x is 0.5 + |x| exactly; NaN takes the positive branch, as above.
            const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
            __m512 q = _mm512_cvtepi32_ps(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.5f))));
            q = _mm512_mask_sub_ps(q, negative, _mm512_setzero_ps(), q);
            q = _mm512_min_ps(_mm512_max_ps(q, _mm512_set1_ps(-(float)limit)), _mm512_set1_ps((float)limit));
            const __m512i w = _mm512_cvttps_epi32(q);
            zsum = _mm512_add_epi32(zsum, _mm512_mullo_epi32(w, _mm512_set1_epi32(input_zero[k])));
            msum = _mm512_add_epi32(msum, _mm512_abs_epi32(w));
            bytes = _mm512_or_si512(bytes, _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0xFF)), (unsigned)(8 * r)));
        }
        _mm512_storeu_si512(panel + QHEAD + (size_t)g * 64, bytes);
    }
    _mm512_storeu_si512(zeros, zsum);
    _mm512_storeu_si512(magnitude, msum);
}
#endif

/// Panel `p` of a layer quantized from `fp`, that panel in the float layout (16 biases, then a row of 16 weights
/// per input); 0 when an output's sums could pass the bound QuantizedPointwise checks.
static int quantize_panel(dedog_isa isa, const float *fp, size_t p, int inputs, int outputs, const float *input_scale,
                          const int32_t *input_zero, const float *output_scale, const int32_t *out_zero,
                          const int32_t *residual_zero, const float *residual_scale, int weight_limit, int bias_limit,
                          int input_max, uint8_t *panel) {
    if (weight_limit < 1 || weight_limit > 127) weight_limit = 127;
    memset(panel, 0, panel_bytes(inputs));
    float ws[QPANEL];
    int32_t zeros[QPANEL], magnitude[QPANEL];
#if defined(__x86_64__)
    if (dedog_float_isa(isa) == DEDOG_ISA_AVX512 && dedog_isa_supported(DEDOG_ISA_AVX512))
        quantize_weights_avx512(fp, inputs, input_scale, input_zero, weight_limit, panel, ws, zeros, magnitude);
    else
#endif
        quantize_weights_portable(fp, inputs, input_scale, input_zero, weight_limit, panel, ws, zeros, magnitude);
    (void)isa;
    int32_t b[QPANEL] = {0};
    float s[QPANEL] = {0};
    int fits = 1;
    const int width = outputs - (int)(p * QPANEL) < QPANEL ? outputs - (int)(p * QPANEL) : QPANEL;
    const size_t first = p * QPANEL;
    for (int j = 0; j < width; j++) {
        float bq = roundf(fp[j] / ws[j]);
        if (!(bq == bq)) bq = 0;  // NaN: a bias the scale cannot say
        bq = bq > (float)bias_limit ? (float)bias_limit : (bq < -(float)bias_limit ? -(float)bias_limit : bq);
        b[j] = (int32_t)((int64_t)bq - (int64_t)zeros[j]);
        s[j] = ws[j] / output_scale[first + (size_t)j];
        // The bound QuantizedPointwise checks, leaving 2^20 for a residual: sums and stored values well inside 32 bits.
        const double largest = fabs((double)bq) + 510.0 * (double)magnitude[j];
        if (!(largest < 2147483648.0 && largest * fabs((double)s[j]) < 1073741824.0 - 1048576.0)) fits = 0;
    }
    pack_header(panel, inputs, input_max, b, s, first, width, out_zero, residual_zero, residual_scale);
    return fits;
}

int dedog_qpointwise_quantize(dedog_isa isa, const float *fpacked, int inputs, int outputs, const float *input_scale,
                              const int32_t *input_zero, const float *output_scale, const int32_t *out_zero,
                              const int32_t *residual_zero, const float *residual_scale, int weight_limit, int bias_limit,
                              int input_max, void *packed) {
    const size_t panels = ((size_t)outputs + QPANEL - 1) / QPANEL, size = panel_bytes(inputs);
    const size_t fpanel = (size_t)QPANEL * ((size_t)inputs + 1);
    int fits = 1;
    for (size_t p = 0; p < panels; p++)
        fits &= quantize_panel(isa, fpacked + p * fpanel, p, inputs, outputs, input_scale, input_zero, output_scale,
                               out_zero, residual_zero, residual_scale, weight_limit, bias_limit, input_max,
                               (uint8_t *)packed + p * size);
    return fits;
}

int dedog_qpointwise_quantize_rows(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias,
                                   int inputs, int outputs, const float *input_scale, const int32_t *input_zero,
                                   const float *output_scale, const int32_t *out_zero, const int32_t *residual_zero,
                                   const float *residual_scale, int weight_limit, int bias_limit, int input_max,
                                   void *packed) {
    const size_t panels = ((size_t)outputs + QPANEL - 1) / QPANEL, size = panel_bytes(inputs);
    const size_t value_bytes = half ? sizeof(uint16_t) : sizeof(float);
    // One float panel at a time, packed exactly as the float layer packs it (halves widened there), so the bytes are
    // the same; both buffers stay in cache.
    float *fp = malloc(sizeof(float) * QPANEL * ((size_t)inputs + 1));
    float *rows = half ? malloc(sizeof(float) * QPANEL * (size_t)inputs) : 0;
    if (!fp || (half && !rows)) {
        free(fp);
        free(rows);
        return -1;
    }
    int fits = 1;
    for (size_t p = 0; p < panels; p++) {
        const size_t first = p * QPANEL;
        const int width = outputs - (int)first < QPANEL ? outputs - (int)first : QPANEL;
        dedog_pack_stored_into(isa, (const uint8_t *)weight + first * (size_t)inputs * value_bytes, half, scale + first,
                               bias + first, inputs, width, rows, fp);
        fits &= quantize_panel(isa, fp, p, inputs, outputs, input_scale, input_zero, output_scale, out_zero,
                               residual_zero, residual_scale, weight_limit, bias_limit, input_max,
                               (uint8_t *)packed + p * size);
    }
    free(fp);
    free(rows);
    return fits;
}

/// The 4 input bytes of group `g` of a row, zeros past `inputs` (so no byte past the row is read).
static inline uint32_t group_bytes(const uint8_t *x, size_t g, int inputs) {
    uint32_t v = 0;
    const size_t at = 4 * g, n = (size_t)inputs - at < 4 ? (size_t)inputs - at : 4;
    memcpy(&v, x + at, n);
    return v;
}

/// The store of one sum, lane `j` of panel `panel`'s header, as every build does it (see `dedog_qstore`).
static inline void store_one(const dedog_qpointwise_args *g, int32_t acc, const uint8_t *panel, int j, int row, int col) {
    float scale, rs;
    int32_t zero, rz;
    memcpy(&scale, panel + QSCALE + 4 * j, 4);
    memcpy(&zero, panel + QZERO + 4 * j, 4);
    memcpy(&rz, panel + QRZERO + 4 * j, 4);
    memcpy(&rs, panel + QRSCALE + 4 * j, 4);
    float t = (float)acc * scale;
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_F32) {
        ((float *)g->out)[at] = g->relu6 ? clampf(t, 0, 6) : t;
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        float r = (float)((int)g->residual[at] - rz) * rs;
        t = t + r;
    }
    ((uint8_t *)g->out)[at] = store_u8(t, (float)(g->out_min - zero), (float)(g->out_max - zero), zero);
}

/// Output row `oy` of the 8-bit depthwise convolution, channels c0..<c1, one channel and pixel at a time over the
/// in-bounds taps, in integers: the path for channels that do not fill a vector and kernels of other sizes.
static void qdw_scalar(const dedog_qdepthwise_args *g, int oy, int c0, int c1) {
    const int C = g->channels, k = g->kernel;
    const int iy0 = oy * g->stride - g->pad_top;
    uint8_t *out_row = g->out + (size_t)(oy - g->out_first_row) * g->out_width * C;
    for (int ox = 0; ox < g->out_width; ox++) {
        const int ix0 = ox * g->stride - g->pad_left;
        for (int c = c0; c < c1; c++) {
            int32_t sum = 0;
            for (int ky = 0; ky < k; ky++) {
                const int iy = iy0 + ky;
                if (iy < 0 || iy >= g->height) continue;
                for (int kx = 0; kx < k; kx++) {
                    const int ix = ix0 + kx;
                    if (ix < 0 || ix >= g->width) continue;
                    const uint8_t x = g->in[((size_t)(iy - g->in_first_row) * g->width + (size_t)ix) * C + c];
                    sum += (int32_t)x * (int32_t)g->weight[(size_t)(ky * k + kx) * C + c];
                }
            }
            const float t = (float)(sum + g->bias[c]) * g->scale[c];
            out_row[(size_t)ox * C + c] = store_u8(t, (float)(g->out_min - g->out_zero),
                                                   (float)(g->out_max - g->out_zero), g->out_zero);
        }
    }
}

// MARK: The depthwise layout for VNNI
// A header (int32: 1 when every |scale| < 64; int32: 1 when vpmaddubsw's pair sums fit, `pairs_fit`; int32: 1 when
// AVX2's signed build can run it, `signed_fit`), then one block
// per 64 channels: per kernel row group gg (rows
// 4gg…4gg+3), column kx and quarter q, 64 weight bytes, where lane L's dword j holds the four rows' weights of
// channel 64b + 16L + 4q + j (zero past the kernel and the channels), the order in which `dw_interleave` leaves the
// input bytes; then the block's biases, scales and the signed build's biases (bias + 128 · Σ w, DW_SBIAS int32s after
// the biases) per quarter in the same order. A block is contiguous, so that
// every operand of the kernel is at a constant offset from its start.
#define DW_ROWS 4
#define DW_HEAD 64
#define DW_SBIAS 128
static int dw_row_groups(int kernel) { return (kernel + DW_ROWS - 1) / DW_ROWS; }
/// Whether row group gg of a K×K kernel (G groups) holds a single kernel row: the fifth of a 5×5 kernel. The
/// depthwise kernels read that row along its columns instead (columns c…c+3 side by side in a lane), so that a pixel
/// takes its 5 taps in two byte dot products rather than 5 whose lanes hold one tap and three zeros.
#define DW_LONE_ROW(gg, K, G) ((gg) == (G) - 1 && (K) == 5)
static size_t dw_block_bytes(int kernel) { return ((size_t)dw_row_groups(kernel) * (size_t)kernel * 4 + 12) * 64; }

size_t dedog_qdepthwise_packed_size(int channels, int kernel) {
    return DW_HEAD + ((size_t)channels + 63) / 64 * dw_block_bytes(kernel);
}

void dedog_qdepthwise_pack(const float *weight, const int32_t *bias, const float *scale, int channels, int kernel,
                           int input_max, void *packed) {
    uint8_t *p = packed;
    memset(p, 0, dedog_qdepthwise_packed_size(channels, kernel));
    int32_t small = 1;
    for (int c = 0; c < channels; c++) small &= fabsf(scale[c]) < 64;  // false for NaN
    memcpy(p, &small, 4);
    int32_t fit = 1;
    for (size_t i = 0; i < (size_t)channels * (size_t)kernel * (size_t)kernel; i++)
        fit &= fabsf(weight[i]) <= 127 && pairs_fit((int)fabsf(weight[i]), input_max);  // false for NaN
    memcpy(p + 4, &fit, 4);
    int32_t sfit = 1;
    const int groups = dw_row_groups(kernel);
    for (int c = 0; c < channels; c++) {
        uint8_t *block = p + DW_HEAD + (size_t)(c / 64) * dw_block_bytes(kernel);
        const size_t lane = (size_t)(c % 64) / 16 * 16 + (size_t)(c % 4) * 4, q = (size_t)(c % 16) / 4;
        for (int gg = 0; gg < groups; gg++)
            for (int kx = 0; kx < kernel; kx++)
                for (int r = 0; r < DW_ROWS; r++) {
                    const int ky = DW_ROWS * gg + r;
                    if (ky < kernel)
                        block[((size_t)(gg * kernel + kx) * 4 + q) * 64 + lane + (size_t)r] =
                            (uint8_t)(int8_t)weight[(size_t)(ky * kernel + kx) * (size_t)channels + (size_t)c];
                }
        uint8_t *b = block + (size_t)groups * (size_t)kernel * 4 * 64;
        memcpy(b + q * 64 + lane, bias + c, 4);
        memcpy(b + 256 + q * 64 + lane, scale + c, 4);
        int64_t sum = 0;
        for (int t = 0; t < kernel * kernel; t++) {
            const float w = weight[(size_t)t * (size_t)channels + (size_t)c];
            sfit &= fabsf(w) <= 127;  // false for NaN
            sum += sfit ? (int64_t)w : 0;
        }
        const int32_t sb = dedog_signed_bias(bias[c], sum, &sfit);
        memcpy(b + 4 * DW_SBIAS + q * 64 + lane, &sb, 4);
    }
    memcpy(p + 8, &sfit, 4);
}

// The depthwise convolution and the quantizer, once per instruction set (see qkernels_impl.h).
#define KTARGET
#define KFN(name) portable_##name
#define VW 4
#define PX1 4
#define PX2 2
// 1.5 · 2^23: adding and taking it away leaves an integer, rounded to nearest, ties to even (|t| < 2^22).
#define QROUND(t, QI) __builtin_convertvector(((t) + 12582912.0f) - 12582912.0f, QI)
#define QMAX(a, b) __builtin_elementwise_max(a, b)
#define QMIN(a, b) __builtin_elementwise_min(a, b)
#include "qkernels_impl.h"
#if defined(__x86_64__)
#define KTARGET __attribute__((target("avx2,fma")))
#define KFN(name) avx2_##name
#define VW 8
#define PX1 4
#define PX2 4
#define QROUND(t, QI) ((QI)_mm256_cvtps_epi32((__m256)(t)))
#define QMAX(a, b) ((__typeof__(a))_mm256_max_ps((__m256)(a), (__m256)(b)))
#define QMIN(a, b) ((__typeof__(a))_mm256_min_ps((__m256)(a), (__m256)(b)))
#include "qkernels_impl.h"
#define KTARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define KFN(name) avx512_##name
#define VW 16
#define PX1 8
#define PX2 4
#define QROUND(t, QI) ((QI)_mm512_cvtps_epi32((__m512)(t)))
#define QMAX(a, b) ((__typeof__(a))_mm512_max_ps((__m512)(a), (__m512)(b)))
#define QMIN(a, b) ((__typeof__(a))_mm512_min_ps((__m512)(a), (__m512)(b)))
#include "qkernels_impl.h"
#endif

#if defined(__x86_64__)
static int dw_vnni_takes(const dedog_qdepthwise_args *g);
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
static void vnni_qdepthwise(const dedog_qdepthwise_args *g);
__attribute__((target("avx2,fma,avxvnni"))) static void vnni256_qdepthwise(const dedog_qdepthwise_args *g, int end32);
__attribute__((target("avx2,fma"))) static void ubs256_qdepthwise(const dedog_qdepthwise_args *g, int end32);
__attribute__((target("avx2,fma"))) static void ubs8_qdepthwise(const dedog_qdepthwise_args *g, int end32);
__attribute__((target("avx2,fma"))) static void sgn256_qdepthwise(const dedog_qdepthwise_args *g, int end32);

/// The 256-bit kernels take whole halves of 32 channels; the channels after them run in `isa`'s float build.
static void qdepthwise256(dedog_isa isa, void (*kernel)(const dedog_qdepthwise_args *, int),
                          const dedog_qdepthwise_args *args) {
    const int end32 = args->first_channel + (args->end_channel - args->first_channel) / 32 * 32;
    if (end32 > args->first_channel) kernel(args, end32);
    if (end32 < args->end_channel) {
        dedog_qdepthwise_args rest = *args;
        rest.first_channel = end32;
        dedog_qdepthwise_without_vnni(isa, &rest);
    }
}
#endif

void dedog_qdepthwise(dedog_isa isa, const dedog_qdepthwise_args *args) {
#if defined(__x86_64__)
    if (dedog_isa_supported(isa) && dw_vnni_takes(args)) {
        int32_t fit, sfit;
        memcpy(&fit, (const uint8_t *)args->packed + 4, 4);
        memcpy(&sfit, (const uint8_t *)args->packed + 8, 4);
        if (isa == DEDOG_ISA_AVX512_VNNI) { vnni_qdepthwise(args); return; }
        if (isa == DEDOG_ISA_AVX_VNNI) { qdepthwise256(isa, vnni256_qdepthwise, args); return; }
        if (isa == DEDOG_ISA_AVX2 || isa == DEDOG_ISA_AVX512) {
            qdepthwise256(isa, fit ? ubs256_qdepthwise : (sfit ? sgn256_qdepthwise : ubs8_qdepthwise), args);
            return;
        }
    }
#endif
    dedog_qdepthwise_without_vnni(isa, args);
}

void dedog_qdepthwise_without_vnni(dedog_isa isa, const dedog_qdepthwise_args *args) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_qdepthwise(args); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_qdepthwise(args); return; }
#endif
    (void)isa;
    portable_qdepthwise(args);
}

void dedog_quantize(dedog_isa isa, const float *in, size_t count, float inv_scale, int zero, int out_min, int out_max,
                    uint8_t *out) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) { avx512_quantize(in, count, inv_scale, zero, out_min, out_max, out); return; }
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) { avx2_quantize(in, count, inv_scale, zero, out_min, out_max, out); return; }
#endif
    (void)isa;
    portable_quantize(in, count, inv_scale, zero, out_min, out_max, out);
}

// The portable 1×1 kernel: products of 16-bit halves summed in pairs into int32 lanes, which clang lowers to one
// `pmaddwd` on x86-64's baseline SSE2 and to `smull`/`smlal` on NEON; exact (|x₀w₀ + x₁w₁| ≤ 2 · 255 · 128). Tiles
// of PQ_ROWS rows × 8 outputs: per group of 4 inputs, the panel's weights of 8 outputs as the (w₀, w₁) and (w₂, w₃)
// pairs of each, and each row's (a₀, a₁) and (a₂, a₃) repeated.
typedef int16_t pq_i16x8 __attribute__((ext_vector_type(8)));
typedef int32_t pq_i32x4 __attribute__((ext_vector_type(4)));
typedef int8_t pq_i8x16 __attribute__((ext_vector_type(16)));
typedef int16_t pq_i16x4 __attribute__((ext_vector_type(4)));
typedef uint8_t pq_u8x4 __attribute__((ext_vector_type(4)));
#define PQ_ROWS 4
#define PQ_UNROLL _Pragma("clang loop unroll(full)")  // loops over constants where inlined: accumulators in registers

/// Σ over pairs: lane i is a[2i]·b[2i] + a[2i+1]·b[2i+1]. On x86-64 `pmaddwd` itself (SSE2 is its baseline: this
/// is no other instruction set), since clang turns the generic form into a `pmaddwd` per product there.
static inline pq_i32x4 pq_madd(pq_i16x8 a, pq_i16x8 b) {
#if defined(__x86_64__)
    return (pq_i32x4)_mm_madd_epi16((__m128i)a, (__m128i)b);
#else
    const pq_i32x4 even = __builtin_convertvector(__builtin_shufflevector(a, a, 0, 2, 4, 6), pq_i32x4)
                        * __builtin_convertvector(__builtin_shufflevector(b, b, 0, 2, 4, 6), pq_i32x4);
    const pq_i32x4 odd = __builtin_convertvector(__builtin_shufflevector(a, a, 1, 3, 5, 7), pq_i32x4)
                       * __builtin_convertvector(__builtin_shufflevector(b, b, 1, 3, 5, 7), pq_i32x4);
    return even + odd;
#endif
}

typedef float pq_f32x4 __attribute__((ext_vector_type(4)));

/// `store_one` for the 4 outputs j…j+3 of `panel` (n ≤ 4 of them real) at once, for byte stores: the same float
/// operations in the same order, each its own statement (no contraction), so the same bytes. Float stores (the
/// head's, where a zero's sign must come out as `clampf` gives it) go through `store_one`.
static inline void pq_store4(const dedog_qpointwise_args *g, pq_i32x4 acc, const uint8_t *panel, int j, int row, int col, int n) {
    if (g->store == DEDOG_Q_F32 || n < 4) {
        for (int i = 0; i < n; i++) store_one(g, acc[i], panel, j + i, row, col + i);
        return;
    }
    pq_f32x4 scale, rs;
    pq_i32x4 zero, rz;
    memcpy(&scale, panel + QSCALE + 4 * j, 16);
    memcpy(&zero, panel + QZERO + 4 * j, 16);
    pq_f32x4 t = __builtin_convertvector(acc, pq_f32x4) * scale;
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_U8_ADD) {
        memcpy(&rz, panel + QRZERO + 4 * j, 16);
        memcpy(&rs, panel + QRSCALE + 4 * j, 16);
        pq_u8x4 res;
        memcpy(&res, g->residual + at, 4);
        const pq_f32x4 r = __builtin_convertvector(__builtin_convertvector(res, pq_i32x4) - rz, pq_f32x4) * rs;
        t = t + r;
    }
    const pq_f32x4 lo = __builtin_convertvector((pq_i32x4){g->out_min, g->out_min, g->out_min, g->out_min} - zero, pq_f32x4);
    const pq_f32x4 hi = __builtin_convertvector((pq_i32x4){g->out_max, g->out_max, g->out_max, g->out_max} - zero, pq_f32x4);
    t = __builtin_elementwise_min(__builtin_elementwise_max(t, lo), hi);  // clampf's order; bytes keep no zero's sign
    const pq_f32x4 big = {12582912.0f, 12582912.0f, 12582912.0f, 12582912.0f};  // round_even's 1.5 · 2^23
    const pq_f32x4 shifted = t + big;
    const pq_f32x4 rounded = shifted - big;
    const pq_u8x4 bytes = __builtin_convertvector(__builtin_convertvector(rounded, pq_i32x4) + zero, pq_u8x4);
    memcpy((uint8_t *)g->out + at, &bytes, 4);
}

/// `mr` (≤ PQ_ROWS, a constant where inlined) rows from `row` of outputs `half`·8 … +7 of `panel`.
static inline __attribute__((always_inline)) void pq_tile(const dedog_qpointwise_args *g, const uint8_t *panel, const int mr,
                                                          int row, int half, int first, int cols) {
    const size_t groups = groups_of(g->inputs), full = (size_t)g->inputs / 4;
    pq_i32x4 acc[PQ_ROWS][2], bias[2];
    memcpy(bias, panel + 32 * half, sizeof bias);
    PQ_UNROLL
    for (int r = 0; r < mr; r++) {
        acc[r][0] = bias[0];
        acc[r][1] = bias[1];
    }
    for (size_t gi = 0; gi < groups; gi++) {
        // Outputs 8·half … +7: 32 bytes, 4 a output; the pairs (w₀, w₁) of outputs o…o+3 and their (w₂, w₃).
        pq_i8x16 b[2];
        memcpy(b, panel + QHEAD + gi * 64 + 32 * (size_t)half, sizeof b);
        pq_i16x8 w01[2], w23[2];
        PQ_UNROLL
        for (int h = 0; h < 2; h++) {
            w01[h] = __builtin_convertvector(__builtin_shufflevector(b[h], b[h], 0, 1, 4, 5, 8, 9, 12, 13), pq_i16x8);
            w23[h] = __builtin_convertvector(__builtin_shufflevector(b[h], b[h], 2, 3, 6, 7, 10, 11, 14, 15), pq_i16x8);
        }
        PQ_UNROLL
        for (int r = 0; r < mr; r++) {
            const uint8_t *x = g->in + (size_t)(row + r) * g->in_stride;
            pq_u8x4 bytes;
            if (gi < full) memcpy(&bytes, x + 4 * gi, 4);
            else {
                const uint32_t v = group_bytes(x, gi, g->inputs);
                memcpy(&bytes, &v, 4);
            }
            const pq_i16x4 a = __builtin_convertvector(bytes, pq_i16x4);
            const pq_i16x8 x01 = __builtin_shufflevector(a, a, 0, 1, 0, 1, 0, 1, 0, 1);
            const pq_i16x8 x23 = __builtin_shufflevector(a, a, 2, 3, 2, 3, 2, 3, 2, 3);
            PQ_UNROLL
            for (int h = 0; h < 2; h++) acc[r][h] += pq_madd(x01, w01[h]) + pq_madd(x23, w23[h]);
        }
    }
    PQ_UNROLL
    for (int r = 0; r < mr; r++)
        PQ_UNROLL
        for (int h = 0; h < 2; h++) {
            const int j = 8 * half + 4 * h, n = cols - j < 4 ? cols - j : 4;
            if (n > 0) pq_store4(g, acc[r][h], panel, j, row + r, first + j, n);
        }
}

static void portable_qpointwise(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs);
    for (int p = g->first_panel; p < g->end_panel; p++) {
        const uint8_t *panel = (const uint8_t *)g->packed + (size_t)p * size;
        const int first = p * QPANEL;
        const int cols = g->outputs - first < QPANEL ? g->outputs - first : QPANEL;
        for (int half = 0; half < 2 && 8 * half < cols; half++) {
            int r = 0;
            for (; r + PQ_ROWS <= g->rows; r += PQ_ROWS) pq_tile(g, panel, PQ_ROWS, r, half, first, cols);
            for (; r < g->rows; r++) pq_tile(g, panel, 1, r, half, first, cols);
        }
    }
}

#if defined(__x86_64__)

// MARK: AVX-512 VNNI: vpdpbusd

/// How the 1×1 kernels store their bytes after the saturating packs (a constant where they are inlined).
enum {
    QPW_GENERAL,    // the zero points added, then clamped at both ends
    QPW_FROM_ZERO,  // every zero point 0 and the clamp from 0 (the ReLU6 outputs, in 8 or 7 bits): the packs clamp
                    // from below, the top is clamped as bytes (a no-op for 255)
};

#define VN static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#define UNROLL _Pragma("clang loop unroll(full)")  // tile loops: constants where inlined, accumulators in registers
#define VMR 6  // a tile of 6 rows × 4 panels: 24 accumulators, 4 weight vectors and a broadcast in 32 zmm
#define VNP 4

/// The 16 sums of row `row` from column `col`, with the header of their panel; `n` ≤ 16 of them real.
VN void vnni_store16(const dedog_qpointwise_args *g, __m512i acc, const uint8_t *panel, int row, int col, int n) {
    const __mmask16 mask = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps((const float *)(panel + QSCALE)));
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_F32) {
        if (g->relu6) t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(6));
        _mm512_mask_storeu_ps((float *)g->out + at, mask, t);
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        __m512i r = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, g->residual + at));
        r = _mm512_sub_epi32(r, _mm512_loadu_si512(panel + QRZERO));
        t = _mm512_add_ps(t, _mm512_mul_ps(_mm512_cvtepi32_ps(r), _mm512_loadu_ps((const float *)(panel + QRSCALE))));
    }
    const __m512i zero = _mm512_loadu_si512(panel + QZERO);
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_set1_epi32(g->out_min), zero))),
                      _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_set1_epi32(g->out_max), zero)));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(t), zero);
    _mm_mask_storeu_epi8((uint8_t *)g->out + at, mask, _mm512_cvtepi32_epi8(q));
}

/// The 64 byte sums of row `row` from column `col`, 4 panels' worth (`acc` in column order, each panel `size`
/// bytes after the previous one): scaled (the residual added), rounded to int32 plus the zero point, narrowed with
/// saturation (to 16 bits, to unsigned bytes) and clamped as bytes, then put back in column order. The same bytes
/// as `vnni_store16` whenever |t| < 2^30, which `QuantizedPointwise` checks for every layer. `kind` (a
/// `qpw_store_kind`, a constant where inlined) leaves out what the zero points and the packs make needless.
VN void vnni_store64_u8(const dedog_qpointwise_args *g, const int kind, __m512i a0, __m512i a1, __m512i a2, __m512i a3,
                        const uint8_t *panel, size_t size, int row, int col) {
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    const __m512i acc[4] = {a0, a1, a2, a3};
    __m512i q[4];
    for (int v = 0; v < 4; v++) {
        const uint8_t *head = panel + (size_t)v * size;
        __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[v]), _mm512_loadu_ps((const float *)(head + QSCALE)));
        if (g->store == DEDOG_Q_U8_ADD) {
            __m512i r = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(g->residual + at + 16 * v)));
            r = _mm512_sub_epi32(r, _mm512_loadu_si512(head + QRZERO));
            t = _mm512_add_ps(t, _mm512_mul_ps(_mm512_cvtepi32_ps(r), _mm512_loadu_ps((const float *)(head + QRSCALE))));
        }
        q[v] = kind != QPW_GENERAL ? _mm512_cvtps_epi32(t) : _mm512_add_epi32(_mm512_cvtps_epi32(t), _mm512_loadu_si512(head + QZERO));
    }
    const __m512i lo = _mm512_packs_epi32(q[0], q[1]);
    const __m512i hi = _mm512_packs_epi32(q[2], q[3]);
    // Dword 4·lane + v of the packed bytes holds q[v]'s outputs 4·lane…4·lane+3; column order wants it at 4·v + lane.
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i b = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(lo, hi));
    if (kind == QPW_GENERAL) b = _mm512_max_epu8(b, _mm512_set1_epi8((char)g->out_min));
    b = _mm512_min_epu8(b, _mm512_set1_epi8((char)g->out_max));
    _mm512_storeu_si512((uint8_t *)g->out + at, b);
}

/// mr (≤ VMR) rows × np (≤ VNP) panels; both are constants where inlined, so the accumulators stay in registers.
VN void vnni_tile(const dedog_qpointwise_args *g, const int kind, const uint8_t *in, const int mr, const uint8_t *panel,
                  size_t size, const int np, int row, int col) {
    __m512i acc[VMR][VNP];
    UNROLL
    for (int p = 0; p < np; p++) {
        const __m512i b = _mm512_loadu_si512(panel + (size_t)p * size);
        UNROLL
        for (int r = 0; r < mr; r++) acc[r][p] = b;
    }
    const uint8_t *x[VMR];
    UNROLL
    for (int r = 0; r < mr; r++) x[r] = in + (size_t)r * g->in_stride;
    const size_t full = (size_t)g->inputs / 4, groups = groups_of(g->inputs);
    for (size_t gi = 0; gi < full; gi++) {
        __m512i w[VNP];
        UNROLL
        for (int p = 0; p < np; p++) w[p] = _mm512_loadu_si512(panel + (size_t)p * size + QHEAD + gi * 64);
        UNROLL
        for (int r = 0; r < mr; r++) {
            int32_t a;
            memcpy(&a, x[r] + 4 * gi, 4);
            const __m512i v = _mm512_set1_epi32(a);
            UNROLL
            for (int p = 0; p < np; p++) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], v, w[p]);
        }
    }
    if (full < groups) {  // the last inputs, fewer than 4
        __m512i w[VNP];
        UNROLL
        for (int p = 0; p < np; p++) w[p] = _mm512_loadu_si512(panel + (size_t)p * size + QHEAD + full * 64);
        UNROLL
        for (int r = 0; r < mr; r++) {
            const __m512i v = _mm512_set1_epi32((int)group_bytes(x[r], full, g->inputs));
            UNROLL
            for (int p = 0; p < np; p++) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], v, w[p]);
        }
    }
    if (np == 4 && g->store != DEDOG_Q_F32 && g->outputs - col >= 4 * QPANEL) {
        UNROLL
        for (int r = 0; r < mr; r++)
            vnni_store64_u8(g, kind, acc[r][0], acc[r][1], acc[r][2], acc[r][3], panel, size, row + r, col);
        return;
    }
    UNROLL
    for (int r = 0; r < mr; r++)
        UNROLL
        for (int p = 0; p < np; p++) {
            const int n = g->outputs - (col + p * QPANEL);
            if (n > 0) vnni_store16(g, acc[r][p], panel + (size_t)p * size, row + r, col + p * QPANEL, n);
        }
}

/// `mr` rows across panels p0..<p1, 4, 2 or 1 panels at a time.
VN void vnni_rows(const dedog_qpointwise_args *g, const int kind, const int mr, int row, int p0, int p1, size_t size) {
    const uint8_t *in = g->in + (size_t)row * g->in_stride;
    const uint8_t *packed = (const uint8_t *)g->packed;
    int p = p0;
    for (; p + 4 <= p1; p += 4) vnni_tile(g, kind, in, mr, packed + (size_t)p * size, size, 4, row, p * QPANEL);
    for (; p + 2 <= p1; p += 2) vnni_tile(g, kind, in, mr, packed + (size_t)p * size, size, 2, row, p * QPANEL);
    for (; p < p1; p++) vnni_tile(g, kind, in, mr, packed + (size_t)p * size, size, 1, row, p * QPANEL);
}

/// Row blocks of VMR over chunks of panels whose weights stay in L2 (≤ 256 KB) while every row block passes them.
VN void vnni_blocks(const dedog_qpointwise_args *g, const int kind, size_t size) {
    int chunk = (int)(262144 / size) / VNP * VNP;
    if (chunk < VNP) chunk = VNP;
    for (int p0 = g->first_panel; p0 < g->end_panel; p0 += chunk) {
        const int p1 = p0 + chunk < g->end_panel ? p0 + chunk : g->end_panel;
        for (int r = 0; r < g->rows; r += VMR) {
            switch (g->rows - r < VMR ? g->rows - r : VMR) {
            case 1: vnni_rows(g, kind, 1, r, p0, p1, size); break;
            case 2: vnni_rows(g, kind, 2, r, p0, p1, size); break;
            case 3: vnni_rows(g, kind, 3, r, p0, p1, size); break;
            case 4: vnni_rows(g, kind, 4, r, p0, p1, size); break;
            case 5: vnni_rows(g, kind, 5, r, p0, p1, size); break;
            default: vnni_rows(g, kind, 6, r, p0, p1, size); break;
            }
        }
    }
}

/// Whether every output zero point of `g`'s panels is 0.
static int zero_points_are_zero(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs);
    for (int p = g->first_panel; p < g->end_panel; p++) {
        int32_t z[QPANEL];
        memcpy(z, (const uint8_t *)g->packed + (size_t)p * size + QZERO, sizeof z);
        for (int j = 0; j < QPANEL; j++)
            if (z[j] != 0) return 0;
    }
    return 1;
}

/// The kind of store `g` takes.
static int qpw_store_kind(const dedog_qpointwise_args *g) {
    return g->store == DEDOG_Q_U8 && g->out_min == 0 && zero_points_are_zero(g) ? QPW_FROM_ZERO : QPW_GENERAL;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
static void vnni_qpointwise(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs);
    if (qpw_store_kind(g) == QPW_FROM_ZERO) vnni_blocks(g, QPW_FROM_ZERO, size);
    else vnni_blocks(g, QPW_GENERAL, size);
}

// MARK: AVX-512 VNNI depthwise: four kernel rows per vpdpbusd lane

#define DW_SLOTS 5  // pixels whose windows are open at once: ⌈K/S⌉ ≤ 5 for the kernels this path takes

/// The same bytes of four input rows side by side: Q[q] lane L dword j holds rows a, b, c, d of channel
/// 16L + 4q + j (two rounds of byte, then word, interleaving within each 128-bit lane).
VN void dw_interleave(__m512i a, __m512i b, __m512i c, __m512i d, __m512i Q[4]) {
    const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
    Q[0] = _mm512_unpacklo_epi16(ab_lo, cd_lo);
    Q[1] = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    Q[2] = _mm512_unpacklo_epi16(ab_hi, cd_hi);
    Q[3] = _mm512_unpackhi_epi16(ab_hi, cd_hi);
}

/// How a depthwise layer's stores round and clamp (a constant where the kernels are inlined). Every kind stores the
/// bytes `store_u8` stores.
enum {
    DW_GENERAL,      // t clamped as a float to the zero point's range, rounded, the zero point added
    DW_CLAMP_BYTES,  // every |scale| < 64, so |t| < 2^30: rounded, the zero point added, narrowed with saturation, then
                     // clamped as bytes (rounding commutes with clamping to integers)
    DW_PLAIN,        // the same with zero point 0 and the clamp 0…255, which the saturating packs do alone
};

/// The kind of store `g`'s layer takes.
static int dw_store_kind(const dedog_qdepthwise_args *g) {
    int32_t small;
    memcpy(&small, g->packed, 4);
    if (!small) return DW_GENERAL;
    return g->out_zero == 0 && g->out_min == 0 && g->out_max == 255 ? DW_PLAIN : DW_CLAMP_BYTES;
}

/// A row's geometry and a 64-channel block's operands, as `dw_stream` passes them to each chunk.
typedef struct {
    const uint8_t *rows[8];   // kernel row ky's input row, any row when outside the image (then its mask is 0)
    __mmask64 row_mask[8];    // the block's channel mask, or 0 for a row outside the image
    __mmask64 cmask;          // the block's real channels
    int C, W, pad_left, out_width, base;
    const uint8_t *block;     // the block's packed weights, then biases and scales
    __m512i last4[4];         // a 5×5 kernel's last row, taps 0–3 side by side in each lane, per quarter (`dw_chunk`)
    uint8_t *out_row;
    float lo, hi;
    int zero, out_min, out_max;
} dw_row_args;

/// Pixel `ox`'s 64 sums, scaled, rounded and stored as bytes (only the block's real channels), as `kind` (a
/// `dw_store_kind`) says.
VN void dw_store(const dw_row_args *a, const int kind, const float *scale, const __m512i acc[4], int ox) {
    __m512i v[4];
    UNROLL
    for (int q = 0; q < 4; q++) {
        __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[q]), _mm512_loadu_ps(scale + 16 * q));
        if (kind == DW_GENERAL) t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(a->lo)), _mm512_set1_ps(a->hi));
        v[q] = _mm512_cvtps_epi32(t);
        if (kind != DW_PLAIN) v[q] = _mm512_add_epi32(v[q], _mm512_set1_epi32(a->zero));
    }
    // Lane L of the two packs holds channels 16L…16L+7 and 16L+8…16L+15 as words; the last pack puts them in order.
    __m512i bytes = _mm512_packus_epi16(_mm512_packs_epi32(v[0], v[1]), _mm512_packs_epi32(v[2], v[3]));
    if (kind == DW_CLAMP_BYTES)
        bytes = _mm512_min_epu8(_mm512_max_epu8(bytes, _mm512_set1_epi8((char)a->out_min)), _mm512_set1_epi8((char)a->out_max));
    _mm512_mask_storeu_epi8(a->out_row + (size_t)ox * (size_t)a->C + (size_t)a->base, a->cmask, bytes);
}

/// Columns j0…j0+S·P−1 of the padded row (P = ⌈K/S⌉ slots; j0 a multiple of S·P, so each column's slots are
/// constants). Each column is loaded and interleaved once, and added to every open window that covers it; the
/// window that closes at a column is stored and its slot starts again from the bias. `edge`: some load of the
/// chunk may fall outside the image (otherwise only the block's channel mask applies, free on a load).
VN void dw_chunk(const dw_row_args *a, const int K, const int S, const int kind, const int edge, int j0,
                 __m512i acc[DW_SLOTS][4]) {
    const int P = (K + S - 1) / S, G = (K + DW_ROWS - 1) / DW_ROWS;
    const int8_t *w = (const int8_t *)a->block;
    const int32_t *bias = (const int32_t *)(a->block + (size_t)G * (size_t)K * 4 * 64);
    const float *scale = (const float *)(bias + 64);
    UNROLL
    for (int u = 0; u < S * P; u++) {
        const int ix = j0 + u - a->pad_left;
        const __mmask64 column = (unsigned)ix < (unsigned)a->W ? ~(__mmask64)0 : 0;
        // Columns outside the image load nothing, but from an address inside it: a masked-off lane on a page that is
        // not mapped costs a microcode assist (over 100 cycles) on Intel cores, though it never faults.
        const int cx = edge ? (ix < 0 ? 0 : (ix >= a->W ? a->W - 1 : ix)) : ix;
        UNROLL
        for (int gg = 0; gg < G; gg++) {
            // A 5×5 kernel's fifth row, alone in its group, is read along its columns: columns ix…ix+3 side by side
            // in each lane. The window starting here takes its taps 0–3 from them (`last4`), the window that started
            // 4 columns before its tap 4, with the packed vector whose lanes hold tap 4 and three zeros.
            const int lone = DW_LONE_ROW(gg, K, G);
            __m512i r[DW_ROWS];
            UNROLL
            for (int k = 0; k < DW_ROWS; k++) {
                if (lone) {
                    const int at = ix + k, cxk = at < 0 ? 0 : (at >= a->W ? a->W - 1 : at);
                    const __mmask64 mask = (unsigned)at < (unsigned)a->W ? a->row_mask[DW_ROWS * gg] : 0;
                    r[k] = _mm512_maskz_loadu_epi8(mask, a->rows[DW_ROWS * gg] + (size_t)cxk * (size_t)a->C + (size_t)a->base);
                    continue;
                }
                const int ky = DW_ROWS * gg + k;
                if (ky >= K) { r[k] = _mm512_setzero_si512(); continue; }
                const uint8_t *at = a->rows[ky] + (size_t)cx * (size_t)a->C + (size_t)a->base;
                r[k] = _mm512_maskz_loadu_epi8(edge ? column & a->row_mask[ky] : a->cmask, at);
            }
            __m512i Q[4];
            dw_interleave(r[0], r[1], r[2], r[3], Q);
            UNROLL
            for (int kx = 0; kx < K; kx++) {
                if (lone && kx != 0 && kx != 4) continue;
                if (((u - kx) % S + S) % S != 0) continue;
                const int slot = (((u - kx) / S) % P + P) % P;  // pixel (j0 + u − kx) / S, whose window starts at j0 + u − kx
                UNROLL
                for (int q = 0; q < 4; q++)
                    acc[slot][q] = _mm512_dpbusd_epi32(acc[slot][q], Q[q],
                                                       lone && kx == 0 ? a->last4[q]
                                                                       : _mm512_loadu_si512(w + ((gg * K + kx) * 4 + q) * 64));
            }
        }
        if (((u - (K - 1)) % S + S) % S == 0) {  // a window closes here: pixel (j0 + u − K + 1) / S
            const int slot = (((u - (K - 1)) / S) % P + P) % P;
            const int start = j0 + u - (K - 1);
            if (start >= 0 && start / S < a->out_width) dw_store(a, kind, scale, acc[slot], start / S);
            UNROLL
            for (int q = 0; q < 4; q++) acc[slot][q] = _mm512_loadu_si512(bias + 16 * q);
        }
    }
}

/// One output row of one 64-channel block: the padded row's columns streamed left to right, S·P at a time; windows
/// of pixels before the row or past it are summed and dropped (their slots start again before a real pixel uses them,
/// since P·S ≥ K).
VN void dw_stream(const dw_row_args *a, const int K, const int S, const int kind, int all_rows) {
    const int P = (K + S - 1) / S, U = S * P, G = (K + DW_ROWS - 1) / DW_ROWS;
    const int32_t *bias = (const int32_t *)(a->block + (size_t)G * (size_t)K * 4 * 64);
    __m512i acc[DW_SLOTS][4];
    UNROLL
    for (int i = 0; i < P; i++)
        UNROLL
        for (int q = 0; q < 4; q++) acc[i][q] = _mm512_loadu_si512(bias + 16 * q);
    const int end = (a->out_width - 1) * S + K;  // padded columns that real windows cover
    for (int j0 = 0; j0 < end; j0 += U) {
        if (all_rows && j0 >= a->pad_left && j0 + U - a->pad_left <= a->W) dw_chunk(a, K, S, kind, 0, j0, acc);
        else dw_chunk(a, K, S, kind, 1, j0, acc);
    }
}

/// The rows and channels of `g` (channels from a multiple of 64) for a K×K kernel at stride S.
VN void dw_rows(const dedog_qdepthwise_args *g, const int K, const int S, const int kind) {
    dw_row_args a;
    a.C = g->channels;
    a.W = g->width;
    a.pad_left = g->pad_left;
    a.out_width = g->out_width;
    a.lo = (float)(g->out_min - g->out_zero);
    a.hi = (float)(g->out_max - g->out_zero);
    a.zero = g->out_zero;
    a.out_min = g->out_min;
    a.out_max = g->out_max;
    const int G = dw_row_groups(K);
    const size_t row_bytes = (size_t)g->width * (size_t)g->channels;
    // Block by block, so that a block's weights (up to 3 KB) stay in L1 while its rows pass.
    for (int base = g->first_channel; base < g->end_channel; base += 64) {
        const int n = g->end_channel - base;
        a.base = base;
        a.cmask = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
        a.block = (const uint8_t *)g->packed + DW_HEAD + (size_t)(base / 64) * dw_block_bytes(K);
        if (DW_LONE_ROW(G - 1, K, G)) {
            // The packed vectors of the fifth row hold tap kx in byte 0 of each lane (rows 5–7 are zeros): taps 0–3
            // moved side by side, in the order of the column quadruples' bytes.
            UNROLL
            for (int q = 0; q < 4; q++) {
                __m512i v = _mm512_setzero_si512();
                UNROLL
                for (int kx = 0; kx < 4; kx++)
                    v = _mm512_or_si512(v, _mm512_slli_epi32(_mm512_loadu_si512(a.block + (((G - 1) * K + kx) * 4 + q) * 64), 8 * kx));
                a.last4[q] = v;
            }
        }
        for (int oy = g->first_row; oy < g->end_row; oy++) {
            const int iy0 = oy * S - g->pad_top;
            int all_rows = 1;
            a.out_row = g->out + (size_t)(oy - g->out_first_row) * (size_t)g->out_width * (size_t)g->channels;
            for (int ky = 0; ky < K; ky++) {
                const int iy = iy0 + ky, inside = iy >= 0 && iy < g->height;
                all_rows &= inside;
                a.rows[ky] = g->in + (size_t)((inside ? iy : g->in_first_row) - g->in_first_row) * row_bytes;
                a.row_mask[ky] = inside ? a.cmask : 0;
            }
            dw_stream(&a, K, S, kind, all_rows);
        }
    }
}

/// Whether the VNNI kernel takes `g`: a packed layout, a kernel of 3 or 5 at stride 1 or 2, channels from a
/// multiple of 64 (as `QuantizedDepthwise` splits them between threads).
static int dw_vnni_takes(const dedog_qdepthwise_args *g) {
    return g->packed && (g->kernel == 3 || g->kernel == 5) && (g->stride == 1 || g->stride == 2)
        && g->first_channel % 64 == 0;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
static void vnni_qdepthwise(const dedog_qdepthwise_args *g) {
    const int kind = dw_store_kind(g);
#define DW_CASE(k, s)                                                                                                  \
    if (g->kernel == k && g->stride == s) {                                                                            \
        if (kind == DW_PLAIN) dw_rows(g, k, s, DW_PLAIN);                                                              \
        else if (kind == DW_CLAMP_BYTES) dw_rows(g, k, s, DW_CLAMP_BYTES);                                             \
        else dw_rows(g, k, s, DW_GENERAL);                                                                             \
        return;                                                                                                        \
    }
    DW_CASE(3, 1) DW_CASE(3, 2) DW_CASE(5, 1) DW_CASE(5, 2)
#undef DW_CASE
}

// MARK: 256 bits: AVX-VNNI's vpdpbusd; AVX2's vpmaddubsw where its pair sums fit, on signed inputs where the weights
// are within ±127, and with inputs split otherwise

#define QIMPL_256 "qkernels256_impl.h"
#include "q256_builds.h"

/// Whether flag `which` of every panel `g` runs is 1: 0, vpmaddubsw's pair sums fit (`pairs_fit`); 1, the signed
/// build can run it (`signed_fit`).
static int panels_fit(const dedog_qpointwise_args *g, int which) {
    const size_t size = panel_bytes(g->inputs);
    int fit = 1;
    for (int p = g->first_panel; fit && p < g->end_panel; p++) {
        int32_t flag;
        memcpy(&flag, (const uint8_t *)g->packed + (size_t)p * size + QFLAGS + 4 * (size_t)which, 4);
        fit &= flag == 1;
    }
    return fit;
}

#endif

void dedog_qpointwise(dedog_isa isa, const dedog_qpointwise_args *args) {
#if defined(__x86_64__)
    if (dedog_isa_supported(isa)) {
        if (isa == DEDOG_ISA_AVX512_VNNI) { vnni_qpointwise(args); return; }
        if (isa == DEDOG_ISA_AVX_VNNI) { vnni256_qpointwise(args); return; }
        if (isa == DEDOG_ISA_AVX2 || isa == DEDOG_ISA_AVX512) {
            if (panels_fit(args, 0)) ubs256_qpointwise(args);
            else if (panels_fit(args, 1)) sgn256_qpointwise(args);
            else ubs8_qpointwise(args);
            return;
        }
    }
#endif
    (void)isa;
    portable_qpointwise(args);
}
