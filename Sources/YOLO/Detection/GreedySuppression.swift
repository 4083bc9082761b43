/// Greedy suppression, the core of darknet's NMS: candidates are visited best first, and one survives
/// when no earlier survivor overlaps it with an IoU above the limit.
///
/// Comparing every candidate with every earlier survivor is quadratic, and a degenerate model (zero or
/// random weights, or one that fires everywhere) makes every cell of every head a candidate that
/// overlaps almost nothing: hundreds of thousands of candidates at large input sizes. Boxes with
/// IoU above a positive limit overlap, so each candidate is compared only with the survivors that share a
/// cell of a uniform grid with it; the decisions (and the pairs compared that matter) are the same as the
/// quadratic loop's, only pairs that cannot overlap are skipped.
struct GreedySuppression {
    /// Survivors larger than this many grid cells are kept in a list every candidate is compared with.
    static let largeCells = 64

    private let lowX: Double, lowY: Double, cell: Double
    private let columns: Int, rows: Int
    private var heads: [Int32]
    private var next: [Int32] = []
    private var members: [Int32] = []
    private var large: [Int32] = []
    /// Per candidate: the last query that compared it (a survivor in several cells is compared once).
    private var seen: [Int32]
    private var query: Int32 = 0
    /// The candidates' boxes in `order`'s order: the grid works on positions in `order`, so its memory
    /// is proportional to the candidates of this call, not to every box (per-class suppression calls
    /// this once per class with the same boxes).
    private let boxes: [Rect]
    /// nil: IoU; else DIoU with this beta (`Suppression.distanceIoU`).
    private let beta: Double?

    /// Whether each of `order`'s candidates (indices into `boxes`, best first) survives.
    /// - Precondition: `limit > 0` (a zero limit would suppress boxes that merely touch).
    /// `kind` `.distanceIoU` compares DIoU instead of IoU with the limit; DIoU never exceeds IoU, so pairs
    /// that do not overlap still need no comparison.
    static func survivors(_ order: [Int], boxes: [Rect], limit: Double, kind: Suppression = .greedy) -> [Bool] {
        precondition(limit > 0, "GreedySuppression: the IoU limit must be positive")
        guard !order.isEmpty else { return [] }
        var beta: Double? = nil
        if case .distanceIoU(let b) = kind { beta = Double(b) }
        var grid = GreedySuppression(order.map { boxes[$0] }, beta: beta)
        return order.indices.map { candidate in
            guard !grid.anySurvivor(overlapping: candidate, above: limit) else { return false }
            grid.insert(candidate)
            return true
        }
    }

    /// `boxes`: the candidates, best first.
    private init(_ boxes: [Rect], beta: Double?) {
        self.boxes = boxes
        self.beta = beta
        let order = boxes.indices
        // The grid spans the candidates' centres; cells are about the size of a typical box (the median
        // of a sample), and there are at most about 4 per candidate (and 2^20 in all).
        var (x0, x1, y0, y1) = (Double.infinity, -Double.infinity, Double.infinity, -Double.infinity)
        for i in order {
            let (x, y) = (boxes[i].midX, boxes[i].midY)
            if x.isFinite && y.isFinite { (x0, x1, y0, y1) = (min(x0, x), max(x1, x), min(y0, y), max(y1, y)) }
        }
        if x0 > x1 { (x0, x1, y0, y1) = (0, 0, 0, 0) }
        let step = max(1, order.count / 1001)
        var sizes = Swift.stride(from: 0, to: order.count, by: step).map { k -> Double in
            let box = boxes[order[k]]
            return max(abs(box.width), abs(box.height))
        }.filter(\.isFinite)
        sizes.sort()
        let typical = sizes.isEmpty ? 0 : sizes[sizes.count / 2]
        let span = max(x1 - x0, y1 - y0)
        let cellBudget = Double(min(1 << 20, 4 * order.count))
        var cell = max(typical, span / cellBudget.squareRoot(), 1e-9)
        if !cell.isFinite { cell = 1 }
        columns = Int(min((x1 - x0) / cell + 1, cellBudget))
        rows = Int(min((y1 - y0) / cell + 1, cellBudget / Double(columns)))
        (lowX, lowY, self.cell) = (x0, y0, cell)
        heads = [Int32](repeating: -1, count: max(1, columns * rows))
        seen = [Int32](repeating: -1, count: boxes.count)
    }

    /// The cell range (column, row) that a box's closed extent covers, clamped to the grid.
    private func cells(of box: Rect) -> (ClosedRange<Int>, ClosedRange<Int>) {
        func index(_ v: Double, _ low: Double, _ count: Int) -> Int {
            let t = (v - low) / cell
            guard t >= 0 else { return 0 }       // also NaN
            return t >= Double(count - 1) ? count - 1 : Int(t)
        }
        let (ax, bx) = (min(box.minX, box.maxX), max(box.minX, box.maxX))
        let (ay, by) = (min(box.minY, box.maxY), max(box.minY, box.maxY))
        return (index(ax, lowX, columns)...index(bx, lowX, columns), index(ay, lowY, rows)...index(by, lowY, rows))
    }

    private mutating func insert(_ i: Int) {
        let (xs, ys) = cells(of: boxes[i])
        guard xs.count * ys.count <= Self.largeCells else {
            large.append(Int32(i))
            return
        }
        for row in ys {
            for column in xs {
                let c = row * columns + column
                next.append(heads[c])
                members.append(Int32(i))
                heads[c] = Int32(members.count - 1)
            }
        }
    }

    /// Whether survivor `i` suppresses `box`: IoU (or DIoU) above the limit.
    @inline(__always)
    private func suppresses(_ i: Int, _ box: Rect, _ limit: Double) -> Bool {
        guard let beta else { return boxes[i].iou(box) > limit }
        return boxes[i].distanceIoU(box, beta: beta) > limit
    }

    private mutating func anySurvivor(overlapping j: Int, above limit: Double) -> Bool {
        query &+= 1
        let box = boxes[j]
        for i in large where suppresses(Int(i), box, limit) { return true }
        let (xs, ys) = cells(of: box)
        guard xs.count * ys.count <= Self.largeCells else {
            // A large candidate: every survivor in the grid (each once).
            for i in members where seen[Int(i)] != query {
                seen[Int(i)] = query
                if suppresses(Int(i), box, limit) { return true }
            }
            return false
        }
        for row in ys {
            for column in xs {
                var node = heads[row * columns + column]
                while node >= 0 {
                    let i = Int(members[Int(node)])
                    if seen[i] != query {
                        seen[i] = query
                        if suppresses(i, box, limit) { return true }
                    }
                    node = next[Int(node)]
                }
            }
        }
        return false
    }
}
