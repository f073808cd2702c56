import Dispatch

/// A raw pointer that may cross into the worker closures of `parallelFor`. Each worker writes only its own
/// disjoint part of the memory, which is what makes sharing it sound.
struct SharedPointer<T>: @unchecked Sendable {
    let base: UnsafeMutablePointer<T>
    init(_ base: UnsafeMutablePointer<T>) { self.base = base }
}

/// Runs `body(part)` for `part` in 0..<parts, on up to `parts` threads at once; inline when there is one part.
func parallelFor(_ parts: Int, _ body: @Sendable (Int) -> Void) {
    if parts <= 1 {
        body(0)
    } else {
        DispatchQueue.concurrentPerform(iterations: parts, execute: body)
    }
}

/// The `part`-th of `parts` nearly equal slices of 0..<count, with slice boundaries on multiples of `align`.
func slice(_ count: Int, part: Int, of parts: Int, align: Int = 1) -> Range<Int> {
    let units = (count + align - 1) / align
    let lo = min(count, (units * part / parts) * align)
    let hi = min(count, (units * (part + 1) / parts) * align)
    return lo..<hi
}
