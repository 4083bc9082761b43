/// Where a correlation tracker looks: the target, its scale relative to the seed, and the fixed template geometry
/// and Hann window its features are read through. Shared by both engines.
struct TrackedWindow {
    /// The template geometry fixed at the seed.
    let geometry: TemplateGeometry
    /// The Hann window over the cell grid.
    let window: [Float]
    /// The target in frame pixels.
    private(set) var target: TargetState
    /// The target's size relative to the seed's.
    private(set) var scale = 1.0
    private let seedWidth: Double, seedHeight: Double

    /// The window around `target` with context `padding × √(wh)` per axis, resampled to about `templateArea` pixels.
    init(target: TargetState, padding: Double, templateArea: Double, cellSize: Int) {
        self.target = target
        (seedWidth, seedHeight) = (target.width, target.height)
        geometry = TemplateGeometry(targetWidth: target.width, targetHeight: target.height, padding: padding,
                                    templateArea: templateArea, cellSize: cellSize)
        window = FeatureMap.hannWindow(width: geometry.columns, height: geometry.rows)
    }

    /// The Gaussian label's standard deviation in cells: `factor × √(target area in cells)`, at least half a cell.
    func labelSigma(_ factor: Double) -> Double {
        max((geometry.targetColumns * geometry.targetRows).squareRoot() * factor, 0.5)
    }

    /// The sampler of the window at the target, at the current scale × `factor`.
    func sampler(scaledBy factor: Double = 1) -> PatchSampler {
        geometry.sampler(x: target.centerX, y: target.centerY, scale: scale * factor)
    }

    /// Moves the target by a response peak read at the current scale × `factor`.
    mutating func move(by peak: ResponsePeak, scaledBy factor: Double = 1) {
        target.move(by: peak, cellPixels: geometry.cellPixels(scale: scale * factor))
    }

    /// Sets the scale (the target's size follows), keeping the target inside the frame and at least 4 pixels.
    mutating func rescale(to newScale: Double, frame: TrackingFrame) {
        target.width = seedWidth * newScale
        target.height = seedHeight * newScale
        target = target.clamped(frameWidth: frame.width, frameHeight: frame.height, minimum: 4)
        scale = target.width / seedWidth
    }
}
