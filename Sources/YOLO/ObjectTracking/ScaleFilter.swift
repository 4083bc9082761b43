import Foundation

/// A one-dimensional correlation filter over scales (DSST, Danelljan et al., "Accurate scale estimation for
/// robust visual tracking", BMVC 2014): the `.accurate` tracker's scale estimate.
///
/// At `count` scales a^k (k = −(count−1)/2 … (count−1)/2) around the target's size, the target's box (no
/// context) is resampled to a fixed model size of at most `modelArea` pixels and described by HOG; each feature
/// dimension, as a signal over the scales (Hann-windowed), is correlated with a Gaussian label peaked at scale
/// 1: per dimension numerator Aₗ = conj(Ĝ) ⊙ X̂ₗ, shared denominator B = Σₗ |X̂ₗ|², both followed with a learning
/// rate; the response to new samples Z is F⁻¹(Σₗ conj(Aₗ) ⊙ Ẑₗ / (B + λ)) and its peak is the scale change.
final class ScaleFilter {
    static let count = 33, step = 1.02, modelArea = 512.0, lambda: Float = 0.01, sigmaFactor = 0.25, cellSize = 4
    private let fft = ComplexFFT1D(count: ScaleFilter.count)
    private let modelWidth: Int, modelHeight: Int
    private let window: [Float], label: [Float]
    private var numerator: [Float] = [], denominator: [Float] = []

    /// A scale filter for a target of `width × height` pixels, trained on `frame`.
    init(frame: TrackingFrame, target: TargetState) {
        let zoom = min((Self.modelArea / (target.width * target.height)).squareRoot(), 1.0)
        func size(_ v: Double) -> Int { max(2 * Self.cellSize, Int((v * zoom / Double(Self.cellSize)).rounded()) * Self.cellSize) }
        (modelWidth, modelHeight) = (size(target.width), size(target.height))
        let n = Self.count
        window = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * (Double($0) + 0.5) / Double(n))) }
        let sigma = Double(n).squareRoot() * Self.sigmaFactor
        var g = [Float](repeating: 0, count: 2 * n)
        for k in 0..<n {
            let shift = Double(k < (n + 1) / 2 ? k : k - n)
            g[2 * k] = Float(exp(-0.5 * shift * shift / (sigma * sigma)))
        }
        var spectrum = [Float](repeating: 0, count: 2 * n)
        fft.forward(g, &spectrum)
        label = spectrum
        (numerator, denominator) = learn(samples(frame, target))
    }

    /// The factor by which the target's size changed: `step` to the power of the response peak's shift (whole steps,
    /// as DSST: no sub-step interpolation, whose small biases would compound into a creeping size on a still scene).
    func estimate(_ frame: TrackingFrame, _ target: TargetState) -> Double {
        let z = samples(frame, target)
        let n = Self.count
        let dims = z.count / (2 * n)
        var sum = [Float](repeating: 0, count: 2 * n)
        for d in 0..<dims {
            z.withUnsafeBufferPointer { zs in
                numerator.withUnsafeBufferPointer { a in
                    // conj(A) ⊙ Z = Z ⊙ conj(A)
                    SpectrumMath.accumulateCorrelation(zs.baseAddress! + 2 * n * d, a.baseAddress! + 2 * n * d, into: &sum, count: n)
                }
            }
        }
        for k in 0..<n { let d = 1 / (denominator[k] + Self.lambda); sum[2 * k] *= d; sum[2 * k + 1] *= d }
        var response = [Float](repeating: 0, count: 2 * n)
        fft.inverse(sum, &response)
        let real = (0..<n).map { response[2 * $0] }
        var best = 0
        for k in 1..<n where real[k] > real[best] { best = k }
        return pow(Self.step, Double(best > n / 2 ? best - n : best))
    }

    /// Moves the filter toward the samples at `target` by `rate`.
    func update(_ frame: TrackingFrame, _ target: TargetState, rate: Float) {
        let (a, b) = learn(samples(frame, target))
        SpectrumMath.interpolate(&numerator, toward: a, rate: rate, count: a.count)
        SpectrumMath.interpolate(&denominator, toward: b, rate: rate, count: b.count)
    }

    private func learn(_ x: [Float]) -> ([Float], [Float]) {
        let n = Self.count
        let dims = x.count / (2 * n)
        var a = [Float](repeating: 0, count: x.count), b = [Float](repeating: 0, count: n)
        x.withUnsafeBufferPointer { xs in
            a.withUnsafeMutableBufferPointer { out in
                for d in 0..<dims {
                    SpectrumMath.multiplyConjugate(xs.baseAddress! + 2 * n * d, label, into: out.baseAddress! + 2 * n * d, count: n)
                    for k in 0..<n {
                        let (re, im) = (xs[2 * n * d + 2 * k], xs[2 * n * d + 2 * k + 1])
                        b[k] += re * re + im * im
                    }
                }
            }
        }
        return (a, b)
    }

    /// The spectra over scales of every HOG dimension: `dims` runs of `count` complex values.
    private func samples(_ frame: TrackingFrame, _ target: TargetState) -> [Float] {
        let n = Self.count
        var columns: [[Float]] = []
        for k in 0..<n {
            let factor = pow(Self.step, Double(k - (n - 1) / 2))
            let sampler = PatchSampler(centerX: target.centerX, centerY: target.centerY, windowWidth: target.width * factor,
                                       windowHeight: target.height * factor, width: modelWidth, height: modelHeight,
                                       alwaysAntialias: true)
            let hog = HOGFeatures.compute(gray: sampler.gray(frame), width: modelWidth, height: modelHeight, cellSize: Self.cellSize)
            columns.append(hog.values.map { $0 * window[k] })
        }
        let dims = columns[0].count
        var signal = [Float](repeating: 0, count: 2 * n), out = [Float](repeating: 0, count: 2 * n * dims)
        for d in 0..<dims {
            for k in 0..<n { signal[2 * k] = columns[k][d]; signal[2 * k + 1] = 0 }
            out.withUnsafeMutableBufferPointer { o in fft.forward(signal, o.baseAddress! + 2 * n * d) }
        }
        return out
    }
}
