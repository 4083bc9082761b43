@_spi(Engine) import YOLO
/// How a quantizer picks the table values.
public enum LUTMethod: String, Sendable, CaseIterable {
    /// Lloyd's k-means on the weights (weighted by each row's scale², so it minimizes the true
    /// squared weight error), as coremltools' `kmeans_lut`.
    case kmeans
    /// `2^bits` values evenly spaced over [−m, m], m the largest weight magnitude of the table's
    /// rows (symmetric, so per-channel tables need one scale per channel and no offset).
    case linear
}

/// The reference quantizer: turns float weights into `LUTWeights`, deterministically.
///
/// Same input, same output, bit for bit (no randomness, no hashing, fixed summation order), so
/// converting a model twice gives identical files.
///
/// For each table group (the layer, or each output channel) the scale is `m = max |w|`; weights are
/// normalized to `z = w / m ∈ [−1, 1]`; one table of `2^bits` normalized values is made for the
/// layer (k-means over all `z` weighted by `m²`, or evenly spaced); each weight gets the code of
/// the nearest table value (ties to the lower code). With k-means tables, `refinement` then re-fits
/// the scales, table and codes by alternating least squares (`LUTRefinement`; never a larger error).
struct LUTQuantizer: Sendable {
    var type: LUTType
    var granularity: LUTGranularity
    var method: LUTMethod
    var kmeans = KMeans1D()
    /// Alternating least-squares refinement after the first fit (k-means tables only); 0 rounds keeps
    /// the first fit (max-magnitude scales, nearest codes).
    var refinement = LUTRefinement()

    init(type: LUTType, granularity: LUTGranularity = .perChannel, method: LUTMethod = .kmeans,
                refinement: LUTRefinement = LUTRefinement()) {
        self.type = type
        self.granularity = granularity
        self.method = method
        self.refinement = refinement
    }

    /// Quantizes `weights` (`rows × rowLength`, row-major; every value finite).
    /// `importance(i)` (≥ 0, optional) weighs weight `i`'s squared error in the refinement.
    func quantize(_ weights: UnsafeBufferPointer<Float>, rows: Int, importance: ((Int) -> Float)? = nil) -> LUTWeights {
        precondition(rows > 0 && weights.count % rows == 0 && !weights.isEmpty, "LUTQuantizer: \(weights.count) weights in \(rows) rows")
        precondition(weights.allSatisfy(\.isFinite), "LUTQuantizer: non-finite weight")
        let rowLength = weights.count / rows
        let groups = granularity == .perChannel ? rows : 1
        let groupLength = weights.count / groups
        let scales: [Float] = (0..<groups).map { g in
            var m: Float = 0
            for i in g * groupLength ..< (g + 1) * groupLength { m = max(m, abs(weights[i])) }
            return m
        }
        let table = makeTable(weights, scales: scales, groupLength: groupLength)
        var fit = LUTRefinement.Fit(table: table, scales: scales,
                                    codes: Self.assignCodes(weights, table: table, scales: scales, groupLength: groupLength))
        if method == .kmeans && refinement.maxRounds > 0 {
            fit = refinement.refine(weights, start: fit, importance: importance)
        }
        return LUTWeights(type: type, granularity: granularity, rows: rows, rowLength: rowLength,
                          table: FloatBuffer(fit.table), scales: FloatBuffer(fit.scales), codes: ByteBuffer(type.traits.pack(fit.codes)))
    }

    /// Convenience for arrays.
    func quantize(_ weights: [Float], rows: Int, importance: ((Int) -> Float)? = nil) -> LUTWeights {
        weights.withUnsafeBufferPointer { quantize($0, rows: rows, importance: importance) }
    }

    /// The normalized table (ascending, `2^bits` values in [−1, 1]).
    func makeTable(_ weights: UnsafeBufferPointer<Float>, scales: [Float], groupLength: Int) -> [Float] {
        let k = type.tableSize
        switch method {
        case .linear:
            return Self.linearTable(k)
        case .kmeans:
            let histogram = kmeans.histogram(count: weights.count,
                value: { i in let m = scales[i / groupLength]; return m > 0 ? weights[i] / m : 0 },
                weight: { i in let m = scales[i / groupLength]; return m * m })
            return kmeans.fit(histogram, k: k)
        }
    }

    /// `k` values evenly spaced from −1 to 1: `−1 + 2i / (k − 1)`.
    static func linearTable(_ k: Int) -> [Float] {
        (0..<k).map { Float(-1 + 2 * Double($0) / Double(k - 1)) }
    }

    // MARK: Reference code assignment (from float)

    /// The code of the table value nearest to each weight: `argmin_i |w − m · table[i]|`, computed on
    /// `w / m` against the midpoints of neighbouring table values (ties to the lower code).
    static func assignCodes(_ weights: UnsafeBufferPointer<Float>, table: [Float], scales: [Float], groupLength: Int) -> [UInt8] {
        let midpoints = (0..<table.count - 1).map { (table[$0] + table[$0 + 1]) / 2 }
        var codes = [UInt8](repeating: 0, count: weights.count)
        for i in 0..<weights.count {
            let m = scales[i / groupLength]
            codes[i] = m > 0 ? nearestCode(weights[i] / m, midpoints: midpoints) : 0
        }
        return codes
    }

    /// Number of midpoints strictly below `z`: the index of the nearest table value.
    @inline(__always)
    static func nearestCode(_ z: Float, midpoints: [Float]) -> UInt8 {
        var low = 0, high = midpoints.count
        while low < high {
            let middle = (low + high) / 2
            if midpoints[middle] < z { low = middle + 1 } else { high = middle }
        }
        return UInt8(low)
    }
}
