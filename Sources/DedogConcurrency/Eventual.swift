import Foundation

/// A value computed on a thread of its own from the moment it is made, taken when it is needed: for work to start
/// before the caller knows whether it will want it (the bundled catalogue, read while the command line is parsed).
///
/// Guarantees:
/// - `compute` runs exactly once, on a new thread, starting at once.
/// - `value` returns its result, sleeping until it is there (nothing spins); any number of callers, from any thread.
public final class Eventual<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Value?  // guarded by `condition`

    public init(_ compute: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            let computed = compute()
            condition.lock()
            result = computed
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    public var value: Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}
