// The byte stem on 256-bit vectors with a 4-byte dot product per int32 lane, once per instruction set. qstem.c
// defines KTARGET, KFN(name) and DOT4(a, x, w) as qkernels256_impl.h describes them, includes this file, and it
// undefines them again. It reads the AVX-512 VNNI layout (a 256-bit vector is half of one of its vectors) and stores
// the bytes every build stores. Only KFN(qstem) is used outside.

#define K256 static inline __attribute__((always_inline)) KTARGET
#define K256_PX 3  // pixels per step: 12 accumulators

/// `px` (≤ K256_PX, a constant where inlined) pixels of row `oy` from column `ox`.
K256 void KFN(stem_pixels)(const dedog_qstem_args *g, const int px, int oy, int ox) {
    const uint8_t *p = g->packed;
    const size_t plane = (size_t)g->padded_height * (size_t)g->padded_width;
    __m256i acc[K256_PX][4];
    _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++)
        _Pragma("clang loop unroll(full)") for (int u = 0; u < 4; u++)
            acc[i][u] = _mm256_loadu_si256((const __m256i *)(p + (XSIGNED ? S_SBIAS : S_BIAS) + 32 * u));
    _Pragma("clang loop unroll(full)") for (int ky = 0; ky < 3; ky++) {
        _Pragma("clang loop unroll(full)") for (int c = 0; c < 3; c++) {
            const uint8_t *x = g->in + c * plane + (size_t)(2 * oy + ky) * g->padded_width + (size_t)ox * 2;
            const uint8_t *w = p + S_VNNI + (size_t)((ky * 3 + c) * 2) * 64;  // outputs 8u…8u+7 at 32u
            _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++) {
                int32_t v;
                memcpy(&v, x + i * 2, 4);
                const __m256i a = _mm256_set1_epi32(v);
                _Pragma("clang loop unroll(full)") for (int u = 0; u < 4; u++)
                    acc[i][u] = DOT4(acc[i][u], a, _mm256_loadu_si256((const __m256i *)(w + 32 * u)));
            }
        }
    }
    const __m256 lo = _mm256_set1_ps((float)(g->out_min - g->out_zero)), hi = _mm256_set1_ps((float)(g->out_max - g->out_zero));
    const __m256i zero = _mm256_set1_epi32(g->out_zero);
    // Dwords [q0 q1 q2 q3 | q0′ q1′ q2′ q3′] of the packed bytes (q′: a vector's upper 4 outputs) put in order.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    uint8_t *out = g->out + ((size_t)(oy - g->out_first_row) * g->out_width + (size_t)ox) * SO;
    _Pragma("clang loop unroll(full)") for (int i = 0; i < px; i++) {
        __m256i q[4];
        _Pragma("clang loop unroll(full)") for (int u = 0; u < 4; u++) {
            __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[i][u]), _mm256_loadu_ps((const float *)(p + S_SCALE) + 8 * u));
            t = _mm256_min_ps(_mm256_max_ps(t, lo), hi);  // then rounded: the order of `store_u8`
            q[u] = _mm256_add_epi32(_mm256_cvtps_epi32(t), zero);
        }
        const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256((__m256i *)(out + (size_t)i * SO), _mm256_permutevar8x32_epi32(bytes, order));
    }
}

KTARGET static void KFN(qstem)(const dedog_qstem_args *g) {
    for (int oy = g->first_row; oy < g->end_row; oy++) {
        int ox = 0;
        for (; ox + K256_PX <= g->out_width; ox += K256_PX) KFN(stem_pixels)(g, K256_PX, oy, ox);
        for (; ox < g->out_width; ox++) KFN(stem_pixels)(g, 1, oy, ox);
    }
}

#undef K256
#undef K256_PX
#undef KTARGET
#undef KFN
#undef DOT4
