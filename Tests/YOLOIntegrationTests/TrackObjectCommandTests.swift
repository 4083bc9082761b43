import Foundation
import Testing
import YOLO
import YOLOEvaluation
import YOLOTestSupport

/// `yolo track-object` and `yolo eval-sot` through the binary.
@Suite struct TrackObjectCommandTests {
    /// A folder of PNG frames of the moving square (frames 0..<count), optionally a last frame of another size.
    static func clipFolder(count: Int, oddLast: Bool = false) throws -> String {
        let folder = TestPaths.temporaryFolder() + "/clip"
        try FileManager.default.createDirectory(atPath: folder + "/img", withIntermediateDirectories: true)
        for t in 0..<count {
            try TrackingClips.square(at: 100 + 6 * t).write(to: folder + String(format: "/img/%04d.png", t + 1))
        }
        if oddLast {
            try Image(width: 100, height: 80, pixels: [UInt8](repeating: 9, count: 100 * 80 * 3)).write(to: folder + String(format: "/img/%04d.png", count + 1))
        }
        return folder
    }

    func expectOneLineFailure(_ arguments: [String], mentioning fragment: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try runYOLO(arguments)
        #expect(result.status == 1, "status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1 && result.stderr.hasPrefix("yolo: error: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func jsonlGivesOneObjectPerFrame() throws {
        let folder = try Self.clipFolder(count: 6)
        let result = try runYOLO(["track-object", folder, "--box", "100,96,48,48", "--level", "fast", "--format", "jsonl"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines.first == "{\"frame\": 1, \"box\": [100, 96, 48, 48], \"confidence\": 1, \"lost\": false}")
        for (i, line) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            #expect(object["frame"] as? Int == i + 1)
            let box = object["box"] as! [Double]
            #expect(abs(box[0] - Double(100 + 6 * i)) < 3 && abs(box[1] - 96) < 3, "\(line)")
            #expect(object["lost"] as? Bool == false)
        }
        #expect(result.stderr.contains("6 frames, 0 lost"))
    }

    @Test func saveWritesAVideo() throws {
        let folder = try Self.clipFolder(count: 4)
        let out = TestPaths.temporaryFolder() + "/tracked.mp4"
        let result = try runYOLO(["track-object", folder, "--box", "100,96,48,48", "--save", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").first == "frame 1: 100.0,96.0 48.0x48.0 100%")
        #expect((try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int).map { $0 > 0 } == true)
    }

    @Test func badInputIsOneLineAndExitOne() throws {
        let folder = try Self.clipFolder(count: 2)
        try expectOneLineFailure(["track-object", folder, "--box", "400,10,20,20"], mentioning: "outside the 320x240 frame")
        try expectOneLineFailure(["track-object", folder, "--box", "10,10,0,20"], mentioning: "too small")
        try expectOneLineFailure(["track-object", folder, "--box", "10,10,1,1"], mentioning: "too small")
        try expectOneLineFailure(["track-object", folder, "--box", "1e308,1e308,1e308,1e308"], mentioning: "frame 1: the box")
        try expectOneLineFailure(["track-object", folder, "--box", "10,10,20"], mentioning: "--box must be x,y,w,h")
        try expectOneLineFailure(["track-object", folder, "--box", "a,b,c,d"], mentioning: "--box must be x,y,w,h")
        try expectOneLineFailure(["track-object", folder], mentioning: "--box x,y,w,h or --from-detection")
        try expectOneLineFailure(["track-object", folder, "--box", "1,1,9,9", "--level", "best"], mentioning: "level")
        let empty = TestPaths.temporaryFolder()
        try expectOneLineFailure(["track-object", empty, "--box", "1,1,9,9"], mentioning: "holds no .jpg, .jpeg or .png")
        try expectOneLineFailure(["track-object", empty + "/missing.mp4", "--box", "1,1,9,9"], mentioning: "missing.mp4")
        let odd = try Self.clipFolder(count: 3, oddLast: true)
        let result = try runYOLO(["track-object", odd, "--box", "100,96,48,48", "--level", "fast"])
        #expect(result.status == 1)
        #expect(result.stdout.split(separator: "\n").count == 3)  // the frames before the odd one are reported
        #expect(result.stderr.split(whereSeparator: \.isNewline).count == 1 && result.stderr.contains("100x80 frame"), "\(result.stderr)")
    }

    @Test func evalSOTScoresAFolderWithGroundTruth() throws {
        let folder = try Self.clipFolder(count: 8)
        let truth = (0..<8).map { "\(100 + 6 * $0),96,48,48" }.joined(separator: "\n")
        try truth.write(toFile: folder + "/groundtruth.txt", atomically: true, encoding: .utf8)
        let results = TestPaths.temporaryFolder()
        let run = try runYOLO(["eval-sot", folder, "--level", "fast", "--format", "json", "--results", results])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Any]
        let overall = object["overall"] as! [String: Any]
        #expect((overall["auc"] as! Double) > 0.8 && (overall["precision20"] as! Double) == 1)
        let boxes = try SingleObjectScore.readBoxes(results + "/clip.txt")
        #expect(boxes.count == 8)
        let noTruth = try Self.clipFolder(count: 2)
        try expectOneLineFailure(["eval-sot", noTruth], mentioning: "groundtruth.txt: no such file")
    }

    /// The bars of issue 36 on the development sequences (slow: about 20 s).
    @Test(.enabled(if: TestPaths.hasTrackingData, "\(Skip.noTrackingData)"))
    func developmentSequencesMeetTheBars() throws {
        let data = TestPaths.trackingData + "/"
        for (level, bars) in [("accurate", [0.721, 0.282, 0.611]), ("fast", [0.6, 0.15, 0.5])] {
            let run = try runYOLO(["eval-sot", data + "Crossing", data + "bag", data + "car1", "--level", level, "--format", "json"])
            #expect(run.status == 0, "\(run.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Any]
            let aucs = (object["sequences"] as! [[String: Any]]).map { $0["auc"] as! Double }
            #expect(zip(aucs, bars).allSatisfy { $0 >= $1 }, "\(level): \(aucs)")
            let mean = (object["overall"] as! [String: Any])["auc"] as! Double
            #expect(mean >= (level == "accurate" ? 0.588 : 0.45), "\(level): mean \(mean)")
        }
    }
}
