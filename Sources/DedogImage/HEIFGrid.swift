/// The output sizes that a HEIF file's grid items declare, read from the boxes before libheif sees them.
///
/// Phones store photos as grids of tiles, and libheif allocates a grid's whole output before it decodes a tile. The
/// size it allocates comes from the grid item's own data, not from the `ispe` box that the image handle reports, so a
/// 1 kB file can declare a 64×48 image whose grid is 29289×25600 and make libheif allocate 2 GB (found by the image
/// fuzzer). `ImageDecoder` checks these sizes against its pixel limit first. Every offset is bounds-checked: a
/// malformed file yields fewer sizes, never a crash; libheif then reports the damage.
enum HEIFGrid {
    struct Size: Equatable { let width: Int; let height: Int }

    static func declaredSizes(_ bytes: [UInt8]) -> [Size] {
        guard let meta = boxes(bytes, in: 0..<bytes.count).first(where: { $0.type == "meta" }),
              meta.body.count >= 4 else { return [] }
        let children = boxes(bytes, in: (meta.body.lowerBound + 4)..<meta.body.upperBound)  // a full box
        guard let iinf = children.first(where: { $0.type == "iinf" }),
              let iloc = children.first(where: { $0.type == "iloc" }) else { return [] }
        let grids = gridItems(bytes, iinf: iinf.body)
        guard !grids.isEmpty else { return [] }
        let idat = children.first(where: { $0.type == "idat" })?.body
        var sizes: [Size] = []
        for (item, extents) in locations(bytes, iloc: iloc.body) where grids.contains(item) {
            guard let first = extents.first else { continue }
            let start: Int
            switch first.method {
            case 0: start = first.offset
            case 1:
                guard let idat else { continue }
                start = idat.lowerBound &+ first.offset
            default: continue
            }
            guard start >= 0, start <= bytes.count - 4 else { continue }
            let large = bytes[start + 1] & 1 != 0  // flags: 32-bit sizes
            let field = large ? 4 : 2
            guard let width = read(bytes, start + 4, field), let height = read(bytes, start + 4 + field, field) else {
                continue
            }
            sizes.append(Size(width: width, height: height))
        }
        return sizes
    }

    private struct Box { let type: String; let body: Range<Int> }

    private static func read(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard count > 0, count <= 8, at >= 0, at <= bytes.count - count else { return nil }
        return bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func boxes(_ bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound, found.count < 10_000 {
            guard var size = read(bytes, at, 4) else { break }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard let large = read(bytes, at + 8, 8), large >= 16 else { break }
                size = large
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            found.append(Box(type: type, body: (at + header)..<(at + size)))
            at += size
        }
        return found
    }

    /// Ids of the items of type `grid` in an `iinf` box body.
    private static func gridItems(_ bytes: [UInt8], iinf: Range<Int>) -> Set<Int> {
        guard iinf.count >= 8 else { return [] }
        let countSize = bytes[iinf.lowerBound] == 0 ? 2 : 4
        let entries = boxes(bytes, in: (iinf.lowerBound + 4 + countSize)..<iinf.upperBound)
        var ids = Set<Int>()
        for entry in entries where entry.type == "infe" && entry.body.count >= 4 {
            let version = bytes[entry.body.lowerBound]
            guard version >= 2 else { continue }
            let idSize = version == 2 ? 2 : 4
            let typeAt = entry.body.lowerBound + 4 + idSize + 2
            guard let id = read(bytes, entry.body.lowerBound + 4, idSize), typeAt + 4 <= entry.body.upperBound else {
                continue
            }
            if String(decoding: bytes[typeAt..<(typeAt + 4)], as: UTF8.self) == "grid" { ids.insert(id) }
        }
        return ids
    }

    /// Each item's extents from an `iloc` box body: construction method and absolute (method 0) or idat-relative
    /// (method 1) offset.
    private static func locations(_ bytes: [UInt8], iloc: Range<Int>) -> [(Int, [(method: Int, offset: Int)])] {
        var at = iloc.lowerBound
        guard let version = read(bytes, at, 1), let sizes = read(bytes, at + 4, 2) else { return [] }
        let offsetSize = sizes >> 12, lengthSize = sizes >> 8 & 15, baseSize = sizes >> 4 & 15
        let indexSize = version == 1 || version == 2 ? sizes & 15 : 0
        at += 6
        guard let count = read(bytes, at, version < 2 ? 2 : 4) else { return [] }
        at += version < 2 ? 2 : 4
        var items: [(Int, [(method: Int, offset: Int)])] = []
        for _ in 0..<min(count, 10_000) {
            guard let id = read(bytes, at, version < 2 ? 2 : 4) else { break }
            at += version < 2 ? 2 : 4
            var method = 0
            if version == 1 || version == 2 {
                guard let m = read(bytes, at, 2) else { break }
                method = m & 15
                at += 2
            }
            at += 2  // data reference index
            let base = baseSize > 0 ? read(bytes, at, baseSize) : 0
            at += baseSize
            guard let base, let extentCount = read(bytes, at, 2) else { break }
            at += 2
            var extents: [(method: Int, offset: Int)] = []
            for _ in 0..<extentCount {
                at += indexSize
                let offset = offsetSize > 0 ? read(bytes, at, offsetSize) : 0
                guard let offset else { break }
                extents.append((method, base &+ offset))
                at += offsetSize + lengthSize
            }
            guard at <= iloc.upperBound else { break }
            items.append((id, extents))
        }
        return items
    }
}
