import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// A dog the detector finds and whose breed the breed heads are sure of is not "no dog" for the ImageNet heads'
/// share alone (`SeenDogRule`, issue 70): its place in the verdict, in `Model.decide`, and the file's checks.
@Suite struct SeenDogRuleTests {
    static let rule = SeenDogRule(detectorFrom: 0.4, breedFrom: 0.9, dogShareFrom: 0.2)
    static let cat = CatRule(weights: [[1]], bias: 0, from: 0.5)

    /// Under the heads' "no dog" threshold, a detected dog of a sure breed with enough of the heads' mass on dogs is
    /// named; a weaker box, a less sure breed, a smaller share on dogs (a coyote's), no box, or no rule leave
    /// "no dog"; a cat stays "no dog" whatever the detector says.
    @Test func aDogTheDetectorSeesOfASureBreedIsADog() {
        let t = DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15, cat: Self.cat, seenDog: Self.rule)
        func verdict(dog: Float = 0.25, top: Float = 0.95, detector: Float?, cat: Float? = nil, in thresholds: DecisionThresholds = t) -> Verdict {
            thresholds.verdict(dogProbability: dog, top: top, second: 0.02, topNonDog: 0.5, catScore: cat, detectorScore: detector)
        }
        #expect(verdict(detector: 0.4) == .dog)
        #expect(verdict(top: 0.9, detector: 0.9) == .dog, "at the breed threshold")
        #expect(verdict(detector: 0.39) == .noDog, "a box under detectorFrom")
        #expect(verdict(top: 0.89, detector: 0.9) == .noDog, "a breed not sure enough")
        #expect(verdict(detector: nil) == .noDog, "no box")
        #expect(verdict(dog: 0.2, detector: 0.9) == .dog, "at the share threshold")
        #expect(verdict(dog: 0.19, detector: 0.9) == .noDog, "too little of the heads' mass on dogs")
        #expect(verdict(detector: 0.9, cat: 0.5) == .noDog, "the cat rule still sees a cat")
        var without = t
        without.seenDog = nil
        #expect(verdict(detector: 0.9, in: without) == .noDog, "no rule, the heads decide")
        #expect(verdict(dog: 0.9, top: 0.95, detector: nil) == .dog, "a dog the heads see needs no box")
        // A taught lookalike splits the top breed: the trained breeds' own top, as before it was taught, still counts.
        let split = t.verdict(dogProbability: 0.25, top: 0.6, second: 0.35, topNonDog: 0.5, detectorScore: 0.9, trainedTop: 0.95)
        #expect(split == .dog)
        #expect(t.verdict(dogProbability: 0.25, top: 0.6, second: 0.35, topNonDog: 0.5, detectorScore: 0.9, trainedTop: 0.6) == .noDog)
    }

    /// Through `Model.decide`, on the Lite0 base: features the heads answer "no dog" with a rule that every box
    /// and breed passes become a dog (the same breeds ranked), and with a rule none passes, the answer stays as it
    /// is without the rule.
    @Test func decideWeighsTheDetectorsBox() throws {
        let model = try BundledModel.model
        // A photo of (almost) nothing: flat features put little of the ImageNet head on dogs.
        let features = [[Float](repeating: 0, count: 2 * EfficientNetLite.featureCount)]
        var thresholds = model.specification.decision
        thresholds.cat = nil
        thresholds.unknownBreed = nil
        thresholds.noDogBelow = 1
        let plain = try model.decide(features: features, top: 3, thresholds: thresholds, precision: .fp32, detectorScore: 0.9)
        try #require(plain.verdict == .noDog, "the fixture must start from no dog")
        var passes = thresholds
        passes.seenDog = SeenDogRule(detectorFrom: 0.5, breedFrom: .leastNonzeroMagnitude, dogShareFrom: .leastNonzeroMagnitude)
        let seen = try model.decide(features: features, top: 3, thresholds: passes, precision: .fp32, detectorScore: 0.9)
        #expect(seen.verdict != .noDog)
        #expect(seen.breeds == plain.breeds)
        #expect(try model.decide(features: features, top: 3, thresholds: passes, precision: .fp32, detectorScore: 0.4) == plain,
                "a box under detectorFrom")
        #expect(try model.decide(features: features, top: 3, thresholds: passes, precision: .fp32) == plain, "no box")
    }

    /// The rule is kept in the file and checked there: each bad value is refused, naming its field.
    @Test func theFileKeepsTheRuleAndRefusesABadOne() throws {
        let (_, url) = try UnknownBreedTests.model(rule: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        var description = try ModelDescription(from: SafeTensors(contentsOf: url))
        description.decision.seenDog = Self.rule
        try ModelFile.replacingDescription(of: SafeTensors(contentsOf: url), with: description, to: url)
        #expect(try Model(contentsOf: url).specification.decision.seenDog == Self.rule)
        let detector = ["decision", "seenDog", "detectorFrom"], breed = ["decision", "seenDog", "breedFrom"]
        try UnknownBreedTests.expectRefused(url, [(detector, 0 as Any, "decision.seenDog.detectorFrom"),
                                                  (breed, 1.5 as Any, "decision.seenDog.breedFrom"),
                                                  (breed, -0.1 as Any, "decision.seenDog.breedFrom"),
                                                  (["decision", "seenDog", "dogShareFrom"], 0 as Any, "decision.seenDog.dogShareFrom")])
    }
}
