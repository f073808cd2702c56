import Foundation
import DedogNN
import DedogBreedModel

/// When a photo counts as showing no dog, as another breed, and when the model is unsure (the model file's).
public typealias DecisionThresholds = DedogBreedModel.DecisionThresholds
/// A photo a user confirmed as showing one of the model's breeds (`dedog learn`).
public typealias ConfirmedPhoto = DedogBreedModel.ConfirmedPhoto

/// What a loaded model is and how this classifier runs it: its labels, its backbones, its thresholds, what
/// training measured, its confirmed photos. A value: it does not change when the model file does.
public struct ModelInfo: Sendable {
    /// One class the model can name.
    public struct Label: Sendable, Equatable {
        /// Stable key: the class folder it was trained from (a Stanford Dogs folder for the bundled models).
        public var key: String
        public var name: String
        /// The catalogue id of the breed, where training matched the folder to one.
        public var breed: String?
        /// Taught from a few confirmed photos (`dedog learn`), not trained.
        public var taught: Bool

        init(_ label: DedogBreedModel.Label) {
            key = label.key
            name = label.name
            breed = label.breed
            taught = label.taught != nil
        }
    }

    public struct Backbone: Sendable, Equatable {
        /// `efficientnet-lite0`, `-lite1` or `-lite2`.
        public var architecture: String
        /// The square side, in pixels, the network sees.
        public var inputSize: Int
        public var fit: PhotoFit
        /// Whether each photo is also run mirrored and the two averaged.
        public var averagesMirror: Bool
        /// The arithmetic it runs in with this classifier: int8 where asked for and the file has its activation
        /// ranges, fp32 otherwise.
        public var precision: Precision

        /// `lite1` for `efficientnet-lite1`.
        public static func shortName(_ architecture: String) -> String { DedogNN.Backbone.shortName(architecture) }
    }

    /// The file it was read from.
    public var file: URL
    /// Every class it can name (its breed head's, or the dog classes of an ImageNet head).
    public var labels: [Label]
    public var backbones: [Backbone]
    public var thresholds: DecisionThresholds
    /// What training measured (validation accuracy among it); empty for the ImageNet bases.
    public var training: [String: String]
    /// The photos users confirmed, oldest first.
    public var confirmedPhotos: [ConfirmedPhoto]
    /// Whether it has a breed head of its own, which confirmed photos need (the ImageNet bases have none).
    public var learnsConfirmedPhotos: Bool
}

extension Classifier {
    /// The model as this classifier runs it.
    public var info: ModelInfo {
        ModelInfo(
            file: modelURL,
            labels: breedLabels.map(ModelInfo.Label.init),
            backbones: model.backbones.enumerated().map { b, network in
                ModelInfo.Backbone(architecture: network.backbone.architecture, inputSize: network.input.cropSize,
                                   fit: PhotoFit(network.input.fit), averagesMirror: averagesMirror[b],
                                   precision: Precision(network.precision(asked: configuration.precision.engine)))
            },
            thresholds: decision, training: model.specification.training ?? [:],
            confirmedPhotos: model.confirmedPhotos.photos, learnsConfirmedPhotos: model.breedLabels != nil)
    }
}
