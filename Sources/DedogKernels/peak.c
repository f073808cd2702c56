// The machine's multiply-add ceiling, for benchmarks: 12 independent accumulators hide the FMA latency, so the
// loop runs at the FMA units' throughput.
#include "dedog_kernels.h"

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
#if defined(__x86_64__)
    if (isa == DEDOG_ISA_AVX512 && dedog_isa_supported(isa)) return peak_avx512(iterations);
    if (isa == DEDOG_ISA_AVX2 && dedog_isa_supported(isa)) return peak_avx2(iterations);
#endif
    (void)isa;
    return peak_portable(iterations);
}
