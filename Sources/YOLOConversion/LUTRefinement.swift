import Foundation
@_spi(Engine) import YOLO

/// Alternating least-squares refinement of a LUT fit: the table, the scales and the codes are each
/// re-chosen in turn to minimize the weighted squared weight error `Σ hᵢ (wᵢ − s_g · t[cᵢ])²`.
///
/// The first fit (`LUTQuantizer`) takes each group's scale as its largest magnitude, so the rare
/// extreme weight pins the scale and every other weight of the channel lands on a coarser grid than
/// it could. Each step here is an exact minimization with the other two held fixed:
/// - scales: `s_g = Σ h w t[c] / Σ h t[c]²` (least squares, one unknown per group);
/// - table: `t_j = Σ_{c=j} h s w / Σ_{c=j} h s²` (the weighted mean of `w / s` over the code's weights);
/// - codes: the nearest table value to `w / s` (for a single weight the weight `h` does not move the
///   minimum).
/// So the error never rises from one step to the next; the state with the lowest error measured (the
/// starting fit included) is returned, which makes the result never worse than the starting fit.
/// The table is kept ascending and within [−1, 1] by reordering codes and moving a common factor into
/// the scales (both exact). Sums are Float64 in a fixed order: deterministic.
@_spi(Engine) public struct LUTRefinement: Sendable {
    /// Rounds of (scales, table, codes), at most.
    public var maxRounds = 12

    public init(maxRounds: Int = 12) {
        precondition(maxRounds >= 0, "LUTRefinement: negative rounds")
        self.maxRounds = maxRounds
    }

    /// A fit being refined: normalized table (ascending), one scale per group, one code per weight.
    public struct Fit: Sendable {
        public var table: [Float]
        public var scales: [Float]
        public var codes: [UInt8]
    }

    /// Refines `start` for `weights` split into `scales.count` equal groups (rows or the layer).
    /// `importance(i)` (≥ 0) weighs each weight's squared error (e.g. the mean square of the input
    /// it multiplies); nil weighs all alike.
    public func refine(_ weights: UnsafeBufferPointer<Float>, start: Fit, importance: ((Int) -> Float)? = nil) -> Fit {
        let groups = start.scales.count
        precondition(groups > 0 && weights.count % groups == 0 && start.codes.count == weights.count,
                     "LUTRefinement: \(weights.count) weights, \(groups) groups, \(start.codes.count) codes")
        let groupLength = weights.count / groups
        let h: (Int) -> Double = importance.map { f in { Double(f($0)) } } ?? { _ in 1 }
        var best = start
        var bestError = Self.error(weights, fit: start, groupLength: groupLength, importance: h)
        var fit = start
        for _ in 0..<maxRounds {
            refitScales(weights, fit: &fit, groupLength: groupLength, importance: h)
            refitTable(weights, fit: &fit, groupLength: groupLength, importance: h)
            Self.normalize(&fit)
            fit.codes = Self.nearestCodes(weights, table: fit.table, scales: fit.scales, groupLength: groupLength)
            let error = Self.error(weights, fit: fit, groupLength: groupLength, importance: h)
            guard error < bestError else { break }
            let gain = bestError - error
            best = fit
            bestError = error
            if gain <= 1e-6 * bestError { break }
        }
        return best
    }

    // MARK: Steps

    /// Least-squares scale per group, codes and table fixed (a group whose fit would not be positive keeps its scale).
    func refitScales(_ weights: UnsafeBufferPointer<Float>, fit: inout Fit, groupLength: Int, importance h: (Int) -> Double) {
        for g in 0..<fit.scales.count {
            var numerator = 0.0, denominator = 0.0
            for i in g * groupLength ..< (g + 1) * groupLength {
                let t = Double(fit.table[Int(fit.codes[i])]), weight = h(i)
                numerator += weight * Double(weights[i]) * t
                denominator += weight * t * t
            }
            guard denominator > 0 else { continue }
            let scale = numerator / denominator
            if scale > 0 && scale.isFinite { fit.scales[g] = Float(scale) }
        }
    }

    /// Least-squares table entry per code, codes and scales fixed (an unused code keeps its value).
    func refitTable(_ weights: UnsafeBufferPointer<Float>, fit: inout Fit, groupLength: Int, importance h: (Int) -> Double) {
        var numerator = [Double](repeating: 0, count: fit.table.count)
        var denominator = [Double](repeating: 0, count: fit.table.count)
        for i in 0..<weights.count {
            let s = Double(fit.scales[i / groupLength]), weight = h(i), code = Int(fit.codes[i])
            numerator[code] += weight * s * Double(weights[i])
            denominator[code] += weight * s * s
        }
        for j in fit.table.indices where denominator[j] > 0 {
            fit.table[j] = Float(numerator[j] / denominator[j])
        }
    }

    /// Sorts the table ascending (the codes follow, so no weight changes) and, when an entry lies
    /// outside [−1, 1], divides the table by its largest magnitude and multiplies the scales by it.
    static func normalize(_ fit: inout Fit) {
        let order = fit.table.indices.sorted { fit.table[$0] < fit.table[$1] || (fit.table[$0] == fit.table[$1] && $0 < $1) }
        if order != Array(fit.table.indices) {
            var newCode = [UInt8](repeating: 0, count: order.count)
            for (position, old) in order.enumerated() { newCode[old] = UInt8(position) }
            fit.table = order.map { fit.table[$0] }
            fit.codes = fit.codes.map { newCode[Int($0)] }
        }
        let largest = fit.table.reduce(Float(0)) { max($0, abs($1)) }
        if largest > 1 {
            fit.table = fit.table.map { min(max($0 / largest, -1), 1) }
            fit.scales = fit.scales.map { $0 * largest }
        }
    }

    /// Nearest table value to `w / s` for every weight (ties to the lower code; code 0 when `s = 0`).
    static func nearestCodes(_ weights: UnsafeBufferPointer<Float>, table: [Float], scales: [Float], groupLength: Int) -> [UInt8] {
        LUTQuantizer.assignCodes(weights, table: table, scales: scales, groupLength: groupLength)
    }

    /// `Σ hᵢ (wᵢ − ŵᵢ)²` with `ŵᵢ = s · t[c]` computed in float32, as `LUTWeights` expands it.
    static func error(_ weights: UnsafeBufferPointer<Float>, fit: Fit, groupLength: Int, importance h: (Int) -> Double) -> Double {
        var sum = 0.0
        for i in 0..<weights.count {
            let d = Double(weights[i] - fit.scales[i / groupLength] * fit.table[Int(fit.codes[i])])
            sum += h(i) * d * d
        }
        return sum
    }
}
