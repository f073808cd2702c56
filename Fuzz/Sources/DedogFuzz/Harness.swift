@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogImage
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel
import Foundation

/// Which reader to fuzz, from `DEDOG_FUZZ_TARGET`: image, model, description or catalogue.
nonisolated(unsafe) var target = "image"
/// For `description`: the bundled Lite0 model's real tensors, whose description each input replaces.
nonisolated(unsafe) var realTensors: SafeTensors?
/// A small photo-like image that every successfully loaded model classifies.
let probe = try! RGBImage(width: 48, height: 40, pixels: (0..<(48 * 40 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 37) })

/// What a loaded model does with a photo: everything the description steers (preprocessing, heads, labels,
/// temperatures, thresholds, mirror averaging) runs; it must end in a value or a typed error.
func classifyProbe(_ model: Model) {
    guard let classifier = try? Classifier(model: model, modelURL: URL(fileURLWithPath: "fuzz")) else { return }
    _ = try? classifier.classify(probe, top: 5)
}

/// LeakSanitizer's switches: what is allocated between them is never reported.
@_silgen_name("__lsan_disable") func lsanDisable()
@_silgen_name("__lsan_enable") func lsanEnable()

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    target = ProcessInfo.processInfo.environment["DEDOG_FUZZ_TARGET"] ?? "image"
    if target == "description" {
        let path = ProcessInfo.processInfo.environment["DEDOG_FUZZ_MODEL"] ?? "../models/efficientnet-lite0-imagenet.safetensors"
        // Kept for the whole run, but LeakSanitizer cannot follow Swift's pointers that carry an enum's tag in
        // their spare bits (Data's storage inside a slice): left visible, the file's storage is reported as a
        // leak as soon as an input leaves anything behind (generic metadata made on first use, say).
        lsanDisable()
        realTensors = try? SafeTensors(contentsOf: URL(fileURLWithPath: path))
        lsanEnable()
        if realTensors == nil { fatalError("DEDOG_FUZZ_MODEL: cannot read \(path)") }
        // Let go of the model before LeakSanitizer's own exit check runs (it was registered first, so it runs
        // last): otherwise the 18 MB kept for the whole run is reported as a leak against the last input.
        atexit { realTensors = nil }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    switch target {
    case "image":
        // Modest limits keep each run fast; the code paths are the same as with the defaults.
        var options = ImageDecoder.Options(maxPixels: 4_000_000, minimumShorterSide: 64)
        _ = try? ImageDecoder(options: options).decode(bytes, name: "fuzz")
        options.allowsDamagedData = true
        _ = try? ImageDecoder(options: options).decode(bytes, name: "fuzz")
        // Full size, with the HEVC in-loop filters, and only the HEIC tiles under a rectangle.
        options.minimumShorterSide = nil
        options.neededRegion = PixelRect(x: 5, y: 3, width: 40, height: 30)
        _ = try? ImageDecoder(options: options).decode(bytes, name: "fuzz")
    case "model":
        if let tensors = try? SafeTensors(Data(bytes), file: "fuzz") {
            _ = try? ModelDescription(from: tensors)
            if let model = try? Model(tensors: tensors) { classifyProbe(model) }
            // Loaded for 8 bits alone (what classify does with VNNI): the 1×1 layers quantized from the file's bytes.
            if let model = try? Model(tensors: tensors, precision: .int8) { classifyProbe(model) }
            for name in tensors.entries.keys { _ = try? tensors.floats(name, shape: tensors.entries[name]!.shape) }
        }
    case "description":
        let tensors = realTensors!.replacingMetadata([ModelDescription.metadataKey: String(decoding: bytes, as: UTF8.self)])
        if let model = try? Model(tensors: tensors) { classifyProbe(model) }
        if let model = try? Model(tensors: tensors, precision: .int8) { classifyProbe(model) }
    case "catalogue":
        if let catalogue = try? Catalogue(Data(bytes), file: "fuzz") {
            _ = catalogue.search("ovcak")
            _ = catalogue.list(language: .cs)
        }
    default:
        fatalError("DEDOG_FUZZ_TARGET must be image, model, description or catalogue")
    }
    return 0
}
