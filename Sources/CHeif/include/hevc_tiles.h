// A phone's HEIC decoded by dedog itself: the HEVC-coded tiles of its grid decoded by libde265 (the decoder libheif
// uses, opened on first use as libheif is), several tiles at once, and the 4:2:0 planes turned into RGB reduced by a
// whole factor in the same pass. libheif 1.15 decodes a grid on at most a few threads, converts the whole
// 12-megapixel picture to RGB, and always runs the in-loop filters; for a picture reduced to a ninth, what those
// filters smooth is far below a pixel of the output.
#ifndef DEDOG_HEVC_TILES_H
#define DEDOG_HEVC_TILES_H

#include <stddef.h>
#include <stdint.h>

/// Opens libde265 once (thread-safe): 1 when `dedog_hevc_decode_tiles` can run, 0 when not.
int dedog_hevc_load(void);

/// One coded picture: its NAL units, each preceded by its length (`length_size` bytes, big-endian), and where its
/// top-left luma pixel goes on the canvas.
struct dedog_hevc_tile {
    const uint8_t *data;
    size_t size;
    int x, y;
};

/// Outcomes of `dedog_hevc_decode_tiles`.
enum {
    DEDOG_HEVC_OK = 0,
    DEDOG_HEVC_NO_LIBRARY = 1,   ///< libde265.so.0 could not be opened
    DEDOG_HEVC_DAMAGED = 2,      ///< a tile did not decode to a picture
    DEDOG_HEVC_UNEXPECTED = 3,   ///< a tile decoded to another size, or not to 8-bit 4:2:0
    DEDOG_HEVC_NO_MEMORY = 4,
};

/// Decodes `count` tiles of `tile_width`×`tile_height` luma pixels (both even) into the 8-bit 4:2:0 planes `y`
/// (`canvas_width` bytes a row) and `cb`, `cr` (`canvas_width / 2` a row), each tile's picture at its place; the
/// canvas (even sides) must hold every tile whole. `headers`: the parameter sets (VPS, SPS, PPS), each preceded by a
/// 4-byte big-endian length, fed before each tile. `filters` 0 skips deblocking and SAO. Runs on up to `threads`
/// threads: tiles side by side, or, for a single tile, libde265's own wavefront threads where the stream has them.
int dedog_hevc_decode_tiles(const uint8_t *headers, size_t headers_size, int length_size,
                            const struct dedog_hevc_tile *tiles, int count, int tile_width, int tile_height,
                            int filters, int threads,
                            uint8_t *y, uint8_t *cb, uint8_t *cr, int canvas_width, int canvas_height);

/// The top-left `width`×`height` of the 4:2:0 planes (as `dedog_hevc_decode_tiles` fills them) as interleaved RGB
/// reduced `factor` times: each output pixel the mean of a `factor`×`factor` block (fewer at the right and bottom
/// edges), `rgb` holding ceil(width / factor) × ceil(height / factor) pixels. `kr`, `kb`: the matrix's luma weights
/// of red and blue (BT.601: 0.299, 0.114; BT.709: 0.2126, 0.0722); `full_range` 0 for video range (16–235).
/// Runs on up to `threads` threads.
void dedog_ycbcr420_to_rgb(const uint8_t *y, const uint8_t *cb, const uint8_t *cr, int canvas_width,
                           int width, int height, int factor, float kr, float kb, int full_range,
                           uint8_t *rgb, int threads);

#endif
