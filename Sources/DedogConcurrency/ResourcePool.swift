import Foundation

/// At most `capacity` resources (a classifier's workspaces: plans and activation buffers), made when first needed
/// and reused.
///
/// Guarantees:
/// - `use(body)` hands `body` a resource no other caller holds until `body` returns; it is then given back, also
///   when `body` throws.
/// - At most `capacity` resources are ever made; a caller finding all of them in use sleeps until one comes back
///   (waiters are woken one per returned resource; nothing spins).
public final class ResourcePool<Resource>: @unchecked Sendable {
    public let capacity: Int
    private let make: @Sendable () -> Resource
    private let condition = NSCondition()
    private var idle: [Resource] = []  // guarded by `condition`
    private var made = 0  // guarded by `condition`

    public init(capacity: Int, make: @escaping @Sendable () -> Resource) {
        self.capacity = max(1, capacity)
        self.make = make
    }

    public func use<T, E: Error>(_ body: (Resource) throws(E) -> T) throws(E) -> T {
        let resource = checkOut()
        defer { checkIn(resource) }
        return try body(resource)
    }

    private func checkOut() -> Resource {
        condition.lock()
        while idle.isEmpty && made >= capacity { condition.wait() }
        if let resource = idle.popLast() {
            condition.unlock()
            return resource
        }
        made += 1
        condition.unlock()
        // Made outside the lock: a workspace takes a while, and other callers may take idle ones meanwhile.
        return make()
    }

    private func checkIn(_ resource: Resource) {
        condition.lock()
        idle.append(resource)
        condition.signal()
        condition.unlock()
    }
}
