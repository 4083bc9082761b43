import Testing
import YOLOKernels
@_spi(Engine) @testable import YOLO

/// The transform matrices and the hand-written vector transforms, against the 1-D definition.
@Suite struct WinogradTransformTests {
    /// `Aᵀ[(G g) ⊙ (Bᵀ d)]` must equal the correlation `y[i] = Σ_k d[i+k]·g[k]` (exact in Double up
    /// to 1e-12: the matrices hold exact small fractions).
    @Test(arguments: [2, 4, 6])
    func matricesComputeOneDimensionalCorrelation(m: Int) {
        let t = WinogradTransform(m: m)
        let d = LayerTestSupport.values(t.alpha, seed: 3).map(Double.init)
        let g = LayerTestSupport.values(3, seed: 4).map(Double.init)
        let gt = t.filterMatrix.map { row in (0..<3).reduce(0.0) { $0 + row[$1] * g[$1] } }
        let dt = t.inputMatrix.map { row in (0..<t.alpha).reduce(0.0) { $0 + row[$1] * d[$1] } }
        let product = zip(gt, dt).map { $0 * $1 }
        let y = t.outputMatrix.map { row in (0..<t.alpha).reduce(0.0) { $0 + row[$1] * product[$1] } }
        for i in 0..<m {
            let expected = (0..<3).reduce(0.0) { $0 + d[i + $1] * g[$1] }
            #expect(abs(y[i] - expected) < 1e-12)
        }
    }

    /// The vector column transforms apply exactly the matrices (float rounding only: 1e-5).
    @Test(arguments: [2, 4])
    func vectorTransformsMatchMatrices(m: Int) {
        let t = WinogradTransform(m: m)
        let values = LayerTestSupport.values(t.alpha * 8, seed: 9)
        let d = (0..<t.alpha).map { i in SIMD8<Float>(values[(i * 8)..<(i * 8 + 8)]) }
        var r = [SIMD8<Float>](repeating: .zero, count: t.alpha)
        var o = [SIMD8<Float>](repeating: .zero, count: m)
        d.withUnsafeBufferPointer { source in
            r.withUnsafeMutableBufferPointer { WinogradTiles.inputColumn(m: m, source.baseAddress!, 1, $0.baseAddress!, 1) }
            o.withUnsafeMutableBufferPointer { WinogradTiles.outputColumn(m: m, source.baseAddress!, 1, $0.baseAddress!, 1) }
        }
        for lane in 0..<8 {
            for i in 0..<t.alpha {
                let expected = (0..<t.alpha).reduce(0.0) { $0 + t.inputMatrix[i][$1] * Double(d[$1][lane]) }
                #expect(abs(Double(r[i][lane]) - expected) < 1e-5)
            }
            for i in 0..<m {
                let expected = (0..<t.alpha).reduce(0.0) { $0 + t.outputMatrix[i][$1] * Double(d[$1][lane]) }
                #expect(abs(Double(o[i][lane]) - expected) < 1e-5)
            }
        }
    }

    /// F(6×6)'s vector transforms (`inputTransform6`, `outputTransform6`) apply exactly its matrices (float
    /// rounding only; its constants reach 32 and 5.25, hence 1e-4).
    @Test func tile6VectorTransformsMatchMatrices() {
        let t = WinogradTransform(m: 6)
        let values = LayerTestSupport.values(64, seed: 9)
        let d = (0..<8).map { i in SIMD8<Float>(values[(i * 8)..<(i * 8 + 8)]) }
        let r = WinogradTiles.inputTransform6((d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]))
        let o = WinogradTiles.outputTransform6((d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]))
        let input = [r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7], output = [o.0, o.1, o.2, o.3, o.4, o.5]
        for lane in 0..<8 {
            for i in 0..<8 {
                let expected = (0..<8).reduce(0.0) { $0 + t.inputMatrix[i][$1] * Double(d[$1][lane]) }
                #expect(abs(Double(input[i][lane]) - expected) < 1e-4)
            }
            for i in 0..<6 {
                let expected = (0..<8).reduce(0.0) { $0 + t.outputMatrix[i][$1] * Double(d[$1][lane]) }
                #expect(abs(Double(output[i][lane]) - expected) < 1e-4)
            }
        }
    }

    /// `transformFilter` is `G g Gᵀ`.
    @Test(arguments: [2, 4, 6])
    func filterTransformIsGgGt(m: Int) {
        let t = WinogradTransform(m: m)
        let g = LayerTestSupport.values(9, seed: 5)
        let u = g.withUnsafeBufferPointer { t.transformFilter($0.baseAddress!) }
        let G = t.filterMatrix
        for i in 0..<t.alpha {
            for j in 0..<t.alpha {
                var expected = 0.0
                for a in 0..<3 { for b in 0..<3 { expected += G[i][a] * Double(g[a * 3 + b]) * G[j][b] } }
                #expect(abs(Double(u[i * t.alpha + j]) - expected) < 1e-6)
            }
        }
    }
}
