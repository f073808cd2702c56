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
            #expect(dedog_pointwise_pack_stored(DEDOG_ISA_PORTABLE, halves, 1, scaled ? scale : nil, bias, 37, 41, &fromHalves) == 0)
            #expect(dedog_pointwise_pack_stored(DEDOG_ISA_PORTABLE, widened, 0, scaled ? scale : nil, bias, 37, 41, &fromFloats) == 0)
            #expect(fromHalves.map(\.bitPattern) == fromFloats.map(\.bitPattern), "scaled: \(scaled)")
        }
        let input = (0..<37).map { Float($0 + 1) / 512 }, zeros = [Int32](repeating: 3, count: 37)
        let output = [Float](repeating: 1.0 / 64, count: 41), size = dedog_qpointwise_packed_size(37, 41)
        var a = [UInt8](repeating: 0, count: size), b = [UInt8](repeating: 1, count: size)
        #expect(dedog_qpointwise_quantize_rows(DEDOG_ISA_PORTABLE, halves, 1, scale, bias, 37, 41, input, zeros, output, nil, nil, nil, 127, 1 << 30, 255, &a)
                == dedog_qpointwise_quantize_rows(DEDOG_ISA_PORTABLE, widened, 0, scale, bias, 37, 41, input, zeros, output, nil, nil, nil, 127, 1 << 30, 255, &b))
        #expect(a == b)
    }

    /// Packing and quantizing run in every build this CPU has (the AVX-512 ones gather and convert 16 outputs at a
    /// time) and must give the portable build's bits: at shapes with partial panels and groups, at Lite2's widest
    /// layer shape, and with rows the quantizer finds awkward (all zeros; a subnormal largest weight, whose scale's
    /// inverse is infinite; weights exactly half a step from an integer).
    @Test(arguments: [(37, 41), (1, 1), (5, 16), (1152, 192), (320, 1280)])
    func everyBuildPacksAndQuantizesToThePortableBits(inputs: Int, outputs: Int) {
        var random = SeededRandom(state: UInt64(inputs * 1000 + outputs))
        var weight = random.floats(inputs * outputs, scale: 0.5)
        if outputs > 2 {
            for k in 0..<inputs { weight[k] = 0 }                                         // row 0: zeros
            for k in 0..<inputs { weight[inputs + k] = k == 0 ? Float.leastNormalMagnitude / 64 : 0 }  // row 1: subnormal
            for k in 0..<inputs { weight[2 * inputs + k] = Float(k % 9 - 4) / 8 + 1 / 254 }  // row 2: near halves
        }
        let bias = random.floats(outputs), scale = (0..<outputs).map { Double($0 % 7 + 1) / 3 }
        var halves = [UInt16](repeating: 0, count: weight.count)
        for (i, w) in weight.enumerated() { halves[i] = Float16(w).bitPattern }
        let input = (0..<inputs).map { Float($0 % 5 + 1) / 128 }, zeros = (0..<inputs).map { Int32($0 % 3 * 40) }
        let output = (0..<outputs).map { Float($0 % 4 + 1) / 32 }
        let count = dedog_pointwise_packed_count(Int32(inputs), Int32(outputs)), size = dedog_qpointwise_packed_size(Int32(inputs), Int32(outputs))
        let (i, o) = (Int32(inputs), Int32(outputs))
        func all(_ isa: dedog_isa, limit: Int32) -> (packs: [[UInt32]], bytes: [[UInt8]], fits: [Int32]) {
            var packs: [[UInt32]] = [], bytes: [[UInt8]] = [], fits: [Int32] = []
            var packed = [Float](repeating: .nan, count: count)
            dedog_pointwise_pack(isa, weight, bias, i, o, &packed)
            packs.append(packed.map(\.bitPattern))
            var columns = [Float](repeating: .nan, count: dedog_pointwise_packed_count(o, i))
            dedog_pointwise_pack_columns(isa, weight, nil, o, i, &columns)  // the same numbers as [o × i] columns
            packs.append(columns.map(\.bitPattern))
            // The weights as a file stores them: floats, then halves.
            let files = [weight.withUnsafeBytes { Array($0) }, halves.withUnsafeBytes { Array($0) }]
            for (file, half) in zip(files, [Int32(0), 1]) {
                let stored = UnsafeMutableRawPointer.allocate(byteCount: file.count, alignment: 16)
                defer { stored.deallocate() }
                stored.copyMemory(from: file, byteCount: file.count)
                for s in [scale, nil] {
                    packed = [Float](repeating: .nan, count: count)
                    #expect(dedog_pointwise_pack_stored(isa, stored, half, s, bias, i, o, &packed) == 0)
                    packs.append(packed.map(\.bitPattern))
                }
                var q = [UInt8](repeating: 7, count: size)
                fits.append(dedog_qpointwise_quantize_rows(isa, stored, half, scale, bias, i, o, input, zeros, output,
                                                           nil, nil, nil, limit, 1 << 30, 255, &q))
                bytes.append(q)
            }
            packed = [Float](repeating: .nan, count: count)
            dedog_pointwise_pack(isa, weight, bias, i, o, &packed)
            var q = [UInt8](repeating: 9, count: size)
            fits.append(dedog_qpointwise_quantize(isa, packed, i, o, input, zeros, output, nil, nil, nil, limit, 1 << 30, 255, &q))
            bytes.append(q)
            return (packs, bytes, fits)
        }
        // 8-bit weights, and the 7-bit ones made for vpmaddubsw.
        for limit: Int32 in [127, 63] {
        let portable = all(DEDOG_ISA_PORTABLE, limit: limit)
        #expect(portable.fits.allSatisfy { $0 == 1 })
        let widest = portable.bytes.map { Int(dedog_qpointwise_widest_weight($0, i, o)) }
        #expect(widest.allSatisfy { $0 == Int(limit) }, "weights up to \(widest), not \(limit)")
        for isa in [DEDOG_ISA_AVX2, DEDOG_ISA_AVX_VNNI, DEDOG_ISA_AVX512, DEDOG_ISA_AVX512_VNNI] where dedog_isa_supported(isa) != 0 {
            let other = all(isa, limit: limit)
            // Where each result first differs, not the arrays (tens of thousands of values).
            for (n, (a, b)) in zip(other.packs, portable.packs).enumerated() where a != b {
                Issue.record("isa \(isa.rawValue): packing \(n) differs first at float \(a.indices.first { a[$0] != b[$0] } ?? -1)")
            }
            for (n, (a, b)) in zip(other.bytes, portable.bytes).enumerated() where a != b {
                Issue.record("isa \(isa.rawValue): quantizing \(n) differs first at byte \(a.indices.first { a[$0] != b[$0] } ?? -1)")
            }
            #expect(other.fits == portable.fits, "isa \(isa.rawValue)")
        }
        }
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

    /// The fully-connected kernel reads a head's weights as the file stores them: from halves and from their widened
    /// floats it gives the same bits, and in every build sums within rounding of a double-precision reference. At the
    /// ImageNet head's shape and at widths with a partial vector and several 512-input pieces; 1 to 9 rows (whole and
    /// partial groups of 4); only the middle outputs asked for, and nothing written outside them (guard zones).
    @Test(arguments: [(1280, 1000, 2), (37, 41, 9), (1283, 7, 5), (1, 3, 1), (2049, 4, 4)])
    func linearReadsStoredWeights(inputs: Int, outputs: Int, rows: Int) {
        var random = SeededRandom(state: UInt64(inputs * 31 + outputs * 7 + rows))
        let weight = random.floats(inputs * outputs, scale: 0.5).map { Float(Float16($0)) }  // exactly halves
        let halves = weight.map { Float16($0).bitPattern }
        let x = random.floats(rows * inputs), bias = random.floats(outputs)
        let (first, end) = (outputs / 3, outputs - outputs / 4)
        let zone = 64, guardBits: UInt32 = 0x7FA5_C3E1
        var results: [[UInt32]] = []
        for isa in [DEDOG_ISA_PORTABLE, DEDOG_ISA_AVX2, DEDOG_ISA_AVX512] where dedog_isa_supported(isa) != 0 {
            var fromFloats: [UInt32] = []
            for half in [Int32(0), 1] {
                var out = [Float](repeating: Float(bitPattern: guardBits), count: zone + rows * outputs + zone)
                x.withUnsafeBufferPointer { xp in
                    bias.withUnsafeBufferPointer { bp in
                        out.withUnsafeMutableBufferPointer { op in
                            let y = op.baseAddress! + zone
                            func call(_ w: UnsafeRawPointer) {
                                var args = dedog_linear_args(in: xp.baseAddress, in_stride: inputs, weight: w, half: half,
                                                             bias: bp.baseAddress, inputs: Int32(inputs), rows: Int32(rows),
                                                             first_output: Int32(first), end_output: Int32(end),
                                                             out: y, out_stride: outputs)
                                dedog_linear(isa, &args)
                            }
                            if half == 1 { halves.withUnsafeBytes { call($0.baseAddress!) } } else { weight.withUnsafeBytes { call($0.baseAddress!) } }
                        }
                    }
                }
                let values = Array(out[zone..<(zone + rows * outputs)])
                let outside = (out[..<zone] + out[(zone + rows * outputs)...]).filter { $0.bitPattern != guardBits }.count
                #expect(outside == 0, "isa \(isa.rawValue), half \(half): \(outside) floats written outside the output")
                for r in 0..<rows {
                    for o in 0..<outputs {
                        let got = values[r * outputs + o]
                        guard (first..<end).contains(o) else {
                            #expect(got.bitPattern == guardBits, "isa \(isa.rawValue): output \(o) was not asked for")
                            continue
                        }
                        var sum = Double(bias[o]), size = abs(Double(bias[o]))
                        for k in 0..<inputs {
                            let term = Double(x[r * inputs + k]) * Double(weight[o * inputs + k])
                            sum += term
                            size += abs(term)
                        }
                        #expect(abs(Double(got) - sum) <= 2e-6 * size, "isa \(isa.rawValue), row \(r), output \(o): \(got) for \(sum)")
                    }
                }
                if half == 0 { fromFloats = values.map(\.bitPattern) } else { #expect(values.map(\.bitPattern) == fromFloats, "isa \(isa.rawValue)") }
            }
            results.append(fromFloats)
        }
        #expect(results.count >= 1)
    }
}
