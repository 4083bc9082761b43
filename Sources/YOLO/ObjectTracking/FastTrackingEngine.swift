/// `.fast`: a kernelized correlation filter over HOG with a three-scale search (KCF-style).
///
/// Each frame: the window at the last position is sampled at the last scale × {1/1.05, 1, 1.05}, each scored by
/// the filter; the best response (non-unit scales discounted by `scalePenalty`) moves the target and its scale.
/// The target stays where it was while the confidence is at or below 0.3 (lost); the filter learns from the window
/// at the new position only when the confidence is above 0.5, so an uncertain frame teaches it nothing.
final class FastTrackingEngine: TrackingEngine {
    static let padding = 1.5, templateArea = 96.0 * 96.0, cellSize = 4
    static let scales = [1 / 1.05, 1, 1.05], scalePenalty: Float = 0.97
    static let learningRate: Float = 0.02, labelSigmaFactor = 0.1

    private var view: TrackedWindow
    private let filter: KernelizedCorrelationFilter
    private var confidence = TrackingConfidence()

    init(frame: TrackingFrame, target: TargetState) {
        view = TrackedWindow(target: target, padding: Self.padding, templateArea: Self.templateArea, cellSize: Self.cellSize)
        var x = TrackingFeatures.hog.extract(frame, view.sampler(), view.geometry)
        x.applyWindow(view.window)
        filter = KernelizedCorrelationFilter(training: x, labelSigma: view.labelSigma(Self.labelSigmaFactor))
    }

    func track(_ frame: TrackingFrame) -> (TargetState, Double) {
        var best: (score: Float, peak: ResponsePeak, scale: Double)?
        for s in Self.scales {
            var z = TrackingFeatures.hog.extract(frame, view.sampler(scaledBy: s), view.geometry)
            z.applyWindow(view.window)
            let peak = ResponsePeak(response: filter.response(to: z), width: view.geometry.columns, height: view.geometry.rows)
            let score = peak.value * (s == 1 ? 1 : Self.scalePenalty)
            if best == nil || score > best!.score { best = (score, peak, s) }
        }
        guard let best else { return (view.target, 0) }
        let confidence = self.confidence.assess(best.peak)
        guard confidence > ObjectObservation.lostThreshold else { return (view.target, confidence) }
        view.move(by: best.peak, scaledBy: best.scale)
        view.rescale(to: view.scale * best.scale, frame: frame)
        if confidence > TrackingConfidence.trusted {
            var x = TrackingFeatures.hog.extract(frame, view.sampler(), view.geometry)
            x.applyWindow(view.window)
            filter.update(with: x, rate: Self.learningRate)
        }
        return (view.target, confidence)
    }
}
