/// A multi-object tracker: ByteTrack (Zhang et al., 2022), as Ultralytics configures it in `bytetrack.yaml`.
///
/// Feed it each frame's detections, in order, and it gives the objects it tracks in that frame, each
/// with an id that stays the same while the object is followed. No image is needed: boxes and scores
/// are all it uses. Every track has a constant-velocity Kalman filter on its box's centre, aspect ratio
/// and height. Each frame:
///
/// 1. detections scoring at least `highThreshold` are matched to the confirmed and the lost tracks by
///    IoU with the tracks' predicted boxes (an optimal assignment; cost 1 − IoU, or 1 − IoU × score with
///    `fuseScore`; pairs costing more than `matchThreshold` are not allowed);
/// 2. detections scoring above `lowThreshold` but under `highThreshold` are matched to the tracks still
///    unmatched that were being tracked in the previous frame (cost 1 − IoU, at most 0.5): a weak
///    detection keeps a track going but never starts one; tracks left unmatched become lost;
/// 3. the high-score detections left over are matched to the tracks started in the previous frame and
///    not yet confirmed (at most 0.7); those unmatched are dropped;
/// 4. high-score detections still left over, scoring at least `newTrackThreshold`, start new tracks;
/// 5. lost tracks unmatched for more than `maximumFramesLost` frames are removed, and where a tracked
///    and a lost track overlap almost entirely (IoU above 0.85) the younger of the two is dropped.
///
/// A new track is confirmed (reported) when it is matched again in the next frame; only on the very
/// first frame are tracks confirmed at once. The reported box is the Kalman filter's estimate after the
/// frame's detection updated it (what ByteTrack reports), not the detection's own box, which comes with it.
///
/// Boxes may be in any units, normalized (as `Detection.box`) or pixels, as long as one stream keeps to
/// one: IoU does not depend on the unit, and the filter's noise is proportional to the box height.
///
/// `Tracker` is a value: one stream of frames per tracker. Copying one forks its state (both copies give
/// the same ids from then on); it is `Sendable`, so a stream may move between tasks, but each frame
/// must be given to the tracker after the previous one.
///
/// With the same settings it reports the same tracks as Ultralytics' `BYTETracker` (8.4.190, checked frame by
/// frame in the tests), except that: ids are numbered when a track is first reported (ByteTrack numbers
/// every track it starts, including those never confirmed, so its ids have gaps); boxes are kept in
/// `Double` (Ultralytics keeps a new track's first box in `Float`); detections with a non-finite box are
/// ignored, as are empty ones (as Ultralytics does); the lost-track buffer is scaled by the frame rate, as
/// ByteTrack does and Ultralytics 8.4 no longer does (give `frameRate` 30 for its behaviour); and the
/// per-class mode is an addition. The assignment is `LinearAssignment` with a "stay unmatched" option at the
/// threshold cost, the same optimum as ByteTrack's `lap.lapjv(…, cost_limit:)`.
public struct Tracker: Sendable {
    /// The tracker's settings, named after the keys of Ultralytics' `bytetrack.yaml` and defaulting to its values.
    public struct Parameters: Sendable, Equatable {
        /// `track_high_thresh`: detections scoring at least this take part in the first association and may
        /// start tracks.
        public var highThreshold: Float
        /// `track_low_thresh`: detections scoring above this (and under `highThreshold`) take part in the
        /// second association; those at or below it are ignored.
        public var lowThreshold: Float
        /// `new_track_thresh`: an unmatched high-score detection starts a track if it scores at least this.
        public var newTrackThreshold: Float
        /// `track_buffer`: how many frames, at 30 frames a second, a lost track is kept for re-finding
        /// (scaled by `frameRate`, see `Tracker.maximumFramesLost`).
        public var trackBuffer: Int
        /// `match_thresh`: the highest cost (1 − IoU, or 1 − IoU × score with `fuseScore`) at which a
        /// track and a high-score detection may be matched.
        public var matchThreshold: Double
        /// `fuse_score`: multiply the IoU by the detection's score in the first association and when
        /// confirming new tracks, so that at equal overlap the more confident detection wins.
        public var fuseScore: Bool
        /// The stream's frames per second (ByteTrack's `frame_rate`, not in the yaml; Ultralytics used to
        /// pass the video's): it scales `trackBuffer`, and `Tracker.update(_:time:)` turns times into frame
        /// numbers with it. The Kalman filter itself works per frame, as ByteTrack's does.
        public var frameRate: Double
        /// Match detections only to tracks of their own class. Off by default, as in ByteTrack, where any
        /// class may continue a track and the track takes its latest detection's class.
        public var perClass: Bool

        /// Settings with Ultralytics' defaults unless given.
        public init(highThreshold: Float = 0.25, lowThreshold: Float = 0.1, newTrackThreshold: Float = 0.25,
                    trackBuffer: Int = 30, matchThreshold: Double = 0.8, fuseScore: Bool = true,
                    frameRate: Double = 30, perClass: Bool = false) {
            self.highThreshold = highThreshold
            self.lowThreshold = lowThreshold
            self.newTrackThreshold = newTrackThreshold
            self.trackBuffer = trackBuffer
            self.matchThreshold = matchThreshold
            self.fuseScore = fuseScore
            self.frameRate = frameRate
            self.perClass = perClass
        }
    }

    /// The highest cost (1 − IoU) of a match in the second association, with low-score detections
    /// (fixed in ByteTrack).
    public static let lowScoreMatchThreshold = 0.5
    /// The highest cost of a match between a track started in the previous frame and a detection
    /// (fixed in ByteTrack; the score is fused as in the first association).
    public static let confirmationMatchThreshold = 0.7
    /// Above this IoU a tracked and a lost track are taken for the same object (ByteTrack's IoU distance 0.15).
    public static let duplicateIoU = 0.85

    /// The settings.
    public let parameters: Parameters
    /// How many frames a lost track is kept: `Int(frameRate / 30 × trackBuffer)`, as ByteTrack computes it.
    /// A track missed in at most that many consecutive frames can be found again under its id.
    public let maximumFramesLost: Int

    /// The live tracks, tracked and lost, in the order they started.
    private(set) var tracks: [Track] = []
    /// The largest frame number used (2⁵²); larger ones are clamped.
    static let frameLimit = 1 << 52
    /// The last frame given, nil before the first.
    private(set) var lastFrame: Int?
    /// The time of the first frame given to `update(_:time:)`, from which its frame numbers count.
    private var timeOrigin: Double?
    /// The id the next reported track gets.
    private var nextID = 1

    /// A tracker with `parameters`, before any frame.
    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        let scaled = parameters.frameRate / 30 * Double(parameters.trackBuffer)
        maximumFramesLost = scaled.isFinite ? Int(max(0, min(scaled, Double(Int32.max)))) : 0
    }

    /// Tracks the detections of frame number `frame` and returns the objects tracked in it, in increasing
    /// id order.
    ///
    /// Frame numbers must increase; one that does not is taken as the frame after the last. Frames skipped
    /// between two calls count as frames where nothing was detected: tracks coast on their prediction,
    /// new ones go unconfirmed, and the lost-track buffer counts them.
    public mutating func update(_ detections: [Detection], frame: Int) -> [TrackedObject] {
        // Far beyond any stream's length, and no arithmetic below can overflow.
        var frame = min(max(frame, -Self.frameLimit), Self.frameLimit)
        if let last = lastFrame {
            if frame <= last { frame = last + 1 }
            // Empty frames for the gap; after maximumFramesLost + 1 of them no track is left.
            for skipped in stride(from: last + 1, to: min(frame, last + maximumFramesLost + 3), by: 1) {
                _ = track([], frame: skipped)
            }
        }
        return track(detections, frame: frame)
    }

    /// Tracks the detections of the frame shown at `time` seconds (any origin) and returns the objects
    /// tracked in it, in increasing id order.
    ///
    /// The frame number is the time since the first call's in units of 1 / `frameRate`, rounded, so a
    /// stream with dropped frames is tracked as ByteTrack tracks one with empty frames. A time that does not
    /// advance by at least half a frame period (or is not finite) is taken as the next frame.
    public mutating func update(_ detections: [Detection], time: Double) -> [TrackedObject] {
        guard let origin = timeOrigin else {
            timeOrigin = time.isFinite ? time : 0
            return update(detections, frame: 0)
        }
        let frames = ((time - origin) * parameters.frameRate).rounded()
        let next = (lastFrame ?? -1) + 1
        let frame = frames.isFinite && abs(frames) < Double(Self.frameLimit) ? Int(frames) : next
        return update(detections, frame: frame)
    }

    /// Tracks the detections of the frame after the last one given and returns the objects tracked in it,
    /// in increasing id order.
    public mutating func update(_ detections: [Detection]) -> [TrackedObject] {
        update(detections, frame: (lastFrame ?? -1) + 1)
    }

    // MARK: - One frame

    /// ByteTrack's update for one frame.
    private mutating func track(_ detections: [Detection], frame: Int) -> [TrackedObject] {
        let isFirstFrame = lastFrame == nil
        lastFrame = frame
        let (high, low) = splitByScore(detections)
        // ByteTrack's track pool: the confirmed tracked ones, then the lost ones.
        let confirmed = tracks.indices.filter { tracks[$0].state == .tracked && tracks[$0].isConfirmed }
        let unconfirmed = tracks.indices.filter { tracks[$0].state == .tracked && !tracks[$0].isConfirmed }
        let previouslyLost = tracks.indices.filter { tracks[$0].state == .lost }
        let pool = confirmed + previouslyLost
        for index in pool { tracks[index].predict() }

        // First association: high-score detections with the confirmed and the lost tracks.
        let first = associate(pool, high, detections, threshold: parameters.matchThreshold,
                              fuseScore: parameters.fuseScore)
        for (track, detection) in first.pairs { tracks[track].match(detections[detection], frame: frame) }

        // Second association: low-score detections with the tracks still unmatched that were tracked.
        let stillTracked = first.unmatchedTracks.filter { tracks[$0].state == .tracked }
        let second = associate(stillTracked, low, detections, threshold: Self.lowScoreMatchThreshold, fuseScore: false)
        for (track, detection) in second.pairs { tracks[track].match(detections[detection], frame: frame) }
        for index in second.unmatchedTracks { tracks[index].state = .lost }

        // Tracks started in the previous frame, with the high-score detections left over.
        let third = associate(unconfirmed, first.unmatchedDetections, detections,
                              threshold: Self.confirmationMatchThreshold, fuseScore: parameters.fuseScore)
        for (track, detection) in third.pairs { tracks[track].match(detections[detection], frame: frame) }

        for index in third.unmatchedDetections where detections[index].confidence >= parameters.newTrackThreshold {
            tracks.append(Track(detection: detections[index], frame: frame, confirmed: isFirstFrame))
        }
        // Unconfirmed tracks not matched again, lost tracks past the buffer, then duplicates.
        var removed = Set(third.unmatchedTracks)
        removed.formUnion(previouslyLost.filter {
            tracks[$0].state == .lost && frame - tracks[$0].lastMatchedFrame > maximumFramesLost
        })
        removed.formUnion(duplicates(excluding: removed))
        if !removed.isEmpty {
            tracks = tracks.indices.filter { !removed.contains($0) }.map { tracks[$0] }
        }
        return report(frame: frame)
    }

    /// The indices of the detections that may be tracked, split into high-score and low-score ones.
    private func splitByScore(_ detections: [Detection]) -> (high: [Int], low: [Int]) {
        var high: [Int] = [], low: [Int] = []
        for (index, detection) in detections.enumerated() where Track.isTrackable(detection.box) {
            if detection.confidence >= parameters.highThreshold {
                high.append(index)
            } else if detection.confidence > parameters.lowThreshold {
                low.append(index)
            }
        }
        return (high, low)
    }

    /// The confirmed tracks of this frame as reported objects, numbering those reported for the first time.
    private mutating func report(frame: Int) -> [TrackedObject] {
        var objects: [TrackedObject] = []
        objects.reserveCapacity(tracks.count)
        for index in tracks.indices where tracks[index].state == .tracked && tracks[index].isConfirmed {
            let isNew = tracks[index].id == 0
            if isNew {
                tracks[index].id = nextID
                nextID += 1
            }
            let track = tracks[index]
            objects.append(TrackedObject(id: track.id, box: track.filter.box, detection: track.detection,
                                         age: frame - track.startFrame, isNew: isNew))
        }
        return objects
    }

    // MARK: - Association

    /// The result of matching some tracks with some detections (indices into `tracks` and the frame's detections).
    private struct Association {
        var pairs: [(track: Int, detection: Int)] = []
        var unmatchedTracks: [Int] = []
        var unmatchedDetections: [Int] = []
    }

    /// The optimal matching of the tracks `rows` with the detections `columns` by IoU (times the score with
    /// `fuseScore`) of each track's current box, no pair costing more than `threshold`.
    private func associate(_ rows: [Int], _ columns: [Int], _ detections: [Detection], threshold: Double,
                           fuseScore: Bool) -> Association {
        guard !rows.isEmpty, !columns.isEmpty else { return Association(unmatchedTracks: rows, unmatchedDetections: columns) }
        let boxes = columns.map { detections[$0].box }
        let weights = columns.map { fuseScore ? Double(detections[$0].confidence) : 1 }
        let classes = columns.map { detections[$0].classIndex }
        var costs = [Double](repeating: .infinity, count: rows.count * columns.count)
        for (r, trackIndex) in rows.enumerated() {
            let box = tracks[trackIndex].filter.box
            let classIndex = tracks[trackIndex].detection.classIndex
            for c in columns.indices where !parameters.perClass || classes[c] == classIndex {
                costs[r * columns.count + c] = 1 - box.iou(boxes[c]) * weights[c]
            }
        }
        var association = Association()
        var trackMatched = [Bool](repeating: false, count: rows.count)
        var detectionMatched = [Bool](repeating: false, count: columns.count)
        for pair in Self.assign(costs: costs, rows: rows.count, columns: columns.count, threshold: threshold) {
            association.pairs.append((rows[pair.row], columns[pair.column]))
            trackMatched[pair.row] = true
            detectionMatched[pair.column] = true
        }
        association.unmatchedTracks = rows.indices.filter { !trackMatched[$0] }.map { rows[$0] }
        association.unmatchedDetections = columns.indices.filter { !detectionMatched[$0] }.map { columns[$0] }
        return association
    }

    /// The pairs of least total cost minus `threshold` per pair, among pairs costing at most `threshold`:
    /// a pair is made only when it beats leaving its row and its column unmatched, the optimum of
    /// `lap.lapjv(costs, extend_cost=True, cost_limit=threshold)` that ByteTrack solves.
    ///
    /// The problem splits into the groups of rows and columns that allowed pairs connect (most are one track
    /// and one detection), each solved on its own. In a group, each row gets one more column of its own,
    /// costing `threshold`, for "unmatched"; `LinearAssignment`'s maximum-cardinality optimum then matches
    /// every row and minimizes exactly that sum.
    static func assign(costs: [Double], rows: Int, columns: Int, threshold: Double) -> [LinearAssignment.Pair] {
        precondition(costs.count == rows * columns, "costs must hold rows × columns values")
        let groups = ConnectedGroups(costs: costs, rows: rows, columns: columns, threshold: threshold)
        var pairs: [LinearAssignment.Pair] = []
        for group in 0..<groups.count {
            let groupRows = groups.rows(of: group), groupColumns = groups.columns(of: group)
            if groupRows.count == 1 && groupColumns.count == 1 {
                pairs.append(LinearAssignment.Pair(row: groupRows.first!, column: groupColumns.first!))
                continue
            }
            let width = groupColumns.count + groupRows.count
            var extended = [Double](repeating: .infinity, count: groupRows.count * width)
            for (r, row) in groupRows.enumerated() {
                for (c, column) in groupColumns.enumerated() where costs[row * columns + column] <= threshold {
                    extended[r * width + c] = costs[row * columns + column]
                }
                extended[r * width + groupColumns.count + r] = threshold
            }
            for pair in LinearAssignment.solve(costs: extended, rows: groupRows.count, columns: width)
            where pair.column < groupColumns.count {
                pairs.append(LinearAssignment.Pair(row: groupRows[groupRows.startIndex + pair.row],
                                                   column: groupColumns[groupColumns.startIndex + pair.column]))
            }
        }
        return pairs.sorted { $0.row < $1.row }
    }

    /// The rows and columns of a cost matrix that pairs costing at most a threshold connect, in groups that
    /// hold both a row and a column (numbered by their first row), kept in flat lists.
    struct ConnectedGroups {
        private let rowList: [Int], rowStart: [Int]
        private let columnList: [Int], columnStart: [Int]

        /// The number of groups.
        var count: Int { rowStart.count - 1 }
        /// A group's rows, in increasing order.
        func rows(of group: Int) -> ArraySlice<Int> { rowList[rowStart[group]..<rowStart[group + 1]] }
        /// A group's columns, in increasing order.
        func columns(of group: Int) -> ArraySlice<Int> { columnList[columnStart[group]..<columnStart[group + 1]] }

        init(costs: [Double], rows: Int, columns: Int, threshold: Double) {
            let labels = Self.labels(costs: costs, rows: rows, columns: columns, threshold: threshold)
            (rowList, rowStart) = Self.flatten(labels.rows, groups: labels.count)
            (columnList, columnStart) = Self.flatten(labels.columns, groups: labels.count)
        }

        /// Each row's and column's group, -1 for those in none (union–find over allowed pairs).
        private static func labels(costs: [Double], rows: Int, columns: Int,
                                   threshold: Double) -> (rows: [Int], columns: [Int], count: Int) {
            // Nodes 0..<rows are the rows, rows..<rows + columns the columns; a set's root is its least node,
            // so a set holding a row has a row as its root.
            var parent = Array(0..<(rows + columns))
            func root(_ node: Int) -> Int {
                var node = node
                while parent[node] != node {
                    parent[node] = parent[parent[node]]
                    node = parent[node]
                }
                return node
            }
            for row in 0..<rows {
                for column in 0..<columns where costs[row * columns + column] <= threshold {
                    let (a, b) = (root(row), root(rows + column))
                    if a != b { parent[max(a, b)] = min(a, b) }
                }
            }
            let columnRoots = (0..<columns).map { root(rows + $0) }
            var hasColumn = [Bool](repeating: false, count: rows)
            for top in columnRoots where top < rows { hasColumn[top] = true }
            var groupOfRoot = [Int](repeating: -1, count: rows)
            var count = 0
            for row in 0..<rows where hasColumn[row] {
                groupOfRoot[row] = count
                count += 1
            }
            return ((0..<rows).map { groupOfRoot[root($0)] }, columnRoots.map { $0 < rows ? groupOfRoot[$0] : -1 }, count)
        }

        /// The indices with each label, grouped by label in increasing order, and where each group starts.
        private static func flatten(_ labels: [Int], groups: Int) -> (list: [Int], start: [Int]) {
            var start = [Int](repeating: 0, count: groups + 1)
            for label in labels where label >= 0 { start[label + 1] += 1 }
            for g in 0..<groups { start[g + 1] += start[g] }
            var list = [Int](repeating: 0, count: start[groups])
            var cursor = start
            for (index, label) in labels.enumerated() where label >= 0 {
                list[cursor[label]] = index
                cursor[label] += 1
            }
            return (list, start)
        }
    }

    /// The tracks to drop as duplicates: where a tracked and a lost track overlap with IoU above
    /// `duplicateIoU`, the one followed for fewer frames up to its last match (the tracked one when equal),
    /// as ByteTrack's `remove_duplicate_stracks`. In per-class mode only tracks of one class are compared.
    private func duplicates(excluding removed: Set<Int>) -> Set<Int> {
        let live = tracks.indices.filter { !removed.contains($0) }
        let tracked = live.filter { tracks[$0].state == .tracked }
        let lost = live.filter { tracks[$0].state == .lost }
        guard !tracked.isEmpty, !lost.isEmpty else { return [] }
        let lostBoxes = lost.map { tracks[$0].filter.box }
        var duplicates = Set<Int>()
        for p in tracked {
            let box = tracks[p].filter.box
            for (k, q) in lost.enumerated() where box.iou(lostBoxes[k]) > Self.duplicateIoU {
                if parameters.perClass && tracks[p].detection.classIndex != tracks[q].detection.classIndex { continue }
                duplicates.insert(tracks[p].trackedFrames > tracks[q].trackedFrames ? q : p)
            }
        }
        return duplicates
    }
}

/// One object tracked in a frame.
public struct TrackedObject: Sendable, Equatable {
    /// The track's id: 1 for the first object reported, then 2, … in the order they are first reported.
    public var id: Int
    /// The track's box after this frame's detection corrected its Kalman filter (what ByteTrack reports):
    /// smoother than the detection's box, in the same units.
    public var box: Rect
    /// The detection the track was matched to in this frame.
    public var detection: Detection
    /// Frames since the track's first detection (the frame that started it is age 0).
    public var age: Int
    /// Whether this is the first frame the track is reported in (confirmed).
    public var isNew: Bool

    /// The class: the matched detection's.
    public var classIndex: Int { detection.classIndex }
    /// The class's name: the matched detection's.
    public var label: String { detection.label }
    /// The score: the matched detection's confidence.
    public var score: Float { detection.confidence }

    /// A tracked object (the tracker makes them; this is for tests and other sources).
    public init(id: Int, box: Rect, detection: Detection, age: Int, isNew: Bool) {
        self.id = id
        self.box = box
        self.detection = detection
        self.age = age
        self.isNew = isNew
    }
}

extension Tracker {
    /// One track's state.
    struct Track: Sendable {
        enum State: Sendable { case tracked, lost }

        /// The box's motion.
        var filter: KalmanBoxFilter
        /// Tracked: matched in the last frame (or just started); lost: missed since `lastMatchedFrame`.
        var state: State = .tracked
        /// Confirmed: matched in two frames in a row (or started on the first frame); only these are reported.
        var isConfirmed: Bool
        /// The reported id, 0 until first reported.
        var id = 0
        /// The frame that started the track.
        var startFrame: Int
        /// The last frame the track was matched in.
        var lastMatchedFrame: Int
        /// The last detection matched (its class is the track's).
        var detection: Detection

        /// Frames from the track's start to its last match (ByteTrack's `frame_id - start_frame`).
        var trackedFrames: Int { lastMatchedFrame - startFrame }

        /// A new track from a detection.
        init(detection: Detection, frame: Int, confirmed: Bool) {
            filter = KalmanBoxFilter(box: detection.box)
            isConfirmed = confirmed
            startFrame = frame
            lastMatchedFrame = frame
            self.detection = detection
        }

        /// Whether a box can start or continue a track: finite, with a positive width and height.
        static func isTrackable(_ box: Rect) -> Bool {
            box.x.isFinite && box.y.isFinite && box.width.isFinite && box.height.isFinite && box.width > 0 && box.height > 0
        }

        /// Moves the filter one frame on; a lost track's height stops changing (ByteTrack zeroes its velocity).
        mutating func predict() {
            if state != .tracked { filter.stopHeightChange() }
            filter.predict()
        }

        /// Continues the track with a detection in `frame`: tracked, confirmed, the filter corrected.
        mutating func match(_ detection: Detection, frame: Int) {
            filter.update(box: detection.box)
            state = .tracked
            isConfirmed = true
            lastMatchedFrame = frame
            self.detection = detection
        }
    }
}
