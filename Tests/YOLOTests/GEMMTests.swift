import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `GEMM` (the active kernel family's micro-kernel, or OpenBLAS for the portable family) against a plain triple
/// loop in Double, over shapes that hit every edge: rows not a multiple of the 6-row panel, columns
/// not a multiple of the 64-column block, k of 1, k cut into chunks, row ranges starting on a later
/// panel, padded operands, and every activation. Tolerance: 1e-6 × Σ|a·b| per element (float summation of k
/// products, single rounding per step; the measured worst case is reported on failure).
@Suite struct GEMMTests {
    struct Case: CustomTestStringConvertible {
        var m: Int, n: Int, k: Int
        var testDescription: String { "\(m)x\(n)x\(k)" }
    }

    static let cases: [Case] = [
        Case(m: 1, n: 1, k: 1), Case(m: 6, n: 64, k: 8), Case(m: 7, n: 65, k: 3), Case(m: 13, n: 130, k: 27),
        Case(m: 5, n: 63, k: 100), Case(m: 32, n: 169, k: 256), Case(m: 255, n: 49, k: 64), Case(m: 16, n: 2080, k: 27),
        Case(m: 64, n: 169, k: 4608),   // B larger than L2: the inner dimension is cut into chunks
        Case(m: 62, n: 169, k: 4607),   // the same, ending in a two-row panel (its even and odd steps summed apart), odd k
    ]

    /// Inputs and the exact `A·B + bias` in Double with its error scale, made once per case and shared by every
    /// test and activation (the sums do not depend on the activation, which `error` applies).
    struct Problem: Sendable {
        let a: [Float], b: [Float], bias: [Float]
        let exact: [Double], scale: [Double]
        init(_ c: Case, seed: UInt64) {
            var random = SeededRandom(seed: seed)
            let a = random.floats(c.m * c.k), b = random.floats(c.k * c.n), bias = random.floats(c.m)
            (self.a, self.b, self.bias) = (a, b, bias)
            var sums = [Double](repeating: 0, count: c.m * c.n), magnitudes = sums
            // Row by row, p ascending for every element (the order a plain triple loop sums in), reading B's rows
            // in order rather than down its columns.
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    sums.withUnsafeMutableBufferPointer { exact in
                        magnitudes.withUnsafeMutableBufferPointer { scale in
                            for i in 0..<c.m {
                                let row = i * c.n
                                for j in 0..<c.n {
                                    exact[row + j] = Double(bias[i])
                                    scale[row + j] = abs(Double(bias[i]))
                                }
                                for p in 0..<c.k {
                                    let x = Double(a[i * c.k + p])
                                    for j in 0..<c.n {
                                        let product = x * Double(b[p * c.n + j])
                                        exact[row + j] += product
                                        scale[row + j] += abs(product)
                                    }
                                }
                            }
                        }
                    }
                }
            }
            exact = sums
            scale = magnitudes
        }

        /// Largest error against `activation(exact)`, relative to the element's Σ|a·b|.
        func error(_ result: [Float], rows: Range<Int>, n: Int, ldc: Int, activation: Activation) -> Double {
            var worst = 0.0
            for i in rows {
                for j in 0..<n {
                    let want = Double(activation(Float(exact[i * n + j])))
                    let e = abs(Double(result[i * ldc + j]) - want) / max(scale[i * n + j], 1e-30)
                    worst = max(worst, e.isNaN ? .infinity : e)
                }
            }
            return worst
        }
    }

    /// One problem per case, computed the first time a test asks (O(m·n·k) in Double each: 0.1 G products for the
    /// two chunked cases), then shared.
    static let problems: [Problem] = cases.map { Problem($0, seed: UInt64($0.m * 1000 + $0.n)) }

    static func problem(_ c: Case) -> Problem {
        problems[cases.firstIndex { ($0.m, $0.n, $0.k) == (c.m, c.n, c.k) }!]
    }

    @Test(arguments: cases, Activation.allCases)
    func packedProductMatchesTheExactOne(_ c: Case, activation: Activation) {
        let problem = Self.problem(c)
        let packed = PackedMatrix(rowMajor: FloatBuffer(problem.a), rows: c.m, columns: c.k)
        var result = [Float](repeating: .nan, count: c.m * c.n)
        var scratch = [Float](repeating: .nan, count: max(GEMM.scratchCount, 1))
        problem.b.withUnsafeBufferPointer { b in
            problem.bias.withUnsafeBufferPointer { bias in
                GEMM.multiply(packed, rows: 0..<c.m, b: b.baseAddress!, ldb: c.n, n: c.n, c: &result, ldc: c.n,
                              bias: bias.baseAddress!, activation: activation, scratch: &scratch)
            }
        }
        #expect(problem.error(result, rows: 0..<c.m, n: c.n, ldc: c.n, activation: activation) <= 1e-6)
    }

    /// Logistic and swish on the stored tile (the AVX2 family's fused-multiply-add exponential, the others' shared
    /// one) over their whole range, clamps included: with A = 0, row `r` of C is the activation of
    /// bias `r`, −120 … 120 in steps of 0.37. Against the definitions in Double: within 4e-7 relative (the fused
    /// exponential is within 1.7e-7, the portable one within 2 ulp) or 1e-30 absolute (below e^−87 the clamp
    /// gives a tiny value, not 0).
    @Test(arguments: [Activation.logistic, .swish])
    func transcendentalActivationsOverTheirRange(activation: Activation) {
        let biases = (0..<649).map { Float(-120 + 0.37 * Double($0)) }
        let (m, n) = (biases.count, 16)
        let packed = PackedMatrix(rowMajor: FloatBuffer([Float](repeating: 0, count: m)), rows: m, columns: 1)
        var result = [Float](repeating: .nan, count: m * n)
        var scratch = [Float](repeating: .nan, count: max(GEMM.scratchCount, 1))
        let b = [Float](repeating: 1, count: n)
        b.withUnsafeBufferPointer { b in
            biases.withUnsafeBufferPointer { bias in
                GEMM.multiply(packed, rows: 0..<m, b: b.baseAddress!, ldb: n, n: n, c: &result, ldc: n,
                              bias: bias.baseAddress!, activation: activation, scratch: &scratch)
            }
        }
        for (r, x) in biases.enumerated() {
            let d = Double(x)
            let want = activation == .logistic ? 1 / (1 + exp(-d)) : d / (1 + exp(-d))
            for j in 0..<n {
                let got = Double(result[r * n + j])
                #expect(abs(got - want) <= max(4e-7 * abs(want), 1e-30), "\(activation)(\(x)) = \(got), want \(want)")
            }
        }
    }

    /// OpenBLAS's products (the portable family's) give the same bits for every value of C however C is split
    /// into parts along `blasRowBlock` and `blasColumnBlock`, as the layers split it by thread count. Shapes from
    /// yolov4-tiny's layers and the small ones where OpenBLAS changes code paths (direct and small-matrix
    /// kernels), split the ways one, two and three threads split them.
    @Test func blasProductsDoNotDependOnTheSplit() {
        BLAS.keepSingleThreaded()   // as every workspace of the portable family does
        for (m, n, k) in [(18, 169, 256), (255, 169, 512), (64, 43_264, 27), (128, 2_704, 576), (255, 676, 256), (3, 50, 9),
                          (256, 49, 2_304), (128, 700, 64)] {
            var random = SeededRandom(seed: UInt64(m * n + k))
            let a = random.floats(m * k), b = random.floats(k * n)
            func product(rowParts: Int, columnParts: Int) -> [UInt32] {
                var c = [Float](repeating: .nan, count: m * n)
                for rp in 0..<rowParts {
                    let rows = Parallel.alignedPart(rp, of: rowParts, count: m, alignment: GEMM.blasRowBlock)
                    for cp in 0..<columnParts {
                        let columns = Parallel.alignedPart(cp, of: columnParts, count: n, alignment: GEMM.blasColumnBlock)
                        guard !rows.isEmpty, !columns.isEmpty else { continue }
                        a.withUnsafeBufferPointer { a in
                            b.withUnsafeBufferPointer { b in
                                c.withUnsafeMutableBufferPointer { c in
                                    GEMM.multiplyWithBLAS(a.baseAddress! + rows.lowerBound * k, m: rows.count, k: k,
                                                          b: b.baseAddress! + columns.lowerBound, ldb: n, n: columns.count,
                                                          c: c.baseAddress! + rows.lowerBound * n + columns.lowerBound, ldc: n)
                                }
                            }
                        }
                    }
                }
                return c.map(\.bitPattern)
            }
            let whole = product(rowParts: 1, columnParts: 1)
            #expect(!whole.contains(Float.nan.bitPattern))
            for parts in [(2, 1), (3, 1), (1, 2), (1, 3), (2, 3)] {
                #expect(product(rowParts: parts.0, columnParts: parts.1) == whole, "\(m)×\(n)×\(k) in \(parts.0)×\(parts.1) parts")
            }
        }
    }

    @Test(arguments: cases)
    func laterRowsAloneLeaveTheOthersUntouched(_ c: Case) {
        let start = GEMM.rowAlignment * ((c.m / 2) / GEMM.rowAlignment)
        let problem = Self.problem(c)
        let packed = PackedMatrix(rowMajor: FloatBuffer(problem.a), rows: c.m, columns: c.k)
        var result = [Float](repeating: -7, count: c.m * c.n)
        var scratch = [Float](repeating: .nan, count: max(GEMM.scratchCount, 1))
        problem.bias.withUnsafeBufferPointer { bias in
            GEMM.multiply(packed, rows: start..<c.m, b: problem.b, ldb: c.n, n: c.n, c: &result, ldc: c.n,
                          bias: bias.baseAddress!, activation: .leaky, scratch: &scratch)
        }
        #expect(problem.error(result, rows: start..<c.m, n: c.n, ldc: c.n, activation: .leaky) <= 1e-6)
        #expect(result[0 ..< start * c.n].allSatisfy { $0 == -7 })
    }

    @Test(arguments: cases)
    func paddedOperandsAndRowPackedWeightsGiveTheSameProduct(_ c: Case) {
        // B and C with rows padded to whole 64-column blocks, as Winograd's V and M are.
        let ld = (c.n + 63) / 64 * 64
        let problem = Self.problem(c)
        var b = [Float](repeating: 0.5, count: c.k * ld)
        for p in 0..<c.k { for j in 0..<c.n { b[p * ld + j] = problem.b[p * c.n + j] } }
        let packed = PackedMatrix(count: 2, rows: c.m, columns: c.k) { target, layout in
            for i in 0..<c.m { for p in 0..<c.k { target[layout.index(matrix: 1, row: i, column: p)] = problem.a[i * c.k + p] } }
        }
        var padded = [Float](repeating: .nan, count: c.m * ld)
        GEMM.multiply(packed, matrix: 1, rows: 0..<c.m, b: b, ldb: ld, n: c.n, c: &padded, ldc: ld, padded: true, scratch: nil)
        // A packed row by row into plain memory, as LUTConvolution expands codes.
        let layout = PackedMatrix.Layout(rows: c.m, columns: c.k)
        var rowPacked = [Float](repeating: 0, count: layout.matrixStride)
        rowPacked.withUnsafeMutableBufferPointer { target in
            for i in 0..<c.m { layout.packRow(problem.a.withUnsafeBufferPointer { $0.baseAddress! + i * c.k }, at: i, into: target.baseAddress!) }
        }
        var plain = [Float](repeating: .nan, count: c.m * c.n)
        var scratch = [Float](repeating: .nan, count: max(GEMM.scratchCount, 1))
        GEMM.multiply(packed: rowPacked, m: c.m, k: c.k, b: problem.b, ldb: c.n, n: c.n, c: &plain, ldc: c.n,
                      scratch: &scratch)
        // These products take no bias; adding it afterwards compares them with the exact A·B + bias.
        var shifted = plain, shiftedPadded = padded
        for i in 0..<c.m {
            for j in 0..<c.n { shifted[i * c.n + j] += problem.bias[i]; shiftedPadded[i * ld + j] += problem.bias[i] }
        }
        #expect(problem.error(shifted, rows: 0..<c.m, n: c.n, ldc: c.n, activation: .linear) <= 1e-6)
        #expect(problem.error(shiftedPadded, rows: 0..<c.m, n: c.n, ldc: ld, activation: .linear) <= 1e-6)
    }
}
