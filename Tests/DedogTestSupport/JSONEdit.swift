import Foundation

/// Edits of parsed JSON (`JSONSerialization` values), for tests that damage model descriptions.
public enum JSONEdit {
    /// `value` put at `path` (object keys, or array indices where the component is a number) inside `json`.
    public static func set(_ value: Any, at path: [String], in json: Any) -> Any {
        guard let key = path.first else { return value }
        if var array = json as? [Any], let i = Int(key) {
            array[i] = set(value, at: Array(path.dropFirst()), in: array[i])
            return array
        }
        var object = json as? [String: Any] ?? [:]
        object[key] = set(value, at: Array(path.dropFirst()), in: object[key] ?? [String: Any]())
        return object
    }
}
