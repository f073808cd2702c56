import DedogNN

/// The photos users confirmed as showing the model's breeds (`dedog learn`), each with its features in every
/// backbone. One value, so that a photo and its feature rows are added, removed and kept together: in the file
/// they are the description's `memory` entries and each backbone's `memory` tensor, in the same order.
public struct ConfirmedPhotos: Sendable, Equatable {
    /// Oldest first.
    public private(set) var photos: [ConfirmedPhoto]
    /// `features[b]`: backbone b's unit feature vectors, one row of 1280 per photo, in the photos' order.
    public private(set) var features: [[Float]]

    /// None, for a model of `backbones` backbones.
    public init(backbones: Int) {
        photos = []
        features = Array(repeating: [], count: backbones)
    }

    /// `features` already checked to hold one row per photo in every backbone (`ModelFile.read`).
    init(aligned photos: [ConfirmedPhoto], features: [[Float]]) {
        self.photos = photos
        self.features = features
    }

    public var count: Int { photos.count }
    public var isEmpty: Bool { photos.isEmpty }
    public var backboneCount: Int { features.count }

    /// Backbone `b`'s row for photo `i`.
    public func features(of i: Int, backbone b: Int) -> ArraySlice<Float> {
        let width = EfficientNetLite.featureCount
        return features[b][(i * width)..<((i + 1) * width)]
    }

    /// Adds `photo` with its features, one row of 1280 for each backbone.
    public mutating func append(_ photo: ConfirmedPhoto, features rows: [[Float]]) throws(ModelError) {
        guard rows.count == backboneCount, rows.allSatisfy({ $0.count == EfficientNetLite.featureCount }) else {
            throw .badInput(detail: "a confirmed photo needs one row of \(EfficientNetLite.featureCount) features for each "
                            + "of the model's \(backboneCount) backbones, not \(rows.map(\.count))")
        }
        photos.append(photo)
        for b in rows.indices { features[b] += rows[b] }
    }

    /// Adds `photo` with its features unless the same photo (by content) is remembered as its breed already; one
    /// remembered as another breed is corrected, not kept twice. Whether it was added.
    @discardableResult
    public mutating func confirm(_ photo: ConfirmedPhoto, features rows: [[Float]]) throws(ModelError) -> Bool {
        guard !photos.contains(where: { $0.fingerprint == photo.fingerprint && $0.label == photo.label }) else { return false }
        removeAll { $0.fingerprint == photo.fingerprint }
        try append(photo, features: rows)
        return true
    }

    /// Takes out the photos `shouldRemove` picks, with their rows; returns them. Asks once per photo, and
    /// copies nothing when none is picked (learning asks this for every new photo).
    @discardableResult
    public mutating func removeAll(where shouldRemove: (ConfirmedPhoto) -> Bool) -> [ConfirmedPhoto] {
        let picked = photos.map(shouldRemove)
        guard picked.contains(true) else { return [] }
        let removed = photos.indices.filter { picked[$0] }.map { photos[$0] }
        self = keeping(photos.indices.filter { !picked[$0] })
        return removed
    }

    /// The photos `isIncluded` keeps, with their rows, in the same order.
    public func filter(_ isIncluded: (ConfirmedPhoto) -> Bool) -> ConfirmedPhotos {
        keeping(photos.indices.filter { isIncluded(photos[$0]) })
    }

    /// The photos at `indices`, with their rows, in that order.
    private func keeping(_ indices: [Int]) -> ConfirmedPhotos {
        ConfirmedPhotos(aligned: indices.map { photos[$0] },
                        features: features.indices.map { b in indices.flatMap { features(of: $0, backbone: b) } })
    }
}
