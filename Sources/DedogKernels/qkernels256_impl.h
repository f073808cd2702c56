// The 8-bit pointwise and depthwise kernels on 256-bit vectors with a dot product of 4 unsigned activation bytes
// and 4 signed weight bytes into each int32 lane, once per instruction set. qkernels.c defines, before including
// this file once per build:
//   KTARGET         the build's target attribute
//   KFN(name)       the build's prefix for a function name
//   DOT4(a, x, w)   a + the dot products of x's and w's byte quadruples, lane by lane (AVX-VNNI: `vpdpbusd`; AVX2:
//                   `vpmaddubsw`, whose pair sums are exact for weights in 7 bits, then `vpmaddwd` by ones)
//   XSIGNED         1 where DOT4 reads the inputs less 128 (`DEDOG_DOT4_SGN`): the biases then come from the second
//                   set each layout keeps (QSBIAS, DW_SBIAS), which adds 128 · Σ w
// and includes it, which undefines them again. Both read the layouts the AVX-512 VNNI kernels read (a 256-bit
// vector is the lower or upper half of theirs) and store the bytes every other build stores. Only KFN(qpointwise)
// and KFN(qdepthwise) are used outside.

#define K256 static inline __attribute__((always_inline)) KTARGET
// A tile of K256_MR rows × 16 outputs: 6 rows (12 accumulators, 2 weight vectors and a broadcast in 16 ymm) where the
// dot product needs no more; 4 rows for the signed build, whose input's sign and magnitude take two registers more
// (6 rows there spilled accumulators to the stack inside the loop).
#define K256_MR (XSIGNED ? 4 : 6)
#define K256_MR_MAX 6

/// The 16 sums of row `row` from column `col` (`acc0` outputs 0–7, `acc1` 8–15), `n` ≤ 16 of them real, stored as
/// `store_one` stores each. `kind` (a `qpw_store_kind`, a constant where inlined): the clamp follows the saturating
/// packs, in bytes (as in `vnni_store64_u8`: |t| < 2^30, which `QuantizedPointwise` checks), at the bottom only where
/// the packs do not clamp there already.
K256 void KFN(qpw_store16)(const dedog_qpointwise_args *g, const int kind, __m256i acc0, __m256i acc1,
                           const uint8_t *panel, int row, int col, int n) {
    const size_t at = (size_t)row * g->out_stride + (size_t)col;
    const __m256i acc[2] = {acc0, acc1};
    __m256 t[2];
    for (int h = 0; h < 2; h++)
        t[h] = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[h]), _mm256_loadu_ps((const float *)(panel + QSCALE + 32 * h)));
    if (g->store == DEDOG_Q_F32) {
        float lanes[16];
        for (int h = 0; h < 2; h++) {
            if (g->relu6) t[h] = _mm256_min_ps(_mm256_max_ps(t[h], _mm256_setzero_ps()), _mm256_set1_ps(6));
            _mm256_storeu_ps(lanes + 8 * h, t[h]);
        }
        memcpy((float *)g->out + at, lanes, (size_t)n * sizeof(float));
        return;
    }
    if (g->store == DEDOG_Q_U8_ADD) {
        uint8_t residual[16] = {0};
        memcpy(residual, g->residual + at, (size_t)n);
        for (int h = 0; h < 2; h++) {
            __m256i r = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(residual + 8 * h)));
            r = _mm256_sub_epi32(r, _mm256_loadu_si256((const __m256i *)(panel + QRZERO + 32 * h)));
            t[h] = _mm256_add_ps(t[h], _mm256_mul_ps(_mm256_cvtepi32_ps(r),
                                                     _mm256_loadu_ps((const float *)(panel + QRSCALE + 32 * h))));
        }
    }
    // Rounded, plus the zero point, narrowed with saturation and clamped as bytes, as `vnni_store64_u8` does: the
    // same bytes as clamping t first (`store_one`), since rounding commutes with clamping to integers and |t| < 2^30.
    __m256i q[2];
    UNROLL
    for (int h = 0; h < 2; h++) {
        q[h] = _mm256_cvtps_epi32(t[h]);
        if (kind == QPW_GENERAL) q[h] = _mm256_add_epi32(q[h], _mm256_loadu_si256((const __m256i *)(panel + QZERO + 32 * h)));
    }
    // Words [0–3 8–11 | 4–7 12–15] put in order, then bytes.
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8);
    __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    if (kind == QPW_GENERAL) bytes = _mm_max_epu8(bytes, _mm_set1_epi8((char)g->out_min));
    bytes = _mm_min_epu8(bytes, _mm_set1_epi8((char)g->out_max));
    uint8_t *out = (uint8_t *)g->out + at;
    if (n == 16) _mm_storeu_si128((__m128i *)out, bytes);
    else {
        uint8_t lanes[16];
        _mm_storeu_si128((__m128i *)lanes, bytes);
        memcpy(out, lanes, (size_t)n);
    }
}

/// mr (≤ K256_MR, a constant where inlined) rows of one panel.
K256 void KFN(qpw_tile)(const dedog_qpointwise_args *g, const int kind, const uint8_t *in, const int mr,
                        const uint8_t *panel, int row, int col, int cols) {
    __m256i acc[K256_MR_MAX][2];
    const uint8_t *bias = panel + (XSIGNED ? QSBIAS : 0);
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bias), b1 = _mm256_loadu_si256((const __m256i *)(bias + 32));
    UNROLL
    for (int r = 0; r < mr; r++) { acc[r][0] = b0; acc[r][1] = b1; }
    const uint8_t *x[K256_MR_MAX];
    UNROLL
    for (int r = 0; r < mr; r++) x[r] = in + (size_t)r * g->in_stride;
    const uint8_t *w = panel + QHEAD;
    const size_t full = (size_t)g->inputs / 4;
    for (size_t gi = 0; gi < full; gi++, w += 64) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)w), w1 = _mm256_loadu_si256((const __m256i *)(w + 32));
        UNROLL
        for (int r = 0; r < mr; r++) {
            int32_t a;
            memcpy(&a, x[r] + 4 * gi, 4);
            const __m256i v = _mm256_set1_epi32(a);
            acc[r][0] = DOT4(acc[r][0], v, w0);
            acc[r][1] = DOT4(acc[r][1], v, w1);
        }
    }
    if (full < groups_of(g->inputs)) {  // the last inputs, fewer than 4
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)w), w1 = _mm256_loadu_si256((const __m256i *)(w + 32));
        UNROLL
        for (int r = 0; r < mr; r++) {
            const __m256i v = _mm256_set1_epi32((int32_t)group_bytes(x[r], full, g->inputs));
            acc[r][0] = DOT4(acc[r][0], v, w0);
            acc[r][1] = DOT4(acc[r][1], v, w1);
        }
    }
    UNROLL
    for (int r = 0; r < mr; r++) KFN(qpw_store16)(g, kind, acc[r][0], acc[r][1], panel, row + r, col, cols);
}

#if XSIGNED
/// Inputs the signed build reads from `qpw_signed_rows`' copy (beyond them, from the rows as they are).
#define QPW_SIGNED_MAX 4096

/// Rows in…in+mr−1 as the signed dot product reads them, each padded with zero bytes to whole groups of 4: x − 128 in
/// `xs` and |x − 128| in `ax` (rows `stride` bytes apart). Made once for a row block, they are read by every panel
/// of its chunk: the loop then has no `xor` and `abs` per broadcast, two of its ten instructions per row and group.
K256 void KFN(qpw_signed_rows)(const dedog_qpointwise_args *g, const uint8_t *in, const int mr, size_t stride,
                               uint8_t *xs, uint8_t *ax) {
    const int n = g->inputs;
    for (int r = 0; r < mr; r++) {
        const uint8_t *x = in + (size_t)r * g->in_stride;
        uint8_t *s = xs + (size_t)r * stride, *a = ax + (size_t)r * stride;
        int i = 0;
        for (; i + 32 <= n; i += 32) {
            const __m256i v = DEDOG_X_SIGNED(_mm256_loadu_si256((const __m256i *)(x + i)));
            _mm256_storeu_si256((__m256i *)(s + i), v);
            _mm256_storeu_si256((__m256i *)(a + i), _mm256_abs_epi8(v));
        }
        for (; i < (int)stride; i++) {
            const int v = (i < n ? (int)x[i] : 0) - 128;
            s[i] = (uint8_t)(int8_t)v;
            a[i] = (uint8_t)(v < 0 ? -v : v);
        }
    }
}

/// `qpw_tile` on the rows `qpw_signed_rows` made: per row and group of 4 inputs, two broadcasts, and per weight
/// vector `DEDOG_DOT4_SGN_OF`; the same sums as `DEDOG_DOT4_SGN`.
K256 void KFN(qpw_tile_signed)(const dedog_qpointwise_args *g, const int kind, const uint8_t *xs, const uint8_t *ax,
                               size_t stride, const int mr, const uint8_t *panel, int row, int col, int cols) {
    __m256i acc[K256_MR_MAX][2];
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)(panel + QSBIAS));
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(panel + QSBIAS + 32));
    UNROLL
    for (int r = 0; r < mr; r++) { acc[r][0] = b0; acc[r][1] = b1; }
    const uint8_t *w = panel + QHEAD;
    const size_t groups = groups_of(g->inputs);
    for (size_t gi = 0; gi < groups; gi++, w += 64) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)w), w1 = _mm256_loadu_si256((const __m256i *)(w + 32));
        UNROLL
        for (int r = 0; r < mr; r++) {
            int32_t sv, av;
            memcpy(&sv, xs + (size_t)r * stride + 4 * gi, 4);
            memcpy(&av, ax + (size_t)r * stride + 4 * gi, 4);
            const __m256i s = _mm256_set1_epi32(sv), a = _mm256_set1_epi32(av);
            acc[r][0] = DEDOG_DOT4_SGN_OF(acc[r][0], s, a, w0);
            acc[r][1] = DEDOG_DOT4_SGN_OF(acc[r][1], s, a, w1);
        }
    }
    UNROLL
    for (int r = 0; r < mr; r++) KFN(qpw_store16)(g, kind, acc[r][0], acc[r][1], panel, row + r, col, cols);
}
#endif

/// Rows r…r+mr−1 (mr a constant where inlined) of panel p: from the signed build's copy of them (`xs`, `ax`) where it
/// made one, else from the rows themselves.
K256 void KFN(qpw_panel)(const dedog_qpointwise_args *g, const int kind, const uint8_t *in, const uint8_t *xs,
                         const uint8_t *ax, size_t stride, const int mr, int p, int r) {
    const uint8_t *panel = (const uint8_t *)g->packed + (size_t)p * panel_bytes(g->inputs);
    const int col = p * QPANEL, cols = g->outputs - col < QPANEL ? g->outputs - col : QPANEL;
#if XSIGNED
    if (xs) {
        KFN(qpw_tile_signed)(g, kind, xs, ax, stride, mr, panel, r, col, cols);
        return;
    }
#else
    (void)xs, (void)ax, (void)stride;
#endif
    KFN(qpw_tile)(g, kind, in, mr, panel, r, col, cols);
}

/// Row blocks of K256_MR over chunks of panels whose weights stay in L2 (≤ 256 KB) while every row block passes
/// them; a row block's inputs stay in L1 across its chunk. `signed_rows`: room for the signed build's copy of a row
/// block (`qpw_signed_rows`), or null to read the rows as they are.
K256 void KFN(qpw_blocks)(const dedog_qpointwise_args *g, const int kind, uint8_t *signed_rows) {
    int chunk = (int)(262144 / panel_bytes(g->inputs));
    if (chunk < 1) chunk = 1;
    const size_t stride = 4 * groups_of(g->inputs);
    for (int p0 = g->first_panel; p0 < g->end_panel; p0 += chunk) {
        const int p1 = p0 + chunk < g->end_panel ? p0 + chunk : g->end_panel;
        for (int r = 0; r < g->rows; r += K256_MR) {
            const int mr = g->rows - r < K256_MR ? g->rows - r : K256_MR;
            const uint8_t *in = g->in + (size_t)r * g->in_stride;
            uint8_t *xs = signed_rows, *ax = signed_rows ? signed_rows + K256_MR * stride : 0;
#if XSIGNED
            if (xs) KFN(qpw_signed_rows)(g, in, mr, stride, xs, ax);
#endif
            for (int p = p0; p < p1; p++) {
                switch (mr) {
                case 1: KFN(qpw_panel)(g, kind, in, xs, ax, stride, 1, p, r); break;
                case 2: KFN(qpw_panel)(g, kind, in, xs, ax, stride, 2, p, r); break;
                case 3: KFN(qpw_panel)(g, kind, in, xs, ax, stride, 3, p, r); break;
                case 4: KFN(qpw_panel)(g, kind, in, xs, ax, stride, 4, p, r); break;
                case 5: KFN(qpw_panel)(g, kind, in, xs, ax, stride, 5, p, r); break;
                default: KFN(qpw_panel)(g, kind, in, xs, ax, stride, K256_MR, p, r); break;
                }
            }
        }
    }
}

KTARGET static void KFN(qpointwise)(const dedog_qpointwise_args *g) {
#if XSIGNED
    uint8_t rows[2 * K256_MR * QPW_SIGNED_MAX];  // 32 KB
    // Worth its copy where a row block meets several panels and the copy is whole vectors (DedogBench pointwise8:
    // 15 % faster on Lite0's layers from 40 inputs on, slower on those of 16 and 24 inputs and on a single panel).
    const int panels = g->end_panel - g->first_panel;
    uint8_t *signed_rows = g->inputs >= 32 && g->inputs <= QPW_SIGNED_MAX && panels >= 2 ? rows : 0;
#else
    uint8_t *signed_rows = 0;
#endif
    if (qpw_store_kind(g) == QPW_FROM_ZERO) KFN(qpw_blocks)(g, QPW_FROM_ZERO, signed_rows);
    else KFN(qpw_blocks)(g, QPW_GENERAL, signed_rows);
}

// MARK: depthwise: four kernel rows per int32 lane, 32 channels (half of a packed 64-channel block) at a time

/// A row's geometry and a 32-channel half's operands, as `dw_stream` passes them to each chunk.
typedef struct {
    const uint8_t *rows[8];  // kernel row ky's input row, any row when outside the image (then `inside` is 0)
    int inside[8];
    int C, W, pad_left, out_width, base;  // base: the half's first channel
    const uint8_t *weights;  // the half's first weight bytes in its block (vectors 64 bytes apart)
    __m256i last4[4];        // a 5×5 kernel's last row, taps 0–3 side by side in each lane, per quarter (`dw_pixels`)
    const int32_t *bias;     // the half's biases of quarter 0 (quarters 16 apart), then scales 64 further
    uint8_t *out_row;
    float lo, hi;
    int zero, out_min, out_max;
} KFN(dw_row);

/// Pixel `ox`'s 32 sums, scaled, rounded and stored as bytes, as `dw_store` stores 64 (as `kind` says).
K256 void KFN(dw_store)(const KFN(dw_row) *a, const int kind, const __m256i acc[4], int ox) {
    const float *scale = (const float *)(a->bias + 64);
    __m256i v[4];
    UNROLL
    for (int q = 0; q < 4; q++) {
        __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[q]), _mm256_loadu_ps(scale + 16 * q));
        if (kind == DW_GENERAL) t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(a->lo)), _mm256_set1_ps(a->hi));
        v[q] = _mm256_cvtps_epi32(t);
        if (kind != DW_PLAIN) v[q] = _mm256_add_epi32(v[q], _mm256_set1_epi32(a->zero));
    }
    __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    if (kind == DW_CLAMP_BYTES)
        bytes = _mm256_min_epu8(_mm256_max_epu8(bytes, _mm256_set1_epi8((char)a->out_min)), _mm256_set1_epi8((char)a->out_max));
    _mm256_storeu_si256((__m256i *)(a->out_row + (size_t)ox * (size_t)a->C + (size_t)a->base), bytes);
}

/// Output pixels per pass of a row (`dw_interleave` then `dw_pixels`), and the input columns they read at most (the
/// largest kernel and stride `qdepthwise` takes: 5, 2).
#define DW256_PIXELS 32
#define DW256_KERNEL_MAX 5
#define DW256_COLUMNS ((DW256_PIXELS - 1) * 2 + DW256_KERNEL_MAX)
/// Vectors kept per group, column and quarter: the quadruples, or for the signed build x − 128 and |x − 128|.
#define DW256_PLANES (XSIGNED ? 2 : 1)
#define DW256_BUFFER (((DW256_KERNEL_MAX + DW_ROWS - 1) / DW_ROWS) * DW256_COLUMNS * 4 * DW256_PLANES)

/// Input columns c0…c0+columns−1 of the padded row, as the kernel-row quadruples of the half's 32 channels: for each
/// group of 4 kernel rows gg and column, quarter q's 8 int32 lanes (Q[q]: channels 4q… and 16 + 4q…, as `dw_store`
/// packs them), zeros outside the image; for a group of one row (`DW_LONE_ROW`), the quadruples of that row's
/// columns c…c+3. Interleaved once here, each is read by every kernel column that passes it:
/// streaming the row with every open pixel's sums in registers (4 · ⌈K/S⌉ of them, 20 for 5×5) needed more than AVX2's
/// 16 registers, and the spills cost more than this buffer's stores.
K256 void KFN(dw_interleave)(const KFN(dw_row) *a, const int K, int c0, int columns, __m256i *buf) {
    const int G = (K + DW_ROWS - 1) / DW_ROWS;
    // A row outside the image reads its (valid) stand-in row and keeps nothing of it: no branch per column and row.
    __m256i keep[DW256_KERNEL_MAX];
    UNROLL
    for (int ky = 0; ky < K; ky++) keep[ky] = _mm256_set1_epi32(a->inside[ky] ? -1 : 0);
    UNROLL
    for (int gg = 0; gg < G; gg++) {
        for (int c = 0; c < columns; c++) {
            const int ix = c0 + c - a->pad_left;
            const int column = (unsigned)ix < (unsigned)a->W;
            __m256i r[DW_ROWS];
            UNROLL
            for (int k = 0; k < DW_ROWS; k++) {
                if (DW_LONE_ROW(gg, K, G)) {
                    const int ky = DW_ROWS * gg, at = ix + k;
                    if ((unsigned)at >= (unsigned)a->W) r[k] = _mm256_setzero_si256();
                    else r[k] = _mm256_and_si256(keep[ky], _mm256_loadu_si256((const __m256i *)(a->rows[ky] + (size_t)at * (size_t)a->C + (size_t)a->base)));
                    continue;
                }
                const int ky = DW_ROWS * gg + k;
                if (ky >= K || !column) r[k] = _mm256_setzero_si256();
                else r[k] = _mm256_and_si256(keep[ky], _mm256_loadu_si256((const __m256i *)(a->rows[ky] + (size_t)ix * (size_t)a->C + (size_t)a->base)));
            }
            const __m256i ab_lo = _mm256_unpacklo_epi8(r[0], r[1]), ab_hi = _mm256_unpackhi_epi8(r[0], r[1]);
            const __m256i cd_lo = _mm256_unpacklo_epi8(r[2], r[3]), cd_hi = _mm256_unpackhi_epi8(r[2], r[3]);
            const __m256i Q[4] = {_mm256_unpacklo_epi16(ab_lo, cd_lo), _mm256_unpackhi_epi16(ab_lo, cd_lo),
                                  _mm256_unpacklo_epi16(ab_hi, cd_hi), _mm256_unpackhi_epi16(ab_hi, cd_hi)};
            __m256i *at = buf + (size_t)((gg * DW256_COLUMNS + c) * 4 * DW256_PLANES);
            UNROLL
            for (int q = 0; q < 4; q++) {
#if XSIGNED
                const __m256i xs = DEDOG_X_SIGNED(Q[q]);
                _mm256_store_si256(at + 2 * q, xs);
                _mm256_store_si256(at + 2 * q + 1, _mm256_abs_epi8(xs));
#else
                _mm256_store_si256(at + q, Q[q]);
#endif
            }
        }
    }
}

/// Output pixels ox0…ox0+n−1 of the row from the columns `dw_interleave` left in `buf` (from column ox0 · S): each
/// pixel's 32 sums in 4 registers over its K × K taps, then stored.
K256 void KFN(dw_pixels)(const KFN(dw_row) *a, const int K, const int S, const int kind, int ox0, int n,
                         const __m256i *buf) {
    const int G = (K + DW_ROWS - 1) / DW_ROWS;
    for (int p = 0; p < n; p++) {
        __m256i acc[4];
        UNROLL
        for (int q = 0; q < 4; q++) acc[q] = _mm256_loadu_si256((const __m256i *)(a->bias + DW_SBIAS * XSIGNED + 16 * q));
        UNROLL
        for (int gg = 0; gg < G; gg++) {
            if (DW_LONE_ROW(gg, K, G)) {
                // Taps 0–3 of the row from the quadruple of columns p·S…p·S+3, tap 4 from that of p·S+4 with the packed
                // vector, whose lanes hold tap 4 and three zeros (which the quadruple's other columns meet).
                const __m256i *at0 = buf + (size_t)((gg * DW256_COLUMNS + p * S) * 4 * DW256_PLANES);
                const __m256i *at4 = buf + (size_t)((gg * DW256_COLUMNS + p * S + 4) * 4 * DW256_PLANES);
                const uint8_t *w4 = a->weights + (size_t)((gg * K + 4) * 4) * 64;
                UNROLL
                for (int q = 0; q < 4; q++) {
                    const __m256i wq = _mm256_loadu_si256((const __m256i *)(w4 + q * 64));
#if XSIGNED
                    acc[q] = DEDOG_DOT4_SGN_OF(acc[q], _mm256_load_si256(at0 + 2 * q), _mm256_load_si256(at0 + 2 * q + 1), a->last4[q]);
                    acc[q] = DEDOG_DOT4_SGN_OF(acc[q], _mm256_load_si256(at4 + 2 * q), _mm256_load_si256(at4 + 2 * q + 1), wq);
#else
                    acc[q] = DOT4(acc[q], _mm256_load_si256(at0 + q), a->last4[q]);
                    acc[q] = DOT4(acc[q], _mm256_load_si256(at4 + q), wq);
#endif
                }
                continue;
            }
            UNROLL
            for (int kx = 0; kx < K; kx++) {
                const __m256i *at = buf + (size_t)((gg * DW256_COLUMNS + p * S + kx) * 4 * DW256_PLANES);
                const uint8_t *w = a->weights + (size_t)((gg * K + kx) * 4) * 64;
                UNROLL
                for (int q = 0; q < 4; q++) {
                    const __m256i wq = _mm256_loadu_si256((const __m256i *)(w + q * 64));
#if XSIGNED
                    acc[q] = DEDOG_DOT4_SGN_OF(acc[q], _mm256_load_si256(at + 2 * q), _mm256_load_si256(at + 2 * q + 1), wq);
#else
                    acc[q] = DOT4(acc[q], _mm256_load_si256(at + q), wq);
#endif
                }
            }
        }
        KFN(dw_store)(a, kind, acc, ox0 + p);
    }
}

K256 void KFN(dw_stream)(const KFN(dw_row) *a, const int K, const int S, const int kind, __m256i *buf) {
    for (int ox0 = 0; ox0 < a->out_width; ox0 += DW256_PIXELS) {
        const int n = a->out_width - ox0 < DW256_PIXELS ? a->out_width - ox0 : DW256_PIXELS;
        KFN(dw_interleave)(a, K, ox0 * S, (n - 1) * S + K, buf);
        KFN(dw_pixels)(a, K, S, kind, ox0, n, buf);
    }
}

/// The rows of `g` and its channels first_channel…end32−1 (32 at a time, from a multiple of 64) for a K×K kernel at
/// stride S.
K256 void KFN(dw_rows)(const dedog_qdepthwise_args *g, int end32, const int K, const int S, const int kind, __m256i *buf) {
    KFN(dw_row) a;
    a.C = g->channels;
    a.W = g->width;
    a.pad_left = g->pad_left;
    a.out_width = g->out_width;
    a.lo = (float)(g->out_min - g->out_zero);
    a.hi = (float)(g->out_max - g->out_zero);
    a.zero = g->out_zero;
    a.out_min = g->out_min;
    a.out_max = g->out_max;
    const size_t row_bytes = (size_t)g->width * (size_t)g->channels;
    const int G = (K + DW_ROWS - 1) / DW_ROWS;
    for (int base = g->first_channel; base < end32; base += 32) {
        const uint8_t *block = (const uint8_t *)g->packed + DW_HEAD + (size_t)(base / 64) * dw_block_bytes(K);
        const int half = (base % 64) / 32;
        a.base = base;
        a.weights = block + 32 * half;
        if (DW_LONE_ROW(G - 1, K, G)) {
            // The packed vectors of the last row hold tap kx in byte 0 of each lane (rows 5–7 are zeros): taps 0–3
            // moved side by side, in the order of the column quadruples' bytes.
            UNROLL
            for (int q = 0; q < 4; q++) {
                __m256i v = _mm256_setzero_si256();
                UNROLL
                for (int kx = 0; kx < 4; kx++) {
                    const __m256i t = _mm256_loadu_si256((const __m256i *)(a.weights + (size_t)(((G - 1) * K + kx) * 4 + q) * 64));
                    v = _mm256_or_si256(v, _mm256_slli_epi32(t, 8 * kx));
                }
                a.last4[q] = v;
            }
        }
        a.bias = (const int32_t *)(block + (size_t)G * (size_t)K * 4 * 64) + 8 * half;
        for (int oy = g->first_row; oy < g->end_row; oy++) {
            const int iy0 = oy * S - g->pad_top;
            a.out_row = g->out + (size_t)(oy - g->out_first_row) * (size_t)g->out_width * (size_t)g->channels;
            for (int ky = 0; ky < K; ky++) {
                const int iy = iy0 + ky, inside = iy >= 0 && iy < g->height;
                a.rows[ky] = g->in + (size_t)((inside ? iy : g->in_first_row) - g->in_first_row) * row_bytes;
                a.inside[ky] = inside;
            }
            KFN(dw_stream)(&a, K, S, kind, buf);
        }
    }
}

/// Channels first_channel…end32−1 of `g` (a kernel and stride `dw_vnni_takes` accepts).
KTARGET static void KFN(qdepthwise)(const dedog_qdepthwise_args *g, int end32) {
    const int kind = dw_store_kind(g);
    __m256i buf[DW256_BUFFER];  // 34 KB for the signed build
#define DW256_CASE(k, s)                                                                                               \
    if (g->kernel == k && g->stride == s) {                                                                            \
        if (kind == DW_PLAIN) KFN(dw_rows)(g, end32, k, s, DW_PLAIN, buf);                                            \
        else if (kind == DW_CLAMP_BYTES) KFN(dw_rows)(g, end32, k, s, DW_CLAMP_BYTES, buf);                           \
        else KFN(dw_rows)(g, end32, k, s, DW_GENERAL, buf);                                                          \
        return;                                                                                                        \
    }
    DW256_CASE(3, 1) DW256_CASE(3, 2) DW256_CASE(5, 1) DW256_CASE(5, 2)
#undef DW256_CASE
}

#undef K256
#undef K256_MR
#undef K256_MR_MAX
#undef DW256_PIXELS
#undef QPW_SIGNED_MAX
#undef DW256_COLUMNS
#undef DW256_KERNEL_MAX
#undef DW256_PLANES
#undef DW256_BUFFER
#undef KTARGET
#undef KFN
#undef DOT4
