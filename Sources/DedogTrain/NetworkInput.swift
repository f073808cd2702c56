import DedogImage
import DedogNN

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
        let p = Preprocessing(input)
        return (try p.tensor(image) + (mirrored ? p.tensor(image, mirrored: true) : []), mirrored ? 2 : 1)
    }
}
