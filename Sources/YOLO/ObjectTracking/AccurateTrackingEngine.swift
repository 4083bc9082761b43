/// `.accurate`: a CSR-DCF filter over HOG, colour names and grey (43 planes) with a spatial reliability mask,
/// and a DSST scale filter (CSRT-style).
///
/// Each frame: the window at the last position and scale is scored by the filter; its peak moves the target; the
/// scale filter, sampled at the new position, changes the size; at or below 0.3 (lost) the target stays. Above 0.5,
/// the colour model, the mask, the filter and the scale filter learn from the new window.
final class AccurateTrackingEngine: TrackingEngine {
    static let padding = 2.0, templateArea = 150.0 * 150.0, cellSize = 4
    static let learningRate: Float = 0.02, weightRate: Float = 0.02, scaleRate: Float = 0.025, labelSigmaFactor = 0.08

    private let geometry: TemplateGeometry
    private let window: [Float]
    private let filter: ReliableCorrelationFilter
    private let scaleFilter: ScaleFilter
    private var colors: SpatialReliability
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
        let sampler = geometry.sampler(x: target.centerX, y: target.centerY, scale: 1)
        let (gray, rgb) = (sampler.gray(frame), sampler.rgb(frame))
        let box = Self.templateBox(geometry)
        colors = SpatialReliability(rgb: rgb, width: geometry.templateWidth, height: geometry.templateHeight, box: box)
        var f = TrackingFeatures.hogColorNames.extract(gray: gray, rgb: rgb, geometry)
        f.applyWindow(window)
        let sigma = (geometry.targetColumns * geometry.targetRows).squareRoot() * Self.labelSigmaFactor
        filter = ReliableCorrelationFilter(training: f, mask: colors.mask(rgb: rgb, geometry: geometry, box: box),
                                           labelSigma: max(sigma, 0.5))
        scaleFilter = ScaleFilter(frame: frame, target: target)
    }

    /// The target's box in template pixels (centred; the template always shows the target at its scale).
    private static func templateBox(_ g: TemplateGeometry) -> Rect {
        let (w, h) = (g.targetColumns * Double(g.cellSize), g.targetRows * Double(g.cellSize))
        return Rect(x: (Double(g.templateWidth) - w) / 2, y: (Double(g.templateHeight) - h) / 2, width: w, height: h)
    }

    func track(_ frame: TrackingFrame) -> (TargetState, Double) {
        var z = TrackingFeatures.hogColorNames.extract(frame, geometry.sampler(x: target.centerX, y: target.centerY, scale: scale), geometry)
        z.applyWindow(window)
        let peak = ResponsePeak(response: filter.response(to: z), width: geometry.columns, height: geometry.rows)
        let confidence = self.confidence.assess(peak)
        guard confidence > ObjectObservation.lostThreshold else { return (target, confidence) }
        target.move(by: peak, cellPixels: geometry.cellPixels(scale: scale))
        scale *= scaleFilter.estimate(frame, target)
        target.width = seedWidth * scale
        target.height = seedHeight * scale
        target = target.clamped(frameWidth: frame.width, frameHeight: frame.height, minimum: 4)
        scale = target.width / seedWidth
        guard confidence > TrackingConfidence.trusted else { return (target, confidence) }
        let sampler = geometry.sampler(x: target.centerX, y: target.centerY, scale: scale)
        let (gray, rgb) = (sampler.gray(frame), sampler.rgb(frame))
        let box = Self.templateBox(geometry)
        colors.update(rgb: rgb, width: geometry.templateWidth, height: geometry.templateHeight, box: box)
        var f = TrackingFeatures.hogColorNames.extract(gray: gray, rgb: rgb, geometry)
        f.applyWindow(window)
        filter.update(with: f, mask: colors.mask(rgb: rgb, geometry: geometry, box: box), rate: Self.learningRate,
                      weightRate: Self.weightRate)
        scaleFilter.update(frame, target, rate: Self.scaleRate)
        return (target, confidence)
    }
}
