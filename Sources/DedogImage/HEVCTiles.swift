import CHeif

/// A HEIC's primary picture decoded by dedog (see `HEVCLayout` for which files): libde265 decodes the tiles several
/// at a time, and each tile's 4:2:0 planes are converted to RGB as soon as it is decoded, reduced by a power of two
/// (as JPEG's DCT scaling reduces), each output pixel the mean of its block; no picture of the whole is made. The
/// factor keeps the shorter side at twice `minimumShorterSide`, not once as JPEG's does: decoding HEVC costs the
/// same at any reduction (every coded pixel is decoded), so the picture comes out large enough for a closer look at
/// most dogs too, which would otherwise decode it all again. When the picture is reduced at least twice, deblocking
/// and SAO are skipped: they smooth edges of coded blocks a few pixels wide, far below a pixel of the output
/// (scripts/bench-heic: answers as the JPEG's). Full size, every filter runs, and the pixels are libheif's (within
/// rounding; tested).
enum HEVCTiles {
    /// The picture, turned upright, or nil when libde265 is missing or a tile does not decode as the layout says
    /// (libheif then decodes the file and reports what is wrong with it). `maxPixels` bounds a tile as it bounds
    /// the photo. With a `region` (upright, in the photo's pixels) only the tiles under it are decoded; the rest of
    /// the picture stays black.
    static func decode(_ layout: HEVCLayout, file: UnsafeRawBufferPointer, minimumShorterSide: Int?, region: PixelRect?,
                       maxPixels: Int, threads: Int) -> RGBImage? {
        guard let base = file.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let (tilePixels, overflow) = layout.tileWidth.multipliedReportingOverflow(by: layout.tileHeight)
        guard !overflow, tilePixels <= maxPixels, layout.width <= Int(Int32.max), layout.height <= Int(Int32.max) else { return nil }
        // The largest power of two (a tile holds a whole number of blocks) within what the asked size allows.
        let allowed = minimumShorterSide.map { max(1, min(layout.width, layout.height) / max(1, 2 * $0)) } ?? 1
        var factor = 1
        while factor * 2 <= allowed, layout.tileWidth % (factor * 2) == 0, layout.tileHeight % (factor * 2) == 0 { factor *= 2 }
        var needed = layout.tiles[...]
        if let region, let stored = layout.stored(region) {
            needed = layout.tiles.filter { tile in
                tile.x < stored.x + stored.width && stored.x < tile.x + layout.tileWidth
                    && tile.y < stored.y + stored.height && stored.y < tile.y + layout.tileHeight
            }[...]
        }
        guard !needed.isEmpty else { return nil }
        let tiles = needed.map { dedog_hevc_tile(data: base + $0.data.lowerBound, size: $0.data.count, x: Int32($0.x), y: Int32($0.y)) }
        let outW = (layout.width + factor - 1) / factor, outH = (layout.height + factor - 1) / factor
        var rgb = [UInt8](repeating: 0, count: outW * outH * 3)  // black where no tile is decoded
        let outcome = rgb.withUnsafeMutableBufferPointer { pixels in
            layout.headers.withUnsafeBufferPointer { headers in
                var output = dedog_hevc_output(rgb: pixels.baseAddress, width: Int32(layout.width), height: Int32(layout.height),
                                               factor: Int32(factor), kr: layout.kr, kb: layout.kb,
                                               full_range: layout.fullRange ? 1 : 0)
                return dedog_hevc_decode_tiles(headers.baseAddress, headers.count, Int32(layout.lengthSize), tiles,
                                               Int32(tiles.count), Int32(layout.tileWidth), Int32(layout.tileHeight),
                                               factor >= 2 ? 0 : 1, Int32(threads), &output)
            }
        }
        guard outcome == Int32(DEDOG_HEVC_OK) else { return nil }
        var image = RGBImage(checked: outW, outH, rgb)
        for transform in layout.transforms { image = transform.applied(to: image) }
        if factor > 1 { image.original = layout.upright }
        return image
    }
}
