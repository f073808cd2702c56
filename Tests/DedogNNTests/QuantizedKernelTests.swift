import Foundation
import Testing
@_spi(Testing) import DedogNN
import DedogBreedModel

/// Deterministic bytes and small integers for the 8-bit kernel tests.
struct IntegerRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }
    mutating func int(in range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) } }
}

/// The 8-bit pointwise kernel in every build this CPU runs (portable, AVX2, AVX-VNNI, AVX-512, AVX-512 VNNI)
/// against `ReferenceKernels`' plain integer arithmetic at every pointwise layer shape of every backbone at
/// every input size models use, and at awkward shapes (inputs not a multiple of 4, partial panels, one pixel),
/// with each store (bytes clamped as ReLU6, bytes with the residual added, floats), on one and two threads, with
/// 8-bit weights and inputs (AVX2 and AVX-512 multiply them with vpmaddubsw on inputs less 128), 7-bit weights, 7-bit
/// inputs (vpmaddubsw as it is), and weights down to −128 (each input byte split in two).
/// The arithmetic is exact (integer sums, then the same float operations in the same order), so every byte and
/// every float's bits must be equal; the safe entry points' guard zones catch writes outside the output.
@Suite struct QuantizedKernelTests {
    static let awkward: [LayerShape] = [
        LayerShape(name: "odd", kind: .expand, inChannels: 13, outChannels: 24, kernel: 1, stride: 1, height: 3, width: 5, hasResidual: false),
        LayerShape(name: "odd", kind: .project, inChannels: 6, outChannels: 100, kernel: 1, stride: 1, height: 10, width: 15, hasResidual: true),
        LayerShape(name: "odd", kind: .head, inChannels: 2, outChannels: 17, kernel: 1, stride: 1, height: 1, width: 1, hasResidual: false),
    ]

    static let shapes: [LayerShape] = KernelTests.shapes.filter { $0.kind != .stem && $0.kind != .depthwise } + awkward

    @Test(arguments: shapes)
    func pointwiseMatchesTheIntegerReference(_ layer: LayerShape) throws {
        var random = IntegerRandom(state: layer.description.utf8.reduce(UInt64(7)) { $0 &* 31 &+ UInt64($1) })
        let pixels = layer.height * layer.width, cin = layer.inChannels, cout = layer.outChannels
        let input = random.bytes(pixels * cin)
        let wide = (0..<(cout * cin)).map { _ in Int8(random.int(in: -127...127)) }
        let bias = (0..<cout).map { _ in Int32(random.int(in: -20_000...20_000)) }
        // One zero point per input channel (block outputs are encoded per channel), or one for all.
        let inputZero = cin % 2 == 0 ? (0..<cin).map { _ in random.int(in: 0...255) } : [random.int(in: 0...255)]
        // Sums of cin products of about ±80 · ±73 spread over about ±√cin · 5,840; these scales map that to a
        // few dozen bytes, so that stores clamp at both ends as well as round.
        let spread = Float(cin).squareRoot() * 5840
        let scale = (0..<cout).map { _ in Float(random.int(in: 20...90)) / spread }
        let residual = random.bytes(pixels * cout)
        let zero = (0..<cout).map { _ in random.int(in: 0...255) }, residualZero = (0..<cout).map { _ in random.int(in: 0...255) }
        let residualScale = (0..<cout).map { _ in Float(random.int(in: 20...160)) / 100 }
        let stores: [(QuantizedPointwise.Store, [UInt8]?)] = [
            (.bytes(zero: [0], low: 0, high: random.int(in: 128...255)), nil),
            (.bytes(zero: [0], low: 0, high: 255), nil),  // ReLU6 over 0…6: the VNNI kernel's clamp is its packs'
            (.bytes(zero: zero, low: 0, high: 255), nil),
            (.bytes(zero: [zero[0]], low: 3, high: 250), nil),
            (.bytesAddingResidual(zero: zero, low: 0, high: 255, residualZero: residualZero, residualScale: residualScale), residual),
            (.bytesAddingResidual(zero: [zero[0]], low: 0, high: 255, residualZero: [residualZero[0]], residualScale: [0.75]), residual),
        ]
        for (weight, inputMax) in [(wide, 255), (wide.map { $0 / 2 }, 255), (wide, 127), (wide.map { $0 == 127 ? -128 : $0 }, 255)] {
        let input = inputMax == 255 ? input : input.map { $0 / 2 }, inputZero = inputZero.map { min($0, inputMax) }
        let sums = ReferenceKernels.quantizedSums(input, pixels: pixels, inputs: cin, inputZero: inputZero, weight: weight,
                                                  bias: bias, outputs: cout)
        let bits = "\(weight.contains { abs(Int($0)) > 63 } ? 8 : 7)-bit weights, inputs to \(inputMax)"
        for kernels in KernelSet.supported {
            for threads in [1, 2] {
                for (store, res) in stores {
                    let conv = try QuantizedPointwise(inChannels: cin, outChannels: cout, weight: weight, bias: bias,
                                                      scale: scale, inputZero: inputZero, store: store, inputMax: inputMax)
                    let ours = try conv(input, pixels: pixels, residual: res, threads: threads, kernels: kernels)
                    let expected: [UInt8]
                    switch store {
                    case let .bytes(zero, low, high):
                        expected = ReferenceKernels.requantize(sums, outputs: cout, scale: scale, zero: zero, low: low, high: high)
                    case let .bytesAddingResidual(zero, low, high, residualZero, residualScale):
                        expected = ReferenceKernels.requantize(sums, outputs: cout, scale: scale, zero: zero, low: low, high: high,
                                                               residual: res, residualZero: residualZero, residualScale: residualScale)
                    case .floats:
                        expected = []
                    }
                    let wrong = ours.indices.filter { $0 >= expected.count || ours[$0] != expected[$0] }
                    #expect(ours.count == expected.count && wrong.isEmpty,
                            "\(layer) \(kernels) \(bits) \(threads) thread(s) \(store): \(wrong.count) bytes differ, the first at \(wrong.first ?? -1)")
                }
                for clampsToSix in [true, false] {
                    let conv = try QuantizedPointwise(inChannels: cin, outChannels: cout, weight: weight, bias: bias,
                                                      scale: scale.map { $0 / 8 }, inputZero: inputZero,
                                                      store: .floats(clampsToSix: clampsToSix), inputMax: inputMax)
                    let ours = try conv.floats(input, pixels: pixels, threads: threads, kernels: kernels)
                    let expected = ReferenceKernels.dequantize(sums, outputs: cout, scale: scale.map { $0 / 8 }, clampsToSix: clampsToSix)
                    let wrong = ours.indices.filter { ours[$0].bitPattern != expected[$0].bitPattern }
                    #expect(ours.count == expected.count && wrong.isEmpty,
                            "\(layer) \(kernels) \(bits) \(threads) thread(s) floats: \(wrong.count) differ, the first at \(wrong.first ?? -1)")
                }
            }
        }
        }
    }

    /// Every depthwise shape of every backbone (and the awkward ones of `KernelTests`), plus a kernel size no network
    /// has (the one-channel-at-a-time path).
    static let depthwiseShapes: [LayerShape] = KernelTests.shapes.filter { $0.kind == .depthwise } + [
        LayerShape(name: "odd", kind: .depthwise, inChannels: 20, outChannels: 20, kernel: 7, stride: 3, height: 9, width: 10, hasResidual: false),
    ]

    /// The 8-bit depthwise kernel in every build, on one and two threads, with 8-bit weights and inputs, 7-bit weights,
    /// 7-bit inputs and weights down to −128 (the builds `pointwiseMatchesTheIntegerReference` names), against the plain integer sums and the same store: every byte equal (the sums are exact in
    /// floats below 2^24, the store is the pointwise one's).
    @Test(arguments: depthwiseShapes)
    func depthwiseMatchesTheIntegerReference(_ layer: LayerShape) throws {
        var random = IntegerRandom(state: layer.description.utf8.reduce(UInt64(11)) { $0 &* 31 &+ UInt64($1) })
        let c = layer.inChannels, k = layer.kernel, h = layer.height, w = layer.width
        let input = random.bytes(h * w * c)
        let wide = (0..<(c * k * k)).map { _ in Int8(random.int(in: -127...127)) }
        let bias = (0..<c).map { _ in Int32(random.int(in: -200_000...200_000)) }
        // Sums of k² products of about 128 · ±73 spread over about ±k · 9,300 (and the bias); these scales map that
        // to a few dozen bytes, so that stores clamp at both ends as well as round.
        let spread = Float(k) * 9300
        let scale = (0..<c).map { _ in Float(random.int(in: 20...90)) / spread }
        for (weight, inputMax) in [(wide, 255), (wide.map { $0 / 2 }, 255), (wide, 127), (wide.map { $0 == 127 ? -128 : $0 }, 255)] {
        let input = inputMax == 255 ? input : input.map { $0 / 2 }
        let bits = "\(weight.contains { abs(Int($0)) > 63 } ? 8 : 7)-bit weights, inputs to \(inputMax)"
        let (sums, _, _) = ReferenceKernels.quantizedDepthwiseSums(input, height: h, width: w, channels: c, weight: weight,
                                                                  bias: bias, kernel: k, stride: layer.stride)
        // The third and fourth stores clamp to 0…255 with zero point 0, the ReLU6 outputs' store, which the fast kernels
        // leave to saturating packs when every scale is below 64; the fourth's scales are not, so they may not. The
        // others clamp after the packs, as bytes (the fifth at both ends), where every scale is below 64.
        for (zero, low, high, gain) in [(0, 0, random.int(in: 128...255), 1), (random.int(in: 0...255), 0, 255, 1),
                                        (0, 0, 255, 1), (0, 0, 255, 4096), (random.int(in: 0...255), 3, 250, 1)]
            as [(Int, Int, Int, Float)] {
            let scale = scale.map { $0 * gain }
            let expected = ReferenceKernels.requantize(sums, outputs: c, scale: scale, zero: [zero], low: low, high: high)
            let conv = try QuantizedDepthwise(channels: c, kernel: k, stride: layer.stride, weight: weight, bias: bias,
                                              scale: scale, zero: zero, low: low, high: high, inputMax: inputMax)
            for kernels in KernelSet.supported {
                for threads in [1, 2] {
                    let ours = try conv(input, batch: 1, height: h, width: w, threads: threads, kernels: kernels)
                    let wrong = ours.indices.filter { $0 >= expected.count || ours[$0] != expected[$0] }
                    #expect(ours.count == expected.count && wrong.isEmpty,
                            "\(layer) \(kernels) \(bits) \(threads) thread(s) zero \(zero): \(wrong.count) bytes differ, the first at \(wrong.first ?? -1)")
                }
                // Each float build (bytes widened to floats), which the byte dot product kernels leave unreached.
                let ours = try conv.withoutVNNI(input, batch: 1, height: h, width: w, threads: 2, kernels: kernels)
                let wrong = ours.indices.filter { $0 >= expected.count || ours[$0] != expected[$0] }.count
                #expect(ours.count == expected.count && wrong == 0, "\(layer) \(kernels) in floats, zero \(zero): \(wrong) bytes differ")
            }
        }
        }
    }

    /// The stem on pixel bytes in every build, on one and two threads, at each backbone's input sizes and awkward ones,
    /// for the inputs models use (mean 127, std 128) and ImageNet's usual normalisation: every byte equal to plain
    /// integer sums over the pixel bytes (a border of the mean's bytes) with the same store. And the folding: each byte
    /// weight within half a step of the float weight over its channel's spread, and each output within rounding of
    /// the same weights applied to the centred pixels (p − mean) plus the float bias.
    @Test(arguments: [(224, 224), (240, 240), (256, 256), (260, 260), (17, 23), (2, 3), (1, 1)])
    func stemMatchesTheIntegerReference(_ size: (Int, Int)) throws {
        let (h, w) = size
        var random = IntegerRandom(state: UInt64(h * 1000 + w))
        let weight = (0..<(32 * 27)).map { _ in Float(random.int(in: -1000...1000)) / 1500 }
        let floatBias = (0..<32).map { _ in Float(random.int(in: -1000...1000)) / 500 }
        let stem = try StemConvolution(inChannels: 3, outChannels: 32, kernel: 3, stride: 2, weight: weight, bias: floatBias)
        for (mean, std) in [([Float](repeating: 127, count: 3), [Float](repeating: 128, count: 3)),
                            ([124, 116, 104], [58.4, 57.1, 57.4])] as [([Float], [Float])] {
            let input = InputDescription(mean: mean, std: std)
            #expect(QuantizedStem.fits(stem, input: input))
            for limit in [127, 63] {  // 8-bit weights, and the 7-bit ones AVX2 and AVX-512 multiply with vpmaddubsw
            let q = try QuantizedStem(stem, input: input, outputRange: 0...6, weightLimit: limit)
            #expect(q.weights.allSatisfy { abs(Int($0)) <= limit } && q.weights.contains { abs(Int($0)) == limit })
            let pixels = random.bytes(3 * h * w)  // planar, as the preprocessing's floats are
            let x = pixels.indices.map { (Float(pixels[$0]) - mean[$0 / (h * w)]) / std[$0 / (h * w)] }
            let (oh, ow) = q.outputSize(height: h, width: w)
            let padTop = max((oh - 1) * 2 + 3 - h, 0) / 2, padLeft = max((ow - 1) * 2 + 3 - w, 0) / 2
            let step = Float(6) / 255
            for o in 0..<32 {
                let ws = Double(q.scale[o] * step)
                let off = (0..<27).filter { t in
                    abs(Double(q.weights[o * 27 + t]) * ws - Double(weight[o * 27 + t] / std[t / 9])) > ws * 0.5001
                }
                #expect(off.count == 0, "output \(o): weights \(off) more than half a step from the float ones")
            }
            var sums: [Int] = [], centred: [Double] = []
            for oy in 0..<oh {
                for ox in 0..<ow {
                    for o in 0..<32 {
                        var sum = Int(q.bias[o]), real = Double(floatBias[o]) / Double(step)
                        for c in 0..<3 {
                            for ky in 0..<3 {
                                for kx in 0..<3 {
                                    let iy = oy * 2 - padTop + ky, ix = ox * 2 - padLeft + kx
                                    let p = iy >= 0 && iy < h && ix >= 0 && ix < w ? Int(pixels[(c * h + iy) * w + ix]) : Int(mean[c])
                                    let wq = q.weights[((o * 3 + c) * 3 + ky) * 3 + kx]
                                    sum += Int(wq) * p
                                    real += Double(wq) * (Double(p) - Double(mean[c])) * Double(q.scale[o])
                                }
                            }
                        }
                        sums.append(sum)
                        centred.append(real)
                    }
                }
            }
            let expected = ReferenceKernels.requantize(sums, outputs: 32, scale: q.scale, zero: [q.zero], low: q.low, high: q.high)
            for kernels in KernelSet.supported {
                for threads in [1, 2] {
                    let ours = try q(x, height: h, width: w, threads: threads, kernels: kernels)
                    let wrong = ours.indices.filter { $0 >= expected.count || ours[$0] != expected[$0] }
                    #expect(ours.count == expected.count && wrong.count == 0,
                            "\(h)×\(w) mean \(mean) limit \(limit) \(kernels) \(threads) thread(s): \(wrong.count) bytes differ, the first at \(wrong.first ?? -1)")
                }
            }
            // The integer bias is the float one less the mean's sums, rounded: half a sum step, then half an output step.
            let far = expected.indices.filter { i in
                let target = min(max(centred[i], Double(q.low - q.zero)), Double(q.high - q.zero))
                return abs(Double(Int(expected[i]) - q.zero) - target) > 0.5 + 0.5 * Double(q.scale[i % 32]) + 1e-3
            }
            #expect(far.count == 0, "\(h)×\(w) mean \(mean): \(far.count) outputs off the centred sums, the first at \(far.first ?? -1)")
            }
        }
    }

    /// The stem's quantizer in every build against the plain rule, on lengths around the vector widths, with
    /// exact ties (x · 4 = n + ½ rounds to the even n) and values past both clamps.
    @Test func quantizeMatchesTheReference() throws {
        var random = SeededRandom(state: 5)
        for count in [1, 3, 4, 15, 16, 17, 64, 1000, 4099] {
            var x = random.floats(count, scale: 40)
            for i in stride(from: 0, to: count, by: 3) { x[i] = (Float(Int(x[i])) + 0.5) / 4 }
            for (inverse, zero, low, high) in [(Float(4), 0, 0, 255), (Float(4), 128, 3, 250), (Float(2.7), 17, 0, 200)] {
                let expected = ReferenceKernels.quantize(x, inverseScale: inverse, zero: zero, low: low, high: high)
                for kernels in KernelSet.supported {
                    let ours = try Quantize.bytes(x, inverseScale: inverse, zero: zero, low: low, high: high, kernels: kernels)
                    #expect(ours == expected, "\(count) values ×\(inverse) zero \(zero) \(low)…\(high) \(kernels)")
                }
            }
        }
        #expect(throws: ModelError.self) { try Quantize.bytes([1], inverseScale: 1, zero: 256, low: 0, high: 255) }
        #expect(throws: ModelError.self) { try Quantize.bytes([1e30], inverseScale: 1, zero: 0, low: 0, high: 255) }
    }

    /// 8 bits are the default on every set, the portable one too (its 1×1 kernel on pairs of 16-bit products is about
    /// as fast as its floats): every set's layers are the same, one operand of each in 7 bits (7-bit weights where the
    /// input has 8 bits: the expansions and the head; 7-bit inputs where the weights have 8: the projections), and
    /// every set computes them to the same bytes, so that every CPU gives the same answers.
    @Test func int8IsTheDefaultWhereItIsFaster() throws {
        for kernels in KernelSet.allCases {
            #expect(Precision.preferred(for: kernels) == .int8)
        }
        #expect(try BundledModel.network.makeSession(kernels: .portable).precision == .int8)
        #expect(try BundledModel.network.makeSession(kernels: .portable, precision: .fp32).precision == .fp32)
        #expect(try BundledModel.network.makeSession(kernels: .avx2).precision == .int8)
        for kernels in [KernelSet.avx2, .avx512Vnni] {
            let layers = try Model(contentsOf: BundledModel.url, precision: .int8, kernels: kernels).backbones[0].int8PointwiseOperands
            #expect(layers.count == 16 + 15 + 1)
            for (kind, widest, inputMax) in layers {
                let expected = kind == "project" ? (127, 127) : (63, 255)
                #expect(widest == expected.0 && inputMax == expected.1,
                        "\(kernels) \(kind): weights up to \(widest), inputs up to \(inputMax)")
            }
        }
    }

    /// The stores span what bytes can say: a clamp bound, a zero point or a scale out of range is refused, and
    /// a residual must come exactly with the store that adds it.
    @Test func badStoresAndInputsAreRefused() throws {
        let weight = [Int8](repeating: 1, count: 8)
        func make(_ store: QuantizedPointwise.Store, inputZero: [Int] = [0], scale: Float = 1) throws -> QuantizedPointwise {
            try QuantizedPointwise(inChannels: 4, outChannels: 2, weight: weight, bias: nil, scale: [scale, scale],
                                   inputZero: inputZero, store: store)
        }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 0, high: 256)) }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 9, high: 8)) }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0, 0, 0], low: 0, high: 255)) }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 0, high: 255), inputZero: [-1]) }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 0, high: 255), inputZero: [0, 0]) }
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 0, high: 255), scale: .nan) }
        #expect(throws: ModelError.self) { try make(.bytesAddingResidual(zero: [0], low: 0, high: 255, residualZero: [0], residualScale: [.infinity])) }
        let plain = try make(.bytes(zero: [0], low: 0, high: 255))
        #expect(throws: ModelError.self) { try plain([1, 2, 3, 4], pixels: 1, residual: [0, 0]) }
        #expect(throws: ModelError.self) { try plain([1, 2, 3], pixels: 1) }
        #expect(throws: ModelError.self) { try plain.floats([1, 2, 3, 4], pixels: 1) }
        let adding = try make(.bytesAddingResidual(zero: [0], low: 0, high: 255, residualZero: [0], residualScale: [1]))
        #expect(throws: ModelError.self) { try adding([1, 2, 3, 4], pixels: 1) }
        // 1·(1+2+3+4) = 10 per output, times scale 1, plus the residual 5 − 0.
        #expect(try adding([1, 2, 3, 4], pixels: 1, residual: [5, 250]) == [15, 255])
        // A layer for 7-bit inputs takes none past 127 (its AVX2 kernel would saturate), nor a zero point past it.
        let seven = try QuantizedPointwise(inChannels: 4, outChannels: 2, weight: weight, bias: nil, scale: [1, 1],
                                           inputZero: [0], store: .bytes(zero: [0], low: 0, high: 255), inputMax: 127)
        #expect(try seven([1, 2, 3, 127], pixels: 1) == [133, 133])
        #expect(throws: ModelError.self) { try seven([1, 2, 3, 128], pixels: 1) }
        #expect(throws: ModelError.self) {
            try QuantizedPointwise(inChannels: 4, outChannels: 2, weight: weight, bias: nil, scale: [1, 1], inputZero: [128],
                                   store: .bytes(zero: [0], low: 0, high: 255), inputMax: 127)
        }
        #expect(throws: ModelError.self) {
            try QuantizedDepthwise(channels: 1, kernel: 1, stride: 1, weight: [1], bias: nil, scale: [1], zero: 0, low: 0,
                                   high: 255, inputMax: 127)([200], batch: 1, height: 1, width: 1)
        }
        // Sums that times their scale could pass 2^30 would not round the same in every build.
        #expect(throws: ModelError.self) { try make(.bytes(zero: [0], low: 0, high: 255), scale: 1e6) }
        // A depthwise bias past 2^23 would leave sums that floats cannot hold exactly; kernels past 16×16 too.
        func depthwise(kernel: Int = 3, bias: Int32 = 0) throws -> QuantizedDepthwise {
            try QuantizedDepthwise(channels: 1, kernel: kernel, stride: 1, weight: [Int8](repeating: 1, count: kernel * kernel),
                                   bias: [bias], scale: [1], zero: 0, low: 0, high: 255)
        }
        #expect(throws: ModelError.self) { try depthwise(bias: QuantizedDepthwise.biasLimit + 1) }
        #expect(throws: ModelError.self) { try depthwise(kernel: 17) }
        // 9 taps of 1 · 10, plus the bias 5, on a 3×3 image's centre pixel.
        #expect(try depthwise(bias: 5)([UInt8](repeating: 10, count: 9), batch: 1, height: 3, width: 3)[4] == 95)
    }
}
