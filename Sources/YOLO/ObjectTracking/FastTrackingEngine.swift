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

    private let geometry: TemplateGeometry
    private let window: [Float]
    private let filter: KernelizedCorrelationFilter
    private var target: TargetState
    private var scale = 1.0
    private var confidence = TrackingConfidence()
    private let (seedWidth, seedHeight): (Double, Double)

    init(frame: TrackingFrame, target: TargetState) {
        self.target = target
        (seedWidth, seedHeight) = (target.width, target.height)
        geometry = TemplateGeometry(targetWidth: target.width, targetHeight: target.height, padding: Self.padding,
                                    templateArea: Self.templateArea, cellSize: Self.cellSize)
        window = FeatureMap.hannWindow(width: geometry.columns, height: geometry.rows)
        let sigma = (geometry.targetColumns * geometry.targetRows).squareRoot() * Self.labelSigmaFactor
        var x = TrackingFeatures.hog.extract(frame, geometry.sampler(x: target.centerX, y: target.centerY, scale: 1), geometry)
        x.applyWindow(window)
        filter = KernelizedCorrelationFilter(training: x, labelSigma: max(sigma, 0.5))
    }

    func track(_ frame: TrackingFrame) -> (TargetState, Double) {
        var best: (score: Float, peak: ResponsePeak, scale: Double)?
        for s in Self.scales {
            var z = features(frame, scale: scale * s)
            z.applyWindow(window)
            let peak = ResponsePeak(response: filter.response(to: z), width: geometry.columns, height: geometry.rows)
            let score = peak.value * (s == 1 ? 1 : Self.scalePenalty)
            if best == nil || score > best!.score { best = (score, peak, s) }
        }
        guard let best else { return (target, 0) }
        let confidence = self.confidence.assess(best.peak)
        if confidence > ObjectObservation.lostThreshold {
            let newScale = scale * best.scale
            target.move(by: best.peak, cellPixels: geometry.cellPixels(scale: newScale))
            scale = newScale
            target.width = seedWidth * scale
            target.height = seedHeight * scale
            target = target.clamped(frameWidth: frame.width, frameHeight: frame.height, minimum: 4)
            scale = target.width / seedWidth
            if confidence > TrackingConfidence.trusted {
                var x = features(frame, scale: scale)
                x.applyWindow(window)
                filter.update(with: x, rate: Self.learningRate)
            }
        }
        return (target, confidence)
    }

    private func features(_ frame: TrackingFrame, scale: Double) -> FeatureMap {
        TrackingFeatures.hog.extract(frame, geometry.sampler(x: target.centerX, y: target.centerY, scale: scale), geometry)
    }
}
