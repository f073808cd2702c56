import DedogImage
import DedogNN
import DedogBreedModel
import DedogTrain

/// The backbones' cell scores of one photo, laid over the photo: each backbone's map sampled at the same points
/// of a 64×64 grid over the first backbone's square, so that maps of different grids (8×8 to 10×10) and crops
/// combine. Made once per photo from the head maps of its views.
@_spi(Testing) public struct PhotoMaps: Sendable {
    /// Per backbone, every class's score in every cell (mirrored view folded in).
    let scores: [CellScores]
    /// Per backbone, the square it saw, in the photo's pixels.
    let windows: [(x: Double, y: Double, width: Double, height: Double)]
    let width: Int, height: Int

    static let gridSide = 64

    init?(model: Model, maps: [FeatureMaps], mirrored: [Bool], width: Int, height: Int) throws(ModelError) {
        guard maps.count == model.backbones.count, !maps.isEmpty, width > 0, height > 0 else { return nil }
        var scores: [CellScores] = []
        for b in maps.indices {
            let other = mirrored[b] && maps[b].images > 1 ? 1 : nil
            guard let s = try model.cellScores(maps[b], backbone: b, mirroredImage: other) else { return nil }
            scores.append(s)
        }
        self.scores = scores
        windows = model.backbones.map { Preprocessing($0.input).window(width: width, height: height) }
        self.width = width
        self.height = height
    }

    /// `perBackbone`'s grids (one per backbone, in its own cells) on the common grid, averaged.
    func combined(_ perBackbone: [ScoreGrid]) -> ScoreGrid {
        let frame = windows[0], side = Self.gridSide
        var out = ScoreGrid(rows: side, columns: side, values: [Float](repeating: 0, count: side * side))
        for r in 0..<side {
            for c in 0..<side {
                let px = frame.x + (Double(c) + 0.5) / Double(side) * frame.width
                let py = frame.y + (Double(r) + 0.5) / Double(side) * frame.height
                var sum: Float = 0
                for (grid, w) in zip(perBackbone, windows) {
                    sum += grid.sample(x: (px - w.x) / w.width, y: (py - w.y) / w.height)
                }
                out[r, c] = sum / Float(perBackbone.count)
            }
        }
        return out
    }

    /// Class `label`'s map over the photo, 0…1: each backbone's scaled to 0…1, then combined; nil when a backbone
    /// has no such class or its map is flat.
    func map(_ label: Int) -> ScoreGrid? {
        var grids: [ScoreGrid] = []
        for s in scores {
            guard let g = s.map(label)?.normalised() else { return nil }
            grids.append(g)
        }
        return combined(grids).normalised()
    }

    /// Cells of the common grid to the photo's pixels, clipped to the photo; nil when nothing is left.
    func photoBox(_ cells: ScoreGrid.CellBox) -> (x: Double, y: Double, width: Double, height: Double)? {
        let frame = windows[0], side = Double(Self.gridSide)
        let x0 = max(0, frame.x + Double(cells.left) / side * frame.width)
        let x1 = min(Double(width), frame.x + Double(cells.right) / side * frame.width)
        let y0 = max(0, frame.y + Double(cells.top) / side * frame.height)
        let y1 = min(Double(height), frame.y + Double(cells.bottom) / side * frame.height)
        guard x1 > x0, y1 > y0 else { return nil }
        return (x0, y0, x1 - x0, y1 - y0)
    }
}

/// Where the network saw a breed in a photo, from the class activation maps of the answer it gave (no other
/// network): each backbone's map of the breed, its mirrored view's folded in, scaled to 0…1, laid over the
/// photo and averaged (`PhotoMaps`).
///
/// - The **box** is the bounding box of the cells at or above `boxThreshold` connected to the peak.
/// - The **extent** is the same at `extentThreshold`, as a share of the square the network sees: a dog small in
///   the frame covers little of it.
///
/// The thresholds follow the measurements in `docs/where-the-dog-is.md`.
@_spi(Testing) public struct DogPlace: Sendable {
    /// The box in the photo's pixels, clipped to the photo.
    public var box: (x: Double, y: Double, width: Double, height: Double)
    /// Share (0…1) of the network's square that the loose box covers.
    public var extent: Double

    public init(box: (x: Double, y: Double, width: Double, height: Double), extent: Double) {
        self.box = box
        self.extent = extent
    }

    static let boxThreshold: Float = 0.4
    static let extentThreshold: Float = 0.2

    /// Where the class whose map over the photo is `map` (`PhotoMaps.map`) is; nil when the map shows nothing.
    init?(_ maps: PhotoMaps, map: ScoreGrid) {
        guard let peak = map.peak,
              let tight = map.box(around: peak, above: Self.boxThreshold),
              let loose = map.box(around: peak, above: Self.extentThreshold),
              let box = maps.photoBox(tight) else { return nil }
        let side = PhotoMaps.gridSide
        self.init(box: box, extent: Double((loose.right - loose.left) * (loose.bottom - loose.top)) / Double(side * side))
    }

    /// Where the detector saw a dog: `detection`'s box (in the network's square `window`, in the photo's pixels)
    /// in the `width` × `height` photo, clipped to it; the extent is the box's share of the square. Nil when
    /// nothing of it is in the photo.
    init?(_ detection: Detection, window: (x: Double, y: Double, width: Double, height: Double), width: Int, height: Int) {
        let x0 = max(0, window.x + detection.x0 * window.width), x1 = min(Double(width), window.x + detection.x1 * window.width)
        let y0 = max(0, window.y + detection.y0 * window.height), y1 = min(Double(height), window.y + detection.y1 * window.height)
        guard x1 > x0, y1 > y0 else { return nil }
        self.init(box: (x0, y0, x1 - x0, y1 - y0), extent: (x1 - x0) * (y1 - y0) / (window.width * window.height))
    }

    /// Share of the box's width and height added on each side when the dog is looked at on its own.
    static let margin = 0.1

    /// The box widened by `margin` on each side, in whole pixels of the `width` × `height` photo, inside it.
    public func margined(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let mx = box.width * Self.margin, my = box.height * Self.margin
        let x0 = max(0, Int((box.x - mx).rounded(.down))), y0 = max(0, Int((box.y - my).rounded(.down)))
        let x1 = min(width, Int((box.x + box.width + mx).rounded(.up))), y1 = min(height, Int((box.y + box.height + my).rounded(.up)))
        return (x0, y0, max(1, x1 - x0), max(1, y1 - y0))
    }

    /// The photo's square to look at again: around the box, as large as its longer side (at least an eighth of
    /// the photo's shorter side), widened so that the network's own centre crop (`cropShare` of the square)
    /// keeps all of it, moved inside the photo. Nil when that square would be most of the photo anyway.
    public func zoomSquare(width: Int, height: Int, cropShare: Double, largest: Double = 0.8) -> (x: Int, y: Int, side: Int)? {
        let shorter = Double(min(width, height))
        let side = min(shorter, max(box.width, box.height, shorter / 8) / cropShare)
        guard side < largest * shorter, side >= 16 else { return nil }
        let cx = box.x + box.width / 2, cy = box.y + box.height / 2
        let x = min(max(cx - side / 2, 0), Double(width) - side), y = min(max(cy - side / 2, 0), Double(height) - side)
        let s = Int(side.rounded())
        return (min(Int(x.rounded()), width - s), min(Int(y.rounded()), height - s), s)
    }

    /// The box in whole pixels of the photo `image` was decoded from (its own when not made smaller).
    func location(in image: RGBImage, zoomed: Bool) -> DogLocation {
        let sx = Double(image.original?.width ?? image.width) / Double(image.width)
        let sy = Double(image.original?.height ?? image.height) / Double(image.height)
        let x = Int((box.x * sx).rounded(.down)), y = Int((box.y * sy).rounded(.down))
        return DogLocation(x: x, y: y, width: Int(((box.x + box.width) * sx).rounded(.up)) - x,
                           height: Int(((box.y + box.height) * sy).rounded(.up)) - y, zoomed: zoomed)
    }
}
