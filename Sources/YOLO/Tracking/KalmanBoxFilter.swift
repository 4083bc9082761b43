/// ByteTrack's constant-velocity Kalman filter of one box (the SORT/DeepSORT filter as ByteTrack tunes it).
///
/// The state is the box's centre x, centre y, aspect ratio (width / height) and height, each with its
/// velocity per frame; a detection measures the four values directly. Process and measurement noise are
/// proportional to the box's height (standard deviations 1/20 of it for positions, 1/160 for velocities),
/// except the aspect's, which are fixed (ByteTrack's `kalman_filter.py`). Because everything scales with
/// the height, the filter behaves the same in any unit: normalized coordinates or pixels.
///
/// ByteTrack writes the filter with an 8 × 8 covariance, but its motion model, its noise matrices and its
/// measurement matrix never couple two coordinates, so that covariance stays block-diagonal: four
/// independent 2 × 2 blocks (a coordinate and its velocity). This type keeps only those blocks (three
/// numbers per coordinate), which is the same filter, exactly, in a few vector operations.
struct KalmanBoxFilter: Sendable, Equatable {
    /// Standard deviation of a position per unit of box height (ByteTrack's `_std_weight_position`).
    static let positionWeight = 1.0 / 20
    /// Standard deviation of a velocity per unit of box height (ByteTrack's `_std_weight_velocity`).
    static let velocityWeight = 1.0 / 160

    /// The estimated (centre x, centre y, aspect, height).
    private(set) var position: SIMD4<Double>
    /// The estimated change of `position` per frame.
    private(set) var velocity: SIMD4<Double>
    /// Each coordinate's variance.
    private(set) var positionVariance: SIMD4<Double>
    /// Each coordinate's covariance with its own velocity.
    private(set) var crossCovariance: SIMD4<Double>
    /// Each velocity's variance.
    private(set) var velocityVariance: SIMD4<Double>

    /// A filter started from a first measurement: at rest, with a wide uncertainty (ByteTrack's `initiate`).
    init(measurement: SIMD4<Double>) {
        let h = measurement[3]
        let positionDeviation = SIMD4(2 * Self.positionWeight * h, 2 * Self.positionWeight * h, 1e-2,
                                      2 * Self.positionWeight * h)
        let velocityDeviation = SIMD4(10 * Self.velocityWeight * h, 10 * Self.velocityWeight * h, 1e-5,
                                      10 * Self.velocityWeight * h)
        position = measurement
        velocity = .zero
        positionVariance = positionDeviation * positionDeviation
        crossCovariance = .zero
        velocityVariance = velocityDeviation * velocityDeviation
    }

    /// A filter started from a box.
    init(box: Rect) {
        self.init(measurement: Self.measurement(of: box))
    }

    /// The (centre x, centre y, aspect, height) a box measures.
    static func measurement(of box: Rect) -> SIMD4<Double> {
        SIMD4(box.midX, box.midY, box.width / box.height, box.height)
    }

    /// The box of the estimated position.
    var box: Rect {
        let width = position[2] * position[3]
        return Rect(x: position[0] - width / 2, y: position[1] - position[3] / 2, width: width, height: position[3])
    }

    /// Advances the estimate by one frame of constant velocity, with process noise from the current height.
    mutating func predict() {
        let h = position[3]
        let positionNoise = SIMD4(Self.positionWeight * h, Self.positionWeight * h, 1e-2, Self.positionWeight * h)
        let velocityNoise = SIMD4(Self.velocityWeight * h, Self.velocityWeight * h, 1e-5, Self.velocityWeight * h)
        position += velocity
        // F P Fᵀ + Q with F = [[1, 1], [0, 1]] on each block.
        positionVariance += 2 * crossCovariance + velocityVariance + positionNoise * positionNoise
        crossCovariance += velocityVariance
        velocityVariance += velocityNoise * velocityNoise
    }

    /// Corrects the estimate with a measured (centre x, centre y, aspect, height), the measurement noise
    /// taken from the predicted height (ByteTrack's `project` and `update`).
    mutating func update(measurement: SIMD4<Double>) {
        let h = position[3]
        let noiseDeviation = SIMD4(Self.positionWeight * h, Self.positionWeight * h, 1e-1, Self.positionWeight * h)
        let measurementNoise = noiseDeviation * noiseDeviation
        let innovationVariance = positionVariance + measurementNoise
        let positionGain = positionVariance / innovationVariance
        let velocityGain = crossCovariance / innovationVariance
        let innovation = measurement - position
        position += positionGain * innovation
        velocity += velocityGain * innovation
        // P − K S Kᵀ, each block: the velocity term first, as it reads the cross-covariance before it changes.
        velocityVariance -= crossCovariance * velocityGain
        crossCovariance *= measurementNoise / innovationVariance
        positionVariance *= measurementNoise / innovationVariance
    }

    /// Corrects the estimate with a detected box.
    mutating func update(box: Rect) {
        update(measurement: Self.measurement(of: box))
    }

    /// Forgets the height's velocity, as ByteTrack does before predicting a track that is not being tracked.
    mutating func stopHeightChange() {
        velocity[3] = 0
    }
}
