/// Photos a data set stretched to squares (the shared Stanford Dogs copy), given back their true proportions.
///
/// A model that learns from stretched squares learns stretched dogs, and real photos are not stretched: on the
/// shared Stanford photos restored to their proportions, the bundled models trained on squares name fewer dogs
/// right (docs/accuracy.md). Restoring is one resize of the square to the photo's original size; classify then
/// prepares the result as any photo (padded to a square, the bars the mean).
public enum Proportions {
    /// `stretched`, a photo of `original` size resized to another shape, resized back to `original`: the stretch
    /// undone, with the detail lost in the first resize. Coordinates in the original photo (its dogs' boxes) are
    /// coordinates in the result.
    public static func restored(_ stretched: RGBImage, to original: PixelSize) throws(ImageError) -> RGBImage {
        guard original.width > 0, original.height > 0 else {
            throw .invalidArgument(detail: "cannot restore a photo to \(original.width)×\(original.height) pixels")
        }
        if stretched.width == original.width && stretched.height == original.height { return stretched }
        return try Resampler.resized(stretched, width: original.width, height: original.height)
    }
}
