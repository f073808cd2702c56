/// The real values a backbone's activations took on calibration photos, for every tensor the 8-bit engine keeps in
/// bytes: the stem's output, each block's expanded and depthwise activations (after ReLU6) and each block's output,
/// one range for the tensor or one per channel. `dedog train` and the converter write one per tensor: on Lite0,
/// ranges per channel (from the same 100 photos) left the 8-bit features as far from the float ones (9–11 %
/// relative) and clipped photos unlike the calibration ones more. The engine maps each range onto the 256 byte values
/// (`ByteEncoding`). Written by `dedog train` and by the converter of bundled models
/// (`InferenceSession.observeActivations` gathers them); `int8` in the model file's JSON. Names: `stem`,
/// `block_03.expand`, `block_03.depthwise`, `block_03`.
public struct ActivationRanges: Codable, Sendable, Equatable {
    /// How many photos the ranges were measured on.
    public var photos: Int
    /// How a range was taken from the values seen: `min-max` (the extremes over every photo) or `mean-min-max`
    /// (each photo's extremes, averaged over the photos).
    public var method: String
    /// Per tensor name, [low, high], or (not for the stem) [low₀, high₀, low₁, high₁, …], a pair per channel.
    public var ranges: [String: [Float]]

    public init(photos: Int, method: String, ranges: [String: [Float]]) {
        self.photos = photos
        self.method = method
        self.ranges = ranges
    }

    /// The methods this dedog knows.
    public static let methods = ["min-max", "mean-min-max"]

    /// The name of what step `step` of an execution plan writes, if the 8-bit engine keeps it in bytes.
    static func name(of kind: ExecutionPlan.Kind, layer: String) -> String? {
        switch kind {
        case .stem: "stem"
        case .expand: layer + ".expand"
        case .depthwise: layer + ".depthwise"
        case .project, .block: layer  // a banded block's output is its projection's
        case .head, .pool: nil
        }
    }

    /// Every tensor `backbone` needs a range for, in execution order, with its channels.
    public static func names(for backbone: Backbone) -> [String] { tensors(of: backbone).map(\.name) }

    static func tensors(of backbone: Backbone) -> [(name: String, channels: Int)] {
        [("stem", Backbone.stemChannels)] + backbone.blocks.flatMap { block in
            (block.expands ? [(block.name + ".expand", block.expandedChannels)] : [])
                + [(block.name + ".depthwise", block.expandedChannels), (block.name, block.outChannels)]
        }
    }

    /// How many numbers tensor `name` of `channels` channels may have: a pair, or (but for the stem, which is stored
    /// in one pass with one scale) a pair per channel.
    static func counts(_ name: String, channels: Int) -> [Int] { name == "stem" ? [2] : [2, 2 * channels] }

    /// Whether a tensor's values come out of ReLU6 (so they start at 0).
    static func isClamped(_ name: String) -> Bool {
        name == "stem" || name.hasSuffix(".expand") || name.hasSuffix(".depthwise")
    }

    /// The ranges of `name`: one for the tensor, or one per channel.
    func ranges(_ name: String) -> [ClosedRange<Float>]? {
        guard let r = ranges[name], r.count >= 2, r.count % 2 == 0 else { return nil }
        return stride(from: 0, to: r.count, by: 2).map { min(r[$0], r[$0 + 1])...r[$0 + 1] }
    }

    /// The first field that does not fit `backbone`, as (field, value, requirement) below the description's `int8`.
    public func problem(for backbone: Backbone) -> (field: String, value: String, requirement: String)? {
        if photos < 1 { return ("photos", "\(photos)", "at least 1") }
        if !Self.methods.contains(method) { return ("method", "\"\(method)\"", "one of " + Self.methods.joined(separator: ", ")) }
        let tensors = Self.tensors(of: backbone), names = tensors.map(\.name)
        for (name, channels) in tensors {
            guard let r = ranges[name] else { return ("ranges", "no \"\(name)\"", "a range for each of \(names.count) activations") }
            let counts = Self.counts(name, channels: channels)
            let pairs = stride(from: 0, to: r.count - 1, by: 2).map { (r[$0], r[$0 + 1]) }
            guard counts.contains(r.count), r.allSatisfy({ $0.isFinite && abs($0) < 1e6 }), pairs.allSatisfy({ $0.0 <= $0.1 }) else {
                return ("ranges.\(name)", "\(r.count) numbers", counts.count == 1 ? "[low, high] with low ≤ high, finite"
                        : "[low, high], or \(counts[1]) numbers ([low, high] for each of \(channels) channels), low ≤ high, finite")
            }
            if Self.isClamped(name), pairs.contains(where: { $0.0 != 0 || $0.1 > 6 }) {
                return ("ranges.\(name)", "a range not [0, ≤ 6]", "[0, high ≤ 6] each: the activation comes out of ReLU6")
            }
        }
        if let extra = ranges.keys.sorted().first(where: { !names.contains($0) }) {
            return ("ranges", "\"\(extra)\"", "only the \(backbone.architecture)'s activations")
        }
        return nil
    }
}

/// The extremes of a backbone's activations over calibration photos, gathered one photo at a time
/// (`InferenceSession.observeActivations`) and turned into `ActivationRanges`.
public struct ActivationStatistics: Sendable {
    public private(set) var photos = 0
    /// Per tensor, per channel (one entry for ReLU6 outputs): the extremes over every photo, and the sums of each
    /// photo's extremes.
    private var low: [String: [Float]] = [:], high: [String: [Float]] = [:]
    private var lowSum: [String: [Double]] = [:], highSum: [String: [Double]] = [:]

    /// Whether ranges are kept per channel (not for the stem) rather than per tensor.
    public let perChannel: Bool

    public init(perChannel: Bool = false) { self.perChannel = perChannel }

    /// One photo's values of tensor `name`, channels-last with `channels` channels (each tensor once per photo).
    mutating func observe(_ name: String, _ values: UnsafeBufferPointer<Float>, channels: Int) {
        let width = perChannel && name != "stem" ? channels : 1
        var lo = [Float](repeating: .infinity, count: width), hi = [Float](repeating: -.infinity, count: width)
        if width == 1 {
            for v in values { lo[0] = min(lo[0], v); hi[0] = max(hi[0], v) }
        } else {
            for (i, v) in values.enumerated() {
                let c = i % width
                lo[c] = min(lo[c], v)
                hi[c] = max(hi[c], v)
            }
        }
        low[name] = zip(low[name] ?? lo, lo).map { min($0, $1) }
        high[name] = zip(high[name] ?? hi, hi).map { max($0, $1) }
        lowSum[name] = zip(lowSum[name] ?? Array(repeating: 0, count: width), lo).map { $0 + Double($1) }
        highSum[name] = zip(highSum[name] ?? Array(repeating: 0, count: width), hi).map { $0 + Double($1) }
    }

    mutating func finishPhoto() { photos += 1 }

    /// Folds in what another set of photos showed (statistics gathered on several threads).
    public mutating func merge(_ other: ActivationStatistics) {
        photos += other.photos
        for (name, v) in other.low { low[name] = low[name].map { zip($0, v).map { min($0, $1) } } ?? v }
        for (name, v) in other.high { high[name] = high[name].map { zip($0, v).map { max($0, $1) } } ?? v }
        for (name, v) in other.lowSum { lowSum[name] = lowSum[name].map { zip($0, v).map { $0 + $1 } } ?? v }
        for (name, v) in other.highSum { highSum[name] = highSum[name].map { zip($0, v).map { $0 + $1 } } ?? v }
    }

    /// The ranges by `method` (one of `ActivationRanges.methods`); ReLU6 outputs start at 0 and end at 6 at most.
    public func ranges(method: String = "min-max") -> ActivationRanges {
        var ranges: [String: [Float]] = [:]
        let mean = method == "mean-min-max", n = Double(max(photos, 1))
        for (name, extremes) in low {
            guard let tops = high[name] else { continue }
            let lows = mean ? (lowSum[name] ?? []).map { Float($0 / n) } : extremes
            let highs = mean ? (highSum[name] ?? []).map { Float($0 / n) } : tops
            ranges[name] = ActivationRanges.isClamped(name) ? highs.flatMap { [0, min(max($0, 0), 6)] }
                : zip(lows, highs).flatMap { [min($0, $1), $1] }
        }
        return ActivationRanges(photos: photos, method: method, ranges: ranges)
    }
}

/// How a tensor's real values map onto bytes, for the whole tensor or channel by channel:
/// real = (byte − zero[c]) · scale[c], each range widened to include 0 (so that 0, ReLU's floor and the padding,
/// is exact).
struct ByteEncoding: Sendable, Equatable {
    /// One per channel, or one for the tensor.
    let scales: [Float]
    let zeros: [Int]
    /// The largest byte: 255, or 127 for a tensor in 7 bits (what `vpmaddubsw` multiplies by 8-bit weights without
    /// saturating: see `QuantizedNetwork`).
    let top: Int

    /// A channel that hardly varies (one ReLU keeps at 0 on every photo) gets at least a thousandth of the widest
    /// channel's range, so that no store scale explodes.
    init(_ ranges: [ClosedRange<Float>], top: Int = 255) {
        var scales: [Float] = [], zeros: [Int] = []
        let widest = ranges.map { max($0.upperBound, 0) - min($0.lowerBound, 0) }.max() ?? 0
        for range in ranges {
            let lo = min(range.lowerBound, 0), hi = max(range.upperBound, 0)
            let scale = max(hi - lo, widest * 1e-3, 1e-6) / Float(top)
            scales.append(scale)
            zeros.append(min(top, max(0, Int((-lo / scale).rounded()))))
        }
        self.scales = scales
        self.zeros = zeros
        self.top = top
    }

    var isPerTensor: Bool { scales.count == 1 }
    /// The tensor's scale and zero point (the first channel's, for an encoding per channel).
    var scale: Float { scales[0] }
    var zero: Int { zeros[0] }

    /// The scales and zero points of `channels` channels.
    func perChannel(_ channels: Int) -> (scales: [Float], zeros: [Int]) {
        isPerTensor ? (Array(repeating: scales[0], count: channels), Array(repeating: zeros[0], count: channels)) : (scales, zeros)
    }

    /// The real value of `byte` in channel `c`.
    func real(_ byte: UInt8, channel c: Int) -> Float {
        let i = isPerTensor ? 0 : c
        return Float(Int(byte) - zeros[i]) * scales[i]
    }
}
