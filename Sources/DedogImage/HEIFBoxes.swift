/// What libheif 1.15 would trust in a HEIF file's boxes, read before it sees them: the output sizes grid and overlay
/// items declare, and whether derived images (grids, overlays, identities) refer to each other in a loop.
///
/// Phones store photos as grids of tiles, and libheif allocates a grid's whole output before it decodes a tile. The
/// size it allocates comes from the grid item's own data, not from the `ispe` box that the image handle reports, so a
/// 1 kB file can declare a 64×48 image whose grid is 26482×26980 and make libheif allocate 2 GB (found by the image
/// fuzzer); an overlay's canvas the same (a grid's tile turned into an overlay of 21506×32504, found by the fuzzer
/// from the grid seeds). `ImageDecoder` checks these sizes against its pixel limit first. Every offset is bounds-checked: a
/// malformed file yields fewer sizes, never a crash; libheif then reports the damage.
///
/// The file's boxes are walked once, when the value is made; `HEIFDecoder` asks it three questions before libheif
/// runs: whether the file is cut short, whether derived images loop, and what sizes grids and overlays declare.
struct HEIFBoxes {
    struct Size: Equatable { let width: Int; let height: Int }

    let bytes: [UInt8]
    /// The type of the top-level box that runs past the end of the file (a file cut short), if any. libheif reports
    /// a missing box instead ("No 'meta' box"), which would read as damage.
    let cutShort: String?
    /// The boxes inside the file's `meta` box (a full box), or none.
    let meta: [Box]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let (top, cutShort) = Self.boxes(bytes, in: 0..<bytes.count)
        self.cutShort = cutShort
        if let meta = top.first(where: { $0.type == "meta" }), meta.body.count >= 4 {
            self.meta = Self.boxes(bytes, in: (meta.body.lowerBound + 4)..<meta.body.upperBound).found
        } else {
            self.meta = []
        }
    }

    /// Whether `dimg` references (which make an item from other items: a grid from its tiles, an overlay, an
    /// identity transform) lead from an item back to itself, or through more than `depth` levels. libheif 1.15
    /// follows them without end: a grid naming itself as its tile overflowed the stack, starting decoding threads
    /// at every level (found by the fuzzer). Real files nest one level (a grid of coded tiles), at most two (an
    /// identity transform of a grid). The references are read as libheif reads them (see
    /// `derivedImageSources`), whatever the items' types, so that no reading of the file libheif could take
    /// escapes the check.
    func hasDerivationLoop(depth: Int = 2) -> Bool {
        guard let iref = meta.first(where: { $0.type == "iref" }) else { return false }
        let sources = Self.derivedImageSources(bytes, iref: iref.body)
        func loops(_ item: Int, _ path: [Int]) -> Bool {
            guard let parts = sources[item] else { return false }  // a coded image: the chain ends
            if path.contains(item) || path.count >= depth { return true }
            return parts.contains { loops($0, path + [item]) }
        }
        return sources.keys.contains { loops($0, []) }
    }

    /// The output size each grid and overlay item declares in its own data.
    func derivedSizes() -> [Size] {
        guard let iinf = meta.first(where: { $0.type == "iinf" }),
              let iloc = meta.first(where: { $0.type == "iloc" }) else { return [] }
        let derived = Self.itemTypes(bytes, iinf: iinf.body).filter { $0.value == "grid" || $0.value == "iovl" }
        guard !derived.isEmpty else { return [] }
        var sizes: [Size] = []
        for (item, extents) in Self.locations(bytes, iloc: iloc.body) {
            guard let type = derived[item], let first = extents.first else { continue }
            if type == "grid", let grid = gridData(at: first) {
                sizes.append(Size(width: grid.width, height: grid.height))
            } else if type == "iovl", let start = dataStart(first),
                      // ImageOverlay: version, flags, four 16-bit fill values, then the canvas.
                      let canvas = declaredSize(start, at: start + 10) {
                sizes.append(canvas)
            }
        }
        return sizes
    }

    /// Where an item's data starts in the file (method 0) or in `idat` (method 1), with room for a version and flags.
    private func dataStart(_ extent: (method: Int, offset: Int, length: Int, reference: Int)) -> Int? {
        let start: Int
        switch extent.method {
        case 0: start = extent.offset
        case 1:
            guard let idat = meta.first(where: { $0.type == "idat" })?.body else { return nil }
            start = idat.lowerBound &+ extent.offset
        default: return nil
        }
        guard start >= 0, start <= bytes.count - 4 else { return nil }
        return start
    }

    /// The width and height a grid's or an overlay's data (starting at `start`) declares at `at`: 16-bit, or
    /// 32-bit where bit 0 of its flags is set.
    private func declaredSize(_ start: Int, at: Int) -> Size? {
        let field = bytes[start + 1] & 1 != 0 ? 4 : 2
        guard let width = Self.read(bytes, at, field), let height = Self.read(bytes, at + field, field) else { return nil }
        return Size(width: width, height: height)
    }

    /// The rows, columns and output size of the grid whose data starts at `extent` (in `idat` or the file).
    func gridData(at extent: (method: Int, offset: Int, length: Int, reference: Int)) -> (rows: Int, columns: Int, width: Int, height: Int)? {
        // ImageGrid: version, flags, rows - 1, columns - 1, then the output size.
        guard let start = dataStart(extent), let size = declaredSize(start, at: start + 4) else { return nil }
        return (Int(bytes[start + 2]) + 1, Int(bytes[start + 3]) + 1, size.width, size.height)
    }

    struct Box { let type: String; let body: Range<Int> }

    static func read(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard count > 0, count <= 8, at >= 0, at <= bytes.count - count else { return nil }
        return bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The boxes in `range`, in order, and the type of a box that runs past the end of the range, if the walk
    /// stopped at one ("?" for a header cut in two). A size of 0 runs to the end; 1 is followed by a 64-bit size.
    /// A box too small for its own header ends the walk without a cut: libheif reports that as damage.
    static func boxes(_ bytes: [UInt8], in range: Range<Int>) -> (found: [Box], cutShort: String?) {
        var found: [Box] = []
        var at = range.lowerBound
        while at < range.upperBound, found.count < 10_000 {
            guard at + 8 <= range.upperBound, var size = read(bytes, at, 4) else { return (found, "?") }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard let large = read(bytes, at + 8, 8), at + 16 <= range.upperBound else { return (found, type) }
                guard large >= 0 else { return (found, type) }  // beyond Int.max: far past any end
                size = large
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header else { return (found, nil) }
            guard size <= range.upperBound - at else { return (found, type) }
            found.append(Box(type: type, body: (at + header)..<(at + size)))
            at += size
        }
        return (found, nil)
    }

    /// Each item's type (`hvc1`, `av01`, `grid`, `Exif`, …) from an `iinf` box body.
    static func itemTypes(_ bytes: [UInt8], iinf: Range<Int>) -> [Int: String] {
        guard iinf.count >= 8 else { return [:] }
        let countSize = bytes[iinf.lowerBound] == 0 ? 2 : 4
        let entries = boxes(bytes, in: (iinf.lowerBound + 4 + countSize)..<iinf.upperBound).found
        var types: [Int: String] = [:]
        for entry in entries where entry.type == "infe" && entry.body.count >= 4 {
            let version = bytes[entry.body.lowerBound]
            guard version >= 2 else { continue }
            let idSize = version == 2 ? 2 : 4
            let typeAt = entry.body.lowerBound + 4 + idSize + 2
            guard let id = read(bytes, entry.body.lowerBound + 4, idSize), typeAt + 4 <= entry.body.upperBound else {
                continue
            }
            types[id] = String(decoding: bytes[typeAt..<(typeAt + 4)], as: UTF8.self)
        }
        return types
    }

    /// For each item with `dimg` references, the items it is made from, read from an `iref` body as libheif 1.15
    /// reads it: one reference after another, each a box header, an item id, a count and that many ids, ignoring
    /// the size in the header (libheif does; a lying size must not hide a reference from this check).
    static func derivedImageSources(_ bytes: [UInt8], iref: Range<Int>) -> [Int: [Int]] {
        guard iref.count >= 4 else { return [:] }
        let idSize = bytes[iref.lowerBound] == 0 ? 2 : 4
        var sources: [Int: [Int]] = [:]
        var at = iref.lowerBound + 4
        while at + 8 <= iref.upperBound {
            let large = read(bytes, at, 4) == 1
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            at += large ? 16 : 8
            guard let from = read(bytes, at, idSize), let count = read(bytes, at + idSize, 2) else { break }
            at += idSize + 2
            var to: [Int] = []
            for _ in 0..<count {
                guard at + idSize <= iref.upperBound, let id = read(bytes, at, idSize) else { break }
                to.append(id)
                at += idSize
            }
            if type == "dimg" { sources[from, default: []] += to }
        }
        return sources
    }

    /// Each item's extents from an `iloc` box body: construction method, absolute (method 0) or idat-relative
    /// (method 1) offset, length (0: to the end), and data reference (0: this file).
    static func locations(_ bytes: [UInt8], iloc: Range<Int>) -> [(Int, [(method: Int, offset: Int, length: Int, reference: Int)])] {
        var at = iloc.lowerBound
        guard let version = read(bytes, at, 1), let sizes = read(bytes, at + 4, 2) else { return [] }
        let offsetSize = sizes >> 12, lengthSize = sizes >> 8 & 15, baseSize = sizes >> 4 & 15
        let indexSize = version == 1 || version == 2 ? sizes & 15 : 0
        at += 6
        guard let count = read(bytes, at, version < 2 ? 2 : 4) else { return [] }
        at += version < 2 ? 2 : 4
        var items: [(Int, [(method: Int, offset: Int, length: Int, reference: Int)])] = []
        for _ in 0..<min(count, 10_000) {
            guard let id = read(bytes, at, version < 2 ? 2 : 4) else { break }
            at += version < 2 ? 2 : 4
            var method = 0
            if version == 1 || version == 2 {
                guard let m = read(bytes, at, 2) else { break }
                method = m & 15
                at += 2
            }
            guard let reference = read(bytes, at, 2) else { break }
            at += 2
            let base = baseSize > 0 ? read(bytes, at, baseSize) : 0
            at += baseSize
            guard let base, let extentCount = read(bytes, at, 2) else { break }
            at += 2
            var extents: [(method: Int, offset: Int, length: Int, reference: Int)] = []
            for _ in 0..<extentCount {
                at += indexSize
                let offset = offsetSize > 0 ? read(bytes, at, offsetSize) : 0
                let length = lengthSize > 0 ? read(bytes, at + offsetSize, lengthSize) : 0
                guard let offset, let length else { break }
                extents.append((method, base &+ offset, length, reference))
                at += offsetSize + lengthSize
            }
            guard at <= iloc.upperBound else { break }
            items.append((id, extents))
        }
        return items
    }
}
