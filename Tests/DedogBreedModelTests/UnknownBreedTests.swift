import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// "A breed this model does not know" by the fitted rule (`UnknownBreedRule`): its score, its place in the verdict,
/// the signals `decide` gives it (checked against their definitions, computed here from the file's tensors), the
/// file's checks of it; and breeds taught from photos (`TaughtBreed`).
@Suite struct UnknownBreedTests {
    /// A one-backbone model on the Lite0 base with three breed rows (seeded) of `kinds`, their prototypes, and `rule`.
    static func model(rule: UnknownBreedRule?, kinds: [BreedKind?] = [nil, nil, nil], name: String = #function) throws -> (Model, URL) {
        let base = try SafeTensors(contentsOf: BundledModel.url)
        let source = try ModelDescription(from: base).backbones[0]
        var backbone = source
        let labels = zip(["a", "b", "c"], kinds).map { Label(key: $0, name: $0.uppercased(), isDog: true, kind: $1) }
        backbone.breedHead = HeadDescription(weight: "", bias: "", labels: labels)
        var dice = Dice(seed: 7)
        let weight = (0..<(3 * 1280)).map { _ in dice.uniform() * 0.1 }
        let prototypes = (0..<3).flatMap { c in Model.direction(Array(weight[(c * 1280)..<((c + 1) * 1280)])) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-unknown-\(name.prefix(20))-\(UUID().uuidString).safetensors")
        let part = ModelFile.Part(base: base, source: source, breedWeight: weight, breedBias: [0.5, -0.25, 0], prototypes: prototypes)
        try ModelFile.write(ModelDescription(backbones: [backbone], decision: DecisionThresholds(unknownBreed: rule)), parts: [part], to: url)
        return (try Model(contentsOf: url), url)
    }

    static let rule = UnknownBreedRule(signals: [.p1, .cosine], mean: [0.5, 0.6], scale: [0.25, 0.1], weights: [2, 1],
                                       bias: -0.5, below: 0)

    @Test func theScoreIsTheWeightedSumOfStandardisedSignals() throws {
        let score: Float = try #require(Self.rule.score { (signal: UnknownBreedRule.Signal) -> Float? in
            signal == .p1 ? 0.75 : signal == .cosine ? 0.4 : nil
        })
        let expected: Float = 2 * (0.25 / 0.25) + 1 * (-0.2 / 0.1) - 0.5
        #expect(abs(score - expected) < 1e-6)
        #expect(Self.rule.score { $0 == .p1 ? 0.75 : nil } == nil, "a model without prototypes has no cosine")
    }

    /// No dog comes first; where the rule is set it alone says "another breed" (the similarity's threshold and the
    /// vote are not consulted); a photo it passes can still be unsure.
    @Test func theRuleDecidesAloneAfterNoDog() {
        let vote = BreedVote(agreesFrom: 0.1, disagreesBelow: 0.05, elsewhereFrom: 0.5)
        let t = DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15, otherBreedBelow: 0.6,
                                   breedVote: vote, unknownBreed: Self.rule)
        func verdict(dog: Float = 0.9, top: Float = 0.9, similarity: Float, agrees: Bool = false, score: Float?) -> Verdict {
            t.verdict(dogProbability: dog, top: top, second: 0.05, similarity: similarity,
                      imagenet: ImageNetShares(topBreed: agrees ? 0.9 : 0.01, elsewhere: agrees ? 0 : 0.9), unknownScore: score)
        }
        #expect(verdict(dog: 0.2, similarity: 0.9, score: -5) == .noDog)
        #expect(verdict(similarity: 0.9, agrees: true, score: -0.1) == .otherBreed, "the rule, though similar and voted for")
        #expect(verdict(similarity: 0.1, score: 0.1) == .dog, "the rule passes it, though unlike and voted against")
        #expect(verdict(top: 0.4, similarity: 0.9, score: 0.1) == .unsure)
        #expect(verdict(similarity: 0.1, score: nil) == .dog, "no score, no rule")
        var old = t
        old.unknownBreed = nil
        #expect(old.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, similarity: 0.5) == .otherBreed,
                "without the rule, the similarity decides as before")
    }

    /// Under the threshold a photo is "no dog" when the ImageNet head sees something else in it, or when its dog
    /// probability is under half the threshold; a flat belief (no class that is not a dog at 3 % or more) between
    /// the two leaves it a dog, judged like any other.
    @Test func noDogNeedsSomethingElseSeen() {
        let t = DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15)
        func verdict(dog: Float, other: Float?, top: Float = 0.9) -> Verdict {
            t.verdict(dogProbability: dog, top: top, second: 0.05, topNonDog: other)
        }
        #expect(verdict(dog: 0.25, other: 0.01) == .dog, "flat: nothing else seen")
        #expect(verdict(dog: 0.25, other: 0.01, top: 0.4) == .unsure, "rescued photos are judged as any other")
        #expect(verdict(dog: 0.15, other: 0.029) == .dog, "half the threshold is still inside")
        #expect(verdict(dog: 0.25, other: 0.03) == .noDog, "a class of 3 % is something else")
        #expect(verdict(dog: 0.149, other: 0.001) == .noDog, "under half the threshold, no dog whatever else")
        #expect(verdict(dog: 0.25, other: nil) == .noDog, "nothing known of other classes: the threshold alone")
        #expect(verdict(dog: 0.31, other: 0.5) == .dog, "over the threshold other classes do not matter")
    }

    /// `decide` scores each signal as defined: the top breed's probability, its lead, the cosine to its prototype,
    /// and the log-sum-exp of the breed logits (computed here in doubles from the file's rows). A rule on one signal
    /// with `below` just above and just below the photo's value flips the verdict there.
    @Test func decideGivesTheRuleTheSignalsAsDefined() throws {
        let (plain, url) = try Self.model(rule: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        var dice = Dice(seed: 3)
        let features = [(0..<(2 * 1280)).map { _ in max(0, dice.uniform() * 3) }]
        let decided = try plain.decide(features: features, top: 3, thresholds: DecisionThresholds(noDogBelow: 0), precision: .fp32)
        let heads = try ModelFile.breedHeads(of: try SafeTensors(contentsOf: url), model: plain.specification)
        let mean = (0..<1280).map { k in (Double(features[0][k]) + Double(features[0][1280 + k])) / 2 }
        let logits = (0..<3).map { c in (0..<1280).reduce(Double(heads[0].bias[c])) { $0 + Double(heads[0].weight[c * 1280 + $1]) * mean[$1] } }
        let top = logits.max()!
        let energy = Float(log(logits.reduce(0) { $0 + exp($1 - top) }) + top)
        let length = mean.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let best = try #require(["a", "b", "c"].firstIndex(of: decided.breeds[0].key))
        let cosine = Float((0..<1280).reduce(0.0) { $0 + mean[$1] / length * Double(heads[0].prototypes![best * 1280 + $1]) })
        let p1 = decided.breeds[0].probability, margin = p1 - decided.breeds[1].probability
        #expect(abs(cosine - (decided.similarity ?? .nan)) < 1e-4)
        for (signal, value) in [(UnknownBreedRule.Signal.p1, p1), (.margin, margin), (.cosine, cosine), (.energy, energy)] {
            for (offset, expected) in [(Float(1e-3) * max(1, abs(value)), Verdict.otherBreed), (-1e-3 * max(1, abs(value)), .dog)] {
                let rule = UnknownBreedRule(signals: [signal], mean: [0], scale: [1], weights: [1], bias: 0, below: value + offset)
                let t = DecisionThresholds(noDogBelow: 0, unsureBelow: 0, unsureMargin: 0, unknownBreed: rule)
                let verdict = try plain.decide(features: features, top: 3, thresholds: t, precision: .fp32).verdict
                #expect(verdict == expected, "\(signal) = \(value), below \(value + offset)")
            }
        }
    }

    /// The rule is kept in the file (format 6) and checked there: each bad value is refused, naming its field.
    @Test func theFileKeepsTheRuleAndRefusesABadOne() throws {
        let (model, url) = try Self.model(rule: Self.rule)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(model.specification.decision.unknownBreed == Self.rule)
        #expect(model.specification.formatVersion == 6)
        try Self.expectRefused(url, [(["decision", "unknownBreed", "signals"], [] as Any, "decision.unknownBreed.signals"),
                                     (["decision", "unknownBreed", "mean"], [0.5] as Any, "decision.unknownBreed.mean"),
                                     (["decision", "unknownBreed", "scale"], [0.25, 0] as Any, "decision.unknownBreed.scale")])
    }

    /// The model file `url` with each (path, value) set in its description is refused at load, naming `field`.
    static func expectRefused(_ url: URL, _ edits: [(path: [String], value: Any, field: String)]) throws {
        let file = try SafeTensors(contentsOf: url)
        let json = try JSONSerialization.jsonObject(with: Data(file.metadata[ModelDescription.metadataKey]!.utf8))
        for (path, value, field) in edits {
            let edited = JSONEdit.set(value, at: path, in: json)
            let text = String(decoding: try JSONSerialization.data(withJSONObject: edited), as: UTF8.self)
            let error = #expect(throws: ModelError.self) { try Model(tensors: file.replacingMetadata([ModelDescription.metadataKey: text])) }
            guard case let .invalidValue(_, got, _, _)? = error else {
                Issue.record("\(path): \(String(describing: error))")
                continue
            }
            #expect(got == field, "\(path)")
        }
    }

    /// A taught row names photos like its own, leaves the trained breeds' photos to them, and is the same when
    /// made again from the same photos.
    @Test func aTaughtRowNamesItsOwnPhotosAndLeavesTheOthers() throws {
        var dice = Dice(seed: 11)
        let width = 1280, breeds = 5
        let directions = (0..<(breeds + 1)).map { _ in Model.direction((0..<width).map { _ in dice.uniform() }) }
        // Trained rows along their breeds' directions, of different lengths and biases.
        let weight = (0..<breeds).flatMap { c in directions[c].map { $0 * Float(2 + c) } }
        let bias: [Float] = [0.3, -0.2, 0.1, 0, -0.4]
        let prototypes = Array(directions[0..<breeds].joined())
        func photo(_ c: Int) -> [Float] { directions[c].map { $0 * 20 + dice.uniform() * 0.02 } }
        let taught = (0..<3).map { _ in photo(breeds) }
        let row = try TaughtBreed.row(photos: taught, weight: weight, bias: bias, prototypes: prototypes)
        #expect(try TaughtBreed.row(photos: taught, weight: weight, bias: bias, prototypes: prototypes) == row)
        func argmax(_ x: [Float]) -> Int {
            let logits = (0..<breeds).map { c in zip(weight[(c * width)..<((c + 1) * width)], x).reduce(bias[c]) { $0 + $1.0 * $1.1 } }
                + [zip(row.weight, x).reduce(row.bias) { $0 + $1.0 * $1.1 }]
            return logits.indices.max { logits[$0] < logits[$1] }!
        }
        #expect((0..<5).allSatisfy { _ in argmax(photo(breeds)) == breeds }, "photos like the taught ones")
        #expect((0..<breeds).allSatisfy { argmax(photo($0)) == $0 }, "the trained breeds' photos")
        #expect(abs(row.prototype.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        #expect(throws: ModelError.self) { try TaughtBreed.row(photos: [], weight: weight, bias: bias, prototypes: prototypes) }
    }

    /// A taught row follows the trained head: where the trained rows turn away from what every breed's photos share
    /// (a common look, here one direction in every prototype), the taught row turns away from it too, though the
    /// taught photos' mean carries it; and the map through the breeds' C×C system is the ridge solution it stands
    /// for (checked at a trained breed's prototype, where the ridge-free map would give that breed's row).
    @Test func aTaughtRowTurnsAwayFromWhatEveryBreedShares() throws {
        var dice = Dice(seed: 12)
        let width = 1280, breeds = 12
        let common = Model.direction((0..<width).map { _ in dice.uniform() })
        let own = (0...breeds).map { _ in Model.direction((0..<width).map { _ in dice.uniform() - 0.5 }) }
        func look(_ c: Int) -> [Float] { Model.direction(zip(common, own[c]).map { $0 + $1 }) }
        let prototypes = Array((0..<breeds).map(look).joined())
        let weight = Array(own[0..<breeds].map { $0.map { $0 * 3 } }.joined())
        let bias = [Float](repeating: 0, count: breeds)
        let taught = (0..<3).map { _ in look(breeds).map { $0 * 20 + dice.uniform() * 0.05 } }
        let row = try TaughtBreed.row(photos: taught, weight: weight, bias: bias, prototypes: prototypes)
        func cosine(_ a: [Float], _ b: [Float]) -> Float {
            zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } / (zip(a, a).reduce(0) { $0 + $1.0 * $1.1 } * zip(b, b).reduce(0) { $0 + $1.0 * $1.1 }).squareRoot()
        }
        let mean = cosine(row.prototype, common), mapped = cosine(row.weight, common)
        #expect(mean > 0.6, "the taught photos' mean carries the common look: \(mean)")
        #expect(mapped < 0.5 * mean, "the row turns away from it as the trained rows do: \(mapped) against \(mean)")
        #expect(cosine(row.weight, own[breeds]) > cosine(row.prototype, own[breeds]), "and towards what is the breed's own")
        // At a trained prototype the map with a vanishing ridge gives the trained row's direction: M P = W.
        let atTrained = try TaughtBreed.mapped(look(3), weight: weight, prototypes: prototypes, breeds: breeds, ridge: 1e-6)
        #expect(cosine(atTrained, own[3]) > 0.999, "\(cosine(atTrained, own[3]))")
        // A head whose rows point away from their prototypes maps the mean away too: the row is the mean's own then.
        let away = try TaughtBreed.row(photos: taught, weight: prototypes.map { -3 * $0 }, bias: bias, prototypes: prototypes)
        #expect(cosine(away.weight, away.prototype) > 0.999)
    }

    /// The premise of `TaughtBreed.similarityScale`, simulated: photos at a cosine a to their breed's direction and
    /// otherwise in random directions lie at about a to the mean of many such photos, but lower to the mean of three;
    /// scaled, the cosine to the three's mean is again about a.
    @Test func aTaughtPrototypesCosineScaledIsATrainedOnes() {
        var dice = Dice(seed: 5)
        let width = 1280, a = TaughtBreed.trainedLikeness
        let breed = Model.direction((0..<width).map { _ in dice.uniform() })
        func photo() -> [Float] {
            var noise = (0..<width).map { _ in dice.uniform() }
            let along = zip(noise, breed).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            noise = Model.direction(zip(noise, breed).map { $0 - along * $1 })
            return zip(breed, noise).map { a * $0 + (1 - a * a).squareRoot() * $1 }
        }
        func cosine(_ x: [Float], _ unit: [Float]) -> Float { zip(Model.direction(x), unit).reduce(0) { $0 + $1.0 * $1.1 } }
        let checks = (0..<40).map { _ in photo() }
        let many = Model.direction((0..<400).flatMap { _ in photo() })
        let trained = checks.map { cosine($0, many) }.reduce(0, +) / 40
        var few: [Float] = []
        for _ in 0..<20 {
            let three = Model.direction((0..<3).flatMap { _ in photo() })
            few += checks.map { cosine($0, three) }
        }
        let taught = few.reduce(0, +) / Float(few.count)
        #expect(abs(trained - a) < 0.01, "a photo to the mean of 400: \(trained)")
        #expect(taught < a - 0.06, "to the mean of 3, unscaled: \(taught)")
        #expect(abs(taught * TaughtBreed.similarityScale(photos: 3) - a) < 0.01, "scaled: \(taught * TaughtBreed.similarityScale(photos: 3))")
        #expect(TaughtBreed.similarityScale(photos: 1) == 1 / a)
        #expect(abs(TaughtBreed.similarityScale(photos: 100_000) - 1) < 1e-4)
    }

    /// A model's similarity to a taught breed is its prototype's cosine scaled for the number of its photos (at most
    /// 1), or the nearest of its photos, whichever is closer; to a trained breed, the plain cosine.
    @Test func similarityToATaughtBreedIsScaled() throws {
        let (plain, taught, direction, confirmed, urls) = try Self.taughtModel()
        defer { for url in urls { try? FileManager.default.removeItem(at: url) } }
        let heads = try ModelFile.breedHeads(of: try SafeTensors(contentsOf: urls[0]), model: plain.specification)
        let prototypes = try #require(try ModelFile.breedHeads(of: try SafeTensors(contentsOf: urls[1]), model: taught.specification)[0].prototypes)
        #expect(Array(prototypes.prefix(3 * 1280)) == heads[0].prototypes!)
        var dice = Dice(seed: 10)
        for _ in 0..<4 {
            let features = zip(direction, (0..<1280).map { _ in dice.uniform() }).map { $0 + 0.05 * $1 }
            let unit = Model.direction(features)
            let similarities = try #require(try taught.similarities([features]))
            func dot(_ row: ArraySlice<Float>) -> Float { zip(unit, row).reduce(0) { $0 + $1.0 * $1.1 } }
            for c in 0..<3 {
                #expect(abs(similarities[c] - dot(prototypes[(c * 1280)..<((c + 1) * 1280)])) < 1e-5, "trained breed \(c)")
            }
            let nearest = (0..<3).map { dot(confirmed.features(of: $0, backbone: 0)) }.max()!
            let scaled = min(1, dot(prototypes[(3 * 1280)...]) * TaughtBreed.similarityScale(photos: 3))
            #expect(abs(similarities[3] - max(scaled, nearest)) < 1e-5)
            #expect(similarities[3] > nearest, "the scaled prototype is the closer here")
        }
    }

    /// A model taught breed "d" (3 photos along one direction) on top of `model(rule: nil)`, and the plain model.
    static func taughtModel(name: String = #function) throws -> (plain: Model, taught: Model, direction: [Float],
                                                                confirmed: ConfirmedPhotos, urls: [URL]) {
        let (plain, url) = try Self.model(rule: nil, name: name)
        var dice = Dice(seed: 9)
        let direction = Model.direction((0..<1280).map { _ in dice.uniform() })
        var confirmed = ConfirmedPhotos(backbones: 1)
        var photos: [[Float]] = []
        for i in 0..<3 {
            let features = zip(direction, (0..<1280).map { _ in dice.uniform() }).map { 3 * $0 + 0.05 * $1 }
            photos.append(features)
            try confirmed.append(ConfirmedPhoto(label: "d", photo: "\(i).jpg", fingerprint: "\(i)", added: "2026-11-27"),
                                 features: [Model.direction(features)])
        }
        var described = plain.specification
        let length = TaughtBreed.featureLengths(photos.map { [$0] }, backbones: 1)[0]
        described.backbones[0].breedHead?.labels.append(Label(key: "d", name: "D", isDog: true, taught: Taught(featureLength: length)))
        let taughtURL = url.deletingLastPathComponent().appendingPathComponent("taught-\(url.lastPathComponent)")
        try TaughtBreed.write(try SafeTensors(contentsOf: url), stored: plain.specification, as: described, confirmed: confirmed, to: taughtURL)
        return (plain, try Model(contentsOf: taughtURL), direction, confirmed, [url, taughtURL])
    }

    /// A taught breed is named for photos like its photos; where it comes first but the photo is unlike them ("another
    /// breed"), the decision is the model's without it: the same as the untaught model's, breeds, probabilities,
    /// verdict and similarity, by the similarity's threshold and by a fitted rule, its energy taken without the row.
    @Test func aTaughtBreedUnlikeThePhotoLeavesTheAnswerAsBefore() throws {
        let (plain, taught, direction, _, urls) = try Self.taughtModel()
        defer { for url in urls { try? FileManager.default.removeItem(at: url) } }
        var dice = Dice(seed: 21)
        var fellBack = 0, named = 0
        for noise in stride(from: Float(0.02), through: 0.2, by: 0.02) {
            let features = [zip(direction, (0..<1280).map { _ in dice.uniform() }).map { $0 + noise * max(0, $1) }]
            let similarity = try #require(try taught.similarities(features))[3]
            let probabilities = try #require(try taught.breedProbabilities(features, precision: .fp32))
            let taughtFirst = probabilities.indices.max { probabilities[$0] < probabilities[$1] } == 3
            let plainEnergy = try #require(try plain.breedEnergy(features))
            #expect(abs(try #require(try taught.breedEnergy(features, excluding: [3])) - plainEnergy) < 1e-4)
            #expect(try #require(try taught.breedEnergy(features)) > plainEnergy + 1e-3, "with its row the energy is higher")
            let byRule = UnknownBreedRule(signals: [.cosine, .energy], mean: [0, 0], scale: [1, 1], weights: [1, 0.01], bias: 0,
                                          below: 0.6 + 0.01 * plainEnergy)
            for thresholds in [DecisionThresholds(noDogBelow: 0, unsureBelow: 0, unsureMargin: 0, otherBreedBelow: 0.6),
                               DecisionThresholds(noDogBelow: 0, unsureBelow: 0, unsureMargin: 0, unknownBreed: byRule)] {
                let decided = try taught.decide(features: features, top: 3, thresholds: thresholds, precision: .fp32)
                let before = try plain.decide(features: features, top: 3, thresholds: thresholds, precision: .fp32)
                if thresholds.unknownBreed == nil && similarity >= 0.6 {
                    #expect(decided.verdict == .dog && decided.breeds.first?.key == "d", "like its photos: named")
                    named += 1
                } else if decided.breeds.first?.key != "d" {
                    #expect(decided.verdict == before.verdict && decided.similarity == before.similarity)
                    #expect(decided.breeds.map(\.key) == before.breeds.map(\.key))
                    #expect(zip(decided.breeds, before.breeds).allSatisfy { abs($0.probability - $1.probability) < 1e-5 })
                    let unranked = try taught.decide(features: features, top: 0, thresholds: thresholds, precision: .fp32)
                    #expect(unranked.verdict == before.verdict, "with no breeds asked for too")
                    if taughtFirst { fellBack += 1 }
                }
            }
        }
        #expect(named > 0 && fellBack > 0, "both cases seen: \(named) named, \(fellBack) first but answered as before")
    }
}

/// A seeded generator of floats in -1…1 (the tests' own, so the numbers never change).
struct Dice {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func uniform() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state) >> 40) / Float(1 << 23)
    }
}
