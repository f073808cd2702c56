import Foundation
import DedogTestSupport
import DedogNN
import DedogBreedModel

/// The bundled Lite0 ImageNet model file, made by scripts/convert-weights.
enum BundledModel {
    static let url = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")
    static let shared = Shared { try Model(contentsOf: url) }
    static var model: Model { get throws { try shared.value } }
}
