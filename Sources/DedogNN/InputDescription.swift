/// What a backbone takes as its input, as its model file describes it: the photo's shorter side resized to
/// `resizeShorterSide`, the centre `cropSize`×`cropSize` taken, then x = (pixel − mean) / std per channel.
///
/// The network owns this description; the image module only carries it out (`Dedog`'s classifier and the
/// trainer turn it into `DedogImage.Preprocessing`). It is checked once, when a model file is read
/// (`problem`), so every description a loaded model holds can be used as it is. In the model file's JSON it is a
/// backbone's `preprocessing`. The defaults are EfficientNet-Lite0's: shorter side 256, crop 224,
/// x = (pixel − 127) / 128.
public struct InputDescription: Codable, Sendable, Equatable {
    public var resizeShorterSide: Int
    public var cropSize: Int
    /// Per channel (R, G, B): subtracted from the 0–255 pixel value.
    public var mean: [Float]
    /// Per channel (R, G, B): the difference is divided by this.
    public var std: [Float]

    public init(resizeShorterSide: Int = 256, cropSize: Int = 224,
                mean: [Float] = [127, 127, 127], std: [Float] = [128, 128, 128]) {
        self.resizeShorterSide = resizeShorterSide
        self.cropSize = cropSize
        self.mean = mean
        self.std = std
    }

    /// The same view at a crop `pixels` larger: the resize grows in proportion, so the photo is seen the same but
    /// at a higher resolution (objects appear larger to the network).
    public func enlarged(by pixels: Int) -> InputDescription {
        var d = self
        d.cropSize = cropSize + pixels
        d.resizeShorterSide = Int((Double(d.cropSize) * Double(resizeShorterSide) / Double(max(1, cropSize))).rounded())
        return d
    }

    /// The first field the engine cannot take: its name (after `preprocessing.`), its value and what it must be.
    /// Nil when every field can be used.
    public var problem: (field: String, value: String, requirement: String)? {
        func list(_ xs: [Float]) -> String { "[" + xs.map { "\($0)" }.joined(separator: ", ") + "]" }
        let sizes = EfficientNetLite.inputSizes
        if !sizes.contains(cropSize) {
            return ("cropSize", "\(cropSize)", "between \(sizes.lowerBound) and \(sizes.upperBound) pixels")
        }
        if resizeShorterSide < cropSize || resizeShorterSide > 4 * cropSize {
            return ("resizeShorterSide", "\(resizeShorterSide)", "at least the crop (\(cropSize)) and at most 4 times it")
        }
        if mean.count != 3 || !mean.allSatisfy(\.isFinite) { return ("mean", list(mean), "3 finite numbers (R, G, B)") }
        if std.count != 3 || !std.allSatisfy({ $0.isFinite && $0 > 0 }) {
            return ("std", list(std), "3 positive finite numbers (R, G, B)")
        }
        return nil
    }
}
