import Foundation

/// A kernelized correlation filter (KCF, Henriques et al., "High-speed tracking with kernelized correlation
/// filters", PAMI 2015) with a Gaussian kernel, over multi-channel features: the `.fast` tracker's model.
///
/// Ridge regression over every cyclic shift of the training patch x to a Gaussian label y peaked at shift 0,
/// solved in the Fourier domain: α̂ = ŷ / (k̂ˣˣ + λ). The response to a new patch z is F⁻¹(α̂ ⊙ k̂ᶻˣ), where
/// kᶻˣ = exp(−max(0, ‖z‖² + ‖x‖² − 2 F⁻¹(Σ_c ẑ_c ⊙ conj(x̂_c))) / (σ² N)), N the number of feature values. The
/// model (x̂ and α̂) follows each new frame by linear interpolation.
final class KernelizedCorrelationFilter {
    /// Regularization λ, kernel width σ, model learning rate.
    let lambda: Float = 1e-4, sigma: Float = 0.5
    private let fft: RealFFT2D
    private let channels: Int
    private let labelSpectrum: [Float]
    private var modelSpectrum: [Float]  // x̂ per channel
    private var modelNorm: Float  // ‖x‖²
    private var alphaSpectrum: [Float]

    /// Trains on `x` (already windowed) with a Gaussian label of standard deviation `labelSigma` cells.
    init(training x: FeatureMap, labelSigma: Double) {
        fft = RealFFT2D(width: x.width, height: x.height)
        channels = x.channels
        labelSpectrum = Self.gaussianLabelSpectrum(width: x.width, height: x.height, sigma: labelSigma, fft: fft)
        modelSpectrum = []
        modelNorm = 0
        alphaSpectrum = []
        (modelSpectrum, modelNorm) = transform(x)
        alphaSpectrum = solve(modelSpectrum, modelNorm)
    }

    /// The response (`width × height`, shift 0 at index 0) to `z` (windowed, same grid and channels).
    func response(to z: FeatureMap) -> [Float] {
        let (zSpectrum, zNorm) = transform(z)
        let kernel = kernelSpectrum(zSpectrum, zNorm, modelSpectrum, modelNorm)
        var product = [Float](repeating: 0, count: 2 * fft.spectrumCount)
        SpectrumMath.multiply(alphaSpectrum, kernel, into: &product, count: fft.spectrumCount)
        var out = [Float](repeating: 0, count: fft.width * fft.height)
        fft.inverse(product, &out)
        return out
    }

    /// Moves the model toward the patch `x` (windowed) by `rate`.
    func update(with x: FeatureMap, rate: Float) {
        let (xSpectrum, xNorm) = transform(x)
        let alpha = solve(xSpectrum, xNorm)
        SpectrumMath.interpolate(&modelSpectrum, toward: xSpectrum, rate: rate, count: modelSpectrum.count)
        SpectrumMath.interpolate(&alphaSpectrum, toward: alpha, rate: rate, count: alphaSpectrum.count)
        modelNorm += rate * (xNorm - modelNorm)
    }

    private func solve(_ spectrum: [Float], _ norm: Float) -> [Float] {
        let k = kernelSpectrum(spectrum, norm, spectrum, norm)
        var alpha = [Float](repeating: 0, count: k.count)
        for i in 0..<fft.spectrumCount {
            let (kr, ki) = (k[2 * i] + lambda, k[2 * i + 1])
            let (yr, yi) = (labelSpectrum[2 * i], labelSpectrum[2 * i + 1])
            let d = kr * kr + ki * ki
            alpha[2 * i] = (yr * kr + yi * ki) / d
            alpha[2 * i + 1] = (yi * kr - yr * ki) / d
        }
        return alpha
    }

    /// Per-channel spectra and the squared norm of a feature map.
    private func transform(_ x: FeatureMap) -> ([Float], Float) {
        precondition(x.channels == channels && x.width == fft.width && x.height == fft.height, "KCF: feature map shape changed")
        let n = x.planeCount, s = 2 * fft.spectrumCount
        var spectrum = [Float](repeating: 0, count: s * channels)
        var norm: Float = 0
        x.values.withUnsafeBufferPointer { v in
            spectrum.withUnsafeMutableBufferPointer { out in
                for c in 0..<channels { fft.forward(v.baseAddress! + c * n, out.baseAddress! + c * s) }
            }
            for value in v { norm += value * value }
        }
        return (spectrum, norm)
    }

    /// The spectrum of the Gaussian kernel correlation of `a` with `b`.
    private func kernelSpectrum(_ a: [Float], _ aNorm: Float, _ b: [Float], _ bNorm: Float) -> [Float] {
        let s = 2 * fft.spectrumCount
        var sum = [Float](repeating: 0, count: s)
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                for c in 0..<channels {
                    SpectrumMath.accumulateCorrelation(pa.baseAddress! + c * s, pb.baseAddress! + c * s, into: &sum,
                                                       count: fft.spectrumCount)
                }
            }
        }
        let n = fft.width * fft.height
        var cross = [Float](repeating: 0, count: n)
        fft.inverse(sum, &cross)
        let scale = -1 / (sigma * sigma * Float(n * channels))
        for i in 0..<n { cross[i] = exp(max(aNorm + bNorm - 2 * cross[i], 0) * scale) }
        var out = [Float](repeating: 0, count: s)
        fft.forward(cross, &out)
        return out
    }

    /// The spectrum of a Gaussian of standard deviation `sigma` cells peaked at shift (0, 0), wrapped.
    static func gaussianLabelSpectrum(width: Int, height: Int, sigma: Double, fft: RealFFT2D) -> [Float] {
        var label = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            let dy = Double(y < (height + 1) / 2 ? y : y - height)
            for x in 0..<width {
                let dx = Double(x < (width + 1) / 2 ? x : x - width)
                label[y * width + x] = Float(exp(-0.5 * (dx * dx + dy * dy) / (sigma * sigma)))
            }
        }
        var out = [Float](repeating: 0, count: 2 * fft.spectrumCount)
        fft.forward(label, &out)
        return out
    }
}
