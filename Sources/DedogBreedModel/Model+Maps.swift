import DedogNN

extension Model {
    /// Backbone `b`'s breed head (its ImageNet head for a model without breed heads) applied to every cell of
    /// image `image` of `maps`, and when `mirroredImage` is given, to the mean of each cell and its mirror-image
    /// cell of that (mirrored) view, so the scores lie over the photo as it is. Nil without a head.
    public func cellScores(_ maps: FeatureMaps, backbone b: Int, image: Int = 0,
                           mirroredImage: Int? = nil) throws(ModelError) -> CellScores? {
        guard heads.indices.contains(b), let head = heads[b].breed ?? heads[b].imagenet else { return nil }
        guard (0..<maps.images).contains(image), mirroredImage.map({ (0..<maps.images).contains($0) }) ?? true else {
            throw .badInput(detail: "maps of \(maps.images) images have no image \(max(image, mirroredImage ?? 0))")
        }
        let width = EfficientNetLite.featureCount
        var cells = [Float](repeating: 0, count: maps.cells * width)
        for r in 0..<maps.rows {
            for c in 0..<maps.columns {
                let to = (r * maps.columns + c) * width
                let own = maps.cell(image: image, row: r, column: c)
                if let m = mirroredImage {
                    let other = maps.cell(image: m, row: r, column: maps.columns - 1 - c)
                    for (k, (a, b)) in zip(own, other).enumerated() { cells[to + k] = (a + b) / 2 }
                } else {
                    cells.replaceSubrange(to..<(to + width), with: own)
                }
            }
        }
        return CellScores(rows: maps.rows, columns: maps.columns, classes: head.outputs,
                          values: try head(cells, batch: maps.cells))
    }
}
