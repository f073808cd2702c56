import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// The kind of dog said when no breed is (`KindRule`), and careful mode (`DecisionThresholds.careful`): the rules
/// against sums worked by hand, their place in `decide`, and the file's checks and both readers of their fields.
@Suite struct KindAndCarefulTests {
    static let terrier = BreedKind(group: 3, section: "Small sized Terriers")
    static let bigTerrier = BreedKind(group: 3, section: "Large and medium sized Terriers")
    static let hound = BreedKind(group: 6, section: "Scent hounds")
    static let kinds: [BreedKind?] = [terrier, bigTerrier, hound, nil]

    /// A section is said first where its breeds reach its threshold, else the group, else nothing.
    @Test func theKindIsTheBreedsProbabilitiesAddedUp() {
        let rule = KindRule(groupFrom: 0.6, sectionFrom: 0.5)
        #expect(rule.kind([0.55, 0.1, 0.3, 0.05], kinds: Self.kinds) == DogKind(kind: Self.terrier, probability: 0.55))
        let group = rule.kind([0.35, 0.3, 0.3, 0.05], kinds: Self.kinds)
        #expect(group?.kind == BreedKind(group: 3) && abs((group?.probability ?? 0) - 0.65) < 1e-6, "\(String(describing: group))")
        #expect(rule.kind([0.3, 0.25, 0.4, 0.05], kinds: Self.kinds) == nil, "no group reaches 0.6")
        #expect(rule.kind([0.1, 0.1, 0.1, 0.7], kinds: Self.kinds) == nil, "a breed without a kind adds to none")
        #expect(KindRule(groupFrom: 0.6).kind([0.55, 0.1, 0.3, 0.05], kinds: Self.kinds)?.kind == BreedKind(group: 3),
                "without a section threshold only groups are said")
    }

    /// Labels left out (taught breeds giving way) take their probability with them; the rest are renormalised.
    @Test func leftOutLabelsAreRenormalisedAway() throws {
        let rule = KindRule(groupFrom: 0.6)
        let kind = try #require(rule.kind([0.2, 0.1, 0.5, 0.2], kinds: Self.kinds, excluding: [2]))
        #expect(kind.kind == BreedKind(group: 3) && abs(kind.probability - 0.6) < 1e-6, "(0.2 + 0.1) / 0.5")
        #expect(rule.kind([0, 0, 1, 0], kinds: Self.kinds, excluding: [2]) == nil, "nothing left")
    }

    /// Careful mode swaps the rule's threshold for its careful one; a model without one has no careful mode.
    @Test func carefulModeIsTheRulesCarefulThreshold() throws {
        let rule = UnknownBreedRule(signals: [.p1], mean: [0.5], scale: [0.25], weights: [1], bias: 0, below: -1, carefulBelow: 0.5)
        let thresholds = DecisionThresholds(noDogBelow: 0.3, unknownBreed: rule)
        let careful = try #require(thresholds.careful)
        #expect(careful.unknownBreed?.below == 0.5)
        for (score, normal, strict) in [(Float(-2), Verdict.otherBreed, Verdict.otherBreed), (0, .dog, .otherBreed), (1, .dog, .dog)] {
            #expect(thresholds.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, unknownScore: score) == normal, "\(score)")
            #expect(careful.verdict(dogProbability: 0.9, top: 0.9, second: 0.05, unknownScore: score) == strict, "\(score)")
        }
        var without = thresholds
        without.unknownBreed?.carefulBelow = nil
        #expect(without.careful == nil)
        #expect(DecisionThresholds(otherBreedBelow: 0.5).careful == nil, "a model `dedog train` wrote")
    }

    /// `decide` says the kind only for "another breed" and "unsure", from the breed heads' probabilities.
    @Test func decideSaysTheKindOnlyWhenNoBreedIsNamed() throws {
        let (model, url) = try UnknownBreedTests.model(rule: nil, kinds: [Self.terrier, Self.bigTerrier, Self.hound])
        defer { try? FileManager.default.removeItem(at: url) }
        var dice = Dice(seed: 3)
        let features = [(0..<(2 * 1280)).map { _ in abs(dice.uniform()) }]
        let p = try #require(try model.breedProbabilities(features, precision: .fp32))
        let rule = KindRule(groupFrom: 0)
        let expected = try #require(rule.kind(p, kinds: [Self.terrier, Self.bigTerrier, Self.hound]))
        for (unknownBreed, verdict) in [(UnknownBreedRule(signals: [.p1], mean: [0], scale: [1], weights: [0], bias: 0, below: 1), Verdict.otherBreed),
                                        (nil, .dog)] {
            let thresholds = DecisionThresholds(noDogBelow: 0, unsureBelow: 0, unsureMargin: 0, unknownBreed: unknownBreed, kind: rule)
            let decision = try model.decide(features: features, top: 3, thresholds: thresholds, precision: .fp32)
            #expect(decision.verdict == verdict)
            #expect(decision.kind == (verdict == .dog ? nil : expected), "\(decision)")
        }
        let unsure = DecisionThresholds(noDogBelow: 0, unsureBelow: 1.1, unsureMargin: 0, kind: rule)
        #expect(try model.decide(features: features, top: 3, thresholds: unsure, precision: .fp32).kind == expected)
    }

    /// The file keeps the careful threshold and the kind rule (format 9 still: a dedog that ignores them answers as
    /// before) and refuses a careful threshold below the rule's own and kind thresholds outside 0…1, naming the
    /// field (both readers read the fields: `ModelDescriptionQuickTests.theQuickReaderReadsEveryField`).
    @Test func theFileKeepsAndChecksTheFields() throws {
        let rule = UnknownBreedRule(signals: [.p1], mean: [0.5], scale: [0.25], weights: [1], bias: 0, below: -1, carefulBelow: -0.5)
        let (model, url) = try UnknownBreedTests.model(rule: rule, kinds: [Self.terrier, nil, Self.hound])
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(model.specification.decision.unknownBreed?.carefulBelow == -0.5)
        #expect(model.breedLabels?.map(\.kind) == [Self.terrier, nil, Self.hound])
        try UnknownBreedTests.expectRefused(url, [
            (["decision", "unknownBreed", "carefulBelow"], -2 as Any, "decision.unknownBreed.carefulBelow"),
            (["decision", "kind"], ["groupFrom": 1.5] as Any, "decision.kind.groupFrom"),
            (["decision", "kind"], ["groupFrom": 0.5, "sectionFrom": -0.1] as Any, "decision.kind.sectionFrom"),
        ])
    }
}
