// The two inner feature maps a detection neck reads (`FeaturePyramidHead`), of network inputs made elsewhere, for
// training the neck outside dedog (scripts/train_dog_detector.py). Not a test: it computes.
import DedogConcurrency
@_spi(Testing) import DedogBreedModel
import DedogNN
import Foundation

/// Reads `input`: square crops as the network sees them (`size`×`size` RGB bytes each, one after another, already
/// resized and padded), runs backbone `backbone` of `model` on each as classify does (its precision, its
/// normalisation), and writes `out.fine.f16` and `out.coarse.f16`: per crop the stride-16 and stride-32 maps
/// (rows × columns × channels, IEEE halves), and `out.json` with their shapes.
func dumpPyramidFeatures(model: Model, backbone b: Int, input: URL, size: Int, out: URL, threads: Int) throws {
    let network = model.backbones[b]
    let (fineBlock, coarseBlock) = network.backbone.pyramidBlocks
    let bytes = try Data(contentsOf: input, options: .alwaysMapped)
    let crop = size * size * 3, count = bytes.count / crop
    let mean = network.input.mean, std = network.input.std
    FileManager.default.createFile(atPath: out.path + ".fine.f16", contents: nil)
    FileManager.default.createFile(atPath: out.path + ".coarse.f16", contents: nil)
    let fineFile = try FileHandle(forWritingTo: URL(fileURLWithPath: out.path + ".fine.f16"))
    let coarseFile = try FileHandle(forWritingTo: URL(fileURLWithPath: out.path + ".coarse.f16"))
    var shapes: (fine: [Int], coarse: [Int]) = ([], [])
    let chunk = 256
    for start in stride(from: 0, to: count, by: chunk) {
        let n = min(chunk, count - start)
        let parts = parallelMap(threads, threads: threads) { part -> (fine: [Float], coarse: [Float], shapes: [[Int]]) in
            let session = network.makeSession(threads: 1)
            var fine: [Float] = [], coarse: [Float] = [], shapes: [[Int]] = []
            for i in stride(from: part, to: n, by: threads) {
                var x = [Float](repeating: 0, count: crop)
                bytes.withUnsafeBytes { raw in
                    let p = raw.bindMemory(to: UInt8.self).baseAddress! + (start + i) * crop
                    for pixel in 0..<(size * size) {
                        for c in 0..<3 { x[c * size * size + pixel] = (Float(p[pixel * 3 + c]) - mean[c]) / std[c] }
                    }
                }
                let pass = try! session.featuresAndMaps(x, batch: 1, height: size, width: size,
                                                        keepingBlocks: [fineBlock, coarseBlock])
                fine += pass.blocks[0].values
                coarse += pass.blocks[1].values
                shapes = pass.blocks.map { [$0.rows, $0.columns, $0.channels] }
            }
            return (fine, coarse, shapes)
        }
        // Crops back in order: part p holds crops p, p + threads, …
        let fineSize = parts[0].fine.count / max(1, (n + threads - 1) / threads)
        let coarseSize = parts[0].coarse.count / max(1, (n + threads - 1) / threads)
        var fine = [Float16](), coarse = [Float16]()
        fine.reserveCapacity(n * fineSize)
        coarse.reserveCapacity(n * coarseSize)
        for i in 0..<n {
            let part = parts[i % threads], k = i / threads
            fine += part.fine[(k * fineSize)..<((k + 1) * fineSize)].map { Float16($0) }
            coarse += part.coarse[(k * coarseSize)..<((k + 1) * coarseSize)].map { Float16($0) }
        }
        fine.withUnsafeBytes { fineFile.write(Data($0)) }
        coarse.withUnsafeBytes { coarseFile.write(Data($0)) }
        shapes = (parts[0].shapes[0], parts[0].shapes[1])
        FileHandle.standardError.write("\r\(start + n) of \(count)".data(using: .utf8)!)
    }
    FileHandle.standardError.write("\n".data(using: .utf8)!)
    try fineFile.close()
    try coarseFile.close()
    let json = "{\"count\": \(count), \"fine\": \(shapes.fine), \"coarse\": \(shapes.coarse), \"fineBlock\": \(fineBlock), \"coarseBlock\": \(coarseBlock)}\n"
    try json.write(to: URL(fileURLWithPath: out.path + ".json"), atomically: true, encoding: .utf8)
}
