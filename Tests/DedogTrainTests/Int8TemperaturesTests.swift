import Foundation
import Testing
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTestSupport
@_spi(Testing) import DedogTrain

/// The 8-bit temperatures `dedog train` fits, against the same fit recomputed here from the answers classify's own
/// path gives at int8 (each photo prepared by `inputTensor`, one 8-bit session, the head over the views).
@Suite(.serialized) struct Int8TemperaturesTests {
    static let base = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")

    @Test func trainingFitsTheEightBitTemperatureOnItsHeldOutPhotos() throws {
        let data = try SyntheticDataset(name: "int8-temperatures")
        defer { data.remove() }
        var config = TrainConfiguration(dataset: data.root, baseModel: Self.base,
                                        output: data.root.appendingPathComponent("m.safetensors"))
        config.crossValidationBelow = 0
        config.validationFraction = 0.5
        config.options.epochs = 20
        config.options.learningRate = 1e-2
        let report = try Trainer.run(config)
        #expect(report.crossValidationFolds == nil)
        // Loaded whole: its sessions run in floats or in 8 bits, as asked.
        let model = try Model(contentsOf: config.output)
        #expect(model.specification.formatVersion == 5, "8-bit temperatures make the file format 5")
        let fitted = try #require(model.specification.backbones[0].int8BreedTemperature)
        let float = try #require(model.specification.backbones[0].breedHead?.temperature)
        #expect(model.specification.int8CombinedTemperature == nil, "one backbone needs no combined calibration")

        // The held-out photos (the same split), answered as classify answers them at int8.
        let dataset = try Dataset(root: data.root)
        let validation = try TrainingSplit(dataset: dataset, configuration: config).validation
        let network = model.backbones[0], session = network.makeSession(threads: 1, precision: .int8)
        let head = try #require(model.heads[0].breed)
        let decoder = ImageDecoder(options: .init(minimumShorterSide: network.input.resizeShorterSide))
        var logits: [Float] = [], labels: [Int] = []
        for sample in validation {
            guard let image = try? decoder.decode(contentsOf: dataset.url(sample)) else { continue }  // the broken PNG
            let input = try network.inputTensor(for: image, mirrored: model.specification.backbones[0].averagesMirror ?? false)
            logits += try head.averaged(try session.features(input.tensor, batch: input.views), views: input.views)
            labels.append(sample.label)
        }
        #expect(labels.count >= Trainer.minimumCalibrationPhotos, "\(labels.count) held-out photos")
        let expected = Calibration.temperature(logits: logits, labels: labels, classes: 3)
        #expect(abs(fitted - expected) <= 1e-4 * expected, "fitted \(fitted), recomputed \(expected) (float \(float))")
        #expect(abs(fitted - float) > 1e-3 * float, "the 8-bit features differ enough to move the temperature")
        // The same fit on a model whose sessions could run either way takes the 8-bit features.
        let again = try Int8Temperatures.fit(model, photos: validation.map(dataset.url), labels: validation.map(\.label), threads: 2)
        #expect(again.backbones[0].int8BreedTemperature == fitted)
        #expect(model.breedTemperature(backbone: 0, precision: .int8) == fitted)
        #expect(model.breedTemperature(backbone: 0, precision: .fp32) == float)

        // Too few photos to fit one: the description comes back as it was.
        let unchanged = try Int8Temperatures.fit(model, photos: Array(validation.prefix(3).map(dataset.url)),
                                                 labels: validation.prefix(3).map(\.label), threads: 1)
        #expect(unchanged == model.specification)
        #expect(throws: TrainError.labelsMismatch(detail: "1 labels given for 3 calibration photos")) {
            try Int8Temperatures.fit(model, photos: Array(validation.prefix(3).map(dataset.url)), labels: [0], threads: 1)
        }
    }
}
