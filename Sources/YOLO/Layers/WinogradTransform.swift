/// The transforms of Winograd's minimal filtering F(m×m, 3×3) (Lavin & Gray 2015), for m = 2 and 4.
///
/// A 3×3 convolution over an `α×α` input tile `d` (α = m + 2) gives an m×m output tile
/// `Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A`. The filter part `U = G g Gᵀ` is computed once per layer; the
/// element-wise product over all channels becomes α² independent matrix products.
/// Interpolation points: 0, ±1 (m = 2); 0, ±1, ±2 and ∞ (m = 4).
struct WinogradTransform: Sendable, Equatable {
    /// Output tile edge.
    let m: Int
    /// Input tile edge, `m + 2`.
    var alpha: Int { m + 2 }

    /// - Precondition: `m` is 2 or 4.
    init(m: Int) {
        precondition(m == 2 || m == 4, "WinogradTransform: only F(2x2,3x3) and F(4x4,3x3) exist, got m = \(m)")
        self.m = m
    }

    // MARK: - Matrices (row-major, Double for the one-time filter transform and for tests)

    /// `Bᵀ`, α×α.
    var inputMatrix: [[Double]] {
        let f2: [[Double]] = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
        let f4: [[Double]] = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
        return m == 2 ? f2 : f4
    }

    /// `G`, α×3.
    var filterMatrix: [[Double]] {
        let sixth = 1.0 / 6, twelfth = 1.0 / 12, quarter = 0.25, x24 = 1.0 / 24
        let f2: [[Double]] = [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]
        let f4: [[Double]] = [[quarter, 0, 0], [-sixth, -sixth, -sixth], [-sixth, sixth, -sixth],
                              [x24, twelfth, sixth], [x24, -twelfth, sixth], [0, 0, 1]]
        return m == 2 ? f2 : f4
    }

    /// `Aᵀ`, m×α.
    var outputMatrix: [[Double]] {
        let f2: [[Double]] = [[1, 1, 1, 0], [0, 1, -1, -1]]
        let f4: [[Double]] = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
        return m == 2 ? f2 : f4
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

    // MARK: - 1-D transforms on vectors (lanes are independent tiles)

    /// Applies `Bᵀ` to the α vectors `d[0], d[stride], ...`, writing α vectors to `r[0], r[rStride], ...`.
    /// Loads the α² vectors of one group of tiles or filters from M (`p` at ξ = 0, planes `stride`
    /// floats apart) into `buffer[0 ..< α²]`.
    @inline(__always)
    static func loadTile<V: SIMD>(m: Int, _ p: UnsafePointer<Float>, stride: Int, into buffer: UnsafeMutablePointer<V>)
        where V.Scalar == Float {
        for xi in 0..<((m + 2) * (m + 2)) { buffer[xi] = UnsafeRawPointer(p + xi * stride).loadUnaligned(as: V.self) }
    }

    /// `Aᵀ M A` for the α×α values at `buffer[0 ..< α²]` (row-major, lanes = independent tiles or
    /// filters), using `buffer[α² ..< 2α²]` as scratch; leaves the m×m result at `buffer[0 ..< m²]`.
    @inline(__always)
    static func outputTile<V: SIMD>(m: Int, _ buffer: UnsafeMutablePointer<V>) where V.Scalar == Float {
        let alpha = m + 2
        let temp = buffer + alpha * alpha   // Aᵀ M: m×α
        for j in 0..<alpha { outputColumn(m: m, buffer + j, alpha, temp + j, alpha) }
        for i in 0..<m { outputColumn(m: m, temp + i * alpha, 1, buffer + i * m, 1) }
    }

    @inline(__always)
    static func inputColumn<V: SIMD>(m: Int, _ d: UnsafePointer<V>, _ stride: Int,
                                     _ r: UnsafeMutablePointer<V>, _ rStride: Int) where V.Scalar == Float {
        if m == 2 {
            let d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride]
            r[0] = d0 - d2
            r[rStride] = d1 + d2
            r[2 * rStride] = d2 - d1
            r[3 * rStride] = d1 - d3
        } else {
            let d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride], d4 = d[4 * stride], d5 = d[5 * stride]
            let a = d4 - 4 * d2, b = d3 - 4 * d1    // for rows 1 and 2
            let c = d4 - d2, e = 2 * (d3 - d1)       // for rows 3 and 4
            r[0] = 4 * d0 - 5 * d2 + d4
            r[rStride] = a + b
            r[2 * rStride] = a - b
            r[3 * rStride] = c + e
            r[4 * rStride] = c - e
            r[5 * rStride] = 4 * d1 - 5 * d3 + d5
        }
    }

    /// Applies `Aᵀ` to the α vectors `s[0], s[stride], ...`, writing m vectors to `o[0], o[oStride], ...`.
    @inline(__always)
    static func outputColumn<V: SIMD>(m: Int, _ s: UnsafePointer<V>, _ stride: Int,
                                      _ o: UnsafeMutablePointer<V>, _ oStride: Int) where V.Scalar == Float {
        if m == 2 {
            let s0 = s[0], s1 = s[stride], s2 = s[2 * stride], s3 = s[3 * stride]
            o[0] = s0 + s1 + s2
            o[oStride] = s1 - s2 - s3
        } else {
            let s0 = s[0], s1 = s[stride], s2 = s[2 * stride], s3 = s[3 * stride], s4 = s[4 * stride], s5 = s[5 * stride]
            let p12 = s1 + s2, m12 = s1 - s2, p34 = s3 + s4, m34 = s3 - s4
            o[0] = s0 + p12 + p34
            o[oStride] = m12 + 2 * m34
            o[2 * oStride] = p12 + 4 * p34
            o[3 * oStride] = m12 + 8 * m34 + s5
        }
    }
}
