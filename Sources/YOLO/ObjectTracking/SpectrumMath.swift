/// Element-wise arithmetic on interleaved complex arrays (re, im, re, im, …), the spectra of `RealFFT2D` and
/// `ComplexFFT1D`. `count` is the number of complex values.
enum SpectrumMath {
    /// `sum += a ⊙ conj(b)`.
    static func accumulateCorrelation(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                                      into sum: UnsafeMutablePointer<Float>, count: Int, scale: Float = 1) {
        for i in 0..<count {
            let (ar, ai, br, bi) = (a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1])
            sum[2 * i] += scale * (ar * br + ai * bi)
            sum[2 * i + 1] += scale * (ai * br - ar * bi)
        }
    }

    /// `out = a ⊙ b`.
    static func multiply(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let (ar, ai, br, bi) = (a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1])
            out[2 * i] = ar * br - ai * bi
            out[2 * i + 1] = ar * bi + ai * br
        }
    }

    /// `out = a ⊙ conj(b)`.
    static func multiplyConjugate(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>,
                                  count: Int) {
        for i in 0..<count {
            let (ar, ai, br, bi) = (a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1])
            out[2 * i] = ar * br + ai * bi
            out[2 * i + 1] = ai * br - ar * bi
        }
    }

    /// `|a|²` per value into `out` (`count` floats).
    static func power(_ a: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = a[2 * i] * a[2 * i] + a[2 * i + 1] * a[2 * i + 1] }
    }

    /// `model = (1 - rate) · model + rate · sample`, over `count` floats (real or interleaved).
    static func interpolate(_ model: UnsafeMutablePointer<Float>, toward sample: UnsafePointer<Float>, rate: Float, count: Int) {
        for i in 0..<count { model[i] += rate * (sample[i] - model[i]) }
    }
}
