import DedogNN

/// Everything that can stop training or evaluation. Each message says what to do.
public enum TrainError: Error, Equatable, Sendable, CustomStringConvertible {
    case datasetUnreadable(path: String, reason: String)
    /// Fewer than two classes with images, or a class without any training image.
    case datasetTooSmall(path: String, detail: String)
    case splitFile(path: String, line: Int, detail: String)
    case cache(path: String, reason: String)
    /// The run would need more memory than allowed; nothing was started.
    case memoryLimit(task: String, needed: Int, limit: Int)
    /// A model file (a base, the one resumed, or the one written back to check it) could not be used.
    case model(ModelError)
    /// The base models cannot be combined (too many backbones, one given twice).
    case baseModels(detail: String)
    /// A backbone would classify at `size` pixels, over the engine's `limit` (the test size increase is too large).
    case inputTooLarge(backbone: String, size: Int, limit: Int)
    case output(path: String, reason: String)
    /// The model has no breed head, or its labels do not match the dataset's classes.
    case labelsMismatch(detail: String)

    public var description: String {
        switch self {
        case let .datasetUnreadable(path, reason):
            return "\(path): cannot read the dataset (\(reason)). Give a folder with one sub-folder of images per class."
        case let .datasetTooSmall(path, detail):
            return "\(path): \(detail). Give a folder with one sub-folder of images per class, at least two classes."
        case let .splitFile(path, 0, detail):
            return "\(path): cannot use the split file: \(detail)."
        case let .splitFile(path, line, detail):
            return "\(path):\(line): \(detail). Each line must be `<class>/<file><TAB><class>`."
        case let .cache(path, reason):
            return "\(path): feature cache problem (\(reason))."
        case let .memoryLimit(task, needed, limit):
            return "\(task) needs about \((needed + (1 << 20) - 1) >> 20) MB of memory, over the limit of \(limit >> 20) MB."
        case let .model(error):
            return error.description
        case let .baseModels(detail):
            return detail
        case let .inputTooLarge(backbone, size, limit):
            return "\(backbone) would classify at \(size) pixels, over the engine's \(limit)."
        case let .output(path, reason):
            return "\(path): cannot write the model file (\(reason)); the previous file, if any, is untouched."
        case let .labelsMismatch(detail):
            return "the model does not fit this dataset: \(detail)."
        }
    }
}
