import DedogConcurrency
import Foundation
import DedogImage
import DedogNN
import DedogBreedModel

/// Measures the ranges of a backbone's activations on photos (`ActivationRanges`): what its 8-bit layers need.
/// Each photo is prepared as the backbone's input says and run through the float layers one by one; photos that
/// cannot be read are skipped and counted.
public enum ActivationCalibration {
    /// How many photos calibration takes when there are more (the peer's static quantization in
    /// `scripts/bench-engine` uses as many).
    public static let defaultPhotos = 100
    /// How ranges are taken from the values (see `ActivationRanges.method`).
    public static let defaultMethod = "min-max"

    /// At most `count` of `urls`, evenly spaced, so that photos sorted by class give every class a share.
    public static func spread(_ urls: [URL], count: Int) -> [URL] {
        guard urls.count > count, count > 0 else { return urls }
        return (0..<count).map { urls[$0 * urls.count / count] }
    }

    /// The activation ranges of `network` on `photos`, on `threads` threads; how many photos could not be used.
    /// `input`: the photos prepared this way instead of as the network's own input says (training writes the
    /// input classify will use); `perChannel`: a range per channel instead of per tensor (see `ActivationRanges`).
    public static func ranges(of network: EfficientNetLite, photos: [URL], threads: Int, kernels: KernelSet = .best,
                              input: InputDescription? = nil, method: String = defaultMethod,
                              perChannel: Bool = false) throws(TrainError) -> (ranges: ActivationRanges, skipped: Int) {
        let input = input ?? network.input
        let decoder = ImageDecoder(options: .init(minimumShorterSide: input.resizeShorterSide))
        let preprocessing = Preprocessing(input)
        let workers = max(1, min(threads, photos.count))
        let parts = parallelMap(workers, threads: workers) { w -> Result<(ActivationStatistics, Int), ModelError> in
            let session = network.makeSession(threads: 1, kernels: kernels, precision: .fp32)
            var statistics = ActivationStatistics(perChannel: perChannel), skipped = 0
            for i in stride(from: w, to: photos.count, by: workers) {
                let tensor: [Float]
                do throws(ImageError) {
                    tensor = try preprocessing.tensor(decoder.decode(decoder.read(photos[i]), name: photos[i].path))
                } catch {
                    skipped += 1
                    continue
                }
                do throws(ModelError) {
                    try session.observeActivations(tensor, batch: 1, height: input.cropSize, width: input.cropSize,
                                                   into: &statistics)
                } catch {
                    return .failure(error)
                }
            }
            return .success((statistics, skipped))
        }
        var all = ActivationStatistics(perChannel: perChannel), skipped = 0
        for part in parts {
            switch part {
            case let .success((statistics, s)):
                all.merge(statistics)
                skipped += s
            case let .failure(error):
                throw .model(error)
            }
        }
        guard all.photos > 0 else {
            throw .datasetTooSmall(path: photos.first?.deletingLastPathComponent().path ?? "",
                                   detail: "none of the \(photos.count) calibration photos could be read")
        }
        return (all.ranges(method: method), skipped)
    }
}
