/// Minimum-cost rectangular assignment (the linear assignment problem), for the tracker's association
/// step and for the MOT metrics' frame-by-frame and global (IDF1) matchings.
///
/// Shortest augmenting paths with dual potentials (the Jonker–Volgenant family; O(r² c) for r ≤ c):
/// each row in turn is added by a Dijkstra-like search over reduced costs that ends at a free column,
/// and the potentials keep every reduced cost non-negative, so the matching stays optimal after each step.
///
/// Forbidden pairs are given as `+infinity` (or NaN). The result pairs as many rows and columns as the
/// allowed pairs permit and, among those matchings, has the least total cost: forbidden pairs are solved
/// with a cost above any sum of allowed ones and dropped from the answer, the same convention as
/// py-motmetrics' `lap.linear_sum_assignment` with its "expensive edges".
@_spi(Engine) public enum LinearAssignment {
    /// One assigned pair.
    public struct Pair: Sendable, Hashable {
        public var row: Int
        public var column: Int
        public init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }
    }

    /// The optimal pairs of a `rows × columns` matrix given row-major in `costs`, sorted by row.
    public static func solve(costs: [Double], rows: Int, columns: Int) -> [Pair] {
        precondition(rows >= 0 && columns >= 0 && costs.count == rows * columns, "costs must hold rows × columns values")
        guard rows > 0, columns > 0 else { return [] }
        // Forbidden pairs: a cost larger than any full matching of allowed ones can reach, so the search
        // uses one only where no matching of more allowed pairs exists.
        var low = Double.infinity, high = -Double.infinity
        for c in costs where c.isFinite {
            low = min(low, c)
            high = max(high, c)
        }
        guard low.isFinite else { return [] }
        let forbidden = low + Double(min(rows, columns)) * (high - low) + 1
        // Work on the orientation with no more rows than columns.
        let transposed = rows > columns
        let (n, m) = transposed ? (columns, rows) : (rows, columns)
        var a = [Double](repeating: 0, count: n * m)
        for i in 0..<n {
            for j in 0..<m {
                let c = transposed ? costs[j * columns + i] : costs[i * columns + j]
                a[i * m + j] = c.isFinite ? c : forbidden
            }
        }
        let columnOfRow = solveSquareish(a, n: n, m: m)
        var pairs: [Pair] = []
        pairs.reserveCapacity(n)
        for i in 0..<n {
            let j = columnOfRow[i]
            let original = transposed ? costs[j * columns + i] : costs[i * columns + j]
            guard original.isFinite else { continue }
            pairs.append(transposed ? Pair(row: j, column: i) : Pair(row: i, column: j))
        }
        return pairs.sorted { $0.row < $1.row }
    }

    /// The column of each row for `n ≤ m`, all costs finite. Arrays are 1-based inside: index 0 is the
    /// virtual column where each new row's search starts, and row 0 means "free".
    private static func solveSquareish(_ a: [Double], n: Int, m: Int) -> [Int] {
        var u = [Double](repeating: 0, count: n + 1)      // row potentials
        var v = [Double](repeating: 0, count: m + 1)      // column potentials
        var rowOf = [Int](repeating: 0, count: m + 1)     // row matched to each column, 0 when free
        var previous = [Int](repeating: 0, count: m + 1)  // column before each in the search tree
        var distance = [Double](repeating: 0, count: m + 1)
        var reached = [Bool](repeating: false, count: m + 1)
        for row in 1...n {
            rowOf[0] = row
            var column = 0
            for j in 0...m {
                distance[j] = .infinity
                reached[j] = false
            }
            // Grow the tree of shortest reduced-cost paths from the new row until a free column joins it.
            repeat {
                reached[column] = true
                let i = rowOf[column]
                var delta = Double.infinity
                var nearest = 0
                for j in 1...m where !reached[j] {
                    let reduced = a[(i - 1) * m + (j - 1)] - u[i] - v[j]
                    if reduced < distance[j] {
                        distance[j] = reduced
                        previous[j] = column
                    }
                    if distance[j] < delta {
                        delta = distance[j]
                        nearest = j
                    }
                }
                // Move the potentials so the nearest column's path has reduced cost 0 and none goes negative.
                for j in 0...m {
                    if reached[j] {
                        u[rowOf[j]] += delta
                        v[j] -= delta
                    } else {
                        distance[j] -= delta
                    }
                }
                column = nearest
            } while rowOf[column] != 0
            // Augment: shift the matches along the path back to the virtual column.
            repeat {
                let before = previous[column]
                rowOf[column] = rowOf[before]
                column = before
            } while column != 0
        }
        var columnOfRow = [Int](repeating: -1, count: n)
        for j in 1...m where rowOf[j] != 0 {
            columnOfRow[rowOf[j] - 1] = j - 1
        }
        return columnOfRow
    }
}
