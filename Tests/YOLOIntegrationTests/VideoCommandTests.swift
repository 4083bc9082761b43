import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOVideo
import YOLOTestSupport

/// `yolo detect` on a video: one JSON object per frame, --save writes a whole video or nothing, errors.
@Suite(.enabled(if: VideoClips.available, VideoClips.noFFmpeg), .serialized)
struct VideoCommandTests {
    @Test func jsonlHasOneObjectPerFrameAndSaveWritesTheAnnotatedVideo() throws {
        let clip = try VideoClips.moving("move.mp4")
        let out = VideoClips.folder + "/annotated.mp4"
        let result = try runYOLO(["detect", clip, "--format", "jsonl", "--save", out])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 50)
        for (n, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["frame"] as? Int == n && object["dropped"] as? Int == 0)
            #expect(abs((object["time"] as? Double ?? -1) - Double(n) / 25) < 1e-3)
            let detections = try #require(object["detections"] as? [[String: Any]])
            #expect(detections.contains { $0["label"] as? String == "person" }, "frame \(n)")
        }
        let saved = try VideoSource(out)
        #expect(saved.codecName == "h264" && saved.width == 640 && saved.height == 360)
        var frames = 0
        while try saved.nextFrame() != nil { frames += 1 }
        #expect(frames == 50)
        #expect(try FileManager.default.contentsOfDirectory(atPath: VideoClips.folder).allSatisfy { !$0.hasSuffix(".tmp") })
    }

    @Test func aDamagedVideoFailsAndLeavesNoOutput() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try VideoClips.moving("gop10.mp4", gop: 10)))
        let folder = TestPaths.temporaryFolder()
        let cut = folder + "/cut.mp4"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let result = try runYOLO(["detect", cut, "--save", folder + "/out.mp4"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("yolo: error: \(cut): the video ends after"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["cut.mp4"])
    }

    @Test func badVideoOptionsFailWithOneLine() throws {
        let clip = try VideoClips.moving("move.mp4")
        for (arguments, message) in [
            (["--frame-policy", "sometimes"], "--frame-policy must be every, latest or a positive number"),
            (["--format", "json"], "use --format jsonl for a video"),
        ] {
            let result = try runYOLO(["detect", clip] + arguments)
            #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let still = try runYOLO(["detect", VideoClips.astronaut, "--realtime"])
        #expect(still.status == 1 && still.stderr.contains("--realtime apply to one video"))
    }

    @Test func trackCountsBothPeopleCrossingTheLine() throws {
        // Two astronauts walking towards each other across the middle of the frame (x = 480).
        let clip = VideoClips.folder + "/crossing.mp4"
        try VideoClips.run(["-f", "lavfi", "-i", "color=c=0x406080:s=960x400:r=25:d=4", "-i", VideoClips.astronaut,
                            "-filter_complex", "[1]scale=200:200,split[a][b];[b]hflip[c];[0][a]overlay=x='20+180*t':y=40[m];"
                                + "[m][c]overlay=x='740-180*t':y=160", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
        let result = try runYOLO(["track", clip, "--classes", "person", "--count-line", "480,0,480,400", "--format", "jsonl"])
        #expect(result.status == 0, "\(result.stderr)")
        var lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.popLast() == "crossed the line: person 2")
        #expect(lines.count == 100)
        var idsAt: [Int: Set<Int>] = [:]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let objects = try #require(object["objects"] as? [[String: Any]])
            idsAt[object["frame"] as? Int ?? -1] = Set(objects.compactMap { $0["track_id"] as? Int })
        }
        // The two people keep their ids from the first frame to the last.
        #expect(idsAt[0] == idsAt[99] && idsAt[0]?.count == 2, "\(idsAt[0] ?? []) → \(idsAt[99] ?? [])")
        let bad = try runYOLO(["track", clip, "--count-line", "1,2,3"])
        #expect(bad.status != 0 && bad.stderr.contains("--count-line must be x1,y1,x2,y2"))
    }
}
