/// A discriminative correlation filter with channel and spatial reliability (CSR-DCF, Lukežič et al.,
/// "Discriminative correlation filter with channel and spatial reliability", CVPR 2017 / IJCV 2018): the
/// `.accurate` tracker's model.
///
/// One filter per feature channel, each learned on its own: least squares to a Gaussian label, constrained to the
/// spatial reliability mask m (the filter is zero where m is), solved by the augmented Lagrangian (ADMM):
/// ĥc = (f̂ ⊙ conj(ĝ) + μ ĥm − l̂) / (f̂ ⊙ conj(f̂) + μ); hm = m ⊙ F⁻¹(μ ĥc + l̂) / (λ/D + μ); l̂ += μ (ĥc − ĥm);
/// μ ← min(β μ, μmax). The channels' responses are summed with weights: learning reliability (each channel's
/// response peak on its training patch) times detection reliability (1 − min(second mode / first, ½) of its
/// response in the last detection), normalized, followed with a learning rate.
final class ReliableCorrelationFilter {
    static let lambda: Float = 0.01, mu0: Float = 5, beta: Float = 3, muMax: Float = 20, iterations = 4
    private let fft: RealFFT2D
    private let channels: Int
    private let label: [Float]
    private var filters: [Float]  // ĥ per channel
    private(set) var weights: [Float]
    private var detectionReliability: [Float]

    /// Trains on `f` (windowed) with `mask` (`width * height` values in 0…1) and a Gaussian label of `labelSigma` cells.
    init(training f: FeatureMap, mask: [Float], labelSigma: Double) {
        fft = RealFFT2D(width: f.width, height: f.height)
        channels = f.channels
        label = KernelizedCorrelationFilter.gaussianLabelSpectrum(width: f.width, height: f.height, sigma: labelSigma, fft: fft)
        filters = []
        weights = [Float](repeating: 1 / Float(f.channels), count: f.channels)
        detectionReliability = [Float](repeating: 1, count: f.channels)
        let (learned, reliability) = learn(f, mask)
        filters = learned
        weights = Self.normalized(reliability)
    }

    /// The weighted response (`width × height`, shift 0 at index 0) to `z` (windowed); records each channel's
    /// detection reliability for the next `update`.
    func response(to z: FeatureMap) -> [Float] {
        let spectra = transform(z)
        let (n, s) = (z.planeCount, 2 * fft.spectrumCount)
        var total = [Float](repeating: 0, count: n)
        var product = [Float](repeating: 0, count: s), plane = [Float](repeating: 0, count: n)
        for c in 0..<channels {
            spectra.withUnsafeBufferPointer { zs in
                filters.withUnsafeBufferPointer { hs in
                    SpectrumMath.multiplyConjugate(zs.baseAddress! + c * s, hs.baseAddress! + c * s, into: &product, count: fft.spectrumCount)
                }
            }
            fft.inverse(product, &plane)
            let peak = ResponsePeak(response: plane, width: z.width, height: z.height)
            detectionReliability[c] = 1 - min(peak.secondModeRatio, 0.5)
            for i in 0..<n { total[i] += weights[c] * plane[i] }
        }
        return total
    }

    /// Learns from `f` (windowed) under `mask` and moves the filters and weights toward it.
    func update(with f: FeatureMap, mask: [Float], rate: Float, weightRate: Float) {
        let (learned, learning) = learn(f, mask)
        SpectrumMath.interpolate(&filters, toward: learned, rate: rate, count: filters.count)
        let fresh = Self.normalized((0..<channels).map { learning[$0] * detectionReliability[$0] })
        SpectrumMath.interpolate(&weights, toward: fresh, rate: weightRate, count: channels)
        weights = Self.normalized(weights)
    }

    /// The masked filters for `f` and each channel's learning reliability (its response peak on `f`).
    private func learn(_ f: FeatureMap, _ mask: [Float]) -> ([Float], [Float]) {
        let spectra = transform(f)
        let (n, count, s) = (f.planeCount, fft.spectrumCount, 2 * fft.spectrumCount)
        var out = [Float](repeating: 0, count: s * channels), reliability = [Float](repeating: 0, count: channels)
        var fg = [Float](repeating: 0, count: s), ff = [Float](repeating: 0, count: count)
        var hc = [Float](repeating: 0, count: s), hm = [Float](repeating: 0, count: s), l = [Float](repeating: 0, count: s)
        var plane = [Float](repeating: 0, count: n)
        let regularization = Self.lambda / Float(n)
        for c in 0..<channels {
            spectra.withUnsafeBufferPointer { fs in
                SpectrumMath.multiplyConjugate(fs.baseAddress! + c * s, label, into: &fg, count: count)
                SpectrumMath.power(fs.baseAddress! + c * s, into: &ff, count: count)
            }
            // Start from the unconstrained solution, masked.
            for i in 0..<count { hc[2 * i] = fg[2 * i] / (ff[i] + Self.lambda); hc[2 * i + 1] = fg[2 * i + 1] / (ff[i] + Self.lambda) }
            fft.inverse(hc, &plane)
            for i in 0..<n { plane[i] *= mask[i] }
            fft.forward(plane, &hm)
            for i in 0..<s { l[i] = 0 }
            var mu = Self.mu0
            for _ in 0..<Self.iterations {
                for i in 0..<count {
                    let d = 1 / (ff[i] + mu)
                    hc[2 * i] = (fg[2 * i] + mu * hm[2 * i] - l[2 * i]) * d
                    hc[2 * i + 1] = (fg[2 * i + 1] + mu * hm[2 * i + 1] - l[2 * i + 1]) * d
                }
                for i in 0..<s { hm[i] = mu * hc[i] + l[i] }
                fft.inverse(hm, &plane)
                let scale = 1 / (regularization + mu)
                for i in 0..<n { plane[i] *= mask[i] * scale }
                fft.forward(plane, &hm)
                for i in 0..<s { l[i] += mu * (hc[i] - hm[i]) }
                mu = min(Self.beta * mu, Self.muMax)
            }
            out.withUnsafeMutableBufferPointer { o in for i in 0..<s { o[c * s + i] = hm[i] } }
            // Learning reliability: the channel's own response peak on its training patch.
            spectra.withUnsafeBufferPointer { fs in
                SpectrumMath.multiplyConjugate(fs.baseAddress! + c * s, hm, into: &hc, count: count)
            }
            fft.inverse(hc, &plane)
            reliability[c] = max(plane.max() ?? 0, 0)
        }
        return (out, reliability)
    }

    private func transform(_ x: FeatureMap) -> [Float] {
        precondition(x.channels == channels && x.width == fft.width && x.height == fft.height, "CSR: feature map shape changed")
        let (n, s) = (x.planeCount, 2 * fft.spectrumCount)
        var spectrum = [Float](repeating: 0, count: s * channels)
        x.values.withUnsafeBufferPointer { v in
            spectrum.withUnsafeMutableBufferPointer { out in
                for c in 0..<channels { fft.forward(v.baseAddress! + c * n, out.baseAddress! + c * s) }
            }
        }
        return spectrum
    }

    private static func normalized(_ v: [Float]) -> [Float] {
        let sum = v.reduce(0, +)
        return sum > 0 ? v.map { $0 / sum } : [Float](repeating: 1 / Float(v.count), count: v.count)
    }
}
