import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// The ImageNet head's word on "another breed" (`BreedVote`): which of its labels stand for each breed, the
/// shares it gives them, and the verdict both ways.
@Suite struct BreedVoteTests {
    static let beagle = "n02088364-beagle", chihuahua = "n02085620-Chihuahua"
    static let golden = "n02099601-golden_retriever", pug = "n02110958-pug"
    /// A breed named by its Stanford key, one from a folder of the user's matched to a catalogue breed, one the
    /// ImageNet head does not know.
    static let labels = [Label(key: beagle, name: "Beagle", isDog: true),
                         Label(key: "Čivava", name: "Chihuahua", isDog: true, breed: "chihuahua", imagenetKeys: [chihuahua]),
                         Label(key: "mutt", name: "mutt", isDog: true)]

    static func model() throws -> Model {
        let base = try SafeTensors(contentsOf: BundledModel.url)
        var backbone = try ModelDescription(from: base).backbones[0]
        backbone.breedHead = HeadDescription(weight: "", bias: "", labels: labels)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-vote-\(getpid()).safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        let part = ModelFile.Part(base: base, source: try ModelDescription(from: base).backbones[0],
                                  breedWeight: [Float](repeating: 0, count: 3 * 1280), breedBias: [0, 0, 0])
        let vote = BreedVote(agreesFrom: 0.2, disagreesBelow: 0.03, elsewhereFrom: 0.6)
        try ModelFile.write(ModelDescription(backbones: [backbone],
                                             decision: DecisionThresholds(otherBreedBelow: 0.5, breedVote: vote)),
                            parts: [part], to: url)
        return try Model(contentsOf: url)
    }

    /// Shares of the dog mass only: the non-dog class's 0.2 counts for nothing; the Chihuahua is one of the
    /// model's breeds, so it is not "elsewhere" even for the beagle; the golden retriever is.
    @Test func sharesAreOfTheDogMassAndElsewhereIsOutsideTheModelsBreeds() throws {
        let model = try Self.model()
        #expect(model.specification.decision.breedVote == BreedVote(agreesFrom: 0.2, disagreesBelow: 0.03, elsewhereFrom: 0.6))
        #expect(model.breedLabels == Self.labels, "imagenetKeys are kept in the file")
        let imagenet = try #require(model.imagenetLabels)
        func index(_ key: String) throws -> Int { try #require(imagenet.firstIndex { $0.key == key && $0.isDog }) }
        var p = [Float](repeating: 0, count: imagenet.count)
        p[try #require(imagenet.firstIndex { !$0.isDog })] = 0.2
        p[try index(Self.beagle)] = 0.3
        p[try index(Self.chihuahua)] = 0.1
        p[try index(Self.golden)] = 0.25
        p[try index(Self.pug)] = 0.15
        let dogs = imagenet.dogProbability(p)
        #expect(abs(dogs - 0.8) < 1e-6)
        let beagle = try #require(model.imagenetShares(p, dogProbability: dogs, breed: 0))
        #expect(abs(beagle.topBreed - 0.3 / 0.8) < 1e-6 && abs(beagle.elsewhere - 0.25 / 0.8) < 1e-6, "\(beagle)")
        let chihuahua = try #require(model.imagenetShares(p, dogProbability: dogs, breed: 1))
        #expect(abs(chihuahua.topBreed - 0.1 / 0.8) < 1e-6 && abs(chihuahua.elsewhere - 0.25 / 0.8) < 1e-6)
        #expect(model.imagenetShares(p, dogProbability: dogs, breed: 2) == nil, "the ImageNet head knows no mutt")
        #expect(model.imagenetShares([Float](repeating: 0, count: imagenet.count), dogProbability: 0, breed: 0) == nil,
                "no dog mass")
        #expect(model.imagenetShares([0.5, 0.5], dogProbability: 1, breed: 0) == nil, "not the head's probabilities")
    }

    @Test func theVoteOverrulesTheSimilarityBothWaysAndOnlyWhereItKnowsTheBreed() {
        let vote = BreedVote(agreesFrom: 0.1, disagreesBelow: 0.05, elsewhereFrom: 0.5)
        let t = DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15, otherBreedBelow: 0.6, breedVote: vote)
        func verdict(_ t: DecisionThresholds, similarity: Float, top: Float? = nil, elsewhere: Float = 0, dog: Float = 0.9) -> Verdict {
            t.verdict(dogProbability: dog, top: 0.9, second: 0.05, similarity: similarity,
                      imagenet: top.map { ImageNetShares(topBreed: $0, elsewhere: elsewhere) })
        }
        #expect(verdict(t, similarity: 0.5) == .otherBreed, "the similarity alone where the head does not know the breed")
        #expect(verdict(t, similarity: 0.7) == .dog)
        #expect(verdict(t, similarity: 0.5, top: 0.1) == .dog, "the head agrees: not another breed")
        #expect(verdict(t, similarity: 0.5, top: 0.09) == .otherBreed, "below agreement the similarity decides")
        #expect(verdict(t, similarity: 0.7, top: 0.04, elsewhere: 0.5) == .otherBreed, "the head sees another breed")
        #expect(verdict(t, similarity: 0.7, top: 0.05, elsewhere: 0.9) == .dog, "not below disagreement")
        #expect(verdict(t, similarity: 0.7, top: 0.0, elsewhere: 0.49) == .dog, "nothing else believed enough")
        #expect(verdict(t, similarity: 0.5, top: 0.5, dog: 0.2) == .noDog, "no dog comes first")
        var off = t
        off.breedVote = nil
        #expect(verdict(off, similarity: 0.5, top: 0.9) == .otherBreed, "files without a vote: the similarity alone")
        off = t
        off.otherBreedBelow = nil
        #expect(verdict(off, similarity: 0.1, top: 0.0, elsewhere: 1) == .dog, "no other-breed verdict without prototypes")
    }
}
