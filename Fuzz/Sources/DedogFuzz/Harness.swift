import Dedog
import Foundation

/// Which reader to fuzz, from `DEDOG_FUZZ_TARGET`: image, model or catalogue.
nonisolated(unsafe) var target = "image"

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    target = ProcessInfo.processInfo.environment["DEDOG_FUZZ_TARGET"] ?? "image"
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
    case "model":
        if let tensors = try? SafeTensors(Data(bytes), file: "fuzz") {
            _ = try? ModelDescription(from: tensors)
            _ = try? EfficientNetLite(tensors: tensors)
            for name in tensors.entries.keys { _ = try? tensors.floats(name, shape: tensors.entries[name]!.shape) }
        }
    case "catalogue":
        if let catalogue = try? Catalogue(Data(bytes), file: "fuzz") {
            _ = catalogue.search("ovcak")
            _ = catalogue.list(language: .cs)
        }
    default:
        fatalError("DEDOG_FUZZ_TARGET must be image, model or catalogue")
    }
    return 0
}
