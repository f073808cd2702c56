// A phone's HEIC decoded by dedog itself: the HEVC-coded tiles of its grid decoded by libde265 (the decoder libheif
// uses, opened on first use as libheif is), several tiles at once, each tile's 4:2:0 planes turned into RGB reduced
// by a whole factor as soon as it is decoded (no picture of the whole is ever made). libheif 1.15 decodes a grid on at most a few threads, converts the whole
// 12-megapixel picture to RGB, and always runs the in-loop filters; for a picture reduced to a ninth, what those
// filters smooth is far below a pixel of the output.
#ifndef DEDOG_HEVC_TILES_H
#define DEDOG_HEVC_TILES_H

#include <stddef.h>
#include <stdint.h>

/// Opens libde265 once (thread-safe): 1 when `dedog_hevc_decode_tiles` can run, 0 when not.
int dedog_hevc_load(void);

/// One coded picture: its NAL units, each preceded by its length (`length_size` bytes, big-endian), and where its
/// top-left luma pixel goes in the picture.
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

/// Where and how the tiles' pictures go: interleaved RGB of ceil(`width` / `factor`) × ceil(`height` / `factor`)
/// pixels, each the mean of a `factor`×`factor` block of the `width`×`height` picture (fewer at its right and
/// bottom edges), `factor` dividing the tiles' sides. `kr`, `kb`: the matrix's luma weights of red and blue
/// (BT.601: 0.299, 0.114; BT.709: 0.2126, 0.0722); `full_range` 0 for video range (16–235).
struct dedog_hevc_output {
    uint8_t *rgb;
    int width, height, factor;
    float kr, kb;
    int full_range;
};

/// Decodes `count` tiles of `tile_width`×`tile_height` luma pixels (both even; each tile placed on the tile grid,
/// inside the picture) and writes each, converted and reduced, into `out`: the output pixels no tile covers are
/// left as they are. `headers`: the parameter sets (VPS, SPS, PPS), each preceded by a 4-byte big-endian length,
/// fed before each tile. `filters` 0 skips deblocking and SAO. Runs on up to `threads` threads: tiles side by side
/// (one decoder each, reset between tiles), or, for a single tile, libde265's own wavefront threads where the
/// stream has them.
int dedog_hevc_decode_tiles(const uint8_t *headers, size_t headers_size, int length_size,
                            const struct dedog_hevc_tile *tiles, int count, int tile_width, int tile_height,
                            int filters, int threads, const struct dedog_hevc_output *out);

#endif
