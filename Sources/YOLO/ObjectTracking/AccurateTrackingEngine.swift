/// `.accurate`: a CSR-DCF filter over HOG, colour names and grey (43 planes) with a spatial reliability mask,
/// and a DSST scale filter (CSRT-style).
///
/// Each frame: the window at the last position and scale is scored by the filter; its peak moves the target; the
/// scale filter, sampled at the new position, changes the size; at or below 0.3 (lost) the target stays. Above 0.5,
/// the colour model, the mask, the filter and the scale filter learn from the new window.
final class AccurateTrackingEngine: TrackingEngine {
    static let padding = 2.0, templateArea = 150.0 * 150.0, cellSize = 4
    static let learningRate: Float = 0.02, weightRate: Float = 0.02, scaleRate: Float = 0.025, labelSigmaFactor = 0.08

    private var view: TrackedWindow
    private let filter: ReliableCorrelationFilter
    private let scaleFilter: ScaleFilter
    private var colors: SpatialReliability
    private var confidence = TrackingConfidence()

    init(frame: TrackingFrame, target: TargetState) {
        view = TrackedWindow(target: target, padding: Self.padding, templateArea: Self.templateArea, cellSize: Self.cellSize)
        let sampler = view.sampler()
        let (gray, rgb) = (sampler.gray(frame), sampler.rgb(frame))
        let geometry = view.geometry, box = Self.templateBox(geometry)
        colors = SpatialReliability(rgb: rgb, width: geometry.templateWidth, height: geometry.templateHeight, box: box)
        var f = TrackingFeatures.hogColorNames.extract(gray: gray, rgb: rgb, geometry)
        f.applyWindow(view.window)
        filter = ReliableCorrelationFilter(training: f, mask: colors.mask(rgb: rgb, geometry: geometry, box: box),
                                           labelSigma: view.labelSigma(Self.labelSigmaFactor))
        scaleFilter = ScaleFilter(frame: frame, target: target)
    }

    /// The target's box in template pixels (centred; the template always shows the target at its scale).
    private static func templateBox(_ g: TemplateGeometry) -> Rect {
        let (w, h) = (g.targetColumns * Double(g.cellSize), g.targetRows * Double(g.cellSize))
        return Rect(x: (Double(g.templateWidth) - w) / 2, y: (Double(g.templateHeight) - h) / 2, width: w, height: h)
    }

    func track(_ frame: TrackingFrame) -> (TargetState, Double) {
        let geometry = view.geometry
        var z = TrackingFeatures.hogColorNames.extract(frame, view.sampler(), geometry)
        z.applyWindow(view.window)
        let peak = ResponsePeak(response: filter.response(to: z), width: geometry.columns, height: geometry.rows)
        let confidence = self.confidence.assess(peak)
        guard confidence > ObjectObservation.lostThreshold else { return (view.target, confidence) }
        view.move(by: peak)
        view.rescale(to: view.scale * scaleFilter.estimate(frame, view.target), frame: frame)
        guard confidence > TrackingConfidence.trusted else { return (view.target, confidence) }
        let sampler = view.sampler()
        let (gray, rgb) = (sampler.gray(frame), sampler.rgb(frame))
        let box = Self.templateBox(geometry)
        colors.update(rgb: rgb, width: geometry.templateWidth, height: geometry.templateHeight, box: box)
        var f = TrackingFeatures.hogColorNames.extract(gray: gray, rgb: rgb, geometry)
        f.applyWindow(view.window)
        filter.update(with: f, mask: colors.mask(rgb: rgb, geometry: geometry, box: box), rate: Self.learningRate,
                      weightRate: Self.weightRate)
        scaleFilter.update(frame, view.target, rate: Self.scaleRate)
        return (view.target, confidence)
    }
}
