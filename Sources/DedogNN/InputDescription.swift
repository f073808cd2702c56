/// What a backbone takes as its input, as its model file describes it: the photo made square as `fit` says
/// (its shorter side resized to `resizeShorterSide` and the centre `cropSize`×`cropSize` taken, by default), then
/// x = (pixel − mean) / std per channel.
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
    /// How a photo that is not square becomes the network's square. Absent in files made before dedog knew
    /// other fits: those crop.
    public var fit: Fit

    /// How a photo that is not square becomes the square the network sees.
    public enum Fit: String, Codable, Sendable, CaseIterable {
        /// The shorter side resized, the centre cropped (as ImageNet networks are evaluated): a long photo's ends
        /// are cut off.
        case crop
        /// Padded to a square with the mean (zero after normalising), then resized and centre-cropped: the whole
        /// photo is seen.
        case pad
        /// Stretched to a square, then resized and centre-cropped (as the shared Stanford Dogs copy was made).
        case squeeze
    }

    public init(resizeShorterSide: Int = 256, cropSize: Int = 224,
                mean: [Float] = [127, 127, 127], std: [Float] = [128, 128, 128], fit: Fit = .crop) {
        self.resizeShorterSide = resizeShorterSide
        self.cropSize = cropSize
        self.mean = mean
        self.std = std
        self.fit = fit
    }

    private enum CodingKeys: String, CodingKey { case resizeShorterSide, cropSize, mean, std, fit }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(resizeShorterSide: try c.decode(Int.self, forKey: .resizeShorterSide),
                  cropSize: try c.decode(Int.self, forKey: .cropSize), mean: try c.decode([Float].self, forKey: .mean),
                  std: try c.decode([Float].self, forKey: .std), fit: try c.decodeIfPresent(Fit.self, forKey: .fit) ?? .crop)
    }

    /// `fit` is written only when it is not `crop`, so files that crop read the same in every dedog.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(resizeShorterSide, forKey: .resizeShorterSide)
        try c.encode(cropSize, forKey: .cropSize)
        try c.encode(mean, forKey: .mean)
        try c.encode(std, forKey: .std)
        if fit != .crop { try c.encode(fit, forKey: .fit) }
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
