// The 8-bit depthwise convolution and the float-to-byte quantizer for one instruction set, on GCC/Clang vector
// extensions. qkernels.c defines, before including this file once per build:
//   KTARGET         the target attribute of the build (empty for portable)
//   KFN(name)       the build's prefix for a function name
//   VW              floats per vector (channels per step)
//   PX1, PX2        output pixels per depthwise step at stride 1 and 2, sharing weight and input loads
//   QROUND(t, QI)   t (a float vector) rounded to the nearest integers, ties to even, as an int32 vector QI
//   QMAX(a, b), QMIN(a, b)  lane-wise max and min, b where they compare equal (no lane is NaN)
// and includes it, which undefines them again. Only KFN(qdepthwise) and KFN(quantize) are used outside.
//
// Bytes widen exactly to floats; the bias and every product and sum of a depthwise window are integers below
// 2^24, so float multiply-adds give the exact integer sum, and its product with the scale is the store's. The store then does
// what `store_u8` in qkernels.c does, one rounding per operation, so every build writes the same bytes.

typedef float KFN(qf) __attribute__((vector_size(VW * 4)));
typedef float KFN(qfu) __attribute__((vector_size(VW * 4), aligned(4)));
typedef int32_t KFN(qi) __attribute__((vector_size(VW * 4)));
typedef int32_t KFN(qiu) __attribute__((vector_size(VW * 4), aligned(4)));
typedef uint8_t KFN(qb) __attribute__((vector_size(VW)));
typedef uint8_t KFN(qbu) __attribute__((vector_size(VW), aligned(1)));
#define QF KFN(qf)
#define QI KFN(qi)
#define QINLINE static inline __attribute__((always_inline)) KTARGET
// Loops whose counts are constants where inlined, unrolled so that their arrays of vectors stay in registers.
#define QUNROLL _Pragma("clang loop unroll(full)")

QINLINE QF KFN(qsplat)(float x) { return x - (QF){0}; }
QINLINE QF KFN(qwiden)(const uint8_t *p) { return __builtin_convertvector(*(const KFN(qbu) *)p, QF); }
QINLINE QF KFN(qloadf)(const float *p) { return *(const KFN(qfu) *)p; }

/// clamp(round(t), lo, hi) + zero for `n` ≤ VW lanes, stored as bytes at `p` (see `store_u8`).
QINLINE void KFN(qstore)(QF t, float lo, float hi, int zero, uint8_t *p, int n) {
    // max then min with the bound second, as maxps/minps order them; no lane is NaN.
    t = QMIN(QMAX(t, KFN(qsplat)(lo)), KFN(qsplat)(hi));
    const QI q = QROUND(t, QI) + zero;
    const KFN(qb) bytes = __builtin_convertvector(q, KFN(qb));
    if (n == VW) {
        *(KFN(qbu) *)p = bytes;
    } else {
        for (int i = 0; i < n; i++) p[i] = bytes[i];
    }
}

/// The store of a depthwise sum vector (bias included) for channels c..<c+VW.
QINLINE void KFN(qdw_store)(const dedog_qdepthwise_args *g, QF acc, int c, uint8_t *p) {
    KFN(qstore)(acc * KFN(qloadf)(g->scale + c), (float)(g->out_min - g->out_zero), (float)(g->out_max - g->out_zero),
                g->out_zero, p, VW);
}

/// `px` neighbouring output pixels of row `oy` from column `ox`, channels c..<c+VW, for a K×K kernel at stride S
/// (constants where inlined): per kernel row the input columns the windows cover are widened once (zeros outside
/// the image) and each weight vector is loaded once for all the pixels. Pixels past the row are not stored.
QINLINE void KFN(qdw_group)(const dedog_qdepthwise_args *g, const int K, const int S, const int px, int iy0, int ky0,
                            int ky1, int ox, int c, uint8_t *out_row) {
    const int C = g->channels, W = g->width;
    const int ix0 = ox * S - g->pad_left;
    QF acc[PX1 > PX2 ? PX1 : PX2];
    const QF bias = __builtin_convertvector(*(const KFN(qiu) *)(g->bias + c), QF);
    QUNROLL
    for (int i = 0; i < px; i++) acc[i] = bias;
    for (int ky = ky0; ky < ky1; ky++) {
        const uint8_t *row = g->in + (size_t)(iy0 + ky - g->in_first_row) * W * C + c;
        const float *wk = g->weight + (size_t)ky * K * C + c;
        QF col[(PX1 > PX2 ? PX1 : PX2) * 2 + 5];
        QUNROLL
        for (int j = 0; j < (px - 1) * S + K; j++) {
            const int ix = ix0 + j;
            col[j] = ix >= 0 && ix < W ? KFN(qwiden)(row + (size_t)ix * C) : (QF){0};
        }
        QUNROLL
        for (int kx = 0; kx < K; kx++) {
            const QF w = KFN(qloadf)(wk + (size_t)kx * C);
            QUNROLL
            for (int i = 0; i < px; i++) acc[i] += col[i * S + kx] * w;
        }
    }
    QUNROLL
    for (int i = 0; i < px; i++)
        if (ox + i < g->out_width) KFN(qdw_store)(g, acc[i], c, out_row + (size_t)(ox + i) * C + c);
}

/// The rows and channels of `g` for a K×K kernel at stride S (constants where inlined), VW channels at a time;
/// channels past the last whole vector, and kernels of other sizes, go one channel at a time (`qdw_scalar`).
QINLINE void KFN(qdw_rows)(const dedog_qdepthwise_args *g, const int K, const int S, const int px) {
    const int C = g->channels;
    const int c0 = g->first_channel, c1 = g->end_channel;
    const int vectors_end = c0 + (c1 - c0) / VW * VW;
    for (int oy = g->first_row; oy < g->end_row; oy++) {
        const int iy0 = oy * S - g->pad_top;
        const int ky0 = iy0 < 0 ? -iy0 : 0;
        const int ky1 = g->height - iy0 < K ? g->height - iy0 : K;
        uint8_t *out_row = g->out + (size_t)(oy - g->out_first_row) * g->out_width * C;
        for (int c = c0; c < vectors_end; c += VW)
            for (int ox = 0; ox < g->out_width; ox += px) KFN(qdw_group)(g, K, S, px, iy0, ky0, ky1, ox, c, out_row);
        if (vectors_end < c1) qdw_scalar(g, oy, vectors_end, c1);
    }
}

KTARGET void KFN(qdepthwise)(const dedog_qdepthwise_args *g) {
    if (g->kernel == 3 && g->stride == 1) KFN(qdw_rows)(g, 3, 1, PX1);
    else if (g->kernel == 3 && g->stride == 2) KFN(qdw_rows)(g, 3, 2, PX2);
    else if (g->kernel == 5 && g->stride == 1) KFN(qdw_rows)(g, 5, 1, PX1);
    else if (g->kernel == 5 && g->stride == 2) KFN(qdw_rows)(g, 5, 2, PX2);
    else for (int oy = g->first_row; oy < g->end_row; oy++) qdw_scalar(g, oy, g->first_channel, g->end_channel);
}

KTARGET void KFN(quantize)(const float *in, size_t count, float inv_scale, int zero, int out_min, int out_max,
                           uint8_t *out) {
    const float lo = (float)(out_min - zero), hi = (float)(out_max - zero);
    size_t i = 0;
    for (; i + VW <= count; i += VW) KFN(qstore)(KFN(qloadf)(in + i) * inv_scale, lo, hi, zero, out + i, VW);
    for (; i < count; i++) out[i] = store_u8(in[i] * inv_scale, lo, hi, zero);
}

#undef QF
#undef QI
#undef QINLINE
#undef KTARGET
#undef KFN
#undef VW
#undef PX1
#undef PX2
#undef QROUND
#undef QMAX
#undef QMIN
#undef QUNROLL
