/// The transforms of Winograd's minimal filtering F(m×m, 3×3) (Lavin & Gray 2015), for m = 2, 4 and 6.
///
/// A 3×3 convolution over an `α×α` input tile `d` (α = m + 2) gives an m×m output tile
/// `Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A`. The filter part `U = G g Gᵀ` is computed once per layer; the
/// element-wise product over all channels becomes α² independent matrix products. The transforms on
/// vectors (lanes = independent tiles) are `WinogradTiles` (YOLOKernels), shared with the kernel families.
/// Interpolation points: 0, ±1 (m = 2); 0, ±1, ±2 and ∞ (m = 4); 0, ±1, ±2, ±½ and ∞ (m = 6).
struct WinogradTransform: Sendable, Equatable {
    /// Output tile edge.
    let m: Int
    /// Input tile edge, `m + 2`.
    var alpha: Int { m + 2 }

    /// - Precondition: `m` is 2, 4 or 6.
    init(m: Int) {
        precondition(m == 2 || m == 4 || m == 6, "WinogradTransform: only F(2x2,3x3), F(4x4,3x3) and F(6x6,3x3) exist, got m = \(m)")
        self.m = m
    }

    // MARK: - Matrices (row-major, Double for the one-time filter transform and for tests)

    /// `Bᵀ`, α×α.
    var inputMatrix: [[Double]] {
        let f2: [[Double]] = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
        let f4: [[Double]] = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
        let f6: [[Double]] = [[1, 0, -5.25, 0, 5.25, 0, -1, 0], [0, 1, 1, -4.25, -4.25, 1, 1, 0],
                              [0, -1, 1, 4.25, -4.25, -1, 1, 0], [0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0],
                              [0, -0.5, 0.25, 2.5, -1.25, -2, 1, 0], [0, 2, 4, -2.5, -5, 0.5, 1, 0],
                              [0, -2, 4, 2.5, -5, -0.5, 1, 0], [0, -1, 0, 5.25, 0, -5.25, 0, 1]]
        return m == 2 ? f2 : m == 4 ? f4 : f6
    }

    /// `G`, α×3.
    var filterMatrix: [[Double]] {
        let sixth = 1.0 / 6, twelfth = 1.0 / 12, quarter = 0.25, x24 = 1.0 / 24
        let f2: [[Double]] = [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]
        let f4: [[Double]] = [[quarter, 0, 0], [-sixth, -sixth, -sixth], [-sixth, sixth, -sixth],
                              [x24, twelfth, sixth], [x24, -twelfth, sixth], [0, 0, 1]]
        let ninth2 = 2.0 / 9, n90 = 1.0 / 90, n45 = 1.0 / 45
        let f6: [[Double]] = [[1, 0, 0], [-ninth2, -ninth2, -ninth2], [-ninth2, ninth2, -ninth2],
                              [n90, 2 * n90, 4 * n90], [n90, -2 * n90, 4 * n90],
                              [32 * n45, 16 * n45, 8 * n45], [32 * n45, -16 * n45, 8 * n45], [0, 0, 1]]
        return m == 2 ? f2 : m == 4 ? f4 : f6
    }

    /// `Aᵀ`, m×α.
    var outputMatrix: [[Double]] {
        let f2: [[Double]] = [[1, 1, 1, 0], [0, 1, -1, -1]]
        let f4: [[Double]] = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
        let f6: [[Double]] = [[1, 1, 1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0.5, -0.5, 0], [0, 1, 1, 4, 4, 0.25, 0.25, 0],
                              [0, 1, -1, 8, -8, 0.125, -0.125, 0], [0, 1, 1, 16, 16, 0.0625, 0.0625, 0],
                              [0, 1, -1, 32, -32, 0.03125, -0.03125, 1]]
        return m == 2 ? f2 : m == 4 ? f4 : f6
    }

    /// `G g Gᵀ` for one 3×3 filter `g` (row-major, 9 values), as α×α row-major floats.
    func transformFilter(_ g: UnsafePointer<Float>) -> [Float] {
        let G = filterMatrix
        var temp = [Double](repeating: 0, count: alpha * 3)  // G g: α×3
        for i in 0..<alpha {
            for j in 0..<3 {
                var sum = 0.0
                for k in 0..<3 { sum += G[i][k] * Double(g[k * 3 + j]) }
                temp[i * 3 + j] = sum
            }
        }
        var result = [Float](repeating: 0, count: alpha * alpha)
        for i in 0..<alpha {
            for j in 0..<alpha {
                var sum = 0.0
                for k in 0..<3 { sum += temp[i * 3 + k] * G[j][k] }
                result[i * alpha + j] = Float(sum)
            }
        }
        return result
    }
}
