/// Turns a correlation response into a confidence in 0…1: how the peak compares with the peaks of the frames
/// where the object was followed well (the criterion of Wang et al.'s LMCF, "Large margin object tracking with
/// circulant feature maps", CVPR 2017, mapped linearly).
///
/// The peak's height is divided by its running mean over the trusted frames so far (an exponential mean with rate
/// `memory`, started at the first frame after the seed); that ratio r gives the confidence
/// `(r − floor) / (ceiling − floor)`, clamped to 0…1. A filter that still fits its object answers near its usual
/// height (r ≈ 1); once the object has left the window or is hidden, the height collapses (the filter's template is
/// not there), even where the peak-to-sidelobe ratio of whatever texture is left stays high (the PSR also swings by
/// orders of magnitude on a still scene, where the sidelobes vanish, so it is kept only as a diagnostic). Frames
/// above `trusted` feed the mean; the engines learn only from those. Once lost (at or below 0.3), the confidence
/// cannot rise again short of a trusted frame (above 0.5), and fades by `fading` a frame while the object stays
/// unfound: a lost tracker that half-matches the background it is left with stays lost, and stays put, instead of
/// wandering onto it.
struct TrackingConfidence {
    static let floor: Float = 0.22, ceiling: Float = 0.52, memory: Float = 0.1, trusted = 0.5, fading = 0.8
    private var meanValue: Float = 0
    private var started = false
    private var lost = false, last = 1.0

    /// The confidence of a new response's peak; updates the running means when it is trusted.
    mutating func assess(_ peak: ResponsePeak) -> Double {
        guard started else {
            (meanValue, started) = (max(peak.value, 1e-6), true)
            return 1
        }
        let ratio = peak.value / meanValue
        var confidence = Double(min(max((ratio - Self.floor) / (Self.ceiling - Self.floor), 0), 1))
        if confidence > Self.trusted {
            meanValue += Self.memory * (peak.value - meanValue)
        } else if lost {
            confidence = min(confidence, Self.fading * last)
        }
        lost = confidence <= ObjectObservation.lostThreshold
        last = confidence
        return confidence
    }
}
