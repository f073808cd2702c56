// The kernels' bodies, written once in GCC vector extensions and compiled once per instruction set: the file
// that includes this defines
//   KTARGET         the function attribute naming the instruction set (empty for the portable build)
//   KFN(name)       the name of this build's version of a kernel
//   VW              floats per vector (16 for AVX-512, 8 for AVX2, 4 portable)
//   MR, NP          the pointwise register tile: MR rows × NP panels of 16 columns
//   PX1, PX2        output pixels per depthwise step at stride 1 and 2, sharing loads of weights and inputs
//   KFUSED          1 where the instruction set has fused multiply-add
// and includes it, which undefines them again. Nothing here is visible outside the translation unit but
// KFN(pointwise), KFN(depthwise) and KFN(linear).

#define NV (DEDOG_PANEL / VW)  // vectors per panel

typedef float KFN(v) __attribute__((vector_size(VW * 4)));
typedef float KFN(vu) __attribute__((vector_size(VW * 4), aligned(4)));
#define V KFN(v)
#define INLINE static inline __attribute__((always_inline)) KTARGET

INLINE V KFN(load)(const float *p) { return *(const KFN(vu) *)p; }
INLINE void KFN(store)(float *p, V v) { *(KFN(vu) *)p = v; }
// x − 0 is x for every x (−0 and NaN included), so the compiler drops it and a load-and-broadcast remains;
// x + 0 would not be (−0 + 0 = +0) and costs an add per broadcast.
INLINE V KFN(splat)(float x) { return x - (V){0}; }
#if KFUSED
INLINE V KFN(fma)(V a, V b, V c) { return __builtin_elementwise_fma(a, b, c); }
#else  // without FMA hardware a fused multiply-add is a library call per lane
INLINE V KFN(fma)(V a, V b, V c) { return a * b + c; }
#endif
INLINE V KFN(relu6)(V v) {
    return __builtin_elementwise_min(__builtin_elementwise_max(v, (V){0}), KFN(splat)(6.0f));
}
INLINE float KFN(relu6s)(float v) { return v < 0 ? 0 : (v > 6 ? 6 : v); }

/// The first `n` (< VW) lanes of `v` stored at `p`, or of `p` loaded (the others zero).
#ifdef KMASK
INLINE void KFN(store_part)(float *p, V v, int n) { KMASK_STORE(p, v, n); }
INLINE V KFN(load_part)(const float *p, int n) { return KMASK_LOAD(p, n); }
#else
INLINE void KFN(store_part)(float *p, V v, int n) {
    for (int i = 0; i < n; i++) p[i] = v[i];
}
INLINE V KFN(load_part)(const float *p, int n) {
    V v = {0};
    for (int i = 0; i < n; i++) v[i] = p[i];
    return v;
}
#endif

/// mr (≤ MR) rows × np (≤ NP) panels of the pointwise GEMM, epilogue fused; both are constants where it is
/// inlined, so the accumulators live in registers. `cols` (≤ np · 16) output columns are stored.
INLINE void KFN(pointwise_tile)(const float *in, size_t in_stride, const int mr, const float *panel,
                                size_t panel_size, const int np, int inputs, int cols, float *out,
                                const float *residual, size_t out_stride, dedog_epilogue epilogue) {
    V acc[MR][NP * NV];
    const float *a[MR];
    for (int r = 0; r < mr; r++) a[r] = in + (size_t)r * in_stride;
    for (int p = 0; p < np; p++)
        for (int v = 0; v < NV; v++) {
            V b = KFN(load)(panel + p * panel_size + v * VW);
            for (int r = 0; r < mr; r++) acc[r][p * NV + v] = b;
        }
    const float *w = panel + DEDOG_PANEL;
    for (int k = 0; k < inputs; k++) {
        V b[NP * NV];
        for (int p = 0; p < np; p++)
            for (int v = 0; v < NV; v++) b[p * NV + v] = KFN(load)(w + p * panel_size + k * DEDOG_PANEL + v * VW);
        for (int r = 0; r < mr; r++) {
            V x = KFN(splat)(a[r][k]);
            for (int j = 0; j < np * NV; j++) acc[r][j] = KFN(fma)(x, b[j], acc[r][j]);
        }
    }
    for (int r = 0; r < mr; r++) {
        float *o = out + (size_t)r * out_stride;
        const float *add = residual ? residual + (size_t)r * out_stride : 0;
        for (int j = 0; j < np * NV; j++) {
            const int n = cols - j * VW;  // lanes of this vector that are real columns
            if (n <= 0) break;
            V y = acc[r][j];
            if (epilogue == DEDOG_RELU6) y = KFN(relu6)(y);
            if (n >= VW) {
                if (epilogue == DEDOG_ADD_RESIDUAL) y += KFN(load)(add + j * VW);
                KFN(store)(o + j * VW, y);
            } else {
                if (epilogue == DEDOG_ADD_RESIDUAL) y += KFN(load_part)(add + j * VW, n);
                KFN(store_part)(o + j * VW, y, n);
            }
        }
    }
}

/// A row block of `mr` rows (a constant where inlined) across the panels p0..<p1.
INLINE void KFN(pointwise_rows)(const dedog_pointwise_args *g, const int mr, const float *in, const float *res,
                                float *out, int p0, int p1, size_t panel_size) {
    for (int p = p0; p < p1; p += NP) {
        int np = p1 - p < NP ? p1 - p : NP;
        int cols = g->outputs - p * DEDOG_PANEL;
        if (cols > np * DEDOG_PANEL) cols = np * DEDOG_PANEL;
        const float *panel = g->packed + (size_t)p * panel_size;
        float *o = out + (size_t)p * DEDOG_PANEL;
        const float *r = res ? res + (size_t)p * DEDOG_PANEL : 0;
#if NP > 1
        if (np == NP)
            KFN(pointwise_tile)(in, g->in_stride, mr, panel, panel_size, NP, g->inputs, cols, o, r, g->out_stride, g->epilogue);
        else
#endif
            KFN(pointwise_tile)(in, g->in_stride, mr, panel, panel_size, 1, g->inputs, cols, o, r, g->out_stride, g->epilogue);
    }
}

KTARGET void KFN(pointwise)(const dedog_pointwise_args *g) {
    const size_t panel_size = (size_t)DEDOG_PANEL * ((size_t)g->inputs + 1);
    // Panels are taken in chunks whose weights stay in L2 (≤ 256 KB) while every row block passes over them.
    int chunk = (int)(65536 / panel_size) / NP * NP;
    if (chunk < NP) chunk = NP;
    for (int p0 = g->first_panel; p0 < g->end_panel; p0 += chunk) {
        int p1 = p0 + chunk < g->end_panel ? p0 + chunk : g->end_panel;
        for (int r0 = 0; r0 < g->rows; r0 += MR) {
            const float *in = g->in + (size_t)r0 * g->in_stride;
            const float *res = g->residual ? g->residual + (size_t)r0 * g->out_stride : 0;
            float *out = g->out + (size_t)r0 * g->out_stride;
            // The last block has fewer rows; each count gets its own register tile.
            switch (g->rows - r0 < MR ? g->rows - r0 : MR) {
#define ROWS(m) case m: KFN(pointwise_rows)(g, m, in, res, out, p0, p1, panel_size); break;
            ROWS(1)
#if MR > 1
            ROWS(2)
#endif
#if MR > 2
            ROWS(3)
#endif
#if MR > 3
            ROWS(4)
#endif
#if MR > 4
            ROWS(5)
#endif
#if MR > 5
            ROWS(6)
#endif
#if MR > 6
            ROWS(7)
#endif
#if MR > 7
            ROWS(8)
#endif
#undef ROWS
            }
        }
    }
}

/// One output pixel of the depthwise convolution over the taps ky0..<ky1 × kx0..<kx1, channels c..<c+16.
INLINE void KFN(depthwise_pixel)(const dedog_depthwise_args *g, int iy0, int ix0, int ky0, int ky1, int kx0,
                                 int kx1, int c, float *out) {
    const int C = g->channels, k = g->kernel;
    V acc[NV];
    for (int v = 0; v < NV; v++) acc[v] = KFN(load)(g->bias + c + v * VW);
    for (int ky = ky0; ky < ky1; ky++)
        for (int kx = kx0; kx < kx1; kx++) {
            const float *x = g->in + ((size_t)(iy0 + ky - g->in_first_row) * g->width + (size_t)(ix0 + kx)) * C + c;
            const float *w = g->weight + (size_t)(ky * k + kx) * C + c;
            for (int v = 0; v < NV; v++) acc[v] = KFN(fma)(KFN(load)(x + v * VW), KFN(load)(w + v * VW), acc[v]);
        }
    for (int v = 0; v < NV; v++) KFN(store)(out + c + v * VW, KFN(relu6)(acc[v]));
}

/// Channels that do not fill a tile of 16, one at a time.
INLINE void KFN(depthwise_scalar)(const dedog_depthwise_args *g, int iy0, int ix0, int ky0, int ky1, int kx0,
                                  int kx1, int c0, int c1, float *out) {
    const int C = g->channels, k = g->kernel;
    for (int c = c0; c < c1; c++) {
        float a = g->bias[c];
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++)
                a += g->in[((size_t)(iy0 + ky - g->in_first_row) * g->width + (size_t)(ix0 + kx)) * C + c] * g->weight[(size_t)(ky * k + kx) * C + c];
        out[c] = KFN(relu6s)(a);
    }
}

/// `px` neighbouring output pixels of row `oy` from column `ox`, one vector of channels from `c`, for a K×K
/// kernel at stride S (constants where inlined). Per kernel row, the input columns all the pixels' windows
/// cover are loaded once into registers (zeros outside the image, so edge pixels need no other path) and
/// each weight vector is loaded once for all the pixels. Pixels past the row's end are computed, not stored.
INLINE void KFN(depthwise_group)(const dedog_depthwise_args *g, const int K, const int S, const int px, int iy0,
                                 int ky0, int ky1, int ox, int c, float *out_row) {
    const int C = g->channels, W = g->width;
    const int ix0 = ox * S - g->pad_left;
    V acc[PX1 > PX2 ? PX1 : PX2];
    const V b = KFN(load)(g->bias + c);
    for (int i = 0; i < px; i++) acc[i] = b;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *row = g->in + (size_t)(iy0 + ky - g->in_first_row) * W * C + c;
        const float *wk = g->weight + (size_t)ky * K * C + c;
        V col[(PX1 > PX2 ? PX1 : PX2) * 2 + 5];
        for (int j = 0; j < (px - 1) * S + K; j++) {
            const int ix = ix0 + j;
            col[j] = ix >= 0 && ix < W ? KFN(load)(row + (size_t)ix * C) : (V){0};
        }
        for (int kx = 0; kx < K; kx++) {
            const V w = KFN(load)(wk + (size_t)kx * C);
            for (int i = 0; i < px; i++) acc[i] = KFN(fma)(col[i * S + kx], w, acc[i]);
        }
    }
    for (int i = 0; i < px; i++)
        if (ox + i < g->out_width) KFN(store)(out_row + (size_t)(ox + i) * C + c, KFN(relu6)(acc[i]));
}

/// Output pixel `ox` of the row whose window starts at input row `iy0`, channels c_from..<c_to: tiles of 16,
/// then one by one, over the window's in-bounds taps only.
INLINE void KFN(depthwise_single)(const dedog_depthwise_args *g, int k, int s, int iy0, int ky0, int ky1, int ox,
                                  int c_from, int c_to, float *out_row) {
    const int ix0 = ox * s - g->pad_left;
    const int kx0 = ix0 < 0 ? -ix0 : 0;
    const int kx1 = g->width - ix0 < k ? g->width - ix0 : k;
    float *out = out_row + (size_t)ox * g->channels;
    const int tiled = c_from + (c_to - c_from) / DEDOG_PANEL * DEDOG_PANEL;
    for (int c = c_from; c < tiled; c += DEDOG_PANEL) KFN(depthwise_pixel)(g, iy0, ix0, ky0, ky1, kx0, kx1, c, out);
    KFN(depthwise_scalar)(g, iy0, ix0, ky0, ky1, kx0, kx1, tiled, c_to, out);
}

/// The rows and channels of `g` for a K×K kernel at stride S; `px` > 0 (a constant where inlined) takes groups of
/// px pixels one vector of channels at a time, px = 0 (any kernel size) one pixel at a time.
INLINE void KFN(depthwise_rows)(const dedog_depthwise_args *g, const int K, const int S, const int px) {
    const int C = g->channels;
    const int c0 = g->first_channel, c1 = g->end_channel;
    const int vectors_end = px > 0 ? c0 + (c1 - c0) / VW * VW : c0;
    for (int oy = g->first_row; oy < g->end_row; oy++) {
        const int iy0 = oy * S - g->pad_top;
        const int ky0 = iy0 < 0 ? -iy0 : 0;
        const int ky1 = g->height - iy0 < K ? g->height - iy0 : K;
        float *out_row = g->out + (size_t)(oy - g->out_first_row) * g->out_width * C;
        for (int c = c0; c < vectors_end; c += VW)
            for (int ox = 0; ox < g->out_width; ox += px)
                KFN(depthwise_group)(g, K, S, px, iy0, ky0, ky1, ox, c, out_row);
        if (vectors_end < c1)
            for (int ox = 0; ox < g->out_width; ox++)
                KFN(depthwise_single)(g, K, S, iy0, ky0, ky1, ox, vectors_end, c1, out_row);
    }
}

KTARGET void KFN(depthwise)(const dedog_depthwise_args *g) {
    // The network's kernels get their own unrolled code; any other size runs one pixel at a time.
    if (g->kernel == 3 && g->stride == 1) KFN(depthwise_rows)(g, 3, 1, PX1);
    else if (g->kernel == 3 && g->stride == 2) KFN(depthwise_rows)(g, 3, 2, PX2);
    else if (g->kernel == 5 && g->stride == 1) KFN(depthwise_rows)(g, 5, 1, PX1);
    else if (g->kernel == 5 && g->stride == 2) KFN(depthwise_rows)(g, 5, 2, PX2);
    else KFN(depthwise_rows)(g, g->kernel, g->stride, 0);
}

/// `dedog_linear`: each output's weight row is read once (halves widened a piece at a time into `widened`, which
/// stays in cache) and dotted with up to LINEAR_ROWS input rows at a time, one vector of partial sums per row.
#define LINEAR_ROWS 4
#define LINEAR_PIECE 512

/// `nr` rows of `x` (`stride` apart; a constant where inlined, so the sums live in registers) dotted with `len`
/// weights, each row's sum added to `out[r * out_stride]`.
INLINE void KFN(linear_dots)(const float *x, size_t stride, const int nr, const float *w, int len, float *out,
                             size_t out_stride) {
    V acc[LINEAR_ROWS];
    for (int r = 0; r < nr; r++) acc[r] = (V){0};
    int k = 0;
    for (; k + VW <= len; k += VW) {
        const V wv = KFN(load)(w + k);
        for (int r = 0; r < nr; r++) acc[r] = KFN(fma)(KFN(load)(x + r * stride + k), wv, acc[r]);
    }
    for (int r = 0; r < nr; r++) {
        float sum = 0;
        for (int l = 0; l < VW; l++) sum += acc[r][l];
        for (int kk = k; kk < len; kk++) sum += x[r * stride + kk] * w[kk];
        out[r * out_stride] += sum;
    }
}

KTARGET void KFN(linear)(const dedog_linear_args *g) {
    float widened[LINEAR_PIECE] __attribute__((aligned(64)));
    const int n = g->inputs;
    for (int o = g->first_output; o < g->end_output; o++) {
        float *out = g->out + o;
        for (int r = 0; r < g->rows; r++) out[(size_t)r * g->out_stride] = g->bias ? g->bias[o] : 0;
        for (int k0 = 0; k0 < n; k0 += LINEAR_PIECE) {
            const int len = n - k0 < LINEAR_PIECE ? n - k0 : LINEAR_PIECE;
            const size_t at = (size_t)o * (size_t)n + (size_t)k0;
            if (g->half) dedog_f16_to_f32((const uint16_t *)g->weight + at, widened, (size_t)len);
            const float *w = g->half ? widened : (const float *)g->weight + at;
            for (int r0 = 0; r0 < g->rows; r0 += LINEAR_ROWS) {
                const float *x = g->in + (size_t)r0 * g->in_stride + k0;
                float *y = out + (size_t)r0 * g->out_stride;
                switch (g->rows - r0 < LINEAR_ROWS ? g->rows - r0 : LINEAR_ROWS) {
                case 1: KFN(linear_dots)(x, g->in_stride, 1, w, len, y, g->out_stride); break;
                case 2: KFN(linear_dots)(x, g->in_stride, 2, w, len, y, g->out_stride); break;
                case 3: KFN(linear_dots)(x, g->in_stride, 3, w, len, y, g->out_stride); break;
                default: KFN(linear_dots)(x, g->in_stride, LINEAR_ROWS, w, len, y, g->out_stride); break;
                }
            }
        }
    }
}
#undef LINEAR_ROWS
#undef LINEAR_PIECE

#undef NV
#undef V
#undef INLINE
#undef KTARGET
#undef KFN
#undef VW
#undef MR
#undef NP
#undef PX1
#undef PX2
#undef KFUSED
#ifdef KMASK
#undef KMASK
#undef KMASK_STORE
#undef KMASK_LOAD
#endif
