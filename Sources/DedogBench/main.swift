// dedog-bench: timing probes for scripts/bench-*. Prints machine-readable `key value` lines; the scripts put
// them side by side with their peers. Not a test: nothing here asserts.
import Dedog
import DedogImage
import DedogNN
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

func model() -> EfficientNetLite {
    let args = CommandLine.arguments
    let path = args.firstIndex(of: "--model").map { args[$0 + 1] }
    let url = path.map { URL(fileURLWithPath: $0) } ?? (try! ModelLocator.defaultModel())
    return try! EfficientNetLite(contentsOf: url)
}

/// Random but fixed input in the range of real ones.
func input(batch: Int) -> [Float] {
    var state: UInt64 = 42
    return (0..<(batch * 3 * 224 * 224)).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int32(truncatingIfNeeded: state >> 33)) / Float(Int32.max)
    }
}

let mode = CommandLine.arguments.dropFirst().first ?? "help"
switch mode {
case "latency":
    // latency --threads T --batch B --runs R --warmup W: median ms per forward pass (backbone + ImageNet head).
    let threads = option("--threads", 1), batch = option("--batch", 1)
    let runs = option("--runs", 200), warmup = option("--warmup", 20)
    let network = model()
    let session = network.makeSession(threads: threads)
    let x = input(batch: batch)
    var times: [Double] = []
    for i in 0..<(warmup + runs) {
        let t0 = now()
        let f = try! session.features(x, batch: batch)
        _ = network.imagenetHead!(f, batch: batch)
        if i >= warmup { times.append(now() - t0) }
    }
    print("median_ms \(median(times) * 1000)")
    print("images_per_s \(Double(batch) / median(times))")

case "layers":
    // layers --threads T --batch B --runs R: median ms of each convolution at its real shape (LayerShape table).
    let threads = option("--threads", 1), batch = option("--batch", 1), runs = option("--runs", 50)
    var total = 0.0
    for layer in LayerShape.lite0() {
        let n = batch, cin = layer.inChannels, cout = layer.outChannels, k = layer.kernel
        let w = [Float](repeating: 0.01, count: cout * (layer.kind == .depthwise ? 1 : cin) * k * k)
        let b = [Float](repeating: 0, count: cout)
        let x = [Float](repeating: 0.5, count: n * cin * layer.height * layer.width)
        var times: [Double] = []
        let run: () -> Void
        switch layer.kind {
        case .stem:
            let stem = StemConvolution(inChannels: cin, outChannels: cout, kernel: k, stride: layer.stride, weight: w, bias: b)
            run = { _ = stem(x, batch: n, height: layer.height, width: layer.width, threads: threads) }
        case .depthwise:
            let depthwise = DepthwiseConvolution(channels: cin, kernel: k, stride: layer.stride, weight: w, bias: b)
            run = { _ = depthwise(x, batch: n, height: layer.height, width: layer.width, threads: threads) }
        default:
            let pointwise = PointwiseConvolution(inChannels: cin, outChannels: cout, weight: w, bias: b,
                                                 clampsToSix: layer.kind != .project)
            run = { _ = pointwise(x, pixels: n * layer.height * layer.width, threads: threads) }
        }
        for i in 0..<(runs + 5) {
            let t0 = now()
            run()
            if i >= 5 { times.append(now() - t0) }
        }
        total += median(times)
        print(String(format: "%-10@ %-9@ %2d %4d->%4d @%3d  %8.3f ms", layer.name as NSString,
                     layer.kind.rawValue as NSString, k, cin, cout, layer.height, median(times) * 1000))
    }
    print(String(format: "total %.3f ms", total * 1000))

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
            _ = preprocessing.tensor(image)
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
    let preprocessing = network.model.preprocessing
    let decoder = ImageDecoder(options: .init(minimumShorterSide: preprocessing.resizeShorterSide))
    _ = FileManager.default.createFile(atPath: args[3], contents: nil)
    let out = FileHandle(forWritingAtPath: args[3])!
    for path in list where !path.isEmpty {
        let image = try! decoder.decode(contentsOf: URL(fileURLWithPath: path))
        var captured: [Float] = []
        _ = try! session.features(preprocessing.tensor(image, mirrored: mirror), batch: 1) { name, values in
            if name == stage { captured = values }
        }
        out.write(captured.withUnsafeBufferPointer { Data(buffer: $0) })
    }
    try! out.close()

default:
    print("usage: dedog-bench latency|layers|decode|activations [--threads T] [--batch B] [--runs R] [--model FILE] [FILES]")
}
