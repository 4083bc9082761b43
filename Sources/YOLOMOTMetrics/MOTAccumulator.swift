@_spi(Engine) import YOLO
/// One tracking event of one frame: what happened to an object (a ground-truth track) or a hypothesis
/// (a tracker's track). The kinds and their rules are py-motmetrics' (its `MOTAccumulator`; its RAW events,
/// the frame's inputs, are kept here as counts, not as events).
public struct MOTEvent: Sendable, Hashable {
    /// The kind of event.
    public enum Kind: String, Sendable, CaseIterable {
        /// An object paired with a hypothesis: the one it was last paired with, or its first.
        case match
        /// An object paired with another hypothesis than the one it was last paired with (an ID switch).
        case `switch`
        /// An object paired with no hypothesis (a false negative).
        case miss
        /// A hypothesis paired with no object (a false alarm).
        case falsePositive
        /// Logged just before a new pairing whose hypothesis was last newly paired with another object.
        case transfer
        /// Logged just before a switch whose hypothesis had never been paired before.
        case ascend
        /// Logged just before a transfer whose object had never been paired before.
        case migrate
    }

    /// The frame number given to `MOTAccumulator.update`.
    public var frame: Int
    /// What happened.
    public var kind: Kind
    /// The object; nil for a false positive.
    public var objectID: Int?
    /// The hypothesis; nil for a miss.
    public var hypothesisID: Int?
    /// The pair's distance (1 − IoU for boxes); nil for a miss or a false positive.
    public var distance: Double?

    /// An event.
    public init(frame: Int, kind: Kind, objectID: Int?, hypothesisID: Int?, distance: Double?) {
        self.frame = frame
        self.kind = kind
        self.objectID = objectID
        self.hypothesisID = hypothesisID
        self.distance = distance
    }
}

/// Frame-by-frame matching of ground-truth objects to a tracker's hypotheses, with the events the CLEAR-MOT
/// and identity metrics are computed from — the rules of py-motmetrics 1.4.0's `MOTAccumulator`:
///
/// 1. An object still close enough (distance finite) to the hypothesis it was last paired with — in any
///    earlier frame, however long ago — stays paired with it: a match.
/// 2. The remaining objects and hypotheses are paired by an optimal assignment (`LinearAssignment`: the
///    most pairs, then the least total distance). A pair whose object was last paired with another
///    hypothesis is a switch, else a match. Before it, an ascend is logged when that switch's hypothesis
///    was never paired before, and a transfer when the hypothesis's last pairing made in this step was
///    with another object (preceded by a migrate when the object was never paired before).
/// 3. Objects left unpaired are misses, hypotheses left unpaired false positives.
///
/// `summary` turns the events into `MOTSummary`'s figures.
public struct MOTAccumulator: Sendable {
    /// Pairs with IoU at least this (1 − IoU at most 1 − this) may be matched, in the box-based `update`.
    public let iouThreshold: Double
    /// Every event so far, in order: per frame, the kept pairings, then the new ones (each preceded by its
    /// ascend, migrate and transfer events), then the misses, then the false positives.
    public private(set) var events: [MOTEvent] = []
    /// How many frames `update` has been given.
    public private(set) var frameCount = 0

    private var history = PairingHistory()
    private var identity = IdentityCounts()
    private var lastFrame: Int?

    /// An empty accumulator; `iouThreshold` applies to the box-based `update` (py-motmetrics' `distth` is
    /// 1 − `iouThreshold`).
    public init(iouThreshold: Double = 0.5) {
        precondition(iouThreshold > 0 && iouThreshold <= 1, "the IoU threshold must be in (0, 1]")
        self.iouThreshold = iouThreshold
    }

    /// The figures of the events so far.
    public var summary: MOTSummary { MOTSummary(events: events, frames: frameCount, identity: identity) }

    /// Adds one frame given its ground-truth objects and hypotheses as boxes; pairs whose IoU is below
    /// `iouThreshold` cannot be matched. Frames must come in increasing order; a frame with neither objects
    /// nor hypotheses still counts as a frame.
    public mutating func update(frame: Int, objects: [(id: Int, box: Rect)], hypotheses: [(id: Int, box: Rect)]) {
        let maximumDistance = 1 - iouThreshold
        var distances: [Double] = []
        distances.reserveCapacity(objects.count * hypotheses.count)
        for object in objects {
            for hypothesis in hypotheses {
                let distance = Self.iouDistance(object.box, hypothesis.box)
                distances.append(distance > maximumDistance ? .nan : distance)
            }
        }
        update(frame: frame, objectIDs: objects.map(\.id), hypothesisIDs: hypotheses.map(\.id), distances: distances)
    }

    /// Adds one frame given its object ids, hypothesis ids and their distances (row-major, one row per
    /// object; NaN or an infinity where the pair cannot be matched). Frames must come in increasing order.
    public mutating func update(frame: Int, objectIDs: [Int], hypothesisIDs: [Int], distances: [Double]) {
        precondition(distances.count == objectIDs.count * hypothesisIDs.count, "distances must hold objects × hypotheses values")
        if let lastFrame { precondition(frame > lastFrame, "frames must be given in increasing order") }
        lastFrame = frame
        frameCount += 1
        identity.record(objectIDs: objectIDs, hypothesisIDs: hypothesisIDs, distances: distances)
        var pairing = FramePairing(frame: frame, objectIDs: objectIDs, hypothesisIDs: hypothesisIDs, distances: distances)
        if !objectIDs.isEmpty && !hypothesisIDs.isEmpty {
            keepPreviousPairings(&pairing)
            pairRemaining(&pairing)
        }
        for (i, object) in objectIDs.enumerated() where !pairing.objectPaired[i] {
            events.append(MOTEvent(frame: frame, kind: .miss, objectID: object, hypothesisID: nil, distance: nil))
        }
        for (j, hypothesis) in hypothesisIDs.enumerated() where !pairing.hypothesisPaired[j] {
            events.append(MOTEvent(frame: frame, kind: .falsePositive, objectID: nil, hypothesisID: hypothesis, distance: nil))
        }
    }

    /// 1 − IoU of two boxes, computed as py-motmetrics does (corners first, sizes from the corners, empty
    /// or inverted boxes of area 0), so the distances agree to the last bit: 0 for identical boxes, 1 for
    /// boxes that do not overlap.
    public static func iouDistance(_ a: Rect, _ b: Rect) -> Double {
        let (aRight, aBottom) = (a.x + a.width, a.y + a.height)
        let (bRight, bBottom) = (b.x + b.width, b.y + b.height)
        let overlapWidth = max(min(aRight, bRight) - max(a.x, b.x), 0)
        let overlapHeight = max(min(aBottom, bBottom) - max(a.y, b.y), 0)
        let intersection = overlapWidth * overlapHeight
        guard intersection != 0 else { return 1 }
        let areaA = max(aRight - a.x, 0) * max(aBottom - a.y, 0)
        let areaB = max(bRight - b.x, 0) * max(bBottom - b.y, 0)
        return 1 - intersection / (areaA + areaB - intersection)
    }

    // MARK: The two pairing steps

    /// Step 1: each object, in order, keeps the hypothesis it was last paired with when that hypothesis
    /// (its first still unpaired occurrence in this frame) is within reach.
    private mutating func keepPreviousPairings(_ pairing: inout FramePairing) {
        for (i, object) in pairing.objectIDs.enumerated() {
            guard let previous = history.hypothesisOfObject[object],
                  let j = pairing.hypothesisIDs.indices.first(where: { !pairing.hypothesisPaired[$0] && pairing.hypothesisIDs[$0] == previous }),
                  pairing.distance(i, j).isFinite else { continue }
            pairing.pair(i, j)
            history.objectsEverPaired.insert(object)
            history.hypothesesEverPaired.insert(previous)
            events.append(pairing.event(.match, i, j))
        }
    }

    /// Step 2: the objects and hypotheses still unpaired, by optimal assignment, each new pair classified
    /// against the history (pairs are taken in object order).
    private mutating func pairRemaining(_ pairing: inout FramePairing) {
        for pair in LinearAssignment.solve(costs: pairing.remainingCosts(), rows: pairing.objectIDs.count,
                                           columns: pairing.hypothesisIDs.count) {
            let (i, j) = (pair.row, pair.column)
            let object = pairing.objectIDs[i], hypothesis = pairing.hypothesisIDs[j]
            let isSwitch = history.hypothesisOfObject[object].map { $0 != hypothesis } ?? false
            if isSwitch && !history.hypothesesEverPaired.contains(hypothesis) {
                events.append(pairing.event(.ascend, i, j))
            }
            if let last = history.objectOfHypothesis[hypothesis], last != object {
                if !history.objectsEverPaired.contains(object) { events.append(pairing.event(.migrate, i, j)) }
                events.append(pairing.event(.transfer, i, j))
            }
            history.objectsEverPaired.insert(object)
            history.hypothesesEverPaired.insert(hypothesis)
            events.append(pairing.event(isSwitch ? .switch : .match, i, j))
            pairing.pair(i, j)
            history.hypothesisOfObject[object] = hypothesis
            history.objectOfHypothesis[hypothesis] = object
        }
    }
}

/// What the accumulator remembers across frames.
private struct PairingHistory: Sendable {
    /// Each object's last hypothesis (set by both steps).
    var hypothesisOfObject: [Int: Int] = [:]
    /// Each hypothesis's last object from a new pairing (step 2 only, as in py-motmetrics).
    var objectOfHypothesis: [Int: Int] = [:]
    /// Objects paired at least once.
    var objectsEverPaired: Set<Int> = []
    /// Hypotheses paired at least once.
    var hypothesesEverPaired: Set<Int> = []
}

/// One frame's inputs and which rows and columns are paired so far.
private struct FramePairing {
    let frame: Int
    let objectIDs: [Int]
    let hypothesisIDs: [Int]
    let distances: [Double]
    var objectPaired: [Bool]
    var hypothesisPaired: [Bool]

    init(frame: Int, objectIDs: [Int], hypothesisIDs: [Int], distances: [Double]) {
        self.frame = frame
        self.objectIDs = objectIDs
        self.hypothesisIDs = hypothesisIDs
        self.distances = distances
        objectPaired = [Bool](repeating: false, count: objectIDs.count)
        hypothesisPaired = [Bool](repeating: false, count: hypothesisIDs.count)
    }

    func distance(_ i: Int, _ j: Int) -> Double { distances[i * hypothesisIDs.count + j] }

    mutating func pair(_ i: Int, _ j: Int) {
        objectPaired[i] = true
        hypothesisPaired[j] = true
    }

    /// The whole matrix with paired rows and columns, and pairs out of reach, forbidden (+infinity).
    func remainingCosts() -> [Double] {
        var costs = distances
        for i in objectIDs.indices {
            for j in hypothesisIDs.indices where objectPaired[i] || hypothesisPaired[j] || !costs[i * hypothesisIDs.count + j].isFinite {
                costs[i * hypothesisIDs.count + j] = .infinity
            }
        }
        return costs
    }

    func event(_ kind: MOTEvent.Kind, _ i: Int, _ j: Int) -> MOTEvent {
        MOTEvent(frame: frame, kind: kind, objectID: objectIDs[i], hypothesisID: hypothesisIDs[j], distance: distance(i, j))
    }
}

/// The counts the identity metrics (IDF1, IDP, IDR) need, as py-motmetrics takes them from its RAW events:
/// in how many frames each object and each hypothesis is present, and how often each pair was within reach.
struct IdentityCounts: Sendable {
    var objectFrames: [Int: Int] = [:]
    var hypothesisFrames: [Int: Int] = [:]
    var pairsInReach: [IDPair: Int] = [:]

    struct IDPair: Sendable, Hashable {
        var object: Int
        var hypothesis: Int
    }

    /// One frame: an id present twice counts one frame; a pair within reach counts once per occurrence.
    mutating func record(objectIDs: [Int], hypothesisIDs: [Int], distances: [Double]) {
        for object in Set(objectIDs) { objectFrames[object, default: 0] += 1 }
        for hypothesis in Set(hypothesisIDs) { hypothesisFrames[hypothesis, default: 0] += 1 }
        for (i, object) in objectIDs.enumerated() {
            for (j, hypothesis) in hypothesisIDs.enumerated() where distances[i * hypothesisIDs.count + j].isFinite {
                pairsInReach[IDPair(object: object, hypothesis: hypothesis), default: 0] += 1
            }
        }
    }
}
