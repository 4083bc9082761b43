import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `KalmanBoxFilter` against hand-computed values and against ByteTrack's filter written out with full
/// 8 × 8 matrices.
@Suite struct KalmanBoxFilterTests {
    /// One predict and one update from a box at rest, every value worked out by hand. Height 100: position
    /// deviations 2·100/20 = 10 (variance 100), velocity deviations 10·100/160 = 6.25 (variance 39.0625);
    /// the prediction adds variances 5² = 25 and 0.625² = 0.390625; the measurement noise is 5² = 25.
    @Test func predictAndUpdateByHand() {
        var filter = KalmanBoxFilter(measurement: SIMD4(0, 0, 1, 100))
        #expect(filter.positionVariance == SIMD4(100, 100, 1e-4, 100))
        #expect(filter.velocityVariance[0] == 39.0625)
        filter.predict()
        // P = F P Fᵀ + Q per coordinate: 100 + 39.0625 + 25, 39.0625, 39.0625 + 0.390625.
        #expect(filter.position == SIMD4(0, 0, 1, 100))
        #expect(filter.positionVariance[0] == 164.0625)
        #expect(filter.crossCovariance[0] == 39.0625)
        #expect(filter.velocityVariance[0] == 39.453125)
        filter.update(measurement: SIMD4(10, 0, 1, 100))
        // Innovation variance 164.0625 + 25 = 189.0625; gains 164.0625 / 189.0625 = 105/121 and
        // 39.0625 / 189.0625 = 25/121 on the innovation of 10 in x.
        let close = { (a: Double, b: Double) in abs(a - b) <= 1e-12 * max(1, abs(b)) }
        #expect(close(filter.position[0], 1050.0 / 121))
        #expect(close(filter.velocity[0], 250.0 / 121))
        #expect(filter.position[1] == 0 && filter.velocity[1] == 0 && filter.position[3] == 100)
        #expect(close(filter.positionVariance[0], 164.0625 * 25 / 189.0625))
        #expect(close(filter.crossCovariance[0], 39.0625 * 25 / 189.0625))
        #expect(close(filter.velocityVariance[0], 39.453125 - 39.0625 * 39.0625 / 189.0625))
        #expect(filter.box == Rect(x: filter.position[0] - 50, y: -50, width: 100, height: 100))
        filter.predict()
        #expect(close(filter.position[0], 1300.0 / 121))
    }

    /// Exact measurements of a box moving at constant velocity: the estimate locks on to its position and
    /// velocity (a constant-velocity filter follows a ramp with no lasting error).
    @Test func constantVelocityConverges() {
        let velocity = SIMD4<Double>(3, -2, 0, 0.5)
        var truth = SIMD4<Double>(100, 200, 0.5, 80)
        var filter = KalmanBoxFilter(measurement: truth)
        for _ in 0..<60 {
            truth += velocity
            filter.predict()
            filter.update(measurement: truth)
        }
        for i in 0..<4 {
            #expect(abs(filter.velocity[i] - velocity[i]) < 1e-3, "velocity \(i): \(filter.velocity[i])")
            #expect(abs(filter.position[i] - truth[i]) < 1e-3, "position \(i): \(filter.position[i])")
        }
        // And the prediction of the next frame is where the box goes.
        filter.predict()
        #expect(abs(filter.position[0] - (truth[0] + 3)) < 1e-3)
    }

    /// ByteTrack's `kalman_filter.py` with 8 × 8 matrices, written out plainly.
    struct DenseFilter {
        var mean: [Double]
        var covariance: [Double]  // 8 × 8, row-major
        static let p = 1.0 / 20, v = 1.0 / 160

        init(_ z: [Double]) {
            mean = z + [0, 0, 0, 0]
            let h = z[3]
            let deviations = [2 * Self.p * h, 2 * Self.p * h, 1e-2, 2 * Self.p * h,
                              10 * Self.v * h, 10 * Self.v * h, 1e-5, 10 * Self.v * h]
            covariance = Self.diagonal(deviations.map { $0 * $0 }, size: 8)
        }

        static func diagonal(_ values: [Double], size: Int) -> [Double] {
            var m = [Double](repeating: 0, count: size * size)
            for i in 0..<size { m[i * size + i] = values[i] }
            return m
        }

        static func multiply(_ a: [Double], _ b: [Double], _ n: Int, _ k: Int, _ m: Int) -> [Double] {
            var c = [Double](repeating: 0, count: n * m)
            for i in 0..<n { for j in 0..<m { for l in 0..<k { c[i * m + j] += a[i * k + l] * b[l * m + j] } } }
            return c
        }

        static func transpose(_ a: [Double], _ n: Int, _ m: Int) -> [Double] {
            var t = [Double](repeating: 0, count: n * m)
            for i in 0..<n { for j in 0..<m { t[j * n + i] = a[i * m + j] } }
            return t
        }

        /// Gauss–Jordan inverse of a symmetric positive-definite 4 × 4.
        static func inverse4(_ a: [Double]) -> [Double] {
            var m = a, inv = diagonal([1, 1, 1, 1], size: 4)
            for c in 0..<4 {
                let pivot = m[c * 4 + c]
                for j in 0..<4 { m[c * 4 + j] /= pivot; inv[c * 4 + j] /= pivot }
                for r in 0..<4 where r != c {
                    let f = m[r * 4 + c]
                    for j in 0..<4 { m[r * 4 + j] -= f * m[c * 4 + j]; inv[r * 4 + j] -= f * inv[c * 4 + j] }
                }
            }
            return inv
        }

        static let motion: [Double] = (0..<64).map { k in
            let (i, j) = (k / 8, k % 8)
            return i == j || j == i + 4 ? 1 : 0
        }
        static let measurement: [Double] = (0..<32).map { k in k / 8 == k % 8 ? 1 : 0 }

        mutating func predict() {
            let h = mean[3]
            let q = [Self.p * h, Self.p * h, 1e-2, Self.p * h, Self.v * h, Self.v * h, 1e-5, Self.v * h]
            mean = Self.multiply(Self.motion, mean, 8, 8, 1)
            let fp = Self.multiply(Self.motion, covariance, 8, 8, 8)
            covariance = zip(Self.multiply(fp, Self.transpose(Self.motion, 8, 8), 8, 8, 8),
                             Self.diagonal(q.map { $0 * $0 }, size: 8)).map(+)
        }

        mutating func update(_ z: [Double]) {
            let h = mean[3]
            let r = [Self.p * h, Self.p * h, 1e-1, Self.p * h].map { $0 * $0 }
            let ht = Self.transpose(Self.measurement, 4, 8)
            let s = zip(Self.multiply(Self.multiply(Self.measurement, covariance, 4, 8, 8), ht, 4, 8, 4),
                        Self.diagonal(r, size: 4)).map(+)
            let gain = Self.multiply(Self.multiply(covariance, ht, 8, 8, 4), Self.inverse4(s), 8, 4, 4)
            let innovation = (0..<4).map { z[$0] - mean[$0] }
            let correction = Self.multiply(gain, innovation, 8, 4, 1)
            mean = zip(mean, correction).map(+)
            let kskt = Self.multiply(Self.multiply(gain, s, 8, 4, 4), Self.transpose(gain, 8, 4), 8, 4, 8)
            covariance = zip(covariance, kskt).map(-)
        }
    }

    /// The block form equals the 8 × 8 filter on random sequences of predictions, updates and lost-track
    /// predictions, and the 8 × 8 covariance never couples two coordinates (the block form's premise).
    @Test func equalsTheDenseFilter() {
        var random = SeededRandom(seed: 21)
        for trial in 0..<40 {
            var box = [Double(random.float(0, 600)), Double(random.float(0, 400)), Double(random.float(0.2, 2)),
                       Double(random.float(10, 300))]
            var filter = KalmanBoxFilter(measurement: SIMD4(box[0], box[1], box[2], box[3]))
            var dense = DenseFilter(box)
            for step in 0..<30 {
                if random.next() % 5 == 0 {
                    filter.stopHeightChange()
                    dense.mean[7] = 0
                }
                filter.predict()
                dense.predict()
                box = [box[0] + Double(random.float(-8, 8)), box[1] + Double(random.float(-8, 8)),
                       max(0.1, box[2] + Double(random.float(-0.05, 0.05))), max(5, box[3] + Double(random.float(-4, 4)))]
                if random.next() % 4 != 0 {
                    filter.update(measurement: SIMD4(box[0], box[1], box[2], box[3]))
                    dense.update(box)
                }
                for i in 0..<4 {
                    let scale = max(1, abs(dense.mean[i]), abs(dense.covariance[i * 9]))
                    #expect(abs(filter.position[i] - dense.mean[i]) <= 1e-9 * scale, "trial \(trial) step \(step) position \(i)")
                    #expect(abs(filter.velocity[i] - dense.mean[i + 4]) <= 1e-9 * scale, "trial \(trial) step \(step) velocity \(i)")
                    #expect(abs(filter.positionVariance[i] - dense.covariance[i * 9]) <= 1e-9 * scale)
                    #expect(abs(filter.crossCovariance[i] - dense.covariance[i * 8 + i + 4]) <= 1e-9 * scale)
                    #expect(abs(filter.velocityVariance[i] - dense.covariance[(i + 4) * 9]) <= 1e-9 * scale)
                }
                for r in 0..<8 {
                    for c in 0..<8 where r % 4 != c % 4 {
                        #expect(dense.covariance[r * 8 + c] == 0, "trial \(trial): coordinates \(r) and \(c) coupled")
                    }
                }
            }
        }
    }
}

/// Builds detections for the tracker tests; `label` names the true object, which the tracker never reads.
private func detection(_ x: Double, _ y: Double, _ width: Double = 0.06, _ height: Double = 0.15,
                       score: Float = 0.9, classIndex: Int = 0, label: String = "object") -> Detection {
    Detection(box: Rect(x: x, y: y, width: width, height: height), classIndex: classIndex, label: label,
              confidence: score)
}

/// An object moving at constant velocity, detected perfectly except in `missed` frames.
private struct MovingObject {
    var name: String
    var start: (x: Double, y: Double)
    var velocity: (x: Double, y: Double)
    var size: (width: Double, height: Double)
    var missed: Range<Int> = 0..<0

    func box(at frame: Int) -> Rect {
        Rect(x: start.x + velocity.x * Double(frame), y: start.y + velocity.y * Double(frame), width: size.width,
             height: size.height)
    }

    func detection(at frame: Int, scale: Double = 1) -> Detection? {
        guard !missed.contains(frame) else { return nil }
        let b = box(at: frame)
        return Detection(box: Rect(x: b.x * scale, y: b.y * scale, width: b.width * scale, height: b.height * scale),
                         classIndex: 0, label: name, confidence: 0.9)
    }
}

@Suite struct TrackerTests {
    /// Six objects: A and B pass each other head-on, overlapping heavily (IoU above 0.6); E crosses B's path
    /// at right angles as B goes by; C and D cross diagonally; F is not detected for four frames.
    fileprivate static let crossing: [MovingObject] = [
        MovingObject(name: "A", start: (0.05, 0.40), velocity: (0.010, 0), size: (0.060, 0.16)),
        MovingObject(name: "B", start: (0.89, 0.42), velocity: (-0.010, 0), size: (0.055, 0.15)),
        MovingObject(name: "C", start: (0.05, 0.05), velocity: (0.006, 0.006), size: (0.050, 0.12)),
        MovingObject(name: "D", start: (0.05, 0.65), velocity: (0.006, -0.006), size: (0.050, 0.12)),
        MovingObject(name: "E", start: (0.70, 0.21), velocity: (0, 0.010), size: (0.050, 0.12)),
        MovingObject(name: "F", start: (0.20, 0.85), velocity: (0.009, -0.002), size: (0.050, 0.10), missed: 30..<34),
    ]

    /// Runs `objects` for `frames` frames; per frame, the reported (true object name, id, box) triples.
    fileprivate static func run(_ objects: [MovingObject], frames: Int, scale: Double = 1,
                                parameters: Tracker.Parameters = .init()) -> [[(name: String, id: Int, box: Rect)]] {
        var tracker = Tracker(parameters: parameters)
        return (0..<frames).map { frame in
            tracker.update(objects.compactMap { $0.detection(at: frame, scale: scale) })
                .map { ($0.detection.label, $0.id, $0.box) }
        }
    }

    @Test func crossingObjectsKeepTheirIds() {
        let objects = Self.crossing, frames = 80
        // The scenario is what it claims: A and B overlap heavily, and E meets B.
        let overlapAB = (0..<frames).map { objects[0].box(at: $0).iou(objects[1].box(at: $0)) }.max()!
        let overlapBE = (0..<frames).map { objects[1].box(at: $0).iou(objects[4].box(at: $0)) }.max()!
        let overlapCD = (0..<frames).map { objects[2].box(at: $0).iou(objects[3].box(at: $0)) }.max()!
        #expect(overlapAB > 0.6 && overlapBE > 0.3 && overlapCD > 0.9)

        var idsOf: [String: [Int]] = [:]
        for (frame, reported) in Self.run(objects, frames: frames).enumerated() {
            let visible = objects.filter { !$0.missed.contains(frame) }.map(\.name)
            // Every visible object is reported in every frame (all are there from the first one), once.
            #expect(reported.map(\.name).sorted() == visible.sorted(), "frame \(frame)")
            #expect(reported.map(\.id) == reported.map(\.id).sorted(), "frame \(frame): in id order")
            for object in reported { idsOf[object.name, default: []].append(object.id) }
        }
        var switches = 0
        for ids in idsOf.values { switches += zip(ids, ids.dropFirst()).filter { $0 != $1 }.count }
        #expect(switches == 0)
        #expect(idsOf.values.allSatisfy { Set($0).count == 1 })
        #expect(Set(idsOf.values.compactMap(\.first)).count == objects.count, "one id per object, none shared")
        #expect(idsOf["F"]?.count == frames - 4)
    }

    /// The same stream in pixels (× 500) gives the same ids and the same boxes, scaled.
    @Test func unitsDoNotMatter() {
        let normalized = Self.run(Self.crossing, frames: 80)
        let pixels = Self.run(Self.crossing, frames: 80, scale: 500)
        for (a, b) in zip(normalized, pixels) {
            #expect(a.map(\.id) == b.map(\.id) && a.map(\.name) == b.map(\.name))
            for (p, q) in zip(a, b) {
                #expect(abs(p.box.x * 500 - q.box.x) < 1e-9 && abs(p.box.height * 500 - q.box.height) < 1e-9)
            }
        }
    }

    /// Tracks of the first frame are reported at once; later tracks from their second consecutive frame; a
    /// detection seen once is never reported. The box is the filter's, the detection comes with it.
    @Test func confirmation() {
        var tracker = Tracker()
        let first = tracker.update([detection(0.1, 0.1)])
        #expect(first.map(\.id) == [1] && first[0].isNew && first[0].age == 0)
        let (box, detected) = (first[0].box, first[0].detection.box)
        #expect(abs(box.x - detected.x) < 1e-12 && abs(box.y - detected.y) < 1e-12
                && abs(box.width - detected.width) < 1e-12 && abs(box.height - detected.height) < 1e-12,
                "a new track's box is its detection's (through centre, aspect and height)")

        let second = tracker.update([detection(0.11, 0.1), detection(0.6, 0.6)])
        #expect(second.map(\.id) == [1], "the track started in this frame waits for a second match")
        #expect(!second[0].isNew && second[0].age == 1)
        #expect(second[0].detection.box.x == 0.11 && second[0].box.x > 0.1 && second[0].box.x < 0.11,
                "the reported box is the Kalman estimate, between prediction and detection")

        let third = tracker.update([detection(0.12, 0.1), detection(0.6, 0.6)])
        #expect(third.map(\.id).sorted() == [1, 2])
        #expect(third.first { $0.id == 2 }?.isNew == true && third.first { $0.id == 2 }?.age == 1)

        // A one-frame false positive never shows, nor takes an id.
        _ = tracker.update([detection(0.13, 0.1), detection(0.6, 0.6), detection(0.3, 0.8)])
        let fifth = tracker.update([detection(0.14, 0.1), detection(0.6, 0.6), detection(0.7, 0.2)])
        #expect(fifth.map(\.id).sorted() == [1, 2])
        let sixth = tracker.update([detection(0.15, 0.1), detection(0.6, 0.6), detection(0.7, 0.2)])
        #expect(sixth.map(\.id).sorted() == [1, 2, 3])
    }

    /// A low-score detection keeps a tracked object going but starts nothing, and cannot bring back a
    /// lost track; at or below `lowThreshold` a detection is ignored.
    @Test func twoStageAssociation() {
        var tracker = Tracker()
        #expect(tracker.update([detection(0.2, 0.2)]).map(\.id) == [1])
        for step in 1...3 {
            let kept = tracker.update([detection(0.2 + 0.005 * Double(step), 0.2, score: 0.15)])
            #expect(kept.map(\.id) == [1] && kept.first?.score == 0.15, "low-score frame \(step)")
        }
        #expect(tracker.update([detection(0.22, 0.2, score: 0.1)]).isEmpty, "0.1 is not above track_low_thresh")
        #expect(tracker.update([detection(0.225, 0.2, score: 0.2)]).isEmpty, "a lost track ignores low scores")
        #expect(tracker.update([detection(0.23, 0.2, score: 0.3)]).map(\.id) == [1], "a high score finds it again")

        var weakOnly = Tracker()
        for frame in 0..<10 {
            #expect(weakOnly.update([detection(0.5, 0.5, score: 0.24)]).isEmpty, "frame \(frame)")
        }
        #expect(weakOnly.tracks.isEmpty)
    }

    /// A track missed for up to `maximumFramesLost` frames is found again under its id; one more and it is gone.
    @Test func lostTrackBuffer() {
        let parameters = Tracker.Parameters(trackBuffer: 6, frameRate: 30)
        for missed in [6, 7] {
            var tracker = Tracker(parameters: parameters)
            #expect(tracker.maximumFramesLost == 6)
            let object = MovingObject(name: "A", start: (0.1, 0.3), velocity: (0.004, 0.001), size: (0.06, 0.15),
                                      missed: 10..<(10 + missed))
            var reported: [[Int]] = []
            for frame in 0..<(12 + missed) {
                reported.append(tracker.update([object.detection(at: frame)].compactMap { $0 }).map(\.id))
            }
            let back = 10 + missed
            #expect(reported[9] == [1] && reported[10].isEmpty && reported[back - 1].isEmpty)
            if missed <= 6 {
                #expect(reported[back] == [1] && reported[back + 1] == [1], "missed \(missed): found again")
            } else {
                #expect(reported[back].isEmpty && reported[back + 1] == [2], "missed \(missed): a new track")
            }
        }
    }

    /// ByteTrack's `frame_rate / 30 × track_buffer`, truncated.
    @Test func frameRateScalesTheBuffer() {
        #expect(Tracker().maximumFramesLost == 30)
        #expect(Tracker(parameters: .init(frameRate: 25)).maximumFramesLost == 25)
        #expect(Tracker(parameters: .init(frameRate: 60)).maximumFramesLost == 60)
        #expect(Tracker(parameters: .init(trackBuffer: 10, frameRate: 14)).maximumFramesLost == 4)
        #expect(Tracker(parameters: .init(trackBuffer: 0)).maximumFramesLost == 0)
    }

    /// Times become frame numbers at `frameRate`; skipped frames count as empty ones (for the buffer too).
    @Test func timesAndFrameGaps() {
        let parameters = Tracker.Parameters(trackBuffer: 9, frameRate: 10)  // 3 frames
        let object = MovingObject(name: "A", start: (0.1, 0.3), velocity: (0.01, 0), size: (0.06, 0.15))
        let frames = [0, 1, 2, 6, 7, 12, 13]
        var byTime = Tracker(parameters: parameters), byFrame = Tracker(parameters: parameters)
        var ids: [[Int]] = []
        for frame in frames {
            let detections = [object.detection(at: frame)!]
            let timed = byTime.update(detections, time: 100 + Double(frame) / 10)
            #expect(timed == byFrame.update(detections, frame: frame), "frame \(frame)")
            ids.append(timed.map(\.id))
        }
        // Frames 3–5 missed (3 ≤ buffer): same id; frames 8–11 missed (4): a new track, confirmed at 13.
        #expect(ids == [[1], [1], [1], [1], [1], [], [2]])
        #expect(byTime.lastFrame == 13)

        // A frame number that does not advance is the next frame.
        var tracker = Tracker()
        _ = tracker.update([], frame: 5)
        _ = tracker.update([], frame: 5)
        _ = tracker.update([], frame: 2)
        #expect(tracker.lastFrame == 7)

        // Extreme frame numbers and times neither trap nor stop the stream.
        var extreme = Tracker()
        #expect(extreme.update([detection(0.1, 0.1)], frame: .min).map(\.id) == [1])
        _ = extreme.update([detection(0.1, 0.1)], frame: .max)
        #expect(extreme.update([detection(0.3, 0.1)], frame: .max).isEmpty, "the long gap lost track 1")
        #expect(extreme.update([detection(0.3, 0.1)], time: .nan).map(\.id) == [2])
        #expect(extreme.update([detection(0.3, 0.1)], time: .infinity).map(\.id) == [2])
        #expect(extreme.update([detection(0.3, 0.1)], time: -1e300).map(\.id) == [2])
    }

    /// In per-class mode a detection of another class never continues a track; class-agnostic (ByteTrack's
    /// way) it does, and the track takes the new class.
    @Test func perClass() {
        let person = detection(0.3, 0.3, classIndex: 0), bicycle = detection(0.3, 0.3, classIndex: 1)
        var agnostic = Tracker(), separate = Tracker(parameters: .init(perClass: true))
        for _ in 0..<3 {
            #expect(agnostic.update([person]).map(\.id) == [1])
            #expect(separate.update([person]).map(\.id) == [1])
        }
        let switched = agnostic.update([bicycle])
        #expect(switched.map(\.id) == [1] && switched[0].classIndex == 1)
        #expect(separate.update([bicycle]).isEmpty, "the person track is lost, the bicycle one unconfirmed")
        let next = separate.update([bicycle])
        #expect(next.map(\.id) == [2] && next[0].classIndex == 1)

        // Two objects of different classes on the same box, moving together, keep their own tracks.
        var pair = Tracker(parameters: .init(perClass: true))
        for frame in 0..<20 {
            let x = 0.2 + 0.01 * Double(frame)
            let reported = pair.update([detection(x, 0.4, classIndex: 0), detection(x, 0.4, classIndex: 1)])
            #expect(reported.sorted { $0.id < $1.id }.map(\.classIndex) == [0, 1], "frame \(frame)")
        }
    }

    /// Where a tracked and a lost track overlap almost entirely, the one followed for fewer frames up to its
    /// last match goes (the tracked one when equal).
    @Test func duplicateTracks() {
        // Two boxes on one object from the first frame: two tracks. When one box stops, its track is lost
        // on top of the other (IoU 0.97), which was followed one frame longer: the lost one goes.
        var twins = Tracker()
        for _ in 0..<4 {
            #expect(twins.update([detection(0.3, 0.3), detection(0.301, 0.3)]).map(\.id).sorted() == [1, 2])
        }
        #expect(twins.update([detection(0.3, 0.3)]).map(\.id) == [1])
        #expect(twins.tracks.count == 1, "the lost twin is dropped at once")
        #expect(twins.update([detection(0.3, 0.3), detection(0.301, 0.3)]).map(\.id) == [1])

        // A young track takes the object's detection from an old one, which is lost on top of it: the young
        // track goes, and the old one takes the object back in the next frame.
        var tracker = Tracker()
        for _ in 0..<4 { #expect(tracker.update([detection(0.3, 0.3)]).map(\.id) == [1]) }
        _ = tracker.update([detection(0.3, 0.3), detection(0.302, 0.3)])
        #expect(tracker.update([detection(0.3, 0.3), detection(0.302, 0.3)]).map(\.id).sorted() == [1, 2])
        #expect(tracker.update([detection(0.302, 0.3)]).isEmpty, "track 2 matched, then dropped for the lost track 1")
        #expect(tracker.tracks.count == 1 && tracker.tracks[0].state == .lost)
        #expect(tracker.update([detection(0.302, 0.3)]).map(\.id) == [1])
    }

    /// A copy of a tracker is an independent tracker in the same state.
    @Test func valueSemantics() {
        var original = Tracker()
        _ = original.update([detection(0.1, 0.1), detection(0.5, 0.5)])
        var copy = original
        let a = original.update([detection(0.11, 0.1)])
        let b = copy.update([detection(0.11, 0.1)])
        #expect(a == b)
        _ = original.update([])
        #expect(copy.update([detection(0.12, 0.1)]).map(\.id) == [1])
    }

    /// Boxes that cannot be tracked (empty, inverted, not finite) are ignored rather than poisoning a filter.
    @Test func untrackableBoxesAreIgnored() {
        var tracker = Tracker()
        let bad = [detection(0.1, 0.1, 0, 0.1), detection(0.2, 0.2, 0.1, -0.1), detection(.nan, 0.3),
                   detection(0.4, 0.4, .infinity, 0.1)]
        #expect(tracker.update(bad + [detection(0.6, 0.6)]).map(\.id) == [1])
        #expect(tracker.tracks.count == 1)
    }

    /// `Tracker.assign` minimizes the sum of (cost − threshold) over the pairs it makes, so it leaves a pair
    /// out rather than take two worse ones (as `lap.lapjv` with `cost_limit` does), unlike a
    /// maximum-cardinality matching; against enumeration of every partial matching.
    @Test func assignmentLeavesPairsUnmatchedWhenCheaper() {
        // Track 0 fits detection 0 well; pairing 0–1 and 1–0 instead would match two, both poorly.
        let costs = [0.1, 0.75, 0.7, Double.infinity]
        #expect(Tracker.assign(costs: costs, rows: 2, columns: 2, threshold: 0.8) == [.init(row: 0, column: 0)])
        #expect(LinearAssignment.solve(costs: costs, rows: 2, columns: 2).count == 2)

        var random = SeededRandom(seed: 8)
        for trial in 0..<300 {
            let rows = 1 + Int(random.next() % 5), columns = 1 + Int(random.next() % 5)
            let threshold = 0.8
            let costs = (0..<rows * columns).map { _ in Double(random.float(0, 1.2)) }
            let pairs = Tracker.assign(costs: costs, rows: rows, columns: columns, threshold: threshold)
            #expect(pairs.allSatisfy { costs[$0.row * columns + $0.column] <= threshold })
            #expect(Set(pairs.map(\.column)).count == pairs.count && Set(pairs.map(\.row)).count == pairs.count)
            let value = pairs.reduce(0.0) { $0 + costs[$1.row * columns + $1.column] - threshold }
            // The best over every partial matching, by enumeration.
            var used = [Bool](repeating: false, count: columns)
            func best(_ row: Int) -> Double {
                guard row < rows else { return 0 }
                var result = best(row + 1)
                for c in 0..<columns where !used[c] && costs[row * columns + c] <= threshold {
                    used[c] = true
                    result = min(result, costs[row * columns + c] - threshold + best(row + 1))
                    used[c] = false
                }
                return result
            }
            #expect(abs(value - best(0)) < 1e-12, "trial \(trial)")
        }
    }
}
