/// Where a HEIC's primary picture is in the file, as `HEVCTiles` decodes it without libheif: its HEVC-coded tiles (a
/// grid's, row by row, or the one picture of a plain image), their parameter sets, the output size, the transforms
/// to apply, and the colour matrix.
///
/// Only the plain layout phones write is taken: a `grid` of `hvc1` tiles (or one `hvc1` image) of even sizes, each
/// tile's data one extent in this file, the tiles sharing one `hvcC`, properties no other than `hvcC`, `ispe`,
/// `colr`, `pixi` on the tiles and those with `irot` and `imir` on the primary. Anything else (a crop, an overlay,
/// AV1, 10 bits, tiles that do not cover the grid) makes `init` fail, and libheif decodes the photo as before.
struct HEVCLayout {
    struct Tile { let data: Range<Int>; let x: Int; let y: Int }

    /// The parameter sets (VPS, SPS, PPS), each preceded by a 4-byte big-endian length.
    let headers: [UInt8]
    /// How many bytes precede each NAL unit of the tiles' data (the `hvcC`'s lengthSizeMinusOne + 1).
    let lengthSize: Int
    let tiles: [Tile]
    let tileWidth: Int, tileHeight: Int
    /// The picture's size before its transforms (the grid's output size, the tiles' padding cut off).
    let width: Int, height: Int
    /// The primary item's `irot` and `imir`, in the order they apply, as the EXIF orientations that do the same.
    let transforms: [EXIFOrientation]
    /// The picture's size after its transforms: what libheif reports for the primary image.
    let upright: PixelSize
    /// The luma weights of red and blue of the colour matrix, and whether the samples use the full 0–255 range (the
    /// `colr` box's `nclx`; without one, BT.601 full range, as libheif takes it).
    let kr: Float, kb: Float, fullRange: Bool

    init?(_ file: HEIFBoxes) {
        let bytes = file.bytes
        func child(_ type: String) -> Range<Int>? { file.meta.first { $0.type == type }?.body }
        guard let pitm = child("pitm"), let iinf = child("iinf"), let iloc = child("iloc"),
              let iprp = child("iprp"), pitm.count >= 6,
              let primary = HEIFBoxes.read(bytes, pitm.lowerBound + 4, bytes[pitm.lowerBound] == 0 ? 2 : 4) else { return nil }
        let types = HEIFBoxes.itemTypes(bytes, iinf: iinf)
        let sources = child("iref").map { HEIFBoxes.derivedImageSources(bytes, iref: $0) } ?? [:]
        let parts = HEIFBoxes.boxes(bytes, in: iprp).found
        guard let ipco = parts.first(where: { $0.type == "ipco" }), let ipma = parts.first(where: { $0.type == "ipma" }) else { return nil }
        let properties = HEIFBoxes.boxes(bytes, in: ipco.body).found
        let associations = Self.associations(bytes, ipma: ipma.body)
        let places = Dictionary(HEIFBoxes.locations(bytes, iloc: iloc).map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        /// The properties of `item`, checked against `allowed`; nil if it has another.
        func props(_ item: Int, allowed: Set<String>) -> [HEIFBoxes.Box]? {
            var found: [HEIFBoxes.Box] = []
            for index in associations[item] ?? [] {
                guard index == 0 || properties.indices.contains(index - 1) else { return nil }
                guard index > 0 else { continue }
                let box = properties[index - 1]
                guard allowed.contains(box.type) else { return nil }
                found.append(box)
            }
            return found
        }
        func spatialExtent(_ boxes: [HEIFBoxes.Box]) -> (Int, Int)? {
            guard let ispe = boxes.first(where: { $0.type == "ispe" }), ispe.body.count >= 12,
                  let w = HEIFBoxes.read(bytes, ispe.body.lowerBound + 4, 4),
                  let h = HEIFBoxes.read(bytes, ispe.body.lowerBound + 8, 4) else { return nil }
            return (w, h)
        }

        let codedTiles: [Int]
        let grid: (rows: Int, columns: Int, width: Int, height: Int)?
        switch types[primary] {
        case "grid":
            guard let parts = sources[primary], let data = places[primary]?.first,
                  let read = file.gridData(at: data) else { return nil }
            codedTiles = parts
            grid = read
        case "hvc1":
            guard sources[primary] == nil else { return nil }
            codedTiles = [primary]
            grid = nil
        default:
            return nil
        }
        guard let primaryProps = props(primary, allowed: ["hvcC", "ispe", "colr", "pixi", "irot", "imir"]),
              !codedTiles.isEmpty, codedTiles.count <= 4096 else { return nil }
        // The tiles: all hvc1, with one hvcC between them and one size.
        var hvcC: Range<Int>?
        var tileSize: (Int, Int)?
        var tileProps: [HEIFBoxes.Box] = []
        var extents: [Range<Int>] = []
        for tile in codedTiles {
            guard types[tile] == "hvc1", let found = props(tile, allowed: ["hvcC", "ispe", "colr", "pixi", "irot", "imir"]),
                  let config = found.first(where: { $0.type == "hvcC" }), let size = spatialExtent(found) else { return nil }
            // Transforms belong to the whole picture: a tile carrying its own is left to libheif.
            if tile != primary, found.contains(where: { $0.type == "irot" || $0.type == "imir" }) { return nil }
            if let hvcC { guard bytes[hvcC] == bytes[config.body] else { return nil } } else { hvcC = config.body }
            if let tileSize { guard tileSize == size else { return nil } } else { tileSize = size }
            if tileProps.isEmpty { tileProps = found }
            guard let place = places[tile], place.count == 1, let extent = place.first, extent.method == 0,
                  extent.reference == 0, extent.offset >= 0, extent.length > 0,
                  extent.offset <= bytes.count, extent.length <= bytes.count - extent.offset else { return nil }
            extents.append(extent.offset..<(extent.offset + extent.length))
        }
        guard let hvcC, let (tw, th) = tileSize, tw >= 2, th >= 2, tw % 2 == 0, th % 2 == 0,
              let config = Self.parameterSets(bytes, hvcC: hvcC) else { return nil }
        let rows = grid?.rows ?? 1, columns = grid?.columns ?? 1
        let width = grid?.width ?? tw, height = grid?.height ?? th
        // The tiles cover the output, and no tile lies wholly outside it.
        guard rows * columns == codedTiles.count, width > (columns - 1) * tw, width <= columns * tw,
              height > (rows - 1) * th, height <= rows * th else { return nil }
        // 8 bits a sample where the file says (the decoder checks what it gets, too).
        for boxes in [primaryProps, tileProps] {
            if let pixi = boxes.first(where: { $0.type == "pixi" }) {
                let body = pixi.body
                guard body.count >= 5, bytes[body.lowerBound + 4] >= 1,
                      body.count >= 5 + Int(bytes[body.lowerBound + 4]),
                      bytes[(body.lowerBound + 5)..<(body.lowerBound + 5 + Int(bytes[body.lowerBound + 4]))].allSatisfy({ $0 == 8 }) else { return nil }
            }
        }
        var transforms: [EXIFOrientation] = []
        for box in primaryProps where box.type == "irot" || box.type == "imir" {
            guard box.body.count >= 1 else { return nil }
            let value = bytes[box.body.lowerBound]
            if box.type == "irot" {
                // Anticlockwise quarter turns.
                switch value & 3 {
                case 1: transforms.append(.left)
                case 2: transforms.append(.down)
                case 3: transforms.append(.right)
                default: break
                }
            } else {
                // Amendment 2's reading, as iPhones write it and libheif decodes it: 0 exchanges top and bottom.
                transforms.append(value & 1 == 0 ? .downMirrored : .mirrored)
            }
        }
        // The colour matrix: the primary's nclx, else the tiles'.
        var matrix = (kr: Float(0.299), kb: Float(0.114), full: true)
        if let nclx = Self.nclx(bytes, primaryProps) ?? Self.nclx(bytes, tileProps) {
            switch nclx.matrix {
            case 1: matrix = (0.2126, 0.0722, nclx.full)
            case 5, 6, 2: matrix = (0.299, 0.114, nclx.full)
            default: return nil  // identity (RGB coded as GBR), BT.2020 and the rest: libheif's
            }
        }
        var tiles: [Tile] = []
        for (i, extent) in extents.enumerated() {
            tiles.append(Tile(data: extent, x: (i % columns) * tw, y: (i / columns) * th))
        }
        self.headers = config.headers
        self.lengthSize = config.lengthSize
        self.tiles = tiles
        self.tileWidth = tw
        self.tileHeight = th
        self.width = width
        self.height = height
        self.transforms = transforms
        let turns = transforms.filter(\.swapsAxes).count % 2 == 1
        self.upright = turns ? PixelSize(width: height, height: width) : PixelSize(width: width, height: height)
        (kr, kb, fullRange) = matrix
    }

    /// The part of the stored picture (before the transforms) that `region` of the upright picture shows, within
    /// the picture; nil when the region is empty or outside it.
    func stored(_ region: PixelRect) -> PixelRect? {
        // The size before each transform.
        var sizes: [(Int, Int)] = [(width, height)]
        for transform in transforms.dropLast() {
            let (w, h) = sizes[sizes.count - 1]
            sizes.append(transform.swapsAxes ? (h, w) : (w, h))
        }
        let x0 = max(0, region.x), y0 = max(0, region.y)
        let x1 = min(upright.width, region.x + region.width), y1 = min(upright.height, region.y + region.height)
        guard x1 > x0, y1 > y0 else { return nil }
        var rect = PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        for (i, transform) in transforms.enumerated().reversed() {
            rect = transform.source(of: rect, width: sizes[i].0, height: sizes[i].1)
        }
        return rect
    }

    /// Each item's property indices (1-based; 0 means none) from an `ipma` body.
    private static func associations(_ bytes: [UInt8], ipma: Range<Int>) -> [Int: [Int]] {
        guard ipma.count >= 8 else { return [:] }
        let version = bytes[ipma.lowerBound], large = bytes[ipma.lowerBound + 3] & 1 != 0
        guard let count = HEIFBoxes.read(bytes, ipma.lowerBound + 4, 4) else { return [:] }
        var at = ipma.lowerBound + 8
        var result: [Int: [Int]] = [:]
        for _ in 0..<min(count, 100_000) {
            let idSize = version < 1 ? 2 : 4
            guard let item = HEIFBoxes.read(bytes, at, idSize), let n = HEIFBoxes.read(bytes, at + idSize, 1) else { break }
            at += idSize + 1
            var indices: [Int] = []
            for _ in 0..<n {
                guard let value = HEIFBoxes.read(bytes, at, large ? 2 : 1), at < ipma.upperBound else { return result }
                indices.append(value & (large ? 0x7FFF : 0x7F))
                at += large ? 2 : 1
            }
            result[item, default: []] += indices
        }
        return result
    }

    /// An `hvcC` body's parameter-set NAL units, each after a 4-byte length, and its NAL length size.
    private static func parameterSets(_ bytes: [UInt8], hvcC: Range<Int>) -> (headers: [UInt8], lengthSize: Int)? {
        guard hvcC.count >= 23 else { return nil }
        let lengthSize = Int(bytes[hvcC.lowerBound + 21] & 3) + 1
        guard lengthSize != 3 else { return nil }
        var at = hvcC.lowerBound + 23
        var headers: [UInt8] = []
        for _ in 0..<bytes[hvcC.lowerBound + 22] {
            guard let count = HEIFBoxes.read(bytes, at + 1, 2) else { return nil }
            at += 3
            for _ in 0..<count {
                guard let length = HEIFBoxes.read(bytes, at, 2), at + 2 + length <= hvcC.upperBound else { return nil }
                headers += [0, 0, UInt8(length >> 8), UInt8(length & 0xFF)]
                headers += bytes[(at + 2)..<(at + 2 + length)]
                at += 2 + length
            }
        }
        return headers.isEmpty ? nil : (headers, lengthSize)
    }

    /// The matrix coefficients and full-range flag of the first `colr` box of type `nclx` among `boxes`.
    private static func nclx(_ bytes: [UInt8], _ boxes: [HEIFBoxes.Box]) -> (matrix: Int, full: Bool)? {
        for box in boxes where box.type == "colr" && box.body.count >= 11 {
            let at = box.body.lowerBound
            guard String(decoding: bytes[at..<(at + 4)], as: UTF8.self) == "nclx",
                  let matrix = HEIFBoxes.read(bytes, at + 8, 2) else { continue }
            return (matrix, bytes[at + 10] & 0x80 != 0)
        }
        return nil
    }
}
