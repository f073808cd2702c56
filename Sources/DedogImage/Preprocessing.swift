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
    /// How a photo that is not square becomes the square crop.
    public var fit: Fit = .crop
    /// Widths are multiplied by this before the resize (training views only): 4/3 shows the photo 33 % wider,
    /// as a 4:3 photo looks beside the same one squeezed to a square. Not used by `squeeze`.
    public var horizontalStretch: Double = 1

    /// How a photo that is not square becomes the square the network sees.
    public enum Fit: String, Sendable, CaseIterable {
        /// The shorter side resized to `resizeShorterSide`, the centre cropped: the ends of a long photo are cut off.
        case crop
        /// The longer side resized to `resizeShorterSide` and the photo centred on a square of that side, the rest
        /// filled with the mean (zero after normalising); then the centre cropped: the whole photo is seen.
        case pad
        /// The photo stretched to a `resizeShorterSide` square, then the centre cropped.
        case squeeze
    }

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

    /// The size of the resized image before cropping, as Pillow computes it (floor of the longer side), for `crop`.
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

    /// Where a `width`×`height` photo lands before the crop: resized to `photo`, at `offset` on a `canvas` (the
    /// photo itself for `crop` and `squeeze`, a square for `pad`).
    public func layout(width: Int, height: Int) -> (photo: (width: Int, height: Int), canvas: (width: Int, height: Int),
                                                    offset: (x: Int, y: Int)) {
        let r = resizeShorterSide
        switch fit {
        case .crop:
            let size = resizedSize(width: width, height: height)
            return (size, size, (0, 0))
        case .squeeze:
            return ((r, r), (r, r), (0, 0))
        case .pad:
            // The longer side becomes r, the shorter in proportion (floored, as Pillow does).
            let w = Double(width) * horizontalStretch, h = Double(height)
            let photo = w >= h ? (r, max(1, min(r, Int(Double(r) * h / w)))) : (max(1, min(r, Int(Double(r) * w / h))), r)
            return (photo, (r, r), ((r - photo.0) / 2, (r - photo.1) / 2))
        }
    }

    /// The square the network sees, in the `width`×`height` photo's pixel coordinates (for the view that is not
    /// mirrored): where a point of the crop lies in the photo. With `pad` it reaches beyond the photo on the
    /// shorter side; with `squeeze` it is as long as the photo's sides allow, not square.
    public func window(width: Int, height: Int) -> (x: Double, y: Double, width: Double, height: Double) {
        let (photo, canvas, offset) = layout(width: width, height: height)
        let (left, top) = cropOrigin(canvas)
        let sx = Double(width) / Double(photo.width), sy = Double(height) / Double(photo.height)
        return (Double(left - offset.x) * sx, Double(top - offset.y) * sy, Double(cropSize) * sx, Double(cropSize) * sy)
    }

    /// Where the centre crop starts on a canvas: Python's round(), half to even, as in torchvision/Pillow centre
    /// crops.
    private func cropOrigin(_ canvas: (width: Int, height: Int)) -> (left: Int, top: Int) {
        (Int((Double(canvas.width - cropSize) / 2).rounded(.toNearestOrEven)),
         Int((Double(canvas.height - cropSize) / 2).rounded(.toNearestOrEven)))
    }

    /// The resized, centre-cropped 8-bit image (`cropSize`×`cropSize`); `mirrored`: of the image mirrored left
    /// to right, made without mirroring the full-size image (which for a large PNG would copy hundreds of MB).
    /// Where `pad` leaves the crop without photo, its pixels are the mean, rounded.
    public func cropped(_ image: RGBImage, mirrored: Bool = false) throws(ImageError) -> RGBImage {
        try placed(image, mirrored: mirrored).crop
    }

    /// A rectangle of pixels.
    typealias Rect = (x: Int, y: Int, width: Int, height: Int)

    /// One view's window: the size the photo is resized to, the rectangle of the crop the photo covers (`content`;
    /// all of it unless `pad` added bars) and the same pixels' rectangle in the resized photo (`region`).
    private func window(_ image: RGBImage, mirrored: Bool) -> (photo: (width: Int, height: Int), content: Rect, region: Rect) {
        let (photo, canvas, offset) = layout(width: image.width, height: image.height)
        let origin = cropOrigin(canvas), top = origin.top
        let left = windowLeft(origin.left, photo: photo, canvas: canvas, offset: offset, mirrored: mirrored)
        // The part of the window the photo covers, in canvas coordinates (all of it but with `pad`).
        let x0 = max(left, offset.x), x1 = min(left + cropSize, offset.x + photo.width)
        let y0 = max(top, offset.y), y1 = min(top + cropSize, offset.y + photo.height)
        let content = (x: x0 - left, y: y0 - top, width: max(0, x1 - x0), height: max(0, y1 - y0))
        return (photo, content, (x0 - offset.x, y0 - offset.y, content.width, content.height))
    }

    /// Where a view's window starts on the canvas, from the centre crop's `left`. Mirrored: the window whose mirror
    /// image is the mirrored photo's window (with `pad`, the photo may sit a pixel off centre).
    private func windowLeft(_ left: Int, photo: (width: Int, height: Int), canvas: (width: Int, height: Int),
                            offset: (x: Int, y: Int), mirrored: Bool) -> Int {
        guard mirrored else { return left }
        return fit == .pad ? photo.width + 2 * offset.x - cropSize - left : canvas.width - cropSize - left
    }

    /// The view's crop from `source`: pixels of the resized photo, rows from the view's region's top and columns
    /// from `sourceX`. The photo's part is copied in (or is the source, when that is exactly the crop), the rest is
    /// the mean; `mirrored`, the crop is mirrored left to right, and so is its content rectangle.
    private func compose(content: Rect, region: Rect, source: RGBImage, sourceX: Int,
                         mirrored: Bool) throws(ImageError) -> (crop: RGBImage, content: Rect) {
        var content = content, crop: RGBImage
        if content == (0, 0, cropSize, cropSize) && sourceX == region.x && source.width == cropSize && source.height == cropSize {
            crop = source
        } else {
            let fill = mean.map { UInt8(clamping: Int($0.rounded())) }, count = cropSize * cropSize * 3
            crop = try RGBImage(width: cropSize, height: cropSize, pixels: [UInt8](unsafeUninitializedCapacity: count) { p, n in
                for i in stride(from: 0, to: count, by: 3) { (p[i], p[i + 1], p[i + 2]) = (fill[0], fill[1], fill[2]) }
                n = count
            })
            for row in 0..<content.height {
                let from = (row * source.width + region.x - sourceX) * 3, to = ((content.y + row) * cropSize + content.x) * 3
                crop.pixels.replaceSubrange(to..<(to + content.width * 3), with: source.pixels[from..<(from + content.width * 3)])
            }
        }
        if mirrored {
            crop = crop.mirrored()
            content.x = cropSize - content.x - content.width
        }
        return (crop, content)
    }

    /// The crop, and the rectangle of it the photo covers (all of it unless `pad` added bars).
    func placed(_ image: RGBImage, mirrored: Bool) throws(ImageError) -> (crop: RGBImage, content: Rect) {
        if let problem { throw .invalidArgument(detail: "preprocessing: \(problem)") }
        guard image.width > 0, image.height > 0 else { throw .invalidArgument(detail: "cannot preprocess an empty image") }
        // The window where the mirror image's would fall; only the small crop is mirrored.
        let view = window(image, mirrored: mirrored), r = view.region
        let source = try Resampler.resizedRegion(image, width: view.photo.width, height: view.photo.height,
                                                 left: r.x, top: r.y, regionWidth: r.width, regionHeight: r.height)
        return try compose(content: view.content, region: r, source: source, sourceX: r.x, mirrored: mirrored)
    }

    /// `write` of `image` and, when `mirrored`, of its mirror image after it (`output` then holds two tensors). The
    /// two views' windows are the same, or a pixel apart (a centred crop with an odd margin): the photo is resampled
    /// once, over both, and each view cut from that (the resampler's pixels do not depend on the region asked for),
    /// which halves the resampling and gives the same values.
    public func writeViews(_ image: RGBImage, mirrored: Bool, into output: UnsafeMutableBufferPointer<Float>) throws(ImageError) {
        let size = 3 * cropSize * cropSize, views = mirrored ? 2 : 1
        guard output.count >= views * size else {
            throw .invalidArgument(detail: "output holds \(output.count) floats, needs \(views * size)")
        }
        guard mirrored else {
            normalise(try placed(image, mirrored: false), into: output)
            return
        }
        if let problem { throw .invalidArgument(detail: "preprocessing: \(problem)") }
        guard image.width > 0, image.height > 0 else { throw .invalidArgument(detail: "cannot preprocess an empty image") }
        let first = window(image, mirrored: false), second = window(image, mirrored: true)
        let (a, b) = (first.region, second.region)
        let x = min(a.x, b.x), end = max(a.x + a.width, b.x + b.width)
        // Both regions on the same rows, side by side or overlapping (always, for these windows; the check keeps
        // the union from spanning a gap).
        guard a.y == b.y, a.height == b.height, end - x <= a.width + b.width else {
            normalise(try placed(image, mirrored: false), into: UnsafeMutableBufferPointer(rebasing: output[0..<size]))
            normalise(try placed(image, mirrored: true), into: UnsafeMutableBufferPointer(rebasing: output[size..<(2 * size)]))
            return
        }
        let source = try Resampler.resizedRegion(image, width: first.photo.width, height: first.photo.height,
                                                 left: x, top: a.y, regionWidth: end - x, regionHeight: a.height)
        normalise(try compose(content: first.content, region: a, source: source, sourceX: x, mirrored: false),
                  into: UnsafeMutableBufferPointer(rebasing: output[0..<size]))
        normalise(try compose(content: second.content, region: b, source: source, sourceX: x, mirrored: true),
                  into: UnsafeMutableBufferPointer(rebasing: output[size..<(2 * size)]))
    }

    /// Writes the normalised CHW tensor of `image` (`3 × cropSize × cropSize` floats) into `output`.
    public func write(_ image: RGBImage, mirrored: Bool = false, into output: UnsafeMutableBufferPointer<Float>) throws(ImageError) {
        let placed = try placed(image, mirrored: mirrored)
        let plane = cropSize * cropSize
        guard output.count >= 3 * plane else {
            throw .invalidArgument(detail: "output holds \(output.count) floats, needs \(3 * plane)")
        }
        normalise(placed, into: output)
    }

    /// (pixel − mean) / std per channel, planar, where the photo is; exactly 0 (the mean) where `pad` added bars.
    /// `output` holds 3 planes of cropSize² values.
    private func normalise(_ placed: (crop: RGBImage, content: (x: Int, y: Int, width: Int, height: Int)),
                           into output: UnsafeMutableBufferPointer<Float>) {
        let plane = cropSize * cropSize, c = placed.content
        // (v − mean) / std for each byte value v, computed once per channel: the same floats, a lookup per pixel.
        let table = (0..<3).map { channel in (0..<256).map { (Float($0) - mean[channel]) / std[channel] } }
        placed.crop.pixels.withUnsafeBufferPointer { px in
            for channel in 0..<3 {
                table[channel].withUnsafeBufferPointer { t in
                    let out = output.baseAddress! + channel * plane
                    out.update(repeating: 0, count: plane)
                    for y in stride(from: max(0, c.y), to: min(cropSize, c.y + c.height), by: 1) {
                        for x in stride(from: max(0, c.x), to: min(cropSize, c.x + c.width), by: 1) {
                            let i = y * cropSize + x
                            out[i] = t[Int(px[i * 3 + channel])]
                        }
                    }
                }
            }
        }
    }

    /// The normalised CHW tensor of `image`, or of its mirror image.
    public func tensor(_ image: RGBImage, mirrored: Bool = false) throws(ImageError) -> [Float] {
        let placed = try placed(image, mirrored: mirrored), count = 3 * cropSize * cropSize
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            normalise(placed, into: out)  // writes every value
            initialized = count
        }
    }
}
