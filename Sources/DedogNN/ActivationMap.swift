/// A grid of scores over an image, row-major: where the network saw a class (a class activation map), or
/// any such map resampled and combined.
///
/// A class activation map (Zhou et al., CVPR 2016) is each cell's features dotted with the class's row of a
/// linear head on pooled features: the class's logit is their mean plus the bias, so the map shows which cells
/// made the answer.
public struct ScoreGrid: Sendable, Equatable {
    public let rows: Int
    public let columns: Int
    public var values: [Float]

    public init(rows: Int, columns: Int, values: [Float]) {
        self.rows = rows
        self.columns = columns
        self.values = values
    }

    public subscript(row: Int, column: Int) -> Float {
        get { values[row * columns + column] }
        set { values[row * columns + column] = newValue }
    }

    /// Scaled to 0…1 (min to max), or nil when every cell is the same (the map shows nothing). The heads' maps
    /// sit on a large positive offset (ReLU6 features), so a fraction of the maximum would keep almost every cell.
    public func normalised() -> ScoreGrid? {
        guard let low = values.min(), let high = values.max(), high > low, (high - low).isFinite else { return nil }
        return ScoreGrid(rows: rows, columns: columns, values: values.map { ($0 - low) / (high - low) })
    }

    /// The value at (`x`, `y`) in 0…1 of the grid's width and height, bilinear between cell centres and flat
    /// beyond the outer ones.
    public func sample(x: Double, y: Double) -> Float {
        func position(_ t: Double, _ n: Int) -> (Int, Int, Float) {
            let p = min(max(t * Double(n) - 0.5, 0), Double(n - 1))
            let i = Int(p.rounded(.down))
            return (i, min(i + 1, n - 1), Float(p - Double(i)))
        }
        let (c0, c1, fx) = position(x, columns), (r0, r1, fy) = position(y, rows)
        let top = self[r0, c0] * (1 - fx) + self[r0, c1] * fx
        let bottom = self[r1, c0] * (1 - fx) + self[r1, c1] * fx
        return top * (1 - fy) + bottom * fy
    }

    /// A rectangle of whole cells: columns `left..<right`, rows `top..<bottom`.
    public struct CellBox: Sendable, Equatable {
        public var left, top, right, bottom: Int

        public init(left: Int, top: Int, right: Int, bottom: Int) {
            self.left = left
            self.top = top
            self.right = right
            self.bottom = bottom
        }
    }

    /// The cell with the highest score (the first such, in row order).
    public var peak: (row: Int, column: Int)? {
        guard let i = values.indices.max(by: { values[$0] < values[$1] }) else { return nil }
        return (i / columns, i % columns)
    }

    /// The bounding box of the cells at or above `threshold` that connect (through any of their 8 neighbours)
    /// to the cell (`row`, `column`); nil when that cell is below the threshold.
    public func box(around cell: (row: Int, column: Int), above threshold: Float) -> CellBox? {
        component(around: cell, above: threshold).map { cells in
            var box = CellBox(left: columns, top: rows, right: 0, bottom: 0)
            for i in cells {
                let r = i / columns, c = i % columns
                box.left = min(box.left, c)
                box.right = max(box.right, c + 1)
                box.top = min(box.top, r)
                box.bottom = max(box.bottom, r + 1)
            }
            return box
        }
    }

    /// The indices of the cells at or above `threshold` connected to `cell` through their 8 neighbours.
    func component(around cell: (row: Int, column: Int), above threshold: Float) -> [Int]? {
        guard (0..<rows).contains(cell.row), (0..<columns).contains(cell.column),
              self[cell.row, cell.column] >= threshold else { return nil }
        var seen = [Bool](repeating: false, count: values.count)
        var stack = [cell.row * columns + cell.column], found: [Int] = []
        seen[stack[0]] = true
        while let i = stack.popLast() {
            found.append(i)
            let r = i / columns, c = i % columns
            for dr in -1...1 {
                for dc in -1...1 {
                    let nr = r + dr, nc = c + dc
                    guard (0..<rows).contains(nr), (0..<columns).contains(nc) else { continue }
                    let j = nr * columns + nc
                    if !seen[j] && values[j] >= threshold {
                        seen[j] = true
                        stack.append(j)
                    }
                }
            }
        }
        return found
    }
}

/// Every class's score in every cell of one photo's map: [cells × classes], row-major over the cells.
public struct CellScores: Sendable, Equatable {
    public let rows: Int
    public let columns: Int
    public let classes: Int
    public let values: [Float]

    public init(rows: Int, columns: Int, classes: Int, values: [Float]) {
        self.rows = rows
        self.columns = columns
        self.classes = classes
        self.values = values
    }

    /// Class `label`'s map (its class activation map plus the head's bias, which scaling to 0…1 removes).
    public func map(_ label: Int) -> ScoreGrid? {
        guard (0..<classes).contains(label) else { return nil }
        return ScoreGrid(rows: rows, columns: columns,
                         values: (0..<(rows * columns)).map { values[$0 * classes + label] })
    }
}
