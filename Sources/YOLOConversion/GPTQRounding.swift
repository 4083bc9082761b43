import Foundation
@_spi(Engine) import YOLO

/// Output-aware choice of LUT codes (the error feedback of GPTQ, Frantar et al. 2022), for a fixed
/// table and fixed scales.
///
/// Nearest-code rounding minimizes each weight's own error; what matters is the layer's output
/// `W·x`. With `H = E[x xᵀ]` over calibration inputs (im2col columns), the output error of a row
/// `d = ŵ − w` is `d H dᵀ`. Columns are rounded in order; after rounding column `i`, the weights not
/// yet rounded absorb its error as far as the input correlations allow: with `Uᵀ U = H⁻¹`
/// (upper Cholesky factor), `w_j −= (w_i − ŵ_i) / U_ii · U_ij` for `j > i`. Updates are applied in
/// blocks of `blockSize` columns, the rest by one matrix product per block.
///
/// Each row finally keeps whichever of its error-feedback codes and its nearest codes has the lower
/// `d H dᵀ` on the calibration statistics, so no row's calibration output error exceeds nearest
/// rounding's. Deterministic for a given OpenBLAS build and thread count.
struct GPTQRounding: Sendable {
    /// Added to H's diagonal, times the mean diagonal value, so H is safely invertible.
    var damping = 0.01
    /// Columns rounded between two matrix-product updates.
    var blockSize = 128
    /// Round the columns with the largest input mean square first.
    var actOrder = true

    init(damping: Double = 0.01, blockSize: Int = 128, actOrder: Bool = true) {
        precondition(damping > 0 && blockSize > 0, "GPTQRounding: bad parameters")
        self.damping = damping
        self.blockSize = blockSize
        self.actOrder = actOrder
    }

    /// Codes for `weights` (`rows × n` row-major) on the grid `scales[row or 0] · table[code]`,
    /// with `gram` the `n×n` symmetric `E[x xᵀ]` of the layer's inputs. Nil when `gram` cannot be
    /// factored (the caller keeps nearest codes).
    func codes(_ weights: UnsafeBufferPointer<Float>, rows: Int, table: [Float], scales: [Float], gram: [Float]) -> [UInt8]? {
        BLAS.keepSingleThreaded()
        let n = weights.count / rows
        precondition(n * rows == weights.count && gram.count == n * n && (scales.count == rows || scales.count == 1),
                     "GPTQRounding: \(weights.count) weights, \(rows) rows, \(gram.count) gram entries, \(scales.count) scales")
        // Columns with the most input energy first (GPTQ's "act order"): their errors get the most
        // columns left to absorb them. Ties keep index order.
        let order = actOrder ? (0..<n).sorted { gram[$0 * n + $0] > gram[$1 * n + $1] || (gram[$0 * n + $0] == gram[$1 * n + $1] && $0 < $1) }
                             : Array(0..<n)
        var permutedGram = [Float](repeating: 0, count: n * n)
        for i in 0..<n { for j in 0..<n { permutedGram[i * n + j] = gram[order[i] * n + order[j]] } }
        var permuted = [Float](repeating: 0, count: weights.count)
        for r in 0..<rows { for i in 0..<n { permuted[r * n + i] = weights[r * n + order[i]] } }
        guard let permutedCodes = feedbackCodes(permuted, rows: rows, table: table, scales: scales, gram: permutedGram) else { return nil }
        var codes = [UInt8](repeating: 0, count: weights.count)
        for r in 0..<rows { for i in 0..<n { codes[r * n + order[i]] = permutedCodes[r * n + i] } }
        let nearest = LUTQuantizer.assignCodes(weights, table: table, scales: scales,
                                               groupLength: scales.count == 1 ? weights.count : n)
        let errorFeedback = Self.outputErrors(weights, codes: codes, rows: rows, table: table, scales: scales, gram: gram)
        let plain = Self.outputErrors(weights, codes: nearest, rows: rows, table: table, scales: scales, gram: gram)
        for r in 0..<rows where !(errorFeedback[r] < plain[r]) {
            for p in 0..<n { codes[r * n + p] = nearest[r * n + p] }
        }
        return codes
    }

    /// Error-feedback codes of `w` (`rows × n`, consumed in column order).
    func feedbackCodes(_ weights: [Float], rows: Int, table: [Float], scales: [Float], gram: [Float]) -> [UInt8]? {
        let n = weights.count / rows
        guard let factor = inverseFactor(gram, n: n) else { return nil }
        let midpoints = (0..<table.count - 1).map { (table[$0] + table[$0 + 1]) / 2 }
        let scale = { (row: Int) -> Float in scales.count == 1 ? scales[0] : scales[row] }
        var w = weights
        var codes = [UInt8](repeating: 0, count: weights.count)
        var errors = [Float](repeating: 0, count: rows * blockSize)
        for start in stride(from: 0, to: n, by: blockSize) {
            let end = min(start + blockSize, n), width = end - start
            for i in start..<end {
                let diagonal = factor[i * n + i]
                for r in 0..<rows {
                    let s = scale(r), value = w[r * n + i]
                    let code = s > 0 ? LUTQuantizer.nearestCode(value / s, midpoints: midpoints) : 0
                    codes[r * n + i] = code
                    let e = (value - s * table[Int(code)]) / diagonal
                    errors[r * width + (i - start)] = -e
                    for j in (i + 1)..<end { w[r * n + j] -= e * factor[i * n + j] }
                }
            }
            guard end < n else { break }
            // w[:, end...] += (−E) · U[start..<end, end...]
            errors.withUnsafeBufferPointer { e in
                factor.withUnsafeBufferPointer { u in
                    w.withUnsafeMutableBufferPointer { out in
                        BLAS.sgemm(m: rows, n: n - end, k: width, a: e.baseAddress!, lda: width,
                                   b: u.baseAddress! + start * n + end, ldb: n,
                                   c: out.baseAddress! + end, ldc: n, beta: 1)
                    }
                }
            }
        }
        return codes
    }

    /// Per-row scales that minimize each row's calibration output error for fixed codes:
    /// `s_r = (t_r H w_rᵀ) / (t_r H t_rᵀ)`, `t_r` the row's table values. A row whose optimum is not
    /// positive and finite keeps its scale. Exact least squares, so no row's `d H dᵀ` rises.
    static func outputScales(_ weights: UnsafeBufferPointer<Float>, codes: [UInt8], rows: Int, table: [Float],
                                    scales: [Float], gram: [Float]) -> [Float] {
        BLAS.keepSingleThreaded()
        let n = weights.count / rows
        precondition(scales.count == rows, "GPTQRounding.outputScales: per-channel scales only")
        let t = codes.map { table[Int($0)] }
        var th = [Float](repeating: 0, count: weights.count)
        t.withUnsafeBufferPointer { a in
            gram.withUnsafeBufferPointer { g in
                th.withUnsafeMutableBufferPointer { c in
                    BLAS.sgemm(m: rows, n: n, k: n, a: a.baseAddress!, lda: n, b: g.baseAddress!, ldb: n, c: c.baseAddress!, ldc: n)
                }
            }
        }
        return (0..<rows).map { r in
            var numerator = 0.0, denominator = 0.0
            for p in 0..<n {
                numerator += Double(th[r * n + p]) * Double(weights[r * n + p])
                denominator += Double(th[r * n + p]) * Double(t[r * n + p])
            }
            let s = denominator > 0 ? numerator / denominator : 0
            return s > 0 && s.isFinite ? Float(s) : scales[r]
        }
    }

    /// `U` with `Uᵀ U = (H + λ·mean(diag H)·I)⁻¹` as Float, rows/columns of never-active inputs
    /// (zero diagonal) given a unit diagonal.
    func inverseFactor(_ gram: [Float], n: Int) -> [Float]? {
        var h = gram.map(Double.init)
        var meanDiagonal = 0.0
        for i in 0..<n { meanDiagonal += h[i * n + i] }
        meanDiagonal /= Double(n)
        guard meanDiagonal > 0, meanDiagonal.isFinite else { return nil }
        for i in 0..<n {
            if h[i * n + i] <= 0 { h[i * n + i] = 1 }
            h[i * n + i] += damping * meanDiagonal
        }
        let ok = h.withUnsafeMutableBufferPointer { LAPACK.inverseCholeskyUpper($0.baseAddress!, n: n) }
        guard ok, h.allSatisfy(\.isFinite) else { return nil }
        return h.map(Float.init)
    }

    /// `d_r H d_rᵀ` per row, `d = ŵ − w`, `ŵ = scale · table[code]` (the calibration output error).
    static func outputErrors(_ weights: UnsafeBufferPointer<Float>, codes: [UInt8], rows: Int, table: [Float],
                             scales: [Float], gram: [Float]) -> [Double] {
        BLAS.keepSingleThreaded()
        let n = weights.count / rows
        var d = [Float](repeating: 0, count: weights.count)
        for r in 0..<rows {
            let s = scales.count == 1 ? scales[0] : scales[r]
            for p in 0..<n { d[r * n + p] = s * table[Int(codes[r * n + p])] - weights[r * n + p] }
        }
        var dh = [Float](repeating: 0, count: weights.count)
        d.withUnsafeBufferPointer { a in
            gram.withUnsafeBufferPointer { g in
                dh.withUnsafeMutableBufferPointer { c in
                    BLAS.sgemm(m: rows, n: n, k: n, a: a.baseAddress!, lda: n, b: g.baseAddress!, ldb: n, c: c.baseAddress!, ldc: n)
                }
            }
        }
        return (0..<rows).map { r in
            var sum = 0.0
            for p in 0..<n { sum += Double(d[r * n + p]) * Double(dh[r * n + p]) }
            return sum
        }
    }
}
