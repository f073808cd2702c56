import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// "No dog" where the cat rule sees a cat (`CatRule`, issue 50): its score against its definition computed here, its
/// place in the verdict and in `Model.decide`, what a photo without a dog is said to look like (`LooksLike`), and the
/// file's checks of the rule.
@Suite struct CatRuleTests {
    /// Two backbones' features of two views each, and a rule over them.
    static let features: [[Float]] = [[3, 0, 4, 0, 1, 2, 0, 1], [0, 2, 0, 0, 0, 2, 0, 0]]
    static let rule = CatRule(weights: [[1, -1, 0.5, 2], [0, 1, 0, 3]], bias: -0.25, from: 0.5)

    @Test func theScoreIsTheLineThroughUnitFeatures() throws {
        // Views averaged: (2, 1, 2, 0.5) of length 3.041…, and (0, 2, 0, 0) of length 2.
        let first: [Float] = [2, 1, 2, 0.5], length = (4 + 1 + 4 + 0.25 as Float).squareRoot()
        let expected = (2 - 1 + 1 + 1) / length + 1 - 0.25
        let score = try #require(Self.rule.score(Self.features))
        #expect(abs(score - expected) < 1e-5, "\(score) against \(expected) from \(first)")
        #expect(Self.rule.score([Self.features[0]]) == nil, "one backbone's features for a rule of two")
        #expect(Self.rule.score([[1, 2, 3], [1, 2, 3]]) == nil, "not whole views")
        #expect(Self.rule.score([[0, 0, 0, 0], [0, 1, 0, 0]]) == nil, "no direction")
    }

    /// The cat rule answers "no dog" whatever the ImageNet heads put on dogs; without it, or under its threshold,
    /// the verdict is as before.
    @Test func aCatIsNoDogWhateverTheDogShare() {
        let t = DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15, cat: Self.rule)
        #expect(t.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, catScore: 0.5) == .noDog)
        #expect(t.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, catScore: 0.49) == .dog)
        #expect(t.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, catScore: nil) == .dog, "no score, no rule")
        var without = t
        without.cat = nil
        #expect(without.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, catScore: 5) == .dog)
        #expect(t.verdict(dogProbability: 0.1, top: 0.9, second: 0.05, catScore: -3) == .noDog, "the ImageNet heads' no dog stands")
    }

    @Test func whatAPhotoLooksLikeComesFromItsWordNetId() {
        #expect(LooksLike(imagenetKey: "n02123045") == .cat, "tabby")
        #expect(LooksLike(imagenetKey: "n02124075") == .cat, "Egyptian cat")
        #expect(LooksLike(imagenetKey: "n02130308") == .cat, "cheetah")
        #expect(LooksLike(imagenetKey: "n02114855") == .animal, "coyote")
        #expect(LooksLike(imagenetKey: "n02132136") == .animal, "brown bear")
        #expect(LooksLike(imagenetKey: "n01440764") == .animal, "tench")
        #expect(LooksLike(imagenetKey: "n02655020") == .animal, "puffer, ImageNet's last animal")
        #expect(LooksLike(imagenetKey: "n02666196") == .other, "abacus")
        #expect(LooksLike(imagenetKey: "n04399382") == .other, "teddy bear")
    }

    /// The kind the ImageNet heads believe most, their classes that are not dogs added up by kind; dogs left out.
    @Test func theKindWithTheMostBeliefIsWhatAPhotoLooksLike() {
        let labels = [Label(key: "n02085620-Chihuahua", name: "Chihuahua", isDog: true),
                      Label(key: "n02123045", name: "tabby", isDog: false), Label(key: "n02606052", name: "rock beauty", isDog: false),
                      Label(key: "n04525038", name: "velvet", isDog: false), Label(key: "n03720891", name: "maraca", isDog: false)]
        #expect(LooksLike.mostLikely(labels, [0.9, 0.02, 0.16, 0.1, 0.07]) == .other, "one fish among things")
        #expect(LooksLike.mostLikely(labels, [0.1, 0.3, 0.2, 0.2, 0.2]) == .other)
        #expect(LooksLike.mostLikely(labels, [0.1, 0.3, 0.2, 0.1, 0.1]) == .cat)
        #expect(LooksLike.mostLikely(labels, [0.1, 0.1, 0.5, 0.1, 0.1]) == .animal)
    }

    /// Through `Model.decide`, on the Lite0 base with a rule that calls every photo a cat, or none: "no dog" that
    /// looks like a cat, or exactly the answer without the rule.
    @Test func decideSaysACatLooksLikeACat() throws {
        let model = try BundledModel.model
        var dice = Dice(seed: 11)
        let features = [(0..<(2 * EfficientNetLite.featureCount)).map { _ in max(0, dice.uniform()) }]
        var everything = model.specification.decision
        everything.cat = CatRule(weights: [[Float](repeating: 0, count: EfficientNetLite.featureCount)], bias: 1, from: 0)
        let cat = try model.decide(features: features, top: 3, thresholds: everything, precision: .fp32)
        #expect(cat.verdict == .noDog)
        #expect(cat.looksLike == .cat)
        #expect(!cat.lookalikes.isEmpty, "the ImageNet head's classes are still named")
        var none = everything
        none.cat?.from = 2
        var without = everything
        without.cat = nil
        #expect(try model.decide(features: features, top: 3, thresholds: none, precision: .fp32)
                == model.decide(features: features, top: 3, thresholds: without, precision: .fp32))
    }

    /// The rule is kept in the file (format 7) and checked there: each bad value is refused, naming its field.
    @Test func theFileKeepsTheRuleAndRefusesABadOne() throws {
        let (_, url) = try UnknownBreedTests.model(rule: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        let rule = CatRule(weights: [[Float](repeating: 0.5, count: EfficientNetLite.featureCount)], bias: 0.25, from: -1)
        var description = try ModelDescription(from: SafeTensors(contentsOf: url))
        description.decision.cat = rule
        try ModelFile.replacingDescription(of: SafeTensors(contentsOf: url), with: description, to: url)
        let model = try Model(contentsOf: url)
        #expect(model.specification.decision.cat == rule)
        #expect(model.specification.formatVersion == 7)
        let weights = ["decision", "cat", "weights"], field = "decision.cat.weights"
        try UnknownBreedTests.expectRefused(url, [(weights, [] as Any, field), (weights, [[1, 2]] as Any, field),
                                                  (weights, [[Float](repeating: 0, count: 1280), [Float](repeating: 0, count: 1280)] as Any, field)])
    }
}
