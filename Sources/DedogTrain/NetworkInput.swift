import DedogImage
import DedogNN
import DedogBreedModel

extension Preprocessing {
    /// The image operations that make a network's input as `input` describes it.
    public init(_ input: InputDescription) {
        self.init(resizeShorterSide: input.resizeShorterSide, cropSize: input.cropSize, mean: input.mean, std: input.std)
        fit = switch input.fit {
        case .crop: .crop
        case .pad: .pad
        case .squeeze: .squeeze
        }
    }
}

extension EfficientNetLite {
    /// This network's input for `image`: its centre crop, then the crop of its mirror image when `mirrored`
    /// (logits are averaged over the views); `views` is the batch to run.
    public func inputTensor(for image: RGBImage, mirrored: Bool) throws(ImageError) -> (tensor: [Float], views: Int) {
        let p = Preprocessing(input), views = mirrored ? 2 : 1, count = views * 3 * p.cropSize * p.cropSize
        // Both views written in place into one array (no copies of fresh pages to join them).
        var failure: ImageError?
        let tensor = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(ImageError) {
                try p.writeViews(image, mirrored: mirrored, into: buffer)
                initialized = count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return (tensor, views)
    }
}
