/// Everything that can go wrong loading a catalogue; messages name the file and, for bad JSON, the path inside it.
public enum CatalogueError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    /// The catalogue shipped with dedog is in none of the places looked at.
    case notInstalled(searched: [String])
    /// Not JSON at all.
    case notJSON(file: String, detail: String)
    /// JSON, but a value is missing or of the wrong type at `path` (e.g. `breeds[3].height.min`).
    case invalid(file: String, path: String, detail: String)
    /// Well-formed, but inconsistent (duplicate ids, min > max, …).
    case inconsistent(file: String, detail: String)

    public var description: String {
        switch self {
        case let .unreadable(file, reason):
            return "\(file): cannot read the catalogue (\(reason))."
        case let .notInstalled(searched):
            return "breeds.json: the bundled catalogue is in none of \(searched.joined(separator: ", "))."
        case let .notJSON(file, detail):
            return "\(file): the catalogue is not valid JSON (\(detail))."
        case let .invalid(file, path, detail):
            return "\(file): invalid catalogue at \(path.isEmpty ? "the top level" : path): \(detail)."
        case let .inconsistent(file, detail):
            return "\(file): inconsistent catalogue: \(detail)."
        }
    }
}
