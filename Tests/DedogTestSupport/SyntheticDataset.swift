import Foundation

/// A tiny dataset made in the test: three classes of generated pictures that a frozen ImageNet backbone
/// tells apart easily (red discs, green horizontal stripes, blue checkerboards), 8 of each, with varied
/// positions, sizes and noise; plus one corrupt file.
public struct SyntheticDataset {
    public let root: URL

    /// `folders` renames the three classes' folders (discs, stripes, checks), e.g. to breed names.
    public init(name: String, folders: [String] = ["discs", "stripes", "checks"]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-train-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: root)
        var rng = SeededNoise(state: 11)
        for c in 0..<3 {
            let folder = root.appendingPathComponent(folders[c])
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for i in 0..<8 {
                let size = 96
                var px = [UInt8](repeating: 0, count: size * size * 3)
                let cx = 30 + rng.next(36), cy = 30 + rng.next(36), r = 14 + rng.next(14), period = 6 + rng.next(6)
                for y in 0..<size {
                    for x in 0..<size {
                        let on: Bool
                        switch c {
                        case 0: on = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r
                        case 1: on = (y / period) % 2 == 0
                        default: on = ((x / period) + (y / period)) % 2 == 0
                        }
                        let base: [Int] = on ? [[230, 30, 30], [30, 200, 40], [40, 60, 230]][c] : [200, 200, 200]
                        for k in 0..<3 { px[(y * size + x) * 3 + k] = UInt8(max(0, min(255, base[k] + rng.next(31) - 15))) }
                    }
                }
                try PNGWriter.encode(width: size, height: size, rgb: px).write(to: folder.appendingPathComponent("\(i).png"))
            }
        }
        // A corrupt image and a non-image: the first is skipped and reported, the second ignored with a note.
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0]).write(to: root.appendingPathComponent("\(folders[0])/broken.png"))
        try Data("readme".utf8).write(to: root.appendingPathComponent("\(folders[1])/notes.txt"))
    }

    public func remove() { try? FileManager.default.removeItem(at: root) }
}

public struct SeededNoise {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(bound))
    }
}
