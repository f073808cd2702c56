import Foundation

/// Where the dogs are in a data set's photos: `boxes.tsv` beside the class folders, as Stanford Dogs' shared copy
/// has it. Tab-separated, a header line, then one line per photo:
///
/// ```
/// file	split	width	height	dogs	boxes
/// n02085620-Chihuahua/n02085620_10074.jpg	train	333	500	1	25,10,276,498
/// ```
///
/// `file` is the photo's path inside the data set; `split` is free text (dedog trains on the photos its own split
/// gives); `width` and `height` the size the boxes are measured in (a photo stored at another size has its boxes
/// scaled to it); `dogs` the number of boxes; `boxes` one `x0,y0,x1,y1` per dog in pixels, `;` between them, empty
/// for a photo without a dog.
public struct BoxesFile: Sendable {
    /// A dog's box, in the pixels of the size its entry gives.
    public struct Box: Sendable, Equatable {
        public var x0, y0, x1, y1: Double

        public init(x0: Double, y0: Double, x1: Double, y1: Double) {
            (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
        }

        /// This box in an image of `width` × `height` instead of `from`'s size.
        func scaled(from: (width: Int, height: Int), to width: Int, _ height: Int) -> Box {
            let sx = Double(width) / Double(from.width), sy = Double(height) / Double(from.height)
            return Box(x0: x0 * sx, y0: y0 * sy, x1: x1 * sx, y1: y1 * sy)
        }
    }

    public struct Entry: Sendable {
        public var split: String
        public var width: Int
        public var height: Int
        public var boxes: [Box]

        public init(split: String, width: Int, height: Int, boxes: [Box]) {
            (self.split, self.width, self.height, self.boxes) = (split, width, height, boxes)
        }
    }

    /// By photo path inside the data set.
    public var entries: [String: Entry]
    public let file: String

    /// The name dedog looks for in a data set's folder.
    public static let fileName = "boxes.tsv"

    public init(contentsOf url: URL) throws(TrainError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .boxesFile(path: url.path, line: 0, detail: "cannot read it (\(error.localizedDescription))")
        }
        try self.init(parsing: String(decoding: data, as: UTF8.self), file: url.path)
    }

    public init(parsing text: String, file: String) throws(TrainError) {
        self.file = file
        entries = [:]
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let header = lines.first, header.split(separator: "\t", omittingEmptySubsequences: false).prefix(6)
                .elementsEqual(["file", "split", "width", "height", "dogs", "boxes"]) else {
            throw .boxesFile(path: file, line: 1, detail: "the first line must be the header `file, split, width, height, dogs, boxes` (tab-separated)")
        }
        for (i, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            func bad(_ detail: String) -> TrainError { .boxesFile(path: file, line: i + 1, detail: detail) }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 6 || (fields.count == 5 && fields[4] == "0") else {
                throw bad("\(fields.count) fields, not 6")
            }
            guard let width = Int(fields[2]), let height = Int(fields[3]), width > 0, height > 0 else {
                throw bad("width and height must be positive whole numbers")
            }
            guard let dogs = Int(fields[4]), dogs >= 0 else { throw bad("dogs must be a whole number, 0 or more") }
            let parts = fields.count == 6 ? fields[5].split(separator: ";") : []
            guard parts.count == dogs else { throw bad("\(dogs) dogs but \(parts.count) boxes") }
            var boxes: [Box] = []
            for part in parts {
                let v = part.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                // Annotations reach a pixel or more past the photo's edge now and then: clipped to it.
                guard v.count == 4, v.allSatisfy(\.isFinite), v[0] < v[2], v[1] < v[3] else {
                    throw bad("box `\(part)` must be x0,y0,x1,y1 with x0 < x1 and y0 < y1")
                }
                let box = Box(x0: max(0, v[0]), y0: max(0, v[1]), x1: min(Double(width), v[2]), y1: min(Double(height), v[3]))
                guard box.x0 < box.x1, box.y0 < box.y1 else { throw bad("box `\(part)` lies outside the \(width)×\(height) photo") }
                boxes.append(box)
            }
            entries[String(fields[0])] = Entry(split: String(fields[1]), width: width, height: height, boxes: boxes)
        }
    }
}
