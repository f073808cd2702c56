import DedogConcurrency
import DedogNN
import DedogBreedModel
import DedogTrain
import Foundation

/// How `dedog classify`'s answers fare on labelled photos (`dedog evaluate --looks`): each photo classified as
/// classify does it, the second look at a dog small in the frame and the answer per dog included, where
/// `dedog evaluate` alone measures the networks' answer for the whole photo from cached features. On photos of
/// one dog each, the photos answered per dog are false splits; on photos of two dogs, the pairs found.
public struct LookReport: Codable, Sendable, Equatable {
    /// Photos answered (those in folders of the model's breeds).
    public var photos = 0
    /// The top breed is the folder's, whatever the verdict.
    public var top1 = 0
    /// The verdict names a breed (`dog`) and it is the folder's.
    public var namedRight = 0
    /// How many answers had each verdict (`dog`, `unsure`, `noDog`, `otherBreed`).
    public var verdicts: [String: Int] = [:]
    /// Answers that came with a second, closer look at the dog: small in the frame, or held back by the whole photo
    /// and named by its own look (`ZoomPolicy`).
    public var lookedCloser = 0
    /// Answers given per dog (two or more dogs found) …
    public var answeredPerDog = 0
    /// … and of those, the ones where one dog's top breed is the folder's.
    public var folderBreedAmongDogs = 0
    /// Photos in folders that name none of the model's breeds (not counted above).
    public var otherFolders = 0
    /// Photos that could not be classified, with the reason.
    public var unreadable: [String: String] = [:]

    public init() {}

    /// Adds `answer`, the answer for a photo in the folder of breed label `key` (nil: none of the model's).
    public mutating func count(_ answer: Classification, folder key: String?) {
        guard let key else { otherFolders += 1; return }
        photos += 1
        verdicts[answer.verdict.rawValue, default: 0] += 1
        let right = answer.breeds.first?.key == key
        if right { top1 += 1 }
        if right && answer.verdict == .dog { namedRight += 1 }
        if answer.location?.zoomed == true { lookedCloser += 1 }
        if !answer.dogs.isEmpty {
            answeredPerDog += 1
            if answer.dogs.contains(where: { $0.breeds.first?.key == key }) { folderBreedAmongDogs += 1 }
        }
    }
}

extension Classifier {
    /// Classifies `photos` as `classify(contentsOf:)` does, `configuration.workers` at a time, and counts the
    /// answers (`LookReport`). `folder` is each photo's folder name; a folder counts as a breed when it is one
    /// of the model's label keys. `progress` hears (done, total) after each batch of photos.
    public func checkLooks(_ photos: [(url: URL, folder: String)],
                           progress: (Int, Int) -> Void = { _, _ in }) -> LookReport {
        let keys = Set(breedLabels.map(\.key))
        let workers = max(1, configuration.workers)
        var report = LookReport()
        for start in stride(from: 0, to: photos.count, by: 8 * workers) {
            let part = Array(photos[start..<min(photos.count, start + 8 * workers)])
            let answers = parallelMap(part.count, threads: workers) { i -> Result<Classification, ClassifierError> in
                do throws(ClassifierError) {
                    return .success(try classify(contentsOf: part[i].url, top: 5))
                } catch {
                    return .failure(error)
                }
            }
            for (photo, result) in zip(part, answers) {
                switch result {
                case let .success(answer): report.count(answer, folder: keys.contains(photo.folder) ? photo.folder : nil)
                case let .failure(error): report.unreadable[photo.url.path] = error.description
                }
            }
            progress(start + part.count, photos.count)
        }
        return report
    }
}
