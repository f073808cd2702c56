import DedogImage
import Foundation

/// Photos whose dogs are at known places: the shared Stanford Dogs test photos in their true proportions (their
/// boxes from boxes.tsv), side by side; and any photo stored turned, with the EXIF orientation that turns it back.
public enum DogPhotos {
    /// A box in a photo's pixels.
    public typealias Box = (x: Int, y: Int, width: Int, height: Int)

    /// Two test-split photos of one dog each, a Samoyed and a Staffordshire Bull Terrier, for the two-dog tests, and
    /// their breeds' names in English and Czech (the catalogue's).
    public static let testPair = ["n02111889-Samoyed/n02111889_6425.jpg", "n02093256-Staffordshire_bullterrier/n02093256_3323.jpg"]
    public static let testPairNames = (en: ["Samoyed", "Staffordshire Bull Terrier"], cs: ["samojed", "stafordšírský bullterier"])

    /// A photo made here, its dogs' boxes, and their breeds (the Stanford class folders), left to right.
    public struct Made {
        public var image: RGBImage
        public var boxes: [Box]
        public var breeds: [String]
    }

    /// Each shared Stanford photo's split, original size and its dogs' boxes (x0, y0, x1, y1), from boxes.tsv.
    static let table = Shared { () throws -> [String: (split: String, width: Int, height: Int, boxes: [[Double]])] in
        let text = try String(contentsOf: SharedData.stanfordDogs.appendingPathComponent("boxes.tsv"), encoding: .utf8)
        var rows: [String: (split: String, width: Int, height: Int, boxes: [[Double]])] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 6, let w = Int(f[2]), let h = Int(f[3]) else { continue }
            rows[f[0]] = (f[1], w, h, f[5].split(separator: ";").map { $0.split(separator: ",").compactMap { Double($0) } })
        }
        return rows
    }

    /// Stanford photo `path`'s split and how many dogs boxes.tsv boxes in it; nil for a photo it does not list.
    public static func boxed(_ path: String) throws -> (split: String, dogs: Int)? {
        try table.value[path].map { ($0.split, $0.boxes.count) }
    }

    /// Stanford photo `path` (e.g. `n02110806-basenji/n02110806_4216.jpg`) restored to its original proportions
    /// at `height` pixels high, with its dogs' boxes there.
    public static func restored(_ path: String, height: Int) throws -> (image: RGBImage, boxes: [Box]) {
        guard let row = try table.value[path] else { throw ImageError.invalidArgument(detail: "\(path) is not in boxes.tsv") }
        let square = try ImageDecoder().decode(contentsOf: SharedData.stanfordDogs.appendingPathComponent(path))
        let width = max(1, Int((Double(row.width) * Double(height) / Double(row.height)).rounded()))
        let image = try Resampler.resized(square, width: width, height: height)
        let sx = Double(width) / Double(row.width), sy = Double(height) / Double(row.height)
        let boxes = row.boxes.map { b -> Box in
            let x = Int((b[0] * sx).rounded()), y = Int((b[1] * sy).rounded())
            return (x, y, Int((b[2] * sx).rounded()) - x, Int((b[3] * sy).rounded()) - y)
        }
        return (image, boxes)
    }

    /// Stanford photos `paths` (one dog each), restored to their proportions at `height` pixels and placed side
    /// by side, left to right.
    public static func sideBySide(_ paths: [String], height: Int = 400) throws -> Made {
        let parts = try paths.map { try restored($0, height: height) }
        let width = parts.reduce(0) { $0 + $1.image.width }
        var pixels = [UInt8](repeating: 0, count: width * height * 3), boxes: [Box] = [], offset = 0
        for part in parts {
            let w = part.image.width
            for row in 0..<height {
                let to = (row * width + offset) * 3
                pixels.replaceSubrange(to..<(to + w * 3), with: part.image.pixels[(row * w * 3)..<((row + 1) * w * 3)])
            }
            boxes += part.boxes.map { ($0.x + offset, $0.y, $0.width, $0.height) }
            offset += w
        }
        return Made(image: try RGBImage(width: width, height: height, pixels: pixels), boxes: boxes,
                    breeds: paths.map { String($0.split(separator: "/")[0]) })
    }

    /// Stanford photos `paths` (one dog each), each cut to its dog's box and a margin of `margin` of the box's side,
    /// at `height` pixels, placed left to right so that each dog's box overlaps the one before by `overlap` of the
    /// narrower box's width (the later cut pasted over the earlier): dogs close together, their boxes overlapping.
    public static func closeTogether(_ paths: [String], height: Int = 400, margin: Double = 0.08,
                                     overlap: Double = 0.05) throws -> Made {
        var cuts: [(image: RGBImage, box: Box)] = []
        for path in paths {
            let (photo, boxes) = try restored(path, height: height)
            let b = boxes[0], mx = Int(Double(b.width) * margin), my = Int(Double(b.height) * margin)
            let x0 = max(0, b.x - mx), y0 = max(0, b.y - my)
            let x1 = min(photo.width, b.x + b.width + mx), y1 = min(photo.height, b.y + b.height + my)
            let cut = try photo.cropped(left: x0, top: y0, width: x1 - x0, height: y1 - y0)
            let scale = Double(height) / Double(cut.height), width = max(1, Int((Double(cut.width) * scale).rounded()))
            let box = (Int((Double(b.x - x0) * scale).rounded()), Int((Double(b.y - y0) * scale).rounded()),
                       Int((Double(b.width) * scale).rounded()), Int((Double(b.height) * scale).rounded()))
            cuts.append((try Resampler.resized(cut, width: width, height: height), box))
        }
        // Each cut's left edge on the canvas: its box starts `overlap` before the previous box's right side.
        var lefts = [0]
        for i in 1..<cuts.count {
            let previous = cuts[i - 1], narrower = min(previous.box.width, cuts[i].box.width)
            let boxRight = lefts[i - 1] + previous.box.x + previous.box.width
            lefts.append(max(0, boxRight - Int(Double(narrower) * overlap) - cuts[i].box.x))
        }
        let width = zip(lefts, cuts).map { $0 + $1.image.width }.max() ?? 1
        var pixels = [UInt8](repeating: 127, count: width * height * 3)
        for (left, cut) in zip(lefts, cuts) {
            let w = cut.image.width
            for row in 0..<height {
                let to = (row * width + left) * 3
                pixels.replaceSubrange(to..<(to + w * 3), with: cut.image.pixels[(row * w * 3)..<((row + 1) * w * 3)])
            }
        }
        return Made(image: try RGBImage(width: width, height: height, pixels: pixels),
                    boxes: zip(lefts, cuts).map { ($0 + $1.box.x, $1.box.y, $1.box.width, $1.box.height) },
                    breeds: paths.map { String($0.split(separator: "/")[0]) })
    }

    /// `upright` as a JPEG whose pixels are stored turned, with EXIF orientation `orientation` (1–8) saying how to
    /// turn them back: a viewer (and dedog) that applies the tag shows `upright`.
    public static func jpeg(_ upright: RGBImage, orientation: Int) throws -> [UInt8] {
        // The turn that undoes each orientation's: 6 and 8 undo each other, the others undo themselves.
        let inverse = [6: 8, 8: 6][orientation] ?? orientation
        guard let turn = EXIFOrientation(rawValue: inverse) else { throw ImageError.invalidArgument(detail: "orientation \(orientation)") }
        let jpeg = try JPEGEncoder.encode(turn.applied(to: upright), quality: 92)
        // APP1 "Exif", a little-endian TIFF header and one IFD holding Orientation (0x0112, SHORT, 1 value).
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0, 0, 0,
                             UInt8(orientation), 0, 0, 0, 0, 0, 0, 0]
        let payload = Array("Exif\0\0".utf8) + tiff, length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + jpeg.dropFirst(2)
    }

    /// The boxes (`location`) of an answer's `dogs`, as JSON and the API give them, left to right (dogs without one
    /// left out; a field missing from one gives a box that matches nothing).
    public static func boxes(ofDogs dogs: [[String: Any]]) -> [Box] {
        dogs.compactMap { $0["location"] as? [String: Any] }
            .map { ($0["x"] as? Int ?? -1, $0["y"] as? Int ?? -1, $0["width"] as? Int ?? 0, $0["height"] as? Int ?? 0) }
            .sorted { $0.x < $1.x }
    }

    /// Intersection over union of two boxes.
    public static func overlap(_ a: Box, _ b: Box) -> Double {
        let w = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
        let h = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
        let union = a.width * a.height + b.width * b.height - w * h
        return union > 0 ? Double(w * h) / Double(union) : 0
    }
}
