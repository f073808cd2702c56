/// Everything that can go wrong loading or using a model file. Each message names the file or tensor
/// and says what to do.
public enum ModelError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    /// The safetensors container itself is malformed (header length, JSON, offsets).
    case malformedHeader(file: String, detail: String)
    /// The `dedog.model` metadata is missing or invalid.
    case invalidMetadata(file: String, detail: String)
    /// A field of the model description holds a value dedog cannot use: `field` is its JSON path
    /// (`preprocessing.cropSize`), `value` what the file says, `requirement` what it must be.
    case invalidValue(file: String, field: String, value: String, requirement: String)
    case unsupportedVersion(file: String, version: Int, supported: Int)
    case unsupportedArchitecture(file: String, name: String)
    case missingTensor(file: String, name: String)
    case unexpectedTensor(file: String, name: String)
    case wrongShape(file: String, name: String, expected: [Int], found: [Int])
    case wrongDType(file: String, name: String, found: String)
    case nonFiniteValues(file: String, name: String)
    /// A head's label count disagrees with its weight matrix.
    case labelCountMismatch(file: String, head: String, labels: Int, outputs: Int)
    /// A model file could not be written; `reason` says why in the user's words (disk full, read-only, …).
    case cannotWrite(file: String, reason: String)
    /// Input of the wrong size was given to the network.
    case badInput(detail: String)
    /// A kernel wrote outside its output (caught by the guard zones of the safe entry points): a bug in dedog.
    case kernelOverrun(kernel: String, detail: String)
    /// A kernel set was asked for by a name that is no set's, or one this CPU cannot run.
    case unknownKernelSet(name: String, supported: [String])
    case unsupportedKernelSet(name: String, supported: [String])

    public var description: String {
        let fix = "Use a model file written by `dedog train` or scripts/convert-weights."
        switch self {
        case let .unreadable(file, reason):
            return "\(file): cannot read the model file (\(reason))."
        case let .malformedHeader(file, detail):
            return "\(file): not a valid safetensors file (\(detail)). \(fix)"
        case let .invalidMetadata(file, detail):
            return "\(file): the model description is invalid (\(detail)). \(fix)"
        case let .invalidValue(file, field, value, requirement):
            return "\(file): the model description's \(field) is \(value); it must be \(requirement). \(fix)"
        case let .unsupportedVersion(file, version, supported):
            return "\(file): model format version \(version) is newer than this dedog understands (\(supported)); update dedog."
        case let .unsupportedArchitecture(file, name):
            return "\(file): architecture \"\(name)\" is not supported (only \(Backbone.all.map(\.architecture).joined(separator: ", ")))."
        case let .missingTensor(file, name):
            return "\(file): tensor \"\(name)\" is missing. \(fix)"
        case let .unexpectedTensor(file, name):
            return "\(file): tensor \"\(name)\" is not part of the model; the file does not match its architecture. \(fix)"
        case let .wrongShape(file, name, expected, found):
            return "\(file): tensor \"\(name)\" has shape \(found), expected \(expected). \(fix)"
        case let .wrongDType(file, name, found):
            return "\(file): tensor \"\(name)\" has dtype \(found), expected F32 or F16. \(fix)"
        case let .nonFiniteValues(file, name):
            return "\(file): tensor \"\(name)\" contains NaN or infinite values; the model is damaged. \(fix)"
        case let .labelCountMismatch(file, head, labels, outputs):
            return "\(file): the \(head) head has \(labels) labels but \(outputs) outputs. \(fix)"
        case let .cannotWrite(file, reason):
            return "\(file): cannot write the model file (\(reason))."
        case let .badInput(detail):
            return "invalid network input: \(detail)"
        case let .kernelOverrun(kernel, detail):
            return "the \(kernel) kernel wrote outside its output (\(detail)); this is a bug in dedog, please report it"
        case let .unknownKernelSet(name, supported):
            return "no kernel set is called \(name); this CPU runs \(supported.joined(separator: ", "))."
        case let .unsupportedKernelSet(name, supported):
            return "this CPU cannot run the \(name) kernels; it runs \(supported.joined(separator: ", "))."
        }
    }
}
