/// The stored fields of a value that hold nothing, for tests that must see every field filled (a fixture that is to
/// check that a reader reads every field of a type fails here when a field is added to the type but not to it).
public enum EmptyFields {
    /// The paths under `value` (`path.field[index]…`) that hold a nil optional or an empty list or dictionary.
    public static func paths(in value: Any, path: String) -> [String] {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let child = mirror.children.first else { return [path] }
            return paths(in: child.value, path: path)
        case .collection, .dictionary, .set:
            if mirror.children.isEmpty { return [path] }
            return mirror.children.enumerated().flatMap { i, child in paths(in: child.value, path: "\(path)[\(i)]") }
        default:
            return mirror.children.flatMap { paths(in: $0.value, path: "\(path).\($0.label ?? "?")") }
        }
    }
}
