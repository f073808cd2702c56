import CHeif

/// A HEIC's primary picture decoded by dedog (see `HEVCLayout` for which files): libde265 decodes the tiles several
/// at a time into one canvas of 4:2:0 planes, and the colour conversion reduces the picture by a whole factor, each
/// output pixel the mean of its block. The factor keeps the shorter side at twice `minimumShorterSide`, not once
/// as JPEG's DCT scaling does: decoding HEVC costs the same at any reduction (every coded pixel is decoded), so the
/// picture comes out large enough for a closer look at most dogs too, which would otherwise decode it all again.
/// When the picture is reduced at least twice, deblocking and SAO are skipped: they smooth edges of coded blocks a
/// few pixels wide, far below a pixel of the output (scripts/bench-heic: answers as the JPEG's). Full size, every
/// filter runs, and the pixels are libheif's (within rounding; tested).
enum HEVCTiles {
    /// The picture, turned upright, or nil when libde265 is missing or a tile does not decode as the layout says
    /// (libheif then decodes the file and reports what is wrong with it).
    /// `maxPixels` bounds the canvas (the tiles whole, their padding with them). With a `region` (upright, in the
    /// photo's pixels) only the tiles under it are decoded; the rest of the canvas stays black.
    static func decode(_ layout: HEVCLayout, file: UnsafeRawBufferPointer, minimumShorterSide: Int?, region: PixelRect?,
                       maxPixels: Int, threads: Int) -> RGBImage? {
        guard let base = file.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let (pixels, overflow) = layout.canvasWidth.multipliedReportingOverflow(by: layout.canvasHeight)
        guard !overflow, pixels <= maxPixels else { return nil }
        let factor = minimumShorterSide.map { max(1, min(layout.width, layout.height) / max(1, 2 * $0)) } ?? 1
        let (canvasW, canvasH) = (layout.canvasWidth, layout.canvasHeight)
        let lumaCount = canvasW * canvasH
        var planes = [UInt8](repeating: 0, count: lumaCount + lumaCount / 2)
        var needed = layout.tiles[...]
        if let region, let stored = layout.stored(region) {
            needed = layout.tiles.filter { tile in
                tile.x < stored.x + stored.width && stored.x < tile.x + layout.tileWidth
                    && tile.y < stored.y + stored.height && stored.y < tile.y + layout.tileHeight
            }[...]
            planes.withUnsafeMutableBufferPointer { p in  // black: chroma at its middle
                p.baseAddress!.advanced(by: lumaCount).update(repeating: 128, count: lumaCount / 2)
            }
        }
        let tiles = needed.map { dedog_hevc_tile(data: base + $0.data.lowerBound, size: $0.data.count, x: Int32($0.x), y: Int32($0.y)) }
        guard !tiles.isEmpty else { return nil }
        let outcome = planes.withUnsafeMutableBufferPointer { p in
            layout.headers.withUnsafeBufferPointer { headers in
                dedog_hevc_decode_tiles(headers.baseAddress, headers.count, Int32(layout.lengthSize), tiles, Int32(tiles.count),
                                        Int32(layout.tileWidth), Int32(layout.tileHeight), factor >= 2 ? 0 : 1, Int32(threads),
                                        p.baseAddress, p.baseAddress! + lumaCount, p.baseAddress! + lumaCount + lumaCount / 4,
                                        Int32(canvasW), Int32(canvasH))
            }
        }
        guard outcome == Int32(DEDOG_HEVC_OK) else { return nil }
        let outW = (layout.width + factor - 1) / factor, outH = (layout.height + factor - 1) / factor
        var rgb = [UInt8](repeating: 0, count: outW * outH * 3)
        planes.withUnsafeBufferPointer { p in
            rgb.withUnsafeMutableBufferPointer { out in
                dedog_ycbcr420_to_rgb(p.baseAddress, p.baseAddress! + lumaCount, p.baseAddress! + lumaCount + lumaCount / 4,
                                      Int32(canvasW), Int32(layout.width), Int32(layout.height), Int32(factor),
                                      layout.kr, layout.kb, layout.fullRange ? 1 : 0, out.baseAddress, Int32(threads))
            }
        }
        var image = RGBImage(checked: outW, outH, rgb)
        var original = PixelSize(width: layout.width, height: layout.height)
        for transform in layout.transforms {
            image = transform.applied(to: image)
            if transform.swapsAxes { original = PixelSize(width: original.height, height: original.width) }
        }
        if factor > 1 { image.original = original }
        return image
    }
}
