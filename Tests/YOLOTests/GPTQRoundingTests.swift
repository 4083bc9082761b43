import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct GPTQRoundingTests {
    let rows = 24, n = 40, positions = 400

    /// Correlated synthetic inputs `[n][positions]`: each input is a mix of a few shared factors plus
    /// noise, as neighbouring taps and channels of a feature map are.
    func inputs(seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        let factors = (0..<4).map { _ in random.floats(positions) }
        return (0..<n).flatMap { i -> [Float] in
            let mix = (0..<4).map { _ in random.float() }
            return (0..<positions).map { p in (0..<4).reduce(Float(0)) { $0 + mix[$1] * factors[$1][p] } + 0.1 * random.float() }
        }
    }

    func gram(_ x: [Float]) -> [Float] {
        var g = [Float](repeating: 0, count: n * n)
        for i in 0..<n { for j in 0..<n {
            var s = 0.0
            for p in 0..<positions { s += Double(x[i * positions + p]) * Double(x[j * positions + p]) }
            g[i * n + j] = Float(s / Double(positions))
        } }
        return g
    }

    /// `Σ_r ‖(ŵ_r − w_r) X‖²`: the layer's output error on the inputs.
    func outputError(_ w: [Float], _ restored: [Float], _ x: [Float]) -> [Double] {
        (0..<rows).map { r in
            (0..<positions).reduce(0.0) { sum, p in
                let y = (0..<n).reduce(0.0) { $0 + Double(restored[r * n + $1] - w[r * n + $1]) * Double(x[$1 * positions + p]) }
                return sum + y * y
            }
        }
    }

    /// On correlated inputs, error feedback never gives a row a larger output error than nearest
    /// rounding (the per-row guard), and lowers the total clearly at 4 bits (measured ~2x here; 0.8 leaves room).
    @Test(arguments: [LUTType.lut4, .lut6, .lut8])
    func errorFeedbackNeverIncreasesTheOutputError(type: LUTType) throws {
        let x = inputs(seed: 41)
        let w = randomWeights(rows: rows, rowLength: n, seed: 42)
        let lut = LUTQuantizer(type: type).quantize(w, rows: rows)
        let table = lut.table.array, scales = lut.scales.array
        let g = gram(x)
        let codes = try #require(w.withUnsafeBufferPointer { GPTQRounding().codes($0, rows: rows, table: table, scales: scales, gram: g) })
        let gptq = (0..<w.count).map { scales[$0 / n] * table[Int(codes[$0])] }
        let nearest = lut.expanded().array
        let a = outputError(w, gptq, x), b = outputError(w, nearest, x)
        // Tolerance: the guard compares Float32 d·H·dᵀ; the check here sums in Float64 over the inputs.
        for r in 0..<rows { #expect(a[r] <= b[r] * (1 + 1e-4) + 1e-12, "row \(r): \(a[r]) vs nearest \(b[r])") }
        if type == .lut4 { #expect(a.reduce(0, +) < 0.8 * b.reduce(0, +)) }
    }

    /// `inverseCholeskyUpper` returns U with Uᵀ U = A⁻¹: (Uᵀ U) A = I within 1e-9 (Float64, condition ~10).
    @Test func inverseCholeskyFactorInvertsTheMatrix() throws {
        let size = 5
        var random = SeededRandom(seed: 43)
        let m = (0..<size * size).map { _ in Double(random.float()) }
        var a = [Double](repeating: 0, count: size * size)
        for i in 0..<size { for j in 0..<size {
            a[i * size + j] = (0..<size).reduce(0.0) { $0 + m[i * size + $1] * m[j * size + $1] } + (i == j ? 1 : 0)
        } }
        var u = a
        #expect(u.withUnsafeMutableBufferPointer { LAPACK.inverseCholeskyUpper($0.baseAddress!, n: size) })
        for i in 0..<size { for j in 0..<i { #expect(u[i * size + j] == 0) } }
        for i in 0..<size { for j in 0..<size {
            // (Uᵀ U A)_ij
            var v = 0.0
            for k in 0..<size { for l in 0..<size { v += u[k * size + i] * u[k * size + l] * a[l * size + j] } }
            #expect(abs(v - (i == j ? 1 : 0)) < 1e-9)
        } }
    }

    /// A matrix that is not positive definite is refused, not factored.
    @Test func indefiniteMatrixIsRefused() {
        var a: [Double] = [1, 2, 2, 1]
        #expect(!a.withUnsafeMutableBufferPointer { LAPACK.inverseCholeskyUpper($0.baseAddress!, n: 2) })
    }
}
