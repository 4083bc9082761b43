/// Which features a tracker reads from its window: HOG alone (`.fast`) or HOG, colour names and grey (`.accurate`).
enum TrackingFeatures {
    /// 31 HOG planes from the luma window.
    case hog
    /// 31 HOG planes, 11 colour-name planes and one grey plane (43).
    case hogColorNames

    /// Number of planes.
    var channels: Int {
        switch self {
        case .hog: HOGFeatures.channels
        case .hogColorNames: HOGFeatures.channels + ColorNameFeatures.channels + 1
        }
    }

    /// The features of `sampler`'s window of `frame`, on `geometry`'s grid (not windowed).
    func extract(_ frame: TrackingFrame, _ sampler: PatchSampler, _ geometry: TemplateGeometry) -> FeatureMap {
        extract(gray: sampler.gray(frame), rgb: self == .hogColorNames ? sampler.rgb(frame) : [], geometry)
    }

    /// The features of a sampled window: `gray` (`templateWidth × templateHeight` luma) and, for
    /// `.hogColorNames`, `rgb` (interleaved, 0…255).
    func extract(gray: [Float], rgb: [Float], _ geometry: TemplateGeometry) -> FeatureMap {
        let (w, h, cell) = (geometry.templateWidth, geometry.templateHeight, geometry.cellSize)
        var map = HOGFeatures.compute(gray: gray, width: w, height: h, cellSize: cell)
        if self == .hogColorNames {
            map.append(ColorNameFeatures.compute(rgb: rgb, width: w, height: h, cellSize: cell))
            map.append(GrayFeature.compute(gray, width: w, height: h, cellSize: cell))
        }
        return map
    }
}
