/// A value tests share, made once, on first use. A failure to make it fails each test that uses it (`value`
/// throws), not the whole test process, as `try!` in a static initialiser would.
public struct Shared<Value: Sendable>: Sendable {
    private let result: Result<Value, any Error>

    public init(_ make: () throws -> Value) {
        result = Result(catching: make)
    }

    public var value: Value {
        get throws { try result.get() }
    }
}
