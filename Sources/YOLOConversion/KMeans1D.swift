import Foundation
@_spi(Engine) import YOLO

/// Weighted one-dimensional k-means (Lloyd's algorithm) over values in [−1, 1], on a histogram.
///
/// The values are first gathered into `binCount` equal bins, each keeping its total weight and
/// weighted sum, so one Lloyd iteration costs O(bins + k) whatever the number of values: in one
/// dimension each cluster is a contiguous run of bins between the midpoints of neighbouring
/// centroids. All sums are Float64 in a fixed order, so the result is deterministic.
///
/// Three deterministic starts are run — evenly spaced centroids (the linear table), weighted
/// quantiles, and quantiles of density^⅓ — and the one with the lower weighted squared error wins,
/// so the k-means table is never worse than the linear one on the binned data.
struct KMeans1D: Sendable {
    /// Bins of the histogram over [−1, 1]. 65,536 bins are 3·10⁻⁵ wide, far below the spacing of
    /// a 256-entry table (~8·10⁻³), so binning costs essentially nothing in accuracy.
    var binCount = 65_536
    /// Lloyd iterations per start, at most.
    var maxIterations = 200

    init(binCount: Int = 65_536, maxIterations: Int = 200) {
        precondition(binCount > 0 && maxIterations >= 0, "KMeans1D: bad parameters")
        self.binCount = binCount
        self.maxIterations = maxIterations
    }

    /// A histogram of weighted values: the non-empty bins in ascending order.
    struct Histogram: Sendable {
        /// Weighted mean of each non-empty bin (ascending).
        var means: [Double] = []
        /// Total weight of each non-empty bin.
        var weights: [Double] = []
    }

    /// Builds the histogram of `values` (each clamped to [−1, 1]) with per-value weights from `weight(i)`.
    func histogram(count: Int, value: (Int) -> Float, weight: (Int) -> Float) -> Histogram {
        var totals = [Double](repeating: 0, count: binCount)
        var sums = [Double](repeating: 0, count: binCount)
        let half = Double(binCount) / 2
        for i in 0..<count {
            let w = Double(weight(i))
            guard w > 0 else { continue }
            let v = min(max(Double(value(i)), -1), 1)
            let bin = min(binCount - 1, Int((v + 1) * half))
            totals[bin] += w
            sums[bin] += w * v
        }
        var histogram = Histogram()
        for bin in 0..<binCount where totals[bin] > 0 {
            histogram.means.append(sums[bin] / totals[bin])
            histogram.weights.append(totals[bin])
        }
        return histogram
    }

    /// The `k` centroids (ascending) that minimize the weighted squared error of `histogram`.
    func fit(_ histogram: Histogram, k: Int) -> [Float] {
        precondition(k >= 2, "KMeans1D.fit: k must be at least 2")
        let means = histogram.means
        guard means.count > k else {
            // Few distinct values: each gets its own centroid; the rest of the table repeats the last.
            var table = means.map { Float($0) }
            if table.isEmpty { table = [0] }
            while table.count < k { table.append(table.last!) }
            return table
        }
        let linear = (0..<k).map { -1 + 2 * Double($0) / Double(k - 1) }
        var best = lloyd(histogram, start: linear)
        for power in [1.0, 1.0 / 3] {
            let candidate = lloyd(histogram, start: quantiles(histogram, k: k, power: power))
            if candidate.error < best.error { best = candidate }
        }
        return best.centroids.map { Float(min(max($0, -1), 1)) }.sorted()
    }

    /// Quantiles of the bin weights raised to `power`: centroid `j` is the mean of the bin at
    /// cumulative `(j + ½) / k`. Power 1 gives the weighted quantiles; power ⅓ spreads centroids
    /// like the density^⅓ law of optimal high-resolution quantizers (more of them in the tails).
    func quantiles(_ histogram: Histogram, k: Int, power: Double) -> [Double] {
        let mass = power == 1 ? histogram.weights : histogram.weights.map { pow($0, power) }
        let total = mass.reduce(0, +)
        var result: [Double] = []
        var cumulative = 0.0
        var bin = 0
        for j in 0..<k {
            let target = (Double(j) + 0.5) / Double(k) * total
            while bin < histogram.means.count - 1 && cumulative + mass[bin] < target {
                cumulative += mass[bin]
                bin += 1
            }
            result.append(histogram.means[bin])
        }
        return result
    }

    /// Lloyd iterations from `start` until the error stops falling (relative change < 10⁻¹⁰)
    /// or `maxIterations`. Returns the centroids and their weighted squared error.
    func lloyd(_ histogram: Histogram, start: [Double]) -> (centroids: [Double], error: Double) {
        var centroids = start
        var error = assign(histogram, centroids: &centroids, update: false)
        for _ in 0..<maxIterations {
            var next = centroids
            _ = assign(histogram, centroids: &next, update: true)
            let nextError = assign(histogram, centroids: &next, update: false)
            guard nextError < error else { break }
            let improvement = error - nextError
            centroids = next
            error = nextError
            if improvement <= error * 1e-10 { break }
        }
        return (centroids, error)
    }

    /// Assigns every bin to its nearest centroid (ties to the lower one). With `update`, moves each
    /// centroid to the weighted mean of its bins (an empty cluster keeps its place). Returns the
    /// weighted squared error of the assignment to the centroids as they were on entry.
    func assign(_ histogram: Histogram, centroids: inout [Double], update: Bool) -> Double {
        let k = centroids.count
        var order = centroids
        order.sort()
        var weight = [Double](repeating: 0, count: k)
        var sum = [Double](repeating: 0, count: k)
        var error = 0.0
        var j = 0
        for (mean, w) in zip(histogram.means, histogram.weights) {
            while j < k - 1 && mean > (order[j] + order[j + 1]) / 2 { j += 1 }
            let d = mean - order[j]
            error += w * d * d
            weight[j] += w
            sum[j] += w * mean
        }
        if update {
            for j in 0..<k where weight[j] > 0 { order[j] = sum[j] / weight[j] }
        }
        centroids = order
        return error
    }
}
