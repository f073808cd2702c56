// Pooled features of photos as classify computes them, for studies done outside dedog (scripts/experiments): each
// backbone's features of each photo's views (as is and mirrored where the model averages them), the views averaged.
// Not a test: it measures.
import DedogConcurrency
import DedogImage
@_spi(Testing) @_spi(Benchmarks) import Dedog
import Foundation

/// Writes `out.f32` (per photo, every backbone's 1280 features one after another, little-endian floats) and
/// `out.tsv` (per photo its path and "ok", or the error) for the photos `list` names, one path per line. With
/// `crops`, the features are those of the dog's crop instead: the detector's best box from its threshold, cut with its
/// margin as classify cuts a dog (`marginedCrop`); a photo where it finds none is "no box" in the index, zeros in the
/// features.
func dumpFeatures(model: URL, list: URL, out: URL, threads: Int, crops: Bool = false) throws {
    let paths = try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    let classifier = try Classifier(modelURL: model, configuration: .init(workers: threads, threadsPerWorker: 1))
    let width = 1280, backbones = classifier.info.backbones.count
    // nil: crops were asked for and the detector found no dog.
    let rows = parallelMap(paths.count, threads: threads) { i -> Result<[Float]?, ClassifierError> in
        Result { () throws(ClassifierError) -> [Float]? in
            let image: RGBImage
            do throws(ImageError) {
                image = try ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: URL(fileURLWithPath: paths[i]))
            } catch {
                throw .image(error)
            }
            var looked = image
            if crops {
                let threshold = classifier.model.detector?.description.apartThreshold ?? 1
                guard let best = try classifier.detections(in: image, minimumScore: threshold).first else { return nil }
                looked = marginedCrop(best.location, of: image)
            }
            return try classifier.features(of: looked).flatMap { views in
                let n = views.count / width
                return (0..<width).map { k in (0..<n).reduce(Float(0)) { $0 + views[$1 * width + k] } / Float(n) }
            }
        }
    }
    var data = Data(capacity: paths.count * backbones * width * 4)
    var index = ""
    for (path, row) in zip(paths, rows) {
        switch row {
        case let .success(values?):
            values.withUnsafeBytes { data.append(contentsOf: $0) }
            index += "\(path)\tok\n"
        case .success(nil):
            data.append(contentsOf: [UInt8](repeating: 0, count: backbones * width * 4))
            index += "\(path)\tno box\n"
        case let .failure(error):
            data.append(contentsOf: [UInt8](repeating: 0, count: backbones * width * 4))
            index += "\(path)\t\(error.description.replacingOccurrences(of: "\t", with: " "))\n"
        }
    }
    try data.write(to: out.appendingPathExtension("f32"))
    try index.write(to: out.appendingPathExtension("tsv"), atomically: true, encoding: .utf8)
}
