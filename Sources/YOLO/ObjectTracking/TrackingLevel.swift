/// How an `ObjectTracker` trades speed for accuracy (Vision's `VNRequestTrackingLevel`).
public enum TrackingLevel: String, Sendable, CaseIterable {
    /// A kernelized correlation filter over HOG features with a three-scale search (KCF-style): several hundred
    /// frames per second per object on one core.
    case fast
    /// A discriminative correlation filter with channel and spatial reliability over HOG, colour-name and grey
    /// features, with a separate scale filter (CSRT-style): follows deformation and scale change better, several
    /// times slower.
    case accurate
}
