@_spi(Engine) import YOLO
/// The fixed settings of COCO bbox evaluation, with the exact floating-point values pycocotools uses.
public struct COCOEvaluationParameters: Sendable {
    /// An object-size range on the `area` value, both ends inclusive (square pixels).
    public struct AreaRange: Sendable, Equatable {
        /// Label used in the summary (`all`, `small`, `medium`, `large`).
        public var label: String
        /// Smallest area in the range.
        public var lower: Double
        /// Largest area in the range.
        public var upper: Double

        /// Whether `area` lies in `[lower, upper]`.
        public func contains(_ area: Double) -> Bool { !(area < lower || area > upper) }
    }

    /// IoU thresholds 0.50, 0.55, ..., 0.95 (10 values, numpy `linspace` rounding: the 9th is 0.8999999999999999).
    public let iouThresholds: [Double] = linspace(0.5, 0.95, count: 10)
    /// Recall thresholds 0.00, 0.01, ..., 1.00 (101 values, numpy `linspace` rounding).
    public let recallThresholds: [Double] = linspace(0.0, 1.0, count: 101)
    /// Detections kept per image and category, ascending; matching uses the last.
    public let maxDetections: [Int] = [1, 10, 100]
    /// all [0, 1e10], small [0, 32²], medium [32², 96²], large [96², 1e10].
    public let areaRanges: [AreaRange] = [
        AreaRange(label: "all", lower: 0, upper: 1e10),
        AreaRange(label: "small", lower: 0, upper: 32 * 32),
        AreaRange(label: "medium", lower: 32 * 32, upper: 96 * 96),
        AreaRange(label: "large", lower: 96 * 96, upper: 1e10),
    ]

    /// The standard parameters.
    public init() {}

    // MARK: numpy-compatible helpers

    /// `numpy.linspace(start, stop, count)` with numpy's rounding: `start + i * step` with
    /// `step = (stop - start) / (count - 1)`, and the last value exactly `stop`.
    static func linspace(_ start: Double, _ stop: Double, count: Int) -> [Double] {
        precondition(count >= 2, "linspace needs at least two points")
        let step = (stop - start) / Double(count - 1)
        var values = (0..<count).map { Double($0) * step + start }
        values[count - 1] = stop
        return values
    }
}

/// Arithmetic that follows numpy's order of operations, so that means agree to the last bits.
enum NumPyMath {
    /// `numpy.mean` of a contiguous float64 array: numpy's pairwise summation, then one division.
    /// Empty input is a programmer error.
    static func mean(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "mean of no values")
        return values.withUnsafeBufferPointer { pairwiseSum($0[...]) } / Double(values.count)
    }

    /// numpy's pairwise sum: plain loop below 8 values, 8 interleaved accumulators up to 128 values,
    /// else split at a multiple of 8 near the middle.
    static func pairwiseSum(_ values: Slice<UnsafeBufferPointer<Double>>) -> Double {
        let count = values.count
        let base = values.startIndex
        if count < 8 {
            var sum = 0.0
            for value in values { sum += value }
            return sum
        }
        if count <= 128 {
            var lanes = (0..<8).map { values[base + $0] }
            var index = 8
            while index < count - count % 8 {
                for lane in 0..<8 { lanes[lane] += values[base + index + lane] }
                index += 8
            }
            var sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
            while index < count {
                sum += values[base + index]
                index += 1
            }
            return sum
        }
        var half = count / 2
        half -= half % 8
        return pairwiseSum(values[base..<(base + half)]) + pairwiseSum(values[(base + half)...])
    }

    /// `numpy.searchsorted(sorted, value, side='left')`: the number of elements of the ascending
    /// `sorted` that are less than `value`.
    static func searchSortedLeft(_ sorted: [Double], _ value: Double) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
