import Testing
import DedogKernels

/// Weights packed straight from a model file's halves (no widened copy of the tensor) are the very floats packing
/// their widened copy gives, scaled (BatchNorm folded) or not, and the 8-bit layers quantized from them the very
/// bytes; and a half that is an infinity or NaN is found.
@Suite struct StoredWeightsTests {
    /// 37 inputs × 41 outputs (two full panels and a partial one); every kind of finite half, subnormals included.
    static func halves() -> (halves: [UInt16], scale: [Double], bias: [Float]) {
        var state: UInt64 = 404
        let halves = (0..<(37 * 41)).map { _ -> UInt16 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let h = UInt16(truncatingIfNeeded: state >> 40)
            return h & 0x7C00 == 0x7C00 ? h & 0x83FF : h  // no infinities or NaNs
        }
        var random = SeededRandom(state: 405)
        return (halves, (0..<41).map { _ in Double(random.next()) * 3 }, random.floats(41))
    }

    @Test func packingFromHalvesIsPackingTheirWidening() {
        let (halves, scale, bias) = Self.halves()
        var widened = [Float](repeating: 0, count: halves.count)
        dedog_f16_to_f32(halves, &widened, halves.count)
        let count = dedog_pointwise_packed_count(37, 41)
        for scaled in [true, false] {
            var fromHalves = [Float](repeating: .nan, count: count), fromFloats = [Float](repeating: .nan, count: count)
            #expect(dedog_pointwise_pack_stored(halves, 1, scaled ? scale : nil, bias, 37, 41, &fromHalves) == 0)
            #expect(dedog_pointwise_pack_stored(widened, 0, scaled ? scale : nil, bias, 37, 41, &fromFloats) == 0)
            #expect(fromHalves.map(\.bitPattern) == fromFloats.map(\.bitPattern), "scaled: \(scaled)")
        }
        let input = (0..<37).map { Float($0 + 1) / 512 }, zeros = [Int32](repeating: 3, count: 37)
        let output = [Float](repeating: 1.0 / 64, count: 41), size = dedog_qpointwise_packed_size(37, 41)
        var a = [UInt8](repeating: 0, count: size), b = [UInt8](repeating: 1, count: size)
        #expect(dedog_qpointwise_quantize_rows(halves, 1, scale, bias, 37, 41, input, zeros, output, nil, nil, nil, 1 << 30, &a)
                == dedog_qpointwise_quantize_rows(widened, 0, scale, bias, 37, 41, input, zeros, output, nil, nil, nil, 1 << 30, &b))
        #expect(a == b)
    }

    @Test func infinitiesAndNaNsAmongHalvesAreFound() {
        let (halves, _, _) = Self.halves()
        #expect(dedog_f16_finite(halves, halves.count) == 1)
        for special: UInt16 in [0x7C00, 0xFC00, 0x7E00, 0x7C01] {
            for at in [0, 17, halves.count - 1] {
                var bad = halves
                bad[at] = special
                #expect(dedog_f16_finite(bad, bad.count) == 0, "\(special) at \(at)")
            }
        }
    }
}
