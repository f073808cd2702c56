// dedog-bench: timing probes for scripts/bench-*. Prints machine-readable `key value` lines; the scripts put
// them side by side with their peers. Not a test: nothing here asserts.
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogImage
@_spi(Testing) import DedogTrain
@_spi(Benchmarks) @_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel
import Foundation

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func option(_ name: String, _ fallback: Int) -> Int {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Int(args[i + 1]) else { return fallback }
    return v
}

/// The kernels DEDOG_KERNELS names (as for dedog), else the best.
func namedKernels() -> KernelSet { try! KernelSet.named(ProcessInfo.processInfo.environment["DEDOG_KERNELS"]) }

/// The model `--model` names, its 8-bit layers made for `kernels`.
func loadModel(kernels: KernelSet = namedKernels()) -> Model {
    let args = CommandLine.arguments
    let path = args.firstIndex(of: "--model").map { args[$0 + 1] }
    // The Lite0 model by default: the peer runs the same weights.
    let url = path.map { URL(fileURLWithPath: $0) } ?? (try! ModelLocator.url(ofBundled: "fast"))
    return try! Model(contentsOf: url, kernels: kernels)
}

/// `--precision int8|fp32` (default int8, as classify runs).
func precision() -> DedogNN.Precision {
    let args = CommandLine.arguments
    return args.firstIndex(of: "--precision").flatMap { args.indices.contains($0 + 1) ? DedogNN.Precision(rawValue: args[$0 + 1]) : nil } ?? .int8
}

/// The model's first backbone.
func model() -> EfficientNetLite { loadModel().backbones[0] }

/// Random but fixed input in the range of real ones.
func input(batch: Int, size: Int) -> [Float] {
    var state: UInt64 = 42
    return (0..<(batch * 3 * size * size)).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int32(truncatingIfNeeded: state >> 33)) / Float(Int32.max)
    }
}

/// MODEL RULE.json|none: the model file written again with the decision's `field` set to the JSON of a `Rule`, or
/// taken out with `none`; weights and heads as stored. `edit` changes the rest of the description, given the rule
/// file's JSON (nil for `none`).
func setDecisionRule<Rule: Decodable>(_ rule: Rule.Type, _ field: WritableKeyPath<DecisionThresholds, Rule?>,
                                      also edit: (inout ModelDescription, Data?) -> Void = { _, _ in }) {
    let args = CommandLine.arguments
    guard args.count == 4 else { print("usage: dedog-bench \(args[1]) MODEL RULE.json|none"); exit(64) }
    let url = URL(fileURLWithPath: args[2])
    let file = try! SafeTensors(contentsOf: url)
    var description = try! ModelDescription(from: file)
    let json = args[3] == "none" ? nil : try! Data(contentsOf: URL(fileURLWithPath: args[3]))
    description.decision[keyPath: field] = json.map { try! JSONDecoder().decode(Rule.self, from: $0) }
    edit(&description, json)
    try! ModelFile.replacingDescription(of: file, with: description, to: url)
}

let mode = CommandLine.arguments.dropFirst().first ?? "help"
switch mode {
case "latency":
    // latency --threads T --batch B --runs R --warmup W [--size S]: median ms per forward pass (backbone + ImageNet
    // head) at the model's own input size unless --size says otherwise.
    let threads = option("--threads", 1), batch = option("--batch", 1)
    let runs = option("--runs", 200), warmup = option("--warmup", 20)
    // DEDOG_KERNELS forces a kernel build, as it does for dedog.
    let kernels = namedKernels()
    let whole = loadModel(kernels: kernels), network = whole.backbones[0]
    let session = network.makeSession(threads: threads, kernels: kernels, precision: precision(),
                                      bandsBlocks: !CommandLine.arguments.contains("--unbanded"))
    let size = option("--size", network.input.cropSize)
    let x = input(batch: batch, size: size)
    var times: [Double] = []
    for i in 0..<(warmup + runs) {
        let t0 = now()
        let f = try! session.features(x, batch: batch, height: size, width: size)
        _ = try! whole.heads[0].imagenet!(f, batch: batch, kernels: kernels)
        if i >= warmup { times.append(now() - t0) }
    }
    print("kernels \(session.kernels)")
    print("precision \(session.precision)")
    print("median_ms \(median(times) * 1000)")
    print("images_per_s \(Double(batch) / median(times))")

case "layers":
    // layers --threads T --runs R [--size S] [--kernels SET,SET] [--unbanded]: each step of the real network's
    // execution plan, timed inside whole forward passes: median ms, GFLOP/s and share of the pass, per kernel set,
    // with each set's FMA ceiling on one core.
    let threads = option("--threads", 1), runs = option("--runs", 50)
    let network = model()
    let size = option("--size", network.input.cropSize)
    let args = CommandLine.arguments
    let sets = args.firstIndex(of: "--kernels").map { args[$0 + 1].split(separator: ",").compactMap { KernelSet(rawValue: String($0)) } }
        ?? KernelSet.supported.reversed()
    let bands = !args.contains("--unbanded")
    // In 8 bits the ceiling is the byte dot product's (VNNI where the CPU has it), in operations per second.
    let int8 = precision() == .int8 && network.activationRanges != nil
    var columns: [(KernelSet, [StepTiming], Double)] = []
    for set in sets {
        // Each set runs the same 8-bit layers, loaded for it.
        let timings = try! loadModel(kernels: set).backbones[0]
            .makeSession(threads: threads, kernels: set, precision: precision(), bandsBlocks: bands)
            .profile(input(batch: 1, size: size), height: size, width: size, runs: runs)
        columns.append((set, timings, (int8 ? set.measuredPeakByteMultiplyAdds() : set.measuredPeakMultiplyAdds()) * 2e-9))
    }
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    func left(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
    print("\(network.backbone) \(size)x\(size), \(precision() == .int8 && network.activationRanges != nil ? "int8" : "fp32"), one image, "
          + "\(threads) thread(s), \(bands ? "banded blocks" : "unbanded"), median of \(runs) passes")
    print((int8 ? "8-bit multiply-add peak per core (GOP/s): " : "FMA peak per core (GFLOP/s): ")
          + columns.map { "\($0.0)\(int8 ? " (" + $0.0.byteMultiply + ")" : "") \(String(format: "%.1f", $0.2))" }.joined(separator: ", "))
    var header = pad("step", 9) + pad("kind", 10) + pad("shape", 26)
    for (set, _, _) in columns {
        header += "| " + pad(set.rawValue, 8) + left("ms", 7) + left(int8 ? "GOP/s" : "GF/s", 7) + left("peak", 6) + left("share", 7) + " "
    }
    print(header)
    for (i, step) in columns[0].1.enumerated() {
        var line = pad(step.name, 9) + pad(step.kind, 10) + pad(step.shape, 26)
        for (_, timings, ceiling) in columns {
            let total = timings.reduce(0) { $0 + $1.seconds }, t = timings[i].seconds
            let flops = Double(2 * timings[i].multiplyAccumulates), rate = t > 0 ? flops / t * 1e-9 : 0
            line += "| " + pad("", 8) + left(String(format: "%.3f", t * 1000), 7)
                + left(String(format: "%.1f", rate), 7) + left(String(format: "%.0f%%", rate / ceiling * 100), 6)
                + left(String(format: "%.1f%%", t / total * 100), 7) + " "
        }
        print(line)
    }
    var totals = pad("total", 45)
    for (_, timings, _) in columns {
        let total = timings.reduce(0) { $0 + $1.seconds }
        let flops = Double(2 * timings.reduce(0) { $0 + $1.multiplyAccumulates })
        totals += "| " + pad("", 8) + left(String(format: "%.3f", total * 1000), 7)
            + left(String(format: "%.1f", flops / total * 1e-9), 7) + pad("", 14)
    }
    print(totals)
    // Share of time by kind of step, for the first (fastest) set.
    var byKind: [String: Double] = [:]
    for t in columns[0].1 { byKind[t.kind, default: 0] += t.seconds }
    let all = byKind.values.reduce(0, +)
    print("by kind (\(columns[0].0)): " + byKind.sorted { $0.value > $1.value }
        .map { String(format: "%@ %.1f%%", $0.key as NSString, $0.value / all * 100) }.joined(separator: ", "))

case "startup":
    // startup FILE [--model M] [--runs R] [--precision P]: where a one-photo classify spends its time inside the
    // process, as medians: reading the model file, building the network from it (only what the precision runs, as
    // classify builds it), loading the catalogue, decoding and preprocessing the photo, the network and heads.
    let runs = option("--runs", 10)
    let args = CommandLine.arguments
    let photo = URL(fileURLWithPath: args[2])
    let url = try! ModelLocator.model(args.firstIndex(of: "--model").map { args[$0 + 1] }, environment: [:])
    let precision = args.firstIndex(of: "--precision").flatMap { DedogNN.Precision(rawValue: args[$0 + 1]) } ?? .preferred(for: KernelSet.best)
    var phases: [String: [Double]] = [:]
    func timed<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        let t0 = now()
        let result = try body()
        phases[name, default: []].append(now() - t0)
        return result
    }
    for _ in 0..<runs {
        let tensors = try! timed("read model file") { try SafeTensors(contentsOf: url) }
        let model = try! timed("build network") { try Model(tensors: tensors, precision: precision) }
        _ = try! timed("load catalogue") { try Catalogue.bundled() }
        let largest = model.backbones.map(\.input.resizeShorterSide).max()
        let image = try! timed("decode") {
            try ImageDecoder(options: .init(minimumShorterSide: largest)).decode(contentsOf: photo)
        }
        let classifier = try! Classifier(model: model, modelURL: url, configuration: .init(threadsPerWorker: option("--threads", 2),
                                                                                          precision: Dedog.Precision(rawValue: precision.rawValue)))
        _ = try! timed("preprocess + networks + heads") { try classifier.classify(image) }
    }
    for name in ["read model file", "build network", "load catalogue", "decode", "preprocess + networks + heads"] {
        print(String(format: "%-22@ %7.2f ms", name as NSString, median(phases[name]!) * 1000))
    }

case "decode":
    // decode FILE... --runs R: median ms from file to the 224×224 network input (decode + resize + crop + normalise).
    let runs = option("--runs", 20)
    let files = CommandLine.arguments.dropFirst(2).filter { !$0.hasPrefix("--") && Int($0) == nil }
    let preprocessing = Preprocessing()
    // --full decodes at full size (no DCT scaling), to show what the scaling saves.
    let full = CommandLine.arguments.contains("--full")
    let decoder = ImageDecoder(options: .init(minimumShorterSide: full ? nil : preprocessing.resizeShorterSide))
    for file in files {
        var times: [Double] = []
        for _ in 0..<(runs + 2) {
            let t0 = now()
            let image = try! decoder.decode(contentsOf: URL(fileURLWithPath: file))
            _ = try! preprocessing.tensor(image)
            times.append(now() - t0)
        }
        print("decode_ms \(file) \(median(Array(times.dropFirst(2))) * 1000)")
    }

case "activations":
    // activations LIST OUT --stage block_13 [--mirror]: for each image path in LIST (one per line), the named
    // stage's output (NCHW float32, as the golden files) appended to OUT. Feeds scripts/experiments.
    let args = CommandLine.arguments
    let list = try! String(contentsOfFile: args[2], encoding: .utf8).split(separator: "\n").map(String.init)
    let stage = args.firstIndex(of: "--stage").map { args[$0 + 1] } ?? "block_13"
    let mirror = args.contains("--mirror")
    let network = model()
    let session = network.makeSession(threads: option("--threads", 2))
    let preprocessing = Preprocessing(network.input)
    let decoder = ImageDecoder(options: .init(minimumShorterSide: preprocessing.resizeShorterSide))
    _ = FileManager.default.createFile(atPath: args[3], contents: nil)
    let out = FileHandle(forWritingAtPath: args[3])!
    for path in list where !path.isEmpty {
        let image = try! decoder.decode(contentsOf: URL(fileURLWithPath: path))
        var captured: [Float] = []
        _ = try! session.features(try! preprocessing.tensor(image, mirrored: mirror), batch: 1) { name, values in
            if name == stage { captured = values }
        }
        out.write(captured.withUnsafeBufferPointer { Data(buffer: $0) })
    }
    try! out.close()

case "features":
    // features MODEL LIST OUT [--threads T] [--crops]: pooled features of the photos LIST names, or of their dogs'
    // crops (see Features.swift).
    let args = CommandLine.arguments
    try! dumpFeatures(model: URL(fileURLWithPath: args[2]), list: URL(fileURLWithPath: args[3]),
                      out: URL(fileURLWithPath: args[4]), threads: option("--threads", 2), crops: args.contains("--crops"))

case "pyramid-features":
    // pyramid-features MODEL BACKBONE CROPS.u8 SIZE OUT [--threads T]: the stride-16 and stride-32 maps of network
    // inputs made elsewhere (see PyramidFeatures.swift).
    let args = CommandLine.arguments
    let model = try! Model(contentsOf: URL(fileURLWithPath: args[2]), kernels: namedKernels())
    try! dumpPyramidFeatures(model: model, backbone: Int(args[3])!, input: URL(fileURLWithPath: args[4]), size: Int(args[5])!,
                             out: URL(fileURLWithPath: args[6]), threads: option("--threads", 2))

case "restore-proportions":
    // restore-proportions BOXES SOURCE OUT [--threads T]: stretched photos in their true proportions (RestoredProportions.swift).
    let args = CommandLine.arguments
    try! restoreProportions(boxes: URL(fileURLWithPath: args[2]), source: URL(fileURLWithPath: args[3]),
                            out: URL(fileURLWithPath: args[4]), threads: option("--threads", 2))

case "check-sets":
    // check-sets DATASET OUT: the "where is the dog" check sets (see CheckSets.swift).
    let args = CommandLine.arguments
    try! makeCheckSets(dataset: URL(fileURLWithPath: args[2]), out: URL(fileURLWithPath: args[3]))

case "first-look":
    // first-look LIST [--threads T]: the first look's signals and the full look's answer, a JSON line per photo
    // (see FirstLookStudy.swift).
    try! firstLookStudy(list: URL(fileURLWithPath: CommandLine.arguments[2]), threads: option("--threads", 2))

case "looks":
    // looks MODEL SET [--threads T] [--every N]: one JSON line per photo of a check set (see CheckSets.swift).
    let args = CommandLine.arguments
    try! lookStudy(model: URL(fileURLWithPath: args[2]), set: URL(fileURLWithPath: args[3]), threads: option("--threads", 2), every: option("--every", 1))

case "pointwise8":
    // pointwise8 [--runs R] [--threads T] [--weight-bits B]: every 1×1 convolution of Lite0 at 224, the FP32 kernel
    // against the 8-bit one (issue 25), through their safe entry points on random data: median ms, GOP/s and the 8-bit
    // one's share of the byte multiply-add ceiling of one core. Not yet in the engine: this measures the kernels alone.
    // --weight-bits 7 draws weights within ±63, which AVX2 multiplies without the signed inputs' extra work (its
    // `vpmaddubsw` pair sums cannot saturate): the price of exact 8-bit sums on AVX2 (issue 69).
    let runs = option("--runs", 30), threads = option("--threads", 1), weightBits = option("--weight-bits", 8)
    let weightTop = weightBits == 7 ? 63 : 127
    let set = KernelSet.best
    let ceiling = set.measuredPeakByteMultiplyAdds() * 2e-9
    print("Lite0 224x224 1x1 convolutions, \(threads) thread(s), \(set), 8-bit multiply: \(set.byteMultiply), "
          + String(format: "ceiling %.0f GOP/s per core", ceiling))
    print("layer     shape                 fp32 ms  GF/s | int8 ms  GOP/s  of ceiling | fp32/int8")
    var totals = (0.0, 0.0)
    for layer in model().backbone.layers(height: 224, width: 224) where layer.kernel == 1 && layer.kind != .depthwise {
        let pixels = layer.height * layer.width, cin = layer.inChannels, cout = layer.outChannels
        var dice: UInt64 = 1
        func next() -> Int { dice = dice &* 6364136223846793005 &+ 1442695040888963407; return Int(dice >> 40) }
        let floats = (0..<(pixels * cin)).map { _ in Float(next() % 1000) / 500 }
        let fp32 = try! PointwiseConvolution(inChannels: cin, outChannels: cout,
                                             weight: (0..<(cin * cout)).map { _ in Float(next() % 200) / 1000 - 0.1 },
                                             bias: [Float](repeating: 0, count: cout), clampsToSix: true)
        let bytes = (0..<(pixels * cin)).map { _ in UInt8(truncatingIfNeeded: next()) }
        let int8 = try! QuantizedPointwise(inChannels: cin, outChannels: cout,
                                           weight: (0..<(cin * cout)).map { _ in Int8(next() % (2 * weightTop + 1) - weightTop) }, bias: nil,
                                           scale: [Float](repeating: 1e-4, count: cout), inputZero: [0],
                                           store: .bytes(zero: [0], low: 0, high: 255))
        func timed(_ body: () -> Void) -> Double {
            var times: [Double] = []
            for _ in 0..<runs { let t0 = now(); body(); times.append(now() - t0) }
            return median(times)
        }
        let a = timed { _ = try! fp32(floats, pixels: pixels, threads: threads, kernels: set) }
        let b = timed { _ = try! int8(bytes, pixels: pixels, threads: threads, kernels: set) }
        totals.0 += a; totals.1 += b
        let ops = 2.0 * Double(pixels * cin * cout)
        let shape = "\(cin)→\(cout) @\(layer.height)x\(layer.width)"
        print(layer.name.padding(toLength: 10, withPad: " ", startingAt: 0) + shape.padding(toLength: 22, withPad: " ", startingAt: 0)
              + String(format: "%7.3f %5.1f | %7.3f %6.1f %9.0f%% | %5.2f", a * 1e3, ops / a * 1e-9, b * 1e3, ops / b * 1e-9,
                       ops / b * 1e-9 / ceiling * 100, a / b))
    }
    print(String(format: "total: fp32 %.3f ms, int8 %.3f ms: %.2fx", totals.0 * 1e3, totals.1 * 1e3, totals.0 / totals.1))

case "set-fit":
    // set-fit MODEL crop|pad|squeeze: the model file written again with every backbone's fit changed, weights and
    // heads as stored (how the bundled models came to pad: their photos were squares, so nothing else changes).
    let args = CommandLine.arguments
    guard args.count == 4, let fit = InputDescription.Fit(rawValue: args[3]) else {
        print("usage: dedog-bench set-fit MODEL crop|pad|squeeze"); exit(64)
    }
    let url = URL(fileURLWithPath: args[2])
    let file = try! SafeTensors(contentsOf: url)
    var description = try! ModelDescription(from: file)
    for b in description.backbones.indices { description.backbones[b].preprocessing.fit = fit }
    try! ModelFile.replacingDescription(of: file, with: description, to: url)

case "set-unknown-breed-rule":
    // set-unknown-breed-rule MODEL RULE.json|none: the model file written again with `decision.unknownBreed` set to the
    // rule scripts/experiments/fit_unknown_breed_rule.py fitted (the JSON of `UnknownBreedRule`), or taken out; the
    // unsure thresholds the rule was fitted with (its file's `unsureBelow` and `unsureMargin`, where it has them) too.
    struct Unsure: Decodable { var unsureBelow: Float?, unsureMargin: Float? }
    setDecisionRule(UnknownBreedRule.self, \.unknownBreed) { description, json in
        let unsure = json.map { try! JSONDecoder().decode(Unsure.self, from: $0) }
        if let below = unsure?.unsureBelow { description.decision.unsureBelow = below }
        if let margin = unsure?.unsureMargin { description.decision.unsureMargin = margin }
    }

case "set-cat-rule":
    // set-cat-rule MODEL RULE.json|none: the same for `decision.cat`, the rule scripts/experiments/fit_cat_rule.py
    // fitted (the JSON of `CatRule`).
    setDecisionRule(CatRule.self, \.cat)

case "set-seen-dog-rule":
    // set-seen-dog-rule MODEL RULE.json|none: the same for `decision.seenDog`, the rule
    // scripts/experiments/seen_dog_rule.py chose (the JSON of `SeenDogRule`).
    setDecisionRule(SeenDogRule.self, \.seenDog)

case "seen-dog":
    // seen-dog MODEL LIST [--threads T]: what the seen-dog rule weighs, a JSON line per photo (see SeenDog.swift).
    try! seenDogStudy(model: URL(fileURLWithPath: CommandLine.arguments[2]), list: URL(fileURLWithPath: CommandLine.arguments[3]),
                      threads: option("--threads", 2))

case "held-back-look":
    // held-back-look MODEL LIST [--threads T]: the whole photo's answer and the held-back dog's own look, a JSON line
    // per photo (see SeenDog.swift).
    try! heldBackLookStudy(model: URL(fileURLWithPath: CommandLine.arguments[2]), list: URL(fileURLWithPath: CommandLine.arguments[3]),
                           threads: option("--threads", 2))

case "set-kind-rule":
    // set-kind-rule MODEL RULE.json|none: the same for `decision.kind`, the rule scripts/experiments/kind_of_dog.py
    // fitted (the JSON of `KindRule`); every breed label also gets its kind (`Label.kind`) from the bundled catalogue.
    let catalogue = try! Catalogue.bundled()
    setDecisionRule(KindRule.self, \.kind) { description, _ in
        for b in description.backbones.indices {
            guard var head = description.backbones[b].breedHead else { continue }
            for l in head.labels.indices {
                head.labels[l].kind = catalogue.breed(id: head.labels[l].breed, label: head.labels[l].key)?.kind
            }
            description.backbones[b].breedHead = head
        }
    }

case "set-detector":
    // set-detector MODEL DETECTOR|none: MODEL written again with the dog detector of the detector file DETECTOR
    // (scripts/train_dog_detector.py wrote it), or without one.
    let args = CommandLine.arguments
    let url = URL(fileURLWithPath: args[2])
    let file = try! SafeTensors(contentsOf: url)
    try! ModelFile.replacingDetector(of: file, model: try! ModelDescription(from: file),
                                     with: args[3] == "none" ? nil : try! SafeTensors(contentsOf: URL(fileURLWithPath: args[3])), to: url)

case "detect":
    detect()

case "crop-or-whole":
    cropOrWhole()

case "detector-time":
    detectorTime()

case "int8-error":
    // int8-error PHOTO... [--model FILE]: per stage (stem, each block's output, head) the relative error of the 8-bit
    // pass against the float pass, ‖int8 − fp32‖ / ‖fp32‖, averaged over the photos: where 8 bits lose precision.
    let whole = loadModel()
    var network = whole.backbones[0]
    // --widen NAME FACTOR (repeatable): that tensor's ranges times FACTOR, to see how much its rounding costs.
    if var ranges = network.activationRanges {
        let args = CommandLine.arguments
        for i in args.indices where args[i] == "--widen" && i + 2 < args.count {
            ranges.ranges[args[i + 1]] = ranges.ranges[args[i + 1]]?.map { $0 * Float(args[i + 2])! }
        }
        network = try! network.withActivationRanges(ranges)
    }
    let photos = CommandLine.arguments.dropFirst(2).prefix { !$0.hasPrefix("--") }
    var sums: [String: Double] = [:], order: [String] = []
    for photo in photos {
        let image = try! ImageDecoder(options: .init()).decode(contentsOf: URL(fileURLWithPath: String(photo)))
        let x = try! network.inputTensor(for: image, mirrored: false).tensor
        var floats: [String: [Float]] = [:]
        _ = try! network.makeSession(precision: .fp32).features(x, batch: 1, tap: { floats[$0] = $1 })
        _ = try! network.makeSession(precision: .int8).features(x, batch: 1, tap: { name, ours in
            let reference = floats[name]!
            let noise = zip(ours, reference).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }
            let signal = reference.reduce(0.0) { $0 + Double($1 * $1) }
            if sums[name] == nil { order.append(name) }
            sums[name, default: 0] += (noise / max(signal, 1e-30)).squareRoot()
        })
    }
    for name in order { print(String(format: "%-9@ %.4f", name as NSString, sums[name]! / Double(photos.count))) }

case "calibrate":
    // calibrate MODEL PHOTO_LIST [--photos N] [--threads T] [--method M] [--per-channel]: every backbone's activation
    // ranges measured on the photos
    // the list names (one path a line; at most N, spread evenly), written into the model file, weights as stored.
    let args = CommandLine.arguments
    guard args.count >= 4 else { print("usage: dedog-bench calibrate MODEL PHOTO_LIST [--photos N] [--threads T]"); exit(64) }
    let url = URL(fileURLWithPath: args[2])
    let listed = try! String(contentsOfFile: args[3], encoding: .utf8).split(separator: "\n").map { URL(fileURLWithPath: String($0)) }
    let photos = ActivationCalibration.spread(listed, count: option("--photos", ActivationCalibration.defaultPhotos))
    let file = try! SafeTensors(contentsOf: url)
    var description = try! ModelDescription(from: file)
    let networks = try! Model(tensors: file).backbones
    for (b, network) in networks.enumerated() {
        let t0 = now()
        let (ranges, skipped) = try! ActivationCalibration.ranges(of: network, photos: photos,
                                                                   threads: option("--threads", 2),
                                                                   method: args.firstIndex(of: "--method").map { args[$0 + 1] } ?? ActivationCalibration.defaultMethod,
                                                                   perChannel: args.contains("--per-channel"))
        description.backbones[b].activationRanges = ranges
        print("backbone \(b) \(network.backbone.architecture): \(ranges.photos) photos, \(skipped) skipped, "
              + String(format: "%.1f s", now() - t0))
    }
    try! ModelFile.replacingDescription(of: file, with: description, to: url)

case "int8-temperatures":
    // int8-temperatures MODEL DATASET SPLIT [--validation-split FILE] [--threads T]: the 8-bit temperatures
    // (`Int8Temperatures`) of a trained model, fitted on the photos its training held out: the split `dedog train
    // DATASET --split SPLIT [--validation-split FILE]` made with the seed in the model's training record (the bundled
    // models name their validation split: scripts/train-default-model). Written into the model file, every tensor as
    // stored.
    let args = CommandLine.arguments
    guard args.count >= 5 else { print("usage: dedog-bench int8-temperatures MODEL DATASET SPLIT [--validation-split FILE] [--threads T]"); exit(64) }
    let url = URL(fileURLWithPath: args[2])
    let file = try! SafeTensors(contentsOf: url)
    let model = try! Model(tensors: file, precision: .int8)
    var configuration = TrainConfiguration(dataset: URL(fileURLWithPath: args[3]), baseModel: url, output: url)
    configuration.split = URL(fileURLWithPath: args[4])
    if let i = args.firstIndex(of: "--validation-split"), i + 1 < args.count {
        configuration.validationSplit = URL(fileURLWithPath: args[i + 1])
    }
    configuration.options.seed = UInt64(model.specification.training?["seed"] ?? "") ?? configuration.options.seed
    let dataset = try! Dataset(root: configuration.dataset)
    let validation = try! TrainingSplit(dataset: dataset, configuration: configuration).validation
    let keys = (model.breedLabels ?? []).map(\.key)
    let labels = validation.map { keys.firstIndex(of: dataset.classes[$0.label]) ?? -1 }
    let t0 = now()
    let description = try! Int8Temperatures.fit(model, photos: validation.map(dataset.url), labels: labels,
                                                threads: option("--threads", 2))
    for (b, backbone) in description.backbones.enumerated() {
        print("backbone \(b) \(backbone.architecture): temperature \(backbone.breedTemperature(for: .fp32)) fp32, "
              + "\(backbone.breedTemperature(for: .int8)) int8")
    }
    print("combined: \(description.combinedTemperature(for: .fp32)) fp32, \(description.combinedTemperature(for: .int8)) int8; "
          + "\(validation.count) photos, " + String(format: "%.1f s", now() - t0))
    try! ModelFile.replacingDescription(of: file, with: description, to: url)

default:
    print("usage: dedog-bench latency|layers|decode|activations|check-sets|looks|pointwise8|set-fit|set-unknown-breed-rule|calibrate|int8-temperatures [--threads T] [--batch B] [--runs R] [--model FILE] [FILES]")
}
