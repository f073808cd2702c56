// The shared Stanford photos in their true proportions (issue 50): what the bundled models train, calibrate and are
// measured on. Not a test: it makes a data set.
import DedogConcurrency
import DedogImage
import Foundation

/// restore-proportions BOXES SOURCE OUT: for every row of BOXES (boxes.tsv: file, split, width, height, dogs,
/// boxes), the stretched photo SOURCE/file resized back to width × height (`Proportions.restored`) and written as
/// OUT/file, a JPEG of quality 95 (the stretched files are JPEGs; 95 adds little loss to theirs). Photos already
/// there are left as they are, so a second run only finishes the first. Writes OUT/boxes.tsv, the same rows: the
/// boxes are in the original photo's pixels, which are now the file's. Prints how many photos it wrote.
func restoreProportions(boxes: URL, source: URL, out: URL, threads: Int) throws {
    let text = try String(contentsOf: boxes, encoding: .utf8)
    let rows = text.split(separator: "\n").dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
    struct Row: Sendable { var file: String; var size: PixelSize }
    let photos = try rows.map { fields -> Row in
        guard fields.count >= 4, let w = Int(fields[2]), let h = Int(fields[3]) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(boxes.path): a row without file, split, width and height: \(fields.joined(separator: "\t"))"])
        }
        return Row(file: String(fields[0]), size: PixelSize(width: w, height: h))
    }
    let written = parallelMap(photos.count, threads: threads) { i -> Result<Bool, Error> in
        Result {
            let target = out.appendingPathComponent(photos[i].file)
            if FileManager.default.fileExists(atPath: target.path) { return false }
            let stretched = try ImageDecoder().decode(contentsOf: source.appendingPathComponent(photos[i].file))
            let restored = try Proportions.restored(stretched, to: photos[i].size)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Written whole under another name, then renamed: an interrupted run leaves no half photo behind.
            let partial = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).part")
            try Data(try JPEGEncoder.encode(restored, quality: 95)).write(to: partial)
            guard rename(partial.path, target.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            return true
        }
    }
    for (row, result) in zip(photos, written) { if case let .failure(error) = result { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(row.file): \(error)"]) } }
    try text.write(to: out.appendingPathComponent("boxes.tsv"), atomically: true, encoding: .utf8)
    print("restored \(written.filter { (try? $0.get()) == true }.count) photos, \(photos.count) in all")
}
