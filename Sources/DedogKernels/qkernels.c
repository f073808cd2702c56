// The 8-bit pointwise convolution: unsigned activation bytes times signed weight bytes, summed exactly in int32,
// then one float multiply per output channel and a rounding store. Three builds: portable C; AVX2, which widens
// both operands to 16 bits for `vpmaddwd` (exact: `vpmaddubsw` would saturate its 16-bit pair sums); and AVX-512
// VNNI, whose `vpdpbusd` multiplies 4 byte pairs and adds them into an int32 lane in one instruction. All three
// read the same packed panels and store the same bytes.
#include "dedog_kernels.h"

#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// A panel: [16 int32 bias′][16 float scale][⌈inputs/4⌉ × 64 weight bytes].
#define QPANEL DEDOG_PANEL
#define QHEAD 128  // bytes before the weights

static size_t groups_of(int inputs) { return ((size_t)inputs + 3) / 4; }
static size_t panel_bytes(int inputs) { return 64 * (groups_of(inputs) + 2); }

size_t dedog_qpointwise_packed_size(int inputs, int outputs) {
    return ((size_t)outputs + QPANEL - 1) / QPANEL * panel_bytes(inputs);
}

void dedog_qpointwise_pack(const int8_t *weight, const int32_t *bias, const float *scale, int input_zero, int inputs,
                           int outputs, void *packed) {
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
            int64_t sum = 0;
            for (int k = 0; k < inputs; k++) {
                sum += w[k];
                panel[QHEAD + (size_t)(k / 4) * 64 + (size_t)j * 4 + (size_t)(k % 4)] = (uint8_t)w[k];
            }
            int64_t folded = (int64_t)(bias ? bias[first + (size_t)j] : 0) - (int64_t)input_zero * sum;
            b[j] = folded > INT32_MAX ? INT32_MAX : (folded < INT32_MIN ? INT32_MIN : (int32_t)folded);
            s[j] = scale[first + (size_t)j];
        }
        memcpy(panel, b, sizeof b);
        memcpy(panel + 64, s, sizeof s);
    }
}

/// The 4 input bytes of group `g` of a row, zeros past `inputs` (so no byte past the row is read).
static inline uint32_t group_bytes(const uint8_t *x, size_t g, int inputs) {
    uint32_t v = 0;
    const size_t at = 4 * g, n = (size_t)inputs - at < 4 ? (size_t)inputs - at : 4;
    memcpy(&v, x + at, n);
    return v;
}

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

/// The store of one sum, as every build does it (see `dedog_qstore`).
static inline void store_one(const dedog_qpointwise_args *g, int32_t acc, float scale, int row, int col) {
    float t = (float)acc * scale;
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_F32) {
        ((float *)g->out)[at] = g->relu6 ? clampf(t, 0, 6) : t;
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        float r = (float)((int)g->residual[at] - g->residual_zero) * g->residual_scale;
        t = t + r;
    }
    t = clampf(t, (float)(g->out_min - g->out_zero), (float)(g->out_max - g->out_zero));
    ((uint8_t *)g->out)[at] = (uint8_t)(round_even(t) + g->out_zero);
}

static void portable_qpointwise(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs), groups = groups_of(g->inputs);
    for (int p = g->first_panel; p < g->end_panel; p++) {
        const uint8_t *panel = (const uint8_t *)g->packed + (size_t)p * size;
        int32_t bias[QPANEL];
        float scale[QPANEL];
        memcpy(bias, panel, sizeof bias);
        memcpy(scale, panel + 64, sizeof scale);
        const int first = p * QPANEL;
        const int cols = g->outputs - first < QPANEL ? g->outputs - first : QPANEL;
        for (int r = 0; r < g->rows; r++) {
            const uint8_t *x = g->in + (size_t)r * g->in_stride;
            int32_t acc[QPANEL];
            memcpy(acc, bias, sizeof acc);
            for (size_t gi = 0; gi < groups; gi++) {
                const uint32_t a = group_bytes(x, gi, g->inputs);
                const int32_t a0 = a & 0xFF, a1 = (a >> 8) & 0xFF, a2 = (a >> 16) & 0xFF, a3 = a >> 24;
                const int8_t *w = (const int8_t *)(panel + QHEAD + gi * 64);
                for (int j = 0; j < QPANEL; j++)
                    acc[j] += a0 * w[4 * j] + a1 * w[4 * j + 1] + a2 * w[4 * j + 2] + a3 * w[4 * j + 3];
            }
            for (int j = 0; j < cols; j++) store_one(g, acc[j], scale[j], r, first + j);
        }
    }
}

#if defined(__x86_64__)

// MARK: AVX2: 16-bit products with vpmaddwd

#define A2 static inline __attribute__((always_inline, target("avx2,fma")))
#define A2MR 2  // rows per tile: 2 rows × 4 accumulators + 4 widened weight vectors + a broadcast fit in 16 ymm

/// Stores 8 sums (`acc`, in column order) of row `row` from column `col`, `n` of them real.
A2 void avx2_store8(const dedog_qpointwise_args *g, __m256i acc, const float *scale, int row, int col, int n) {
    __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(scale));
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_F32) {
        if (g->relu6) t = _mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), _mm256_set1_ps(6));
        float lanes[8];
        _mm256_storeu_ps(lanes, t);
        memcpy((float *)g->out + at, lanes, (size_t)n * sizeof(float));
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        uint64_t bytes = 0;
        memcpy(&bytes, g->residual + at, (size_t)n);
        __m256i r = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)bytes)), _mm256_set1_epi32(g->residual_zero));
        t = _mm256_add_ps(t, _mm256_mul_ps(_mm256_cvtepi32_ps(r), _mm256_set1_ps(g->residual_scale)));
    }
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps((float)(g->out_min - g->out_zero))),
                      _mm256_set1_ps((float)(g->out_max - g->out_zero)));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(t), _mm256_set1_epi32(g->out_zero));
    int32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, q);
    uint8_t *out = (uint8_t *)g->out + at;
    for (int i = 0; i < n; i++) out[i] = (uint8_t)lanes[i];
}

/// mr (≤ A2MR) rows of one panel. Each accumulator holds 4 outputs × 2 pair sums; they are added at the end.
A2 void avx2_tile(const dedog_qpointwise_args *g, const uint8_t *in, const int mr, const uint8_t *panel, int row,
                  int col, int cols) {
    __m256i acc[A2MR][4];
    for (int r = 0; r < mr; r++)
        for (int q = 0; q < 4; q++) acc[r][q] = _mm256_setzero_si256();
    const size_t groups = groups_of(g->inputs);
    for (size_t gi = 0; gi < groups; gi++) {
        const uint8_t *wg = panel + QHEAD + gi * 64;
        __m256i w[4];
        for (int q = 0; q < 4; q++) w[q] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wg + 16 * q)));
        for (int r = 0; r < mr; r++) {
            const uint64_t a = group_bytes(in + (size_t)r * g->in_stride, gi, g->inputs);
            const uint64_t wide = (a & 0xFF) | ((a & 0xFF00) << 8) | ((a & 0xFF0000) << 16) | ((a & 0xFF000000) << 24);
            const __m256i x = _mm256_set1_epi64x((long long)wide);
            for (int q = 0; q < 4; q++) acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(x, w[q]));
        }
    }
    const int32_t *bias = (const int32_t *)panel;
    const float *scale = (const float *)(panel + 64);
    for (int r = 0; r < mr; r++)
        for (int half = 0; half < 2; half++) {
            const int n = cols - 8 * half;
            if (n <= 0) break;
            // [o0 o0′ o1 o1′ | o2 o2′ o3 o3′] and the same for o4…o7 → [o0 o1 o4 o5 | o2 o3 o6 o7] → in order.
            __m256i sums = _mm256_hadd_epi32(acc[r][2 * half], acc[r][2 * half + 1]);
            sums = _mm256_permute4x64_epi64(sums, 0xD8);
            sums = _mm256_add_epi32(sums, _mm256_loadu_si256((const __m256i *)(bias + 8 * half)));
            avx2_store8(g, sums, scale + 8 * half, row + r, col + 8 * half, n < 8 ? n : 8);
        }
}

__attribute__((target("avx2,fma"))) static void avx2_qpointwise(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs);
    for (int p = g->first_panel; p < g->end_panel; p++) {
        const uint8_t *panel = (const uint8_t *)g->packed + (size_t)p * size;
        const int col = p * QPANEL, cols = g->outputs - col < QPANEL ? g->outputs - col : QPANEL;
        int r = 0;
        for (; r + A2MR <= g->rows; r += A2MR) avx2_tile(g, g->in + (size_t)r * g->in_stride, A2MR, panel, r, col, cols);
        for (; r < g->rows; r++) avx2_tile(g, g->in + (size_t)r * g->in_stride, 1, panel, r, col, cols);
    }
}

// MARK: AVX-512 VNNI: vpdpbusd

#define VN static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#define VMR 6  // a tile of 6 rows × 4 panels: 24 accumulators, 4 weight vectors and a broadcast in 32 zmm
#define VNP 4

/// The 16 sums of row `row`, panel-relative column `col`; `n` ≤ 16 of them real.
VN void vnni_store16(const dedog_qpointwise_args *g, __m512i acc, const float *scale, int row, int col, int n) {
    const __mmask16 mask = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(scale));
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    if (g->store == DEDOG_Q_F32) {
        if (g->relu6) t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(6));
        _mm512_mask_storeu_ps((float *)g->out + at, mask, t);
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        __m512i r = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, g->residual + at));
        r = _mm512_sub_epi32(r, _mm512_set1_epi32(g->residual_zero));
        t = _mm512_add_ps(t, _mm512_mul_ps(_mm512_cvtepi32_ps(r), _mm512_set1_ps(g->residual_scale)));
    }
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps((float)(g->out_min - g->out_zero))),
                      _mm512_set1_ps((float)(g->out_max - g->out_zero)));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(t), _mm512_set1_epi32(g->out_zero));
    _mm_mask_storeu_epi8((uint8_t *)g->out + at, mask, _mm512_cvtepi32_epi8(q));
}

/// mr (≤ VMR) rows × np (≤ VNP) panels; both are constants where inlined, so the accumulators stay in registers.
VN void vnni_tile(const dedog_qpointwise_args *g, const uint8_t *in, const int mr, const uint8_t *panel,
                  size_t size, const int np, int row, int col) {
    __m512i acc[VMR][VNP];
    for (int p = 0; p < np; p++) {
        const __m512i b = _mm512_loadu_si512(panel + (size_t)p * size);
        for (int r = 0; r < mr; r++) acc[r][p] = b;
    }
    const uint8_t *x[VMR];
    for (int r = 0; r < mr; r++) x[r] = in + (size_t)r * g->in_stride;
    const size_t full = (size_t)g->inputs / 4, groups = groups_of(g->inputs);
    for (size_t gi = 0; gi < full; gi++) {
        __m512i w[VNP];
        for (int p = 0; p < np; p++) w[p] = _mm512_loadu_si512(panel + (size_t)p * size + QHEAD + gi * 64);
        for (int r = 0; r < mr; r++) {
            int32_t a;
            memcpy(&a, x[r] + 4 * gi, 4);
            const __m512i v = _mm512_set1_epi32(a);
            for (int p = 0; p < np; p++) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], v, w[p]);
        }
    }
    if (full < groups) {  // the last inputs, fewer than 4
        __m512i w[VNP];
        for (int p = 0; p < np; p++) w[p] = _mm512_loadu_si512(panel + (size_t)p * size + QHEAD + full * 64);
        for (int r = 0; r < mr; r++) {
            const __m512i v = _mm512_set1_epi32((int)group_bytes(x[r], full, g->inputs));
            for (int p = 0; p < np; p++) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], v, w[p]);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int p = 0; p < np; p++) {
            const int n = g->outputs - (col + p * QPANEL);
            if (n <= 0) break;
            vnni_store16(g, acc[r][p], (const float *)(panel + (size_t)p * size + 64), row + r, col + p * QPANEL, n);
        }
}

/// `mr` rows across panels p0..<p1, 4, 2 or 1 panels at a time.
VN void vnni_rows(const dedog_qpointwise_args *g, const int mr, int row, int p0, int p1, size_t size) {
    const uint8_t *in = g->in + (size_t)row * g->in_stride;
    int p = p0;
    for (; p + 4 <= p1; p += 4) vnni_tile(g, in, mr, (const uint8_t *)g->packed + (size_t)p * size, size, 4, row, p * QPANEL);
    for (; p + 2 <= p1; p += 2) vnni_tile(g, in, mr, (const uint8_t *)g->packed + (size_t)p * size, size, 2, row, p * QPANEL);
    for (; p < p1; p++) vnni_tile(g, in, mr, (const uint8_t *)g->packed + (size_t)p * size, size, 1, row, p * QPANEL);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
static void vnni_qpointwise(const dedog_qpointwise_args *g) {
    const size_t size = panel_bytes(g->inputs);
    // Panels in chunks whose weights stay in L2 (≤ 256 KB) while every row block passes over them.
    int chunk = (int)(262144 / size) / VNP * VNP;
    if (chunk < VNP) chunk = VNP;
    for (int p0 = g->first_panel; p0 < g->end_panel; p0 += chunk) {
        const int p1 = p0 + chunk < g->end_panel ? p0 + chunk : g->end_panel;
        for (int r = 0; r < g->rows; r += VMR) {
            switch (g->rows - r < VMR ? g->rows - r : VMR) {
            case 1: vnni_rows(g, 1, r, p0, p1, size); break;
            case 2: vnni_rows(g, 2, r, p0, p1, size); break;
            case 3: vnni_rows(g, 3, r, p0, p1, size); break;
            case 4: vnni_rows(g, 4, r, p0, p1, size); break;
            case 5: vnni_rows(g, 5, r, p0, p1, size); break;
            default: vnni_rows(g, 6, r, p0, p1, size); break;
            }
        }
    }
}

#endif

int dedog_has_vnni(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return dedog_isa_supported(DEDOG_ISA_AVX512) && __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

void dedog_qpointwise(dedog_isa isa, const dedog_qpointwise_args *args) {
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_has_vnni()) { vnni_qpointwise(args); return; }
    if ((isa == DEDOG_ISA_AVX512 || isa == DEDOG_ISA_AVX2) && dedog_isa_supported(DEDOG_ISA_AVX2)) { avx2_qpointwise(args); return; }
#endif
    (void)isa;
    portable_qpointwise(args);
}
