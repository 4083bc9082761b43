/// Maps a correlation response's peak-to-sidelobe ratio (PSR) to a confidence in 0…1.
///
/// Linear between `floor` (confidence 0) and `ceiling` (1), clamped. The points are per level, set on the
/// development sequences and the synthetic clips so that a followed object stays above 0.5 and one that left
/// the window falls to 0.3 or below within a few frames (docs/TRACKING.md).
struct TrackingConfidence {
    let floor: Float, ceiling: Float

    func confidence(psr: Float) -> Double {
        Double(min(max((psr - floor) / (ceiling - floor), 0), 1))
    }
}
