// The machine's multiply-add ceiling, for benchmarks: 12 independent accumulators hide the FMA latency, so the
// loop runs at the FMA units' throughput.
#include "dedog_kernels.h"
#include "isa.h"

#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define PEAK_BODY(V, W)                                                              \
    V acc[12];                                                                       \
    for (int i = 0; i < 12; i++) acc[i] = (V){0} + (float)i;                         \
    V x = (V){0} + 0.999f, y = (V){0} + 0.001f;                                      \
    double t0 = seconds();                                                           \
    for (long n = 0; n < iterations; n++)                                            \
        for (int i = 0; i < 12; i++) acc[i] = FMA(acc[i], x, y);                     \
    double t = seconds() - t0;                                                       \
    float sum = 0;                                                                   \
    for (int i = 0; i < 12; i++) sum += acc[i][0];                                   \
    sink = sum;                                                                      \
    return t > 0 ? (double)iterations * 12 * (W) / t : 0;

static volatile float sink;

typedef float v4 __attribute__((vector_size(16)));
#define FMA(a, b, c) ((a) * (b) + (c))
static double peak_portable(long iterations) { PEAK_BODY(v4, 4) }
#undef FMA

#if defined(__x86_64__)
typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));
#define FMA(a, b, c) __builtin_elementwise_fma(a, b, c)
__attribute__((target("avx2,fma"))) static double peak_avx2(long iterations) { PEAK_BODY(v8, 8) }
__attribute__((target("avx512f,avx2,fma"))) static double peak_avx512(long iterations) { PEAK_BODY(v16, 16) }
#undef FMA
#endif

double dedog_fma_peak(dedog_isa isa, long iterations) {
    isa = dedog_float_isa(isa);
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) return peak_avx512(iterations);
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) return peak_avx2(iterations);
#endif
    (void)isa;
    return peak_portable(iterations);
}

// The 8-bit ceiling: 12 independent accumulators of the instruction the 8-bit kernels multiply with.
// BARRIER hides the operands from the compiler each round, so that it cannot sum the rounds in closed form.
#define INT8_PEAK_BODY(T, INIT, STEP, MACS, BARRIER)                                 \
    T acc[12];                                                                       \
    for (int i = 0; i < 12; i++) acc[i] = INIT(i); /* unequal, so no two chains are one */ \
    double t0 = seconds();                                                           \
    for (long n = 0; n < iterations; n++) {                                          \
        for (int i = 0; i < 12; i++) acc[i] = STEP(acc[i]);                          \
        BARRIER;                                                                     \
    }                                                                                \
    double t = seconds() - t0;                                                       \
    int sum = 0;                                                                     \
    for (int i = 0; i < 12; i++) sum += ((const int *)&acc[i])[0];                   \
    int8_sink = sum;                                                                 \
    return t > 0 ? (double)iterations * 12 * (MACS) / t : 0;

static volatile int int8_sink;

typedef int32_t i4 __attribute__((vector_size(16)));
static double int8_peak_portable(long iterations) {
    const i4 x = {1, 2, 3, 4}, y = {3, 1, 4, 1};
#define STEP(a) ((a) * x + y)  // dependent on the accumulator: nothing to hoist or fold
    INT8_PEAK_BODY(i4, (i4){0} + , STEP, 4, (void)0)
#undef STEP
}

#if defined(__x86_64__)
#include <immintrin.h>
/// AVX2's byte product as its 8-bit kernels do it: `vpmaddubsw` (32 byte products summed in pairs), then
/// `vpmaddwd` by ones (the pairs summed again into int32 lanes) and the add: 32 multiply-adds per three instructions.
/// Eight accumulators, each fed a product of its own (4 × 2 operands) that does not wait for it, so that the
/// multiplies run at their throughput rather than at the chain's 11-cycle latency.
__attribute__((target("avx2"))) static double int8_peak_avx2(long iterations) {
    __m256i x0 = _mm256_set1_epi8(3), x1 = _mm256_set1_epi8(5), x2 = _mm256_set1_epi8(7), x3 = _mm256_set1_epi8(9);
    __m256i y0 = _mm256_set1_epi8(-2), y1 = _mm256_set1_epi8(2);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[8];
    for (int i = 0; i < 8; i++) acc[i] = _mm256_set1_epi32(i);
#define STEP(a, x, y) a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones))
    double t0 = seconds();
    for (long n = 0; n < iterations; n++) {
        STEP(acc[0], x0, y0); STEP(acc[1], x1, y0); STEP(acc[2], x2, y0); STEP(acc[3], x3, y0);
        STEP(acc[4], x0, y1); STEP(acc[5], x1, y1); STEP(acc[6], x2, y1); STEP(acc[7], x3, y1);
        __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(y0), "+v"(y1));  // new operands each round
    }
#undef STEP
    double t = seconds() - t0;
    int sum = 0;
    for (int i = 0; i < 8; i++) sum += ((const int *)&acc[i])[0];
    int8_sink = sum;
    return t > 0 ? (double)iterations * 8 * 32 / t : 0;
}

__attribute__((target("avx2,avxvnni"))) static double int8_peak_avx_vnni(long iterations) {
    __m256i x = _mm256_set1_epi8(3);
    const __m256i y = _mm256_set1_epi8(-2);
#define STEP(a) _mm256_dpbusd_avx_epi32(a, x, y)
    INT8_PEAK_BODY(__m256i, _mm256_set1_epi32, STEP, 32, __asm__ volatile("" : "+v"(x)))
#undef STEP
}

__attribute__((target("avx512f,avx512vnni"))) static double int8_peak_vnni(long iterations) {
    __m512i x = _mm512_set1_epi8(3);
    const __m512i y = _mm512_set1_epi8(-2);
#define STEP(a) _mm512_dpbusd_epi32(a, x, y)
    INT8_PEAK_BODY(__m512i, _mm512_set1_epi32, STEP, 64, __asm__ volatile("" : "+v"(x)))
#undef STEP
}
#endif

double dedog_int8_peak(dedog_isa isa, long iterations) {
#if defined(__x86_64__)
    if (!dedog_isa_supported(isa)) return int8_peak_portable(iterations);
    if (isa == DEDOG_ISA_AVX512_VNNI) return int8_peak_vnni(iterations);
    if (isa == DEDOG_ISA_AVX_VNNI) return int8_peak_avx_vnni(iterations);
    if (isa == DEDOG_ISA_AVX512 || isa == DEDOG_ISA_AVX2) return int8_peak_avx2(iterations);
#endif
    (void)isa;
    return int8_peak_portable(iterations);
}
