/// Y'CbCr → 8-bit R'G'B' in fixed point, the arithmetic of every ``PixelBuffer`` conversion.
///
/// With K_R, K_B of the matrix and K_G = 1 − K_R − K_B, a video-range sample converts as
/// `R = 255/219 (Y − 16) + 2 (1 − K_R) · 255/224 (Cr − 128)`,
/// `G = 255/219 (Y − 16) − 2 K_B (1 − K_B) / K_G · 255/224 (Cb − 128) − 2 K_R (1 − K_R) / K_G · 255/224 (Cr − 128)`,
/// `B = 255/219 (Y − 16) + 2 (1 − K_B) · 255/224 (Cb − 128)`;
/// a full-range one with the factors 255/219 and 255/224 and the offset 16 left out. Each result is
/// rounded to the nearest integer (halves up) and clamped to 0...255.
///
/// Cb and Cr arrive as sums of four chroma samples with weights in sixteenths (the bilinear chroma
/// interpolation of `ChromaTap`), so the chroma terms are exact integers; the coefficients are
/// rounded to 2⁻²² of a level per unit, which leaves the result within 0.0002 of a level of the
/// real-valued formula before rounding (the tests state how often that moves a rounding).
struct YCbCrToRGB: Sendable, Equatable {
    static let fractionBits = 22
    private static let shift = fractionBits + 4

    let yOffset: Int
    /// Per luma level, scaled by 16 · 2²² (chroma comes in sixteenths).
    let yScale: Int
    /// Per sixteenth of a chroma level, scaled by 2²².
    let crToR: Int
    let cbToG: Int
    let crToG: Int
    let cbToB: Int

    init(matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange) {
        let (kr, kb) = Self.weights(matrix)
        let kg = 1 - kr - kb
        let video = range == .video
        let luma = video ? 255.0 / 219 : 1
        let chroma = video ? 255.0 / 224 : 1
        let one = Double(1 << Self.fractionBits)
        func fixed(_ value: Double) -> Int { Int((value * one).rounded()) }
        yOffset = video ? 16 : 0
        yScale = fixed(16 * luma)
        crToR = fixed(2 * (1 - kr) * chroma)
        cbToG = fixed(2 * kb * (1 - kb) / kg * chroma)
        crToG = fixed(2 * kr * (1 - kr) / kg * chroma)
        cbToB = fixed(2 * (1 - kb) * chroma)
    }

    /// K_R and K_B of `matrix`.
    static func weights(_ matrix: PixelBuffer.Matrix) -> (kr: Double, kb: Double) {
        switch matrix {
        case .bt601: (0.299, 0.114)
        case .bt709: (0.2126, 0.0722)
        }
    }

    /// The R, G, B of luma `y` and chroma sums `cb16`, `cr16` (16 × the interpolated Cb, Cr).
    @inline(__always)
    func rgb(y: Int, cb16: Int, cr16: Int) -> (UInt8, UInt8, UInt8) {
        let cb = cb16 - 128 * 16, cr = cr16 - 128 * 16
        let l = (y - yOffset) * yScale + (1 << (Self.shift - 1))
        return (Self.clamp((l + crToR * cr) >> Self.shift),
                Self.clamp((l - cbToG * cb - crToG * cr) >> Self.shift),
                Self.clamp((l + cbToB * cb) >> Self.shift))
    }

    @inline(__always)
    private static func clamp(_ v: Int) -> UInt8 { UInt8(truncatingIfNeeded: min(max(v, 0), 255)) }
}

/// The two chroma samples that a luma position interpolates between, and their weights in quarters
/// (summing to 4). Indices are pre-multiplied by the sample step of the chroma layout.
struct ChromaTap: Sendable, Equatable {
    var first: Int
    var second: Int
    var firstWeight: Int
    var secondWeight: Int

    /// One tap per luma position of an axis with `count` luma samples. `subsampled`: two luma
    /// samples per chroma sample, the chroma sample at luma position `2 i + offset` (`offset` 0 or
    /// 0.5, given in quarters of a luma sample as 0 or 2); interpolated linearly, the first and last
    /// chroma samples repeated beyond the edges. Not subsampled: the co-located sample.
    static func axis(count: Int, subsampled: Bool, offsetQuarters: Int, step: Int) -> [ChromaTap] {
        (0..<count).map { x in
            guard subsampled else { return ChromaTap(first: x * step, second: x * step, firstWeight: 4, secondWeight: 0) }
            // Position in chroma samples, in quarters of a chroma sample: 4 (x − offset) / 2, with the
            // offset given in quarters of a luma sample.
            let quarters = 2 * x - offsetQuarters / 2
            let index = quarters >= 0 ? quarters / 4 : -((-quarters + 3) / 4)
            let fraction = quarters - 4 * index
            let last = count / 2 - 1
            return ChromaTap(first: min(max(index, 0), last) * step, second: min(max(index + 1, 0), last) * step,
                             firstWeight: 4 - fraction, secondWeight: fraction)
        }
    }
}

extension PixelBuffer.ChromaLocation {
    /// The chroma sample's position past the even luma sample, in quarters of a luma sample:
    /// (horizontal, vertical).
    var offsetQuarters: (horizontal: Int, vertical: Int) {
        switch self {
        case .left: (0, 2)
        case .center: (2, 2)
        case .topLeft: (0, 0)
        }
    }
}
