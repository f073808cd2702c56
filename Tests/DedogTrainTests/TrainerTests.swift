import Foundation
import Testing
import DedogTestSupport
import DedogNN
import DedogBreedModel
import DedogTrain

@Suite(.serialized) struct TrainerTests {
    static let base = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")

    func configuration(_ data: SyntheticDataset, output: String, cache: URL? = nil) -> TrainConfiguration {
        var config = TrainConfiguration(dataset: data.root, baseModel: Self.base,
                                        output: data.root.appendingPathComponent(output))
        config.validationFraction = 0.25
        config.cacheRoot = cache
        config.threads = 2
        config.options.epochs = 40
        config.options.learningRate = 1e-2
        return config
    }

    @Test func trainsToHighAccuracyAndTheModelFileRoundTrips() throws {
        let data = try SyntheticDataset(name: "accuracy")
        defer { data.remove() }
        let report = try Trainer.run(configuration(data, output: "model.safetensors"))
        #expect(report.classes == ["checks", "discs", "stripes"])
        // 24 photos are too few to hold some out: every one is trained on and answered by 5-fold cross-validation.
        #expect(report.trainImages == 24 && report.validationImages == 24)
        #expect(report.crossValidationFolds == 5)
        #expect(report.validation.top1 == 1.0, "validation top-1 \(report.validation.top1)")
        #expect(report.unreadable.map(\.path) == ["discs/broken.png"])
        #expect(report.notImages.map(\.path) == ["stripes/notes.txt"])

        let trained = try Model(contentsOf: data.root.appendingPathComponent("model.safetensors"))
        let head = try #require(trained.specification.backbones[0].breedHead)
        #expect(head.labels.map(\.key) == ["checks", "discs", "stripes"])
        #expect((head.temperature ?? 0) > 0)
        #expect(trained.heads[0].imagenet != nil)  // kept for the no-dog verdict
        let model = try Model(contentsOf: data.root.appendingPathComponent("model.safetensors")).specification
        #expect(model.formatVersion == 4, "a model with activation ranges is format 4")
        #expect(model.backbones[0].preprocessing.fit == .pad, "new models see the whole photo")
        // Calibrated for 8 bits on its readable training photos, as classify will prepare them.
        let ranges = try #require(model.backbones[0].activationRanges)
        #expect(ranges.photos == report.trainImages && ranges.method == "min-max")
        #expect(trained.backbones[0].precisions == [.fp32, .int8])
        #expect(model.backbones[0].int8BreedTemperature == nil, "cross-validated: no held-out photo the head did not learn from")
        #expect(model.combinedTemperature == nil, "one backbone needs no combined calibration")
        #expect(model.training?["classes"] == "3")
        #expect(model.training?["backbones"] == "lite0")
        // A shared model names the dataset folder only: no absolute path, no home folder, no user name.
        #expect(model.training?["dataset"] == data.root.lastPathComponent)
        #expect(model.training?.values.allSatisfy { !$0.contains("/") } == true, "\(model.training ?? [:])")
    }

    @Test func aRunOverTheMemoryLimitIsRefusedBeforeAnyWork() throws {
        let data = try SyntheticDataset(name: "memory-limit")
        defer { data.remove() }
        var config = configuration(data, output: "model.safetensors")
        config.memoryLimit = 150 << 20
        config.baseModels = [data.root.appendingPathComponent("no-such-model.safetensors")]  // not reached
        // 19 training images × 2 views and 6 validation images × 2 views of 1280 floats, 3 classes' head
        // (weights, gradient, two Adam moments), plus the working set.
        let needed = (19 * 2 + 6 * 2) * 1280 * 4 + 4 * 3 * 1281 * 4 + Trainer.workingMemory
        #expect(throws: TrainError.memoryLimit(task: "training on 25 images", needed: needed, limit: 150 << 20)) {
            try Trainer.run(config)
        }
        #expect(!FileManager.default.fileExists(atPath: config.output.path))
        #expect(TrainError.memoryLimit(task: "training on 25 images", needed: needed, limit: 150 << 20).description
                == "training on 25 images needs about 201 MB of memory, over the limit of 150 MB.")
    }

    @Test func sameSeedGivesTheSameHead() throws {
        let data = try SyntheticDataset(name: "seed")
        defer { data.remove() }
        let cache = data.root.appendingPathComponent(".cache")
        _ = try Trainer.run(configuration(data, output: "a.safetensors", cache: cache))
        let second = try Trainer.run(configuration(data, output: "b.safetensors", cache: cache))
        #expect(second.featuresComputed == 0, "the second run reads every feature from the cache")
        let a = try SafeTensors(contentsOf: data.root.appendingPathComponent("a.safetensors"))
        let b = try SafeTensors(contentsOf: data.root.appendingPathComponent("b.safetensors"))
        #expect(a.bytes(of: "breed_head.weight") == b.bytes(of: "breed_head.weight"))
        #expect(a.bytes(of: "breed_head.bias") == b.bytes(of: "breed_head.bias"))
    }

    /// Two base files, two backbones: each gets a head on its own features, their combination is calibrated on
    /// the validation images, and the one model file written classifies with both.
    @Test func twoBackbonesMakeOneCombinedModel() throws {
        let data = try SyntheticDataset(name: "two-backbones")
        defer { data.remove() }
        let cache = data.root.appendingPathComponent(".cache")
        var config = configuration(data, output: "both.safetensors", cache: cache)
        config.baseModels = [Self.base, Self.base.deletingLastPathComponent()
            .appendingPathComponent("efficientnet-lite1-imagenet.safetensors")]
        let report = try Trainer.run(config)
        #expect(report.backbones.map(\.architecture) == ["efficientnet-lite0", "efficientnet-lite1"])
        #expect(report.validation.top1 == 1.0, "validation top-1 \(report.validation.top1)")
        let model = try Model(contentsOf: data.root.appendingPathComponent("both.safetensors"))
        let specification = model.specification
        #expect(specification.backbones.map(\.tensorPrefix) == ["lite0.", "lite1."])
        // Each classifies 32 pixels larger than it trained (the trainer's default test size increase).
        #expect(specification.backbones.map(\.preprocessing.cropSize) == [256, 272])
        #expect(specification.backbones.map(\.preprocessing.resizeShorterSide) == [293, 311])
        #expect(specification.combinedTemperature.map { $0 > 0 } == true)
        #expect(specification.training?["backbones"] == "lite0+lite1")
        #expect(model.breedLabels?.map(\.key) == ["checks", "discs", "stripes"])
        #expect(model.imagenetLabels?.count == 1000)  // both ImageNet heads kept, for the no-dog verdict

        // A backbone inside a combined file has the fingerprint of its base at the same input, so evaluating the
        // model reuses the features cached for validation while training.
        let base = try SafeTensors(contentsOf: Self.base)
        let baseModel = try ModelDescription(from: base)
        let combined = try SafeTensors(contentsOf: data.root.appendingPathComponent("both.safetensors"))
        var input = baseModel.backbones[0].preprocessing.enlarged(by: 32)
        input.fit = .pad  // what training chose for the ImageNet base
        #expect(FeatureExtractor.fingerprint(of: combined, model: specification, backbone: 0)
                == FeatureExtractor.fingerprint(of: base, model: baseModel, backbone: 0, input: input))
        #expect(FeatureExtractor.fingerprint(of: combined, model: specification, backbone: 0)
                != FeatureExtractor.fingerprint(of: combined, model: specification, backbone: 1))
        let evaluation = try Evaluator.run(model: data.root.appendingPathComponent("both.safetensors"), dataset: data.root,
                                           split: nil, cacheRoot: cache, threads: 2, timing: false)
        #expect(evaluation.samples == 24)
        #expect(evaluation.verdicts?.total == 24)

        // A trained model serves as a base too: its backbones are trained anew at their own resolution and
        // classify at the same larger size, not 32 pixels more again.
        config.baseModels = [data.root.appendingPathComponent("both.safetensors")]
        config.output = data.root.appendingPathComponent("again.safetensors")
        let again = try Trainer.run(config)
        #expect(again.featuresComputed == 0, "the same backbones at the same sizes: all from the cache")
        let retrained = try Model(contentsOf: config.output).specification
        #expect(retrained.backbones.map(\.preprocessing) == specification.backbones.map(\.preprocessing))
        #expect(retrained.backbones.map(\.tensorPrefix) == ["lite0.", "lite1."])

        config.baseModels = [Self.base, Self.base]
        #expect(throws: TrainError.baseModels(detail: "efficientnet-lite0 is given twice; each backbone can be in a model once")) {
            try Trainer.run(config)
        }
    }

    /// The no-dog threshold stays at the base's 0.5 while at most 1 % of the validation dogs fall below it, is
    /// lowered until 1 % do, and never goes under the floor.
    @Test func noDogThresholdFollowsTheValidationDogs() {
        let few = [Float](repeating: 0.9, count: 199) + [0.1]
        #expect(Trainer.noDogThreshold(validationDogProbabilities: few, start: 0.5) == 0.5)
        let some = [Float](repeating: 0.9, count: 190) + [0.1, 0.2, 0.35, 0.38, 0.4, 0.42, 0.44, 0.46, 0.48, 0.49]
        #expect(Trainer.noDogThreshold(validationDogProbabilities: some, start: 0.5) == 0.35)
        #expect(some.filter { $0 < 0.35 }.count == 2, "1 % of 200")
        let many = [Float](repeating: 0.9, count: 150) + [Float](repeating: 0.1, count: 50)
        #expect(Trainer.noDogThreshold(validationDogProbabilities: many, start: 0.5) == 0.3)
        #expect(Trainer.noDogThreshold(validationDogProbabilities: [], start: 0.5) == 0.5)
    }

    @Test func damagedCacheEntriesAreDetectedAndRebuilt() throws {
        let data = try SyntheticDataset(name: "damaged-cache")
        defer { data.remove() }
        let cache = data.root.appendingPathComponent(".cache")
        _ = try Trainer.run(configuration(data, output: "a.safetensors", cache: cache))
        let entries = FileManager.default.enumerator(atPath: cache.path)!.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".f32") }.sorted()
        #expect(entries.count == 24 * 2 * 2, "two views of 24 readable images, at the training and the classifying size")
        // Three kinds of damage to three different images: cut short, one flipped bit, a stray overwrite.
        let images = entries.filter { $0.hasSuffix("-center.f32") }.map { String($0.dropLast("-center.f32".count)) }
        let damaged = [images[0] + "-center.f32", images[1] + "-mirrored.f32", images[2] + "-mirrored.f32"]
        for (i, name) in damaged.enumerated() {
            let file = cache.appendingPathComponent(name)
            var bytes = try Data(contentsOf: file)
            switch i {
            case 0: bytes = bytes.prefix(bytes.count - 100)
            case 1: bytes[17] ^= 0x04
            default: bytes.replaceSubrange(0..<8, with: Data("garbage!".utf8))
            }
            try bytes.write(to: file)
        }
        let second = try Trainer.run(configuration(data, output: "b.safetensors", cache: cache))
        #expect(second.featuresComputed == 3, "the three damaged images are computed again")
        let a = try SafeTensors(contentsOf: data.root.appendingPathComponent("a.safetensors"))
        let b = try SafeTensors(contentsOf: data.root.appendingPathComponent("b.safetensors"))
        // Rebuilt in smaller batches, the features may differ in the last bits (GEMM blocking); the head barely moves.
        let wa = try a.floats("breed_head.weight", shape: [3, 1280]), wb = try b.floats("breed_head.weight", shape: [3, 1280])
        let drift = zip(wa, wb).map { abs($0 - $1) }.max()!
        #expect(drift < 1e-4, "head weights moved by \(drift)")
        let third = try Trainer.run(configuration(data, output: "c.safetensors", cache: cache))
        #expect(third.featuresComputed == 0, "and the cache is whole again")
    }

    @Test func stratifiedSplitIsSeededAndCoversEveryClass() throws {
        let data = try SyntheticDataset(name: "split")
        defer { data.remove() }
        let dataset = try Dataset(root: data.root)
        let one = dataset.stratifiedSplit(validationFraction: 0.25, seed: 3)
        #expect(one.train.count + one.validation.count == dataset.samples.count)
        #expect(Set(one.validation.map(\.label)) == [0, 1, 2])
        #expect(dataset.stratifiedSplit(validationFraction: 0.25, seed: 3).validation == one.validation)
        #expect(dataset.stratifiedSplit(validationFraction: 0.25, seed: 4).validation != one.validation)
    }

    @Test func calibrationFindsTheTemperatureThatMinimisesTheLoss() {
        // Logits that are 3× too confident: the best temperature is about 3.
        var rng = SeededNoise(state: 5)
        var logits: [Float] = [], labels: [Int] = []
        for _ in 0..<2000 {
            let label = rng.next(4)
            let z = (0..<4).map { _ in Float(rng.next(1000)) / 1000 * 2 }
            let truth = z.enumerated().map { $0.offset == label ? $0.element + 1.5 : $0.element }
            // Sample the label from softmax(truth), then report 3·truth as the logits.
            let e = truth.map { Foundation.exp($0) }, total = e.reduce(0, +)
            var u = Float(rng.next(100000)) / 100000 * total, drawn = 0
            while drawn < 3 && u > e[drawn] { u -= e[drawn]; drawn += 1 }
            labels.append(drawn)
            logits += truth.map { $0 * 3 }
        }
        let t = Calibration.temperature(logits: logits, labels: labels, classes: 4)
        #expect(abs(t - 3) < 0.4, "temperature \(t)")
    }
}

@Suite struct SystemMemoryTests {
    /// A fake /proc/self/cgroup and cgroup mount in a temporary folder.
    func tree(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-cgroup-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return root
    }

    @Test func cgroupV2LimitLessTheWorkingSet() throws {
        let root = try tree(["self": "0::/app\n", "fs/app/memory.max": "1073741824\n",
                             "fs/app/memory.current": "900000000\n",
                             "fs/app/memory.stat": "anon 100000000\nfile 800000000\ninactive_file 700000000\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        let remaining = SystemMemory.cgroupRemaining(membership: root.appendingPathComponent("self").path,
                                                     mount: root.appendingPathComponent("fs").path)
        #expect(remaining == 1_073_741_824 - (900_000_000 - 700_000_000), "reclaimable file cache is not counted as used")
    }

    @Test func cgroupV1AndNoLimit() throws {
        let root = try tree(["self": "4:memory:/docker/abc\n1:cpu:/\n",
                             "fs/memory/docker/abc/memory.limit_in_bytes": "2147483648",
                             "fs/memory/docker/abc/memory.usage_in_bytes": "1000000000",
                             "fs/memory/docker/abc/memory.stat": "cache 5\ntotal_inactive_file 400000000\n",
                             "unlimited/memory/memory.limit_in_bytes": "9223372036854771712"])
        defer { try? FileManager.default.removeItem(at: root) }
        let membership = root.appendingPathComponent("self").path
        #expect(SystemMemory.cgroupRemaining(membership: membership, mount: root.appendingPathComponent("fs").path)
                == 2_147_483_648 - 600_000_000)
        #expect(SystemMemory.cgroupRemaining(membership: membership, mount: root.appendingPathComponent("unlimited").path) == nil)
    }
}
