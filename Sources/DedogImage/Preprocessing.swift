/// How a photo becomes a network input: resize the shorter side, centre-crop, normalise per channel.
///
/// Every number is a value, not a constant: the network's input description (`DedogNN.InputDescription`, read
/// and checked with the model file) says what its weights expect, and this carries it out. The defaults are
/// EfficientNet-Lite0's: shorter side 256, centre crop 224, x = (pixel − 127) / 128.
public struct Preprocessing: Sendable, Equatable {
    public var resizeShorterSide: Int
    public var cropSize: Int
    /// Per channel (R, G, B): subtracted from the 0–255 pixel value.
    public var mean: [Float]
    /// Per channel (R, G, B): the difference is divided by this.
    public var std: [Float]
    /// Widths are multiplied by this before the resize (training views only): 4/3 shows the photo 33 % wider,
    /// as a 4:3 photo looks beside the same one squeezed to a square.
    public var horizontalStretch: Double = 1

    public init(resizeShorterSide: Int = 256, cropSize: Int = 224,
                mean: [Float] = [127, 127, 127], std: [Float] = [128, 128, 128]) {
        self.resizeShorterSide = resizeShorterSide
        self.cropSize = cropSize
        self.mean = mean
        self.std = std
    }

    /// Why these sizes cannot be cut from an image, or nil when they can. Which values suit a network (a
    /// positive std, a crop the engine takes) is the input description's to check, once, when the model is read.
    public var problem: String? {
        if cropSize <= 0 { return "crop size \(cropSize) must be positive" }
        if resizeShorterSide < cropSize {
            return "resize target \(resizeShorterSide) is smaller than the crop \(cropSize)"
        }
        if mean.count != 3 || std.count != 3 { return "mean and std need 3 values each (R, G, B)" }
        return nil
    }

    /// The size of the resized image before cropping, as Pillow computes it (floor of the longer side).
    public func resizedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        if horizontalStretch != 1 {
            let w = Double(width) * horizontalStretch, h = Double(height), r = Double(resizeShorterSide)
            return w <= h ? (resizeShorterSide, max(1, Int(r * h / w))) : (max(1, Int(r * w / h)), resizeShorterSide)
        }
        if width <= height {
            return (resizeShorterSide, max(1, resizeShorterSide * height / width))
        }
        return (max(1, resizeShorterSide * width / height), resizeShorterSide)
    }

    /// The resized, centre-cropped 8-bit image (`cropSize`×`cropSize`); `mirrored`: of the image mirrored left
    /// to right, made without mirroring the full-size image (which for a large PNG would copy hundreds of MB):
    /// the window is taken where the mirror image's would fall, and only the small crop is mirrored.
    public func cropped(_ image: RGBImage, mirrored: Bool = false) throws(ImageError) -> RGBImage {
        if let problem { throw .invalidArgument(detail: "preprocessing: \(problem)") }
        guard image.width > 0, image.height > 0 else { throw .invalidArgument(detail: "cannot preprocess an empty image") }
        let size = resizedSize(width: image.width, height: image.height)
        // Python's round(), half to even, as in torchvision/Pillow centre crops.
        var left = Int((Double(size.width - cropSize) / 2).rounded(.toNearestOrEven))
        let top = Int((Double(size.height - cropSize) / 2).rounded(.toNearestOrEven))
        if mirrored { left = size.width - cropSize - left }
        let crop = try Resampler.resizedRegion(image, width: size.width, height: size.height,
                                           left: left, top: top, regionWidth: cropSize, regionHeight: cropSize)
        return mirrored ? crop.mirrored() : crop
    }

    /// Writes the normalised CHW tensor of `image` (`3 × cropSize × cropSize` floats) into `output`.
    public func write(_ image: RGBImage, mirrored: Bool = false, into output: UnsafeMutableBufferPointer<Float>) throws(ImageError) {
        let crop = try cropped(image, mirrored: mirrored)
        let plane = cropSize * cropSize
        guard output.count >= 3 * plane else {
            throw .invalidArgument(detail: "output holds \(output.count) floats, needs \(3 * plane)")
        }
        normalise(crop, into: output)
    }

    /// (pixel − mean) / std per channel, planar; `crop` is cropSize² pixels and `output` holds 3 planes of it.
    private func normalise(_ crop: RGBImage, into output: UnsafeMutableBufferPointer<Float>) {
        let plane = cropSize * cropSize
        crop.pixels.withUnsafeBufferPointer { px in
            for c in 0..<3 {
                let m = mean[c], s = std[c]
                for i in 0..<plane {
                    output[c * plane + i] = (Float(px[i * 3 + c]) - m) / s
                }
            }
        }
    }

    /// The normalised CHW tensor of `image`, or of its mirror image.
    public func tensor(_ image: RGBImage, mirrored: Bool = false) throws(ImageError) -> [Float] {
        let crop = try cropped(image, mirrored: mirrored)
        var out = [Float](repeating: 0, count: 3 * cropSize * cropSize)
        out.withUnsafeMutableBufferPointer { normalise(crop, into: $0) }
        return out
    }
}
