import Foundation
import Testing
@testable import YOLO
@testable import YOLOMOTMetrics
import YOLOTestSupport

/// `Tracker` against two references (fixtures from scripts/track-reference.py):
///
/// - Ultralytics 8.4.190's `BYTETracker`, whose settings ours takes: the same objects in every frame of two
///   synthetic streams, with the same boxes (to Ultralytics' float32 rounding), scores and classes, and ids
///   that correspond one to one; and the same MOTA and IDF1 on the TUD sequences.
/// - Roboflow's `trackers` 2.6.1 ByteTrack, an independent re-implementation, run on its centre-based Kalman
///   state (the one like ByteTrack's): on the TUD sequences, MOTA and IDF1 within 2 points of its. The script
///   lists the parameter mapping and how the two implementations differ; with trackers' default corner
///   filter, TUD-Campus IDF1 is 3.6 points below ours.
@Suite struct TrackerReferenceTests {
    static let folder = TestPaths.fixtures + "/track"

    struct Metrics: Decodable { var mota: Double; var idf1: Double }
    struct Sequence: Decodable { var metrics: Metrics }
    struct Settings: Decodable {
        var highThreshold: Float, lowThreshold: Float, newTrackThreshold: Float, trackBuffer: Int
        var matchThreshold: Double, fuseScore: Bool, frameRate: Double
        var parameters: Tracker.Parameters {
            .init(highThreshold: highThreshold, lowThreshold: lowThreshold, newTrackThreshold: newTrackThreshold,
                  trackBuffer: trackBuffer, matchThreshold: matchThreshold, fuseScore: fuseScore, frameRate: frameRate)
        }
    }
    struct Stream: Decodable {
        var name: String, frames: Int, parameters: Settings, boxTolerance: Double
        var detections: [String], tracks: [String]
    }
    struct UltralyticsFixture: Decodable { var streams: [Stream]; var sequences: [String: Sequence] }
    struct TrackersFixture: Decodable { var sequences: [String: Sequence] }

    static func load<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }

    static func numbers(_ line: String) -> [Double] { line.split(separator: ",").map { Double($0)! } }

    // MARK: Ultralytics, frame by frame

    @Test(arguments: ["pixels", "normalized"])
    func sameTracksAsUltralytics(_ name: String) throws {
        let fixture = try Self.load(UltralyticsFixture.self, "ultralytics-8.4.190-bytetrack.json")
        let stream = try #require(fixture.streams.first { $0.name == name })
        var detections: [Int: [Detection]] = [:]
        for v in stream.detections.map(Self.numbers) {
            detections[Int(v[0]), default: []].append(
                Detection(box: Rect(x: v[1], y: v[2], width: v[3], height: v[4]), classIndex: Int(v[6]),
                          label: "class \(Int(v[6]))", confidence: Float(v[5])))
        }
        let expected = Dictionary(grouping: stream.tracks.map(Self.numbers)) { Int($0[0]) }

        var tracker = Tracker(parameters: stream.parameters.parameters)
        var oursFor: [Int: Int] = [:], theirsFor: [Int: Int] = [:]
        var compared = 0
        for frame in 1...stream.frames {
            let ours = tracker.update(detections[frame] ?? [], frame: frame)
            let theirs = expected[frame] ?? []
            try #require(ours.count == theirs.count, "frame \(frame): \(ours.count) objects, Ultralytics \(theirs.count)")
            #expect(ours.map(\.id) == ours.map(\.id).sorted(), "frame \(frame): in id order")
            for t in theirs {
                let box = Rect(x: t[2], y: t[3], width: t[4], height: t[5])
                func distance(_ o: TrackedObject) -> Double {
                    max(abs(o.box.x - box.x), abs(o.box.y - box.y), abs(o.box.width - box.width), abs(o.box.height - box.height))
                }
                let match = try #require(ours.min { distance($0) < distance($1) })
                try #require(distance(match) <= stream.boxTolerance, "frame \(frame): Ultralytics' track \(Int(t[1])) at \(box), closest \(match.box)")
                let theirID = Int(t[1])
                #expect(oursFor[theirID, default: match.id] == match.id && theirsFor[match.id, default: theirID] == theirID,
                        "frame \(frame): ids \(match.id) and Ultralytics' \(theirID) do not correspond")
                oursFor[theirID] = match.id
                theirsFor[match.id] = theirID
                #expect(abs(Double(match.score) - t[6]) < 1e-4 && match.classIndex == Int(t[7]), "frame \(frame)")
                compared += 1
            }
        }
        #expect(compared == stream.tracks.count)
        // Our ids are 1, 2, … in the order tracks are first reported.
        #expect(Set(oursFor.values) == Set(1...oursFor.count))
    }

    // MARK: The TUD sequences

    /// Our tracker on the boxes of `test.txt` (score 0.9, ids dropped, 25 frames a second), scored against `gt.txt`.
    static func trackTUD(_ sequence: String) throws -> MOTSummary {
        let input = try MOTChallengeFile.read(path: "\(TestPaths.motData)/\(sequence)/test.txt")
        let groundTruth = try MOTChallengeFile.read(path: "\(TestPaths.motData)/\(sequence)/gt.txt")
        let byFrame = Dictionary(grouping: input, by: \.frame)
        let last = max(input.map(\.frame).max() ?? 0, groundTruth.map(\.frame).max() ?? 0)
        var tracker = Tracker(parameters: .init(frameRate: 25))
        var results: [MOTChallengeRecord] = []
        for frame in 1...last {
            let detections = (byFrame[frame] ?? []).map {
                Detection(box: $0.box, classIndex: 0, label: "pedestrian", confidence: 0.9)
            }
            for object in tracker.update(detections, frame: frame) {
                results.append(MOTChallengeRecord(frame: frame, id: object.id, x: object.box.x, y: object.box.y,
                                                  width: object.box.width, height: object.box.height,
                                                  confidence: Double(object.score)))
            }
        }
        return MOTEvaluation.evaluate(groundTruth: groundTruth, results: results)
    }

    @Test(.enabled(if: TestPaths.hasMOTData, "\(Skip.noMOTData)"), arguments: TestPaths.motSequences)
    func tudAgainstBothReferences(_ sequence: String) throws {
        let ours = try Self.trackTUD(sequence)
        let ultralytics = try #require(try Self.load(UltralyticsFixture.self, "ultralytics-8.4.190-bytetrack.json")
            .sequences[sequence]?.metrics)
        let trackers = try #require(try Self.load(TrackersFixture.self, "trackers-2.6.1-tud.json").sequences[sequence]?.metrics)
        // Same tracks as Ultralytics, so the same figures (one changed match would move them by 0.003 or more).
        #expect(abs(ours.mota - ultralytics.mota) < 1e-3, "MOTA \(ours.mota), Ultralytics \(ultralytics.mota)")
        #expect(abs(ours.idf1 - ultralytics.idf1) < 1e-3, "IDF1 \(ours.idf1), Ultralytics \(ultralytics.idf1)")
        #expect(abs(ours.mota - trackers.mota) <= 0.02, "MOTA \(ours.mota), trackers \(trackers.mota)")
        #expect(abs(ours.idf1 - trackers.idf1) <= 0.02, "IDF1 \(ours.idf1), trackers \(trackers.idf1)")
    }
}
