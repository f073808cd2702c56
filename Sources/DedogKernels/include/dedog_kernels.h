// dedog's compute kernels: the pointwise (1×1) convolution as a GEMM on packed weights, the depthwise
// convolution and the stem's patch gathering, each in a portable version and, on x86-64, AVX2+FMA and AVX-512
// versions chosen at run time. The boundary is plain pointers and sizes: callers (DedogNN) split the work
// between threads and own every buffer; nothing here allocates, keeps state or reads the environment.
#ifndef DEDOG_KERNELS_H
#define DEDOG_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The instruction sets a kernel can be built for. The two VNNI sets run the float kernels of the set below them
/// (AVX2, AVX-512) and differ in the 8-bit ones, which multiply bytes with `vpdpbusd`; AVX2 and AVX-512 without
/// VNNI multiply bytes with `vpmaddubsw` where a layer's weights fit in 7 bits, and widen to 16 bits otherwise.
typedef enum {
    DEDOG_ISA_PORTABLE = 0,     // plain C: any CPU, any architecture
    DEDOG_ISA_AVX2 = 1,         // x86-64 with AVX2 and FMA (Haswell, Zen 1 and later)
    DEDOG_ISA_AVX512 = 2,       // x86-64 with AVX-512 F, BW, DQ, VL (Skylake-SP, Zen 4 and later)
    DEDOG_ISA_AVX_VNNI = 3,     // AVX2 with AVX-VNNI, the 256-bit VEX vpdpbusd (Alder Lake, N100, Zen 5)
    DEDOG_ISA_AVX512_VNNI = 4,  // AVX-512 with AVX-512 VNNI (Cascade Lake, Ice Lake, Zen 4 and later)
} dedog_isa;

/// Whether this CPU (and this build) can run kernels for `isa`.
int dedog_isa_supported(dedog_isa isa);

/// Output columns per packed weight panel, for every instruction set.
#define DEDOG_PANEL 16

/// Floats needed to pack a pointwise layer of `outputs` × `inputs` weights: per panel of 16 outputs, 16 biases
/// then `inputs` rows of 16 weights (zero-padded past `outputs`).
size_t dedog_pointwise_packed_count(int inputs, int outputs);

/// Packs `weight` ([outputs × inputs], row-major, as in the checkpoint) and `bias` ([outputs]) into `packed`.
/// Every packing and quantizing function here gives the same bits with every `isa` (an unsupported one runs the
/// portable build); the AVX-512 builds gather and convert 16 outputs at a time.
void dedog_pointwise_pack(dedog_isa isa, const float *weight, const float *bias, int inputs, int outputs, float *packed);

/// The same packing straight from a model file's tensor: `weight` holds floats, or IEEE halves when `half` (widened
/// exactly, a panel at a time), and each output's weights are multiplied by `scale[output]` when `scale` is given
/// (in double precision, then rounded once): BatchNorm folded in while packing. `bias` may be null (zeros).
/// Returns −1 when out of memory (halves only), 0 otherwise.
int dedog_pointwise_pack_stored(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias, int inputs,
                                int outputs, float *packed);

/// The same packing from weights stored [inputs × outputs] (each output's weights a column), as a trainer's
/// activations are when they play the weights' part in a gradient product.
void dedog_pointwise_pack_columns(dedog_isa isa, const float *weight, const float *bias, int inputs, int outputs, float *packed);

/// What the pointwise kernel does after the sum: nothing, clamp to [0, 6], or add the residual tensor.
typedef enum { DEDOG_LINEAR = 0, DEDOG_RELU6 = 1, DEDOG_ADD_RESIDUAL = 2 } dedog_epilogue;

/// out[r][c] = epilogue(bias[c] + Σ_k in[r][k] · W[c][k]) for rows 0..<rows and output columns of the panels
/// first_panel..<end_panel (columns past `outputs` are not written).
/// `in` rows are `in_stride` floats apart; `out` and `residual` rows `out_stride` apart.
typedef struct {
    const float *in;
    size_t in_stride;
    const float *packed;
    int inputs, outputs;
    int rows;
    int first_panel, end_panel;
    float *out;
    const float *residual;
    size_t out_stride;
    dedog_epilogue epilogue;
} dedog_pointwise_args;

void dedog_pointwise(dedog_isa isa, const dedog_pointwise_args *args);

/// One k×k depthwise convolution with TF-SAME padding, bias and ReLU6, channels-last: output rows
/// first_row..<end_row (of one image) and channels first_channel..<end_channel.
/// `weight` is tap-major, [k·k × channels]. `in` holds input rows from `in_first_row` on and `out` output rows
/// from `out_first_row` on, each [rows × width × channels] (the whole image when both are 0), so that a band
/// of an image's output can be computed from a band of its input into a band buffer.
typedef struct {
    const float *in;
    int in_first_row;
    int out_first_row;
    int height, width, channels;
    int kernel, stride, pad_top, pad_left;
    int out_height, out_width;
    const float *weight, *bias;
    float *out;
    int first_row, end_row;
    int first_channel, end_channel;
} dedog_depthwise_args;

void dedog_depthwise(dedog_isa isa, const dedog_depthwise_args *args);

/// A fully-connected layer on its weights as a model file stores them, not packed: out[r][o] = bias[o] +
/// Σ_k in[r][k] · W[o][k] for rows 0..<rows and outputs first_output..<end_output. `weight` is [outputs × inputs],
/// row-major, floats, or IEEE halves when `half` (widened exactly, a piece of a row at a time); `bias` may be null
/// (zeros). `in` rows are `in_stride` floats apart, `out` rows `out_stride`. Each row's sum is added up in pieces
/// of 512 inputs, each piece in vector lanes: the builds agree to rounding, not bit for bit.
typedef struct {
    const float *in;
    size_t in_stride;
    const void *weight;
    int half;
    const float *bias;
    int inputs, rows;
    int first_output, end_output;
    float *out;
    size_t out_stride;
} dedog_linear_args;

void dedog_linear(dedog_isa isa, const dedog_linear_args *args);

/// The stem's im2col: for output row `row` of one image, the k·k·channels inputs of each of its `out_width`
/// pixels (zero outside the image), from the planar (NCHW) network input. Rows of `patches` are
/// channels·k·k floats, ordered channel, ky, kx as the checkpoint's weights are.
void dedog_stem_patches(const float *in, int channels, int height, int width, int kernel, int stride,
                        int pad_top, int pad_left, int row, int out_width, float *patches);

// MARK: 8-bit pointwise convolution

/// Bytes of a pointwise layer of `outputs` × `inputs` 8-bit weights packed by `dedog_qpointwise_pack`: per panel of
/// 16 outputs, their int32 biases, float scales, int32 output zero points, int32 residual zero points and float
/// residual scales, then ⌈inputs / 4⌉ groups of 16 × 4 weights (each output's 4 consecutive inputs side by side, as
/// `vpdpbusd` reads them; zero past `inputs` and past `outputs`).
size_t dedog_qpointwise_packed_size(int inputs, int outputs);

/// Packs `weight` ([outputs × inputs], row-major, symmetric: weight · scale_w[c] is the real weight) for inputs
/// whose real value is (x − `input_zero[k]`) · scale_x[k]. Each output's int32 bias becomes
/// bias[c] − Σ_k input_zero[k] · w[c][k], so that the kernels multiply the unsigned bytes as they are. `bias` may be
/// null (zeros); `scale[c]` is what the int32 sum is multiplied by in the store (scale_x · scale_w[c] / scale_y[c]
/// for 8-bit outputs). `out_zero[c]` is output c's zero point, `residual_zero[c]` and `residual_scale[c]` its
/// residual's encoding (see `dedog_qstore`); each may be null (zeros). `input_max`: the largest input byte the
/// layer will be given (255; 127 for inputs in 7 bits, which AVX2's `vpmaddubsw` multiplies by 8-bit weights without
/// saturating): a promise the kernels rely on.
void dedog_qpointwise_pack(const int8_t *weight, const int32_t *bias, const float *scale, const int32_t *input_zero,
                           const int32_t *out_zero, const int32_t *residual_zero, const float *residual_scale, int inputs,
                           int outputs, int input_max, void *packed);

/// The largest |weight| of a layer packed by `dedog_qpointwise_pack` or quantized by the functions below.
int dedog_qpointwise_widest_weight(const void *packed, int inputs, int outputs);

/// Quantizes and packs in one pass a float layer packed by `dedog_pointwise_pack` (biases and weights, BatchNorm
/// folded) for inputs encoded per channel (`input_scale[k]`, `input_zero[k]`): each output's weights times their
/// input's scale, w′ = w · s_x[k], made symmetric bytes, w′ = q · s_w with s_w = max |w′| / L (1 for a zero row)
/// and q the nearest integer to w′ · (1 / s_w), halves away from zero, L = `weight_limit` (127; 63 for 7-bit
/// weights, which AVX2's `vpmaddubsw` multiplies without saturating; other values count as 127); its bias round(b / s_w) within ±bias_limit,
/// the input zero points folded in as in `dedog_qpointwise_pack`; its store scale s_w / output_scale[c], its
/// zero point and residual encoding as given (each may be null), for inputs up to `input_max` (as in
/// `dedog_qpointwise_pack`). Returns 0 if some output's sums times its scale could pass 2^30 − 2^20 (the layer must
/// not run in 8 bits), 1 otherwise.
int dedog_qpointwise_quantize(dedog_isa isa, const float *fpacked, int inputs, int outputs, const float *input_scale,
                              const int32_t *input_zero, const float *output_scale, const int32_t *out_zero,
                              const int32_t *residual_zero, const float *residual_scale, int weight_limit, int bias_limit,
                              int input_max, void *packed);

/// The same from the layer's weight tensor as stored ([outputs × inputs], floats or halves as in
/// `dedog_pointwise_pack_stored`), each output's weights times `scale[c]` and its bias `bias[c]` (BatchNorm folded
/// as that function folds it): the same bytes, without the float layer (for a network that runs in 8 bits only).
/// Returns −1 when out of memory.
int dedog_qpointwise_quantize_rows(dedog_isa isa, const void *weight, int half, const double *scale, const float *bias, int inputs,
                                   int outputs, const float *input_scale, const int32_t *input_zero,
                                   const float *output_scale, const int32_t *out_zero, const int32_t *residual_zero,
                                   const float *residual_scale, int weight_limit, int bias_limit, int input_max,
                                   void *packed);

/// What the 8-bit pointwise kernel stores. With t = (float)sum · scale[c] and z = out_zero[c] (all from the panel):
///   DEDOG_Q_U8      clamp(round(t), out_min − z, out_max − z) + z as a byte;
///   DEDOG_Q_U8_ADD  the same of t + (float)(r − residual_zero[c]) · residual_scale[c], r the residual's byte;
///   DEDOG_Q_F32     t as a float, clamped to [0, 6] when `relu6`.
/// Products and sums are rounded one at a time in this order (no fused multiply-add), and rounding is to nearest,
/// ties to even, so that every build stores the same bytes. Callers keep |t| below 2^30 (bias, weights and scales
/// bound it), where clamping before or after rounding to an integer gives the same byte.
typedef enum { DEDOG_Q_U8 = 0, DEDOG_Q_U8_ADD = 1, DEDOG_Q_F32 = 2 } dedog_qstore;

/// out[r][c] = store(Σ_k in[r][k] · W[c][k] + bias′[c]) for rows 0..<rows and the output columns of panels
/// first_panel..<end_panel (columns past `outputs` are not written). `in` rows (bytes) are `in_stride` apart;
/// `out` rows (bytes, or floats for DEDOG_Q_F32) and `residual` rows (bytes) `out_stride` elements apart.
typedef struct {
    const uint8_t *in;
    size_t in_stride;
    const void *packed;
    int inputs, outputs;
    int rows;
    int first_panel, end_panel;
    dedog_qstore store;
    void *out;
    size_t out_stride;
    int out_min, out_max;
    const uint8_t *residual;
    int relu6;
} dedog_qpointwise_args;

/// The VNNI sets multiply bytes with `vpdpbusd` (512 or 256 bits); AVX2 and AVX-512 with `vpmaddubsw` where its
/// pair sums cannot saturate (7-bit weights, or inputs up to 127 as packed), and with each input byte split in two
/// otherwise, so no set saturates and all of them agree exactly.
void dedog_qpointwise(dedog_isa isa, const dedog_qpointwise_args *args);

/// One k×k depthwise convolution on 8-bit activations, channels-last, TF-SAME padding: the counterpart of
/// `dedog_depthwise` (same geometry fields, same bands). Inputs are bytes whose zero point is 0 (the ReLU6 outputs
/// that feed every depthwise layer), so padding adds nothing and only in-bounds taps are read. `weight` is
/// tap-major [k·k × channels] holding the signed 8-bit weights as floats (−127…127), `bias` within ±2^23: every
/// product and sum is an integer below 2^24 for kernels up to 16×16, so float multiply-adds compute the integer
/// sum exactly. Then, as in
/// DEDOG_Q_U8: t = (float)(sum + bias[c]) · scale[c], clamped to out_min − out_zero … out_max − out_zero, rounded
/// to nearest (ties to even), plus out_zero, stored as a byte.
typedef struct {
    const uint8_t *in;
    int in_first_row;
    int out_first_row;
    int height, width, channels;
    int kernel, stride, pad_top, pad_left;
    int out_height, out_width;
    const float *weight;
    const int32_t *bias;
    const float *scale;
    uint8_t *out;
    int out_zero, out_min, out_max;
    int first_row, end_row;
    int first_channel, end_channel;
    /// The same weights, biases and scales packed by `dedog_qdepthwise_pack` for the byte dot product kernels (VNNI,
    /// and AVX2's `vpmaddubsw` for weights in 7 bits), or NULL (then those kernels are not used). Every build stores
    /// the same bytes with or without it.
    const void *packed;
} dedog_qdepthwise_args;

void dedog_qdepthwise(dedog_isa isa, const dedog_qdepthwise_args *args);

/// The same without the byte dot product kernels (bytes widened to floats, in `isa`'s float build): the same
/// bytes, so that tests reach that build on every CPU.
void dedog_qdepthwise_without_vnni(dedog_isa isa, const dedog_qdepthwise_args *args);

/// Bytes `dedog_qdepthwise_pack` writes for `channels` channels of a `kernel`×`kernel` layer.
size_t dedog_qdepthwise_packed_size(int channels, int kernel);

/// A depthwise layer's tap-major weights (integers −127…127 held as floats, as in `dedog_qdepthwise_args`), its
/// biases and scales, laid out for VNNI: four kernel rows' bytes of one channel side by side in an int32 lane, so
/// that one `vpdpbusd` adds four taps, and the channels of each 16 in the order the byte interleaving of four input
/// rows leaves them (`packed` holds `dedog_qdepthwise_packed_size` bytes). `input_max` as in
/// `dedog_qpointwise_pack`.
void dedog_qdepthwise_pack(const float *weight, const int32_t *bias, const float *scale, int channels, int kernel,
                           int input_max, void *packed);

/// The first convolution in bytes (3×3, stride 2, 3 → DEDOG_QSTEM_OUTPUTS channels), on the photo's own pixel bytes.
#define DEDOG_QSTEM_OUTPUTS 32

/// Bytes `dedog_qstem_pack` writes.
size_t dedog_qstem_packed_size(void);

/// `weight` [32 × 3 × 3 × 3] (output, channel, row, column) signed 8-bit weights per pixel byte (the
/// preprocessing's 1/std folded in), `bias` the int32 sums a window of the mean's bytes gives subtracted (and the
/// layer's bias added, at each output's sum scale), `scale` what each sum is multiplied by in the store.
void dedog_qstem_pack(const int8_t *weight, const int32_t *bias, const float *scale, void *packed);

/// The network's planar float input [3 × height × width] back to the pixel bytes it was normalised from, still
/// planar, round(x · std + mean) clamped to 0…255, with a border of mean's bytes: `pad_top` rows and `pad_left`
/// columns before the image, planes of `padded_height` × `padded_width` bytes, then 4 spare bytes (`out` holds
/// 3 · padded_height · padded_width + 4 bytes). Writes rows first_row..<end_row of that (and the spare
/// bytes with the last row), so that threads can share the work.
void dedog_qstem_bytes(dedog_isa isa, const float *in, int height, int width, const float *mean, const float *std,
                       int pad_top, int pad_left, int padded_height, int padded_width, int first_row, int end_row,
                       uint8_t *out);

/// Output rows first_row..<end_row of the stem: for each window, sum = bias + Σ weight · byte in int32 (exact), then
/// as DEDOG_Q_U8: t = (float)sum · scale, clamped to out_min − out_zero … out_max − out_zero, rounded to nearest
/// (ties to even), plus out_zero; NHWC bytes, row oy at out + (oy − out_first_row) · out_width · 32.
typedef struct {
    const uint8_t *in;  // from dedog_qstem_bytes
    int padded_height, padded_width;
    int out_width;
    const void *packed;
    uint8_t *out;
    int out_first_row;
    int out_zero, out_min, out_max;
    int first_row, end_row;
} dedog_qstem_args;

void dedog_qstem(dedog_isa isa, const dedog_qstem_args *args);

/// Floats to bytes: clamp(round(in[i] · inv_scale), out_min − zero, out_max − zero) + zero, rounded to nearest
/// (ties to even), for i in 0..<count; every build stores the same bytes.
void dedog_quantize(dedog_isa isa, const float *in, size_t count, float inv_scale, int zero, int out_min, int out_max,
                    uint8_t *out);

/// Byte multiply-adds per second one core reaches with `isa`'s 8-bit dot product (`vpdpbusd` for the VNNI sets,
/// `vpmaddubsw` then `vpmaddwd` for AVX2 and AVX-512, integer vectors for the portable set), every operand in
/// registers.
double dedog_int8_peak(dedog_isa isa, long iterations);

/// IEEE half-precision values (as stored in model files, little-endian) widened to float, exactly.
void dedog_f16_to_f32(const uint16_t *in, float *out, size_t count);

/// 1 when none of `count` IEEE halves is an infinity or NaN (all exponent bits set), 0 otherwise.
int dedog_f16_finite(const uint16_t *in, size_t count);

/// Multiply-adds per second that `isa`'s fused multiply-add reaches on one core with every operand in
/// registers, over `iterations` rounds of 12 independent vector FMAs: the ceiling the benchmarks measure
/// kernels against.
double dedog_fma_peak(dedog_isa isa, long iterations);

#ifdef __cplusplus
}
#endif

#endif
