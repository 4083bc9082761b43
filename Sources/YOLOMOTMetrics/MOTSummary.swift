@_spi(Engine) import YOLO
/// The multi-object tracking figures of one sequence, with py-motmetrics 1.4.0's definitions: the CLEAR-MOT
/// metrics (MOTA, MOTP), the identity metrics (IDF1, IDP, IDR), track coverage (mostly tracked / partially
/// tracked / mostly lost) and the event counts they come from.
///
/// Ratios follow IEEE division: a ratio over nothing (MOTP without matches, MOTA without objects) is NaN or
/// an infinity, as in py-motmetrics.
public struct MOTSummary: Sendable, Equatable {
    // MARK: Counts

    /// Frames evaluated (`num_frames`).
    public var frames: Int
    /// Ground-truth object appearances: matches + switches + misses (`num_objects`).
    public var objects: Int
    /// Hypothesis appearances: matches + switches + false positives (`num_predictions`).
    public var predictions: Int
    /// Distinct ground-truth ids (`num_unique_objects`).
    public var uniqueObjects: Int
    /// Pairings that kept or started an object's identity (`num_matches`).
    public var matches: Int
    /// Identity switches (`num_switches`).
    public var switches: Int
    /// New pairings whose hypothesis last paired with another object (`num_transfer`; see `MOTEvent.Kind`).
    public var transfers: Int
    /// Switches to a hypothesis never paired before (`num_ascend`).
    public var ascends: Int
    /// Transfers to an object never paired before (`num_migrate`).
    public var migrations: Int
    /// Hypotheses paired with no object (`num_false_positives`).
    public var falsePositives: Int
    /// Objects paired with no hypothesis (`num_misses`).
    public var misses: Int
    /// Matches + switches (`num_detections`).
    public var detections: Int
    /// Times an object's track was interrupted: a run of misses between two frames where it was tracked
    /// (`num_fragmentations`).
    public var fragmentations: Int
    /// Objects tracked in at least 80 % of their appearances (`mostly_tracked`).
    public var mostlyTracked: Int
    /// Objects tracked in at least 20 % and less than 80 % (`partially_tracked`).
    public var partiallyTracked: Int
    /// Objects tracked in less than 20 % (`mostly_lost`).
    public var mostlyLost: Int
    /// Identity true positives after the best one-to-one matching of whole object trajectories to whole
    /// hypothesis trajectories: objects − idfn (`idtp`).
    public var idtp: Int
    /// Identity false positives: hypothesis frames not covered by that matching (`idfp`).
    public var idfp: Int
    /// Identity false negatives: object frames not covered by that matching (`idfn`).
    public var idfn: Int

    // MARK: Ratios

    /// 1 − (misses + switches + false positives) / objects.
    public var mota: Double
    /// Mean distance (1 − IoU) of the matches and switches: lower is better (py-motmetrics' convention).
    public var motp: Double
    /// Detections / (detections + false positives).
    public var precision: Double
    /// Detections / objects.
    public var recall: Double
    /// 2 idtp / (objects + predictions).
    public var idf1: Double
    /// idtp / (idtp + idfp).
    public var idp: Double
    /// idtp / (idtp + idfn).
    public var idr: Double

    /// Every figure under its py-motmetrics name, in the order of its `motchallenge_metrics` list followed by
    /// the counts that list leaves out.
    public var figures: [(name: String, value: Double)] {
        [("idf1", idf1), ("idp", idp), ("idr", idr), ("recall", recall), ("precision", precision),
         ("num_unique_objects", Double(uniqueObjects)), ("mostly_tracked", Double(mostlyTracked)),
         ("partially_tracked", Double(partiallyTracked)), ("mostly_lost", Double(mostlyLost)),
         ("num_false_positives", Double(falsePositives)), ("num_misses", Double(misses)),
         ("num_switches", Double(switches)), ("num_fragmentations", Double(fragmentations)), ("mota", mota),
         ("motp", motp), ("num_transfer", Double(transfers)), ("num_ascend", Double(ascends)),
         ("num_migrate", Double(migrations)), ("num_frames", Double(frames)), ("num_objects", Double(objects)),
         ("num_predictions", Double(predictions)), ("num_matches", Double(matches)),
         ("num_detections", Double(detections)), ("idtp", Double(idtp)), ("idfp", Double(idfp)), ("idfn", Double(idfn))]
    }

    /// The figures of an accumulator's events (`MOTAccumulator.summary`).
    init(events: [MOTEvent], frames: Int, identity: IdentityCounts) {
        self.frames = frames
        var count: [MOTEvent.Kind: Int] = [:]
        var distanceSum = 0.0
        for event in events {
            count[event.kind, default: 0] += 1
            if event.kind == .match || event.kind == .switch { distanceSum += event.distance ?? 0 }
        }
        matches = count[.match, default: 0]
        switches = count[.switch, default: 0]
        transfers = count[.transfer, default: 0]
        ascends = count[.ascend, default: 0]
        migrations = count[.migrate, default: 0]
        falsePositives = count[.falsePositive, default: 0]
        misses = count[.miss, default: 0]
        detections = matches + switches
        objects = detections + misses
        predictions = detections + falsePositives

        let coverage = TrackCoverage(events)
        uniqueObjects = coverage.objectCount
        mostlyTracked = coverage.mostlyTracked
        partiallyTracked = coverage.partiallyTracked
        mostlyLost = coverage.mostlyLost
        fragmentations = coverage.fragmentations

        let matchedFrames = identity.bestTrajectoryMatching()
        idfn = identity.objectFrames.values.reduce(0, +) - matchedFrames
        idfp = identity.hypothesisFrames.values.reduce(0, +) - matchedFrames
        idtp = objects - idfn

        mota = 1 - Double(misses + switches + falsePositives) / Double(objects)
        motp = distanceSum / Double(detections)
        precision = Double(detections) / Double(detections + falsePositives)
        recall = Double(detections) / Double(objects)
        idf1 = Double(2 * idtp) / Double(objects + predictions)
        idp = Double(idtp) / Double(idtp + idfp)
        idr = Double(idtp) / Double(idtp + idfn)
    }
}

/// Per object, over its events in order: how often it was tracked (matched or switched) and how often its
/// tracking was interrupted.
private struct TrackCoverage {
    private(set) var objectCount = 0
    private(set) var mostlyTracked = 0
    private(set) var partiallyTracked = 0
    private(set) var mostlyLost = 0
    private(set) var fragmentations = 0

    private struct Track {
        var appearances = 0
        var tracked = 0
        /// Whether the object has been tracked yet, and whether a miss came after its last tracked event.
        var seenTracked = false
        var missSinceTracked = false
    }

    init(_ events: [MOTEvent]) {
        var tracks: [Int: Track] = [:]
        for event in events where event.kind == .match || event.kind == .switch || event.kind == .miss {
            guard let object = event.objectID else { continue }
            var track = tracks[object, default: Track()]
            track.appearances += 1
            if event.kind == .miss {
                if track.seenTracked { track.missSinceTracked = true }
            } else {
                // A run of misses that ends in tracking again is one fragmentation.
                if track.missSinceTracked { fragmentations += 1 }
                track.tracked += 1
                track.seenTracked = true
                track.missSinceTracked = false
            }
            tracks[object] = track
        }
        objectCount = tracks.count
        for track in tracks.values {
            let ratio = Double(track.tracked) / Double(track.appearances)
            if ratio >= 0.8 {
                mostlyTracked += 1
            } else if ratio >= 0.2 {
                partiallyTracked += 1
            } else {
                mostlyLost += 1
            }
        }
    }
}

extension IdentityCounts {
    /// The most frames in which objects and hypotheses are within reach of each other, over all one-to-one
    /// matchings of object trajectories to hypothesis trajectories.
    ///
    /// py-motmetrics solves the (objects + hypotheses)² problem that also lets each trajectory stay unmatched;
    /// its cost, false-negative plus false-positive frames, is the frames of all objects and hypotheses less
    /// twice the frames a matching covers, so maximizing those on the objects × hypotheses matrix (every pair
    /// allowed, one without shared frames worth 0) gives the same optimum and the same idfp and idfn.
    func bestTrajectoryMatching() -> Int {
        let objects = objectFrames.keys.sorted(), hypotheses = hypothesisFrames.keys.sorted()
        guard !objects.isEmpty, !hypotheses.isEmpty else { return 0 }
        var shared = [Int](repeating: 0, count: objects.count * hypotheses.count)
        let objectIndex = Dictionary(uniqueKeysWithValues: objects.enumerated().map { ($1, $0) })
        let hypothesisIndex = Dictionary(uniqueKeysWithValues: hypotheses.enumerated().map { ($1, $0) })
        for (pair, frames) in pairsInReach {
            shared[objectIndex[pair.object]! * hypotheses.count + hypothesisIndex[pair.hypothesis]!] = frames
        }
        let pairs = LinearAssignment.solve(costs: shared.map { -Double($0) }, rows: objects.count, columns: hypotheses.count)
        return pairs.reduce(0) { $0 + shared[$1.row * hypotheses.count + $1.column] }
    }
}
