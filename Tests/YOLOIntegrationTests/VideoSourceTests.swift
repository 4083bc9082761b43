import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOModels
@testable import YOLOVideo
import YOLOTestSupport

/// Video decoding against ffmpeg's own decode, detection on frames against still detection and the known
/// box, the frame policies, and the errors. Clips are made by the tests with the ffmpeg command.
@Suite(.enabled(if: VideoClips.available, VideoClips.noFFmpeg), .serialized)
struct VideoSourceTests {
    static let detector = try? Detector(bundled: .yolov4Tiny)

    /// Mean and largest absolute difference of two same-size images.
    func difference(_ a: Image, _ b: Image) -> (mean: Double, max: Int) {
        var sum = 0, largest = 0
        for i in a.pixels.indices {
            let d = abs(Int(a.pixels[i]) - Int(b.pixels[i]))
            sum += d
            largest = max(largest, d)
        }
        return (Double(sum) / Double(a.pixels.count), largest)
    }

    /// Every frame decoded, in order, with its time.
    func decodeAll(_ path: String) throws -> [VideoFrame] {
        let source = try VideoSource(path)
        var frames: [VideoFrame] = []
        while let frame = try source.nextFrame() { frames.append(frame) }
        return frames
    }

    @Test func framesMatchFFmpegsDecode() throws {
        let path = try VideoClips.moving("move.mp4")
        let source = try VideoSource(path)
        #expect(source.width == 640 && source.height == 360 && source.rotation == 0)
        #expect(source.declaredFrameCount == 50 && source.codecName == "h264")
        let ours = try decodeAll(path)
        let theirs = try VideoClips.ffmpegFrames(path, width: 640, height: 360)
        #expect(ours.count == 50 && theirs.count == 50)
        for (frame, reference) in zip(ours, theirs) {
            // The same decoder and swscale with the same flags: the same pixels.
            let (mean, largest) = difference(frame.image, reference)
            #expect(largest <= 1, "frame \(frame.index): mean \(mean), max \(largest)")
            #expect(abs(frame.time - Double(frame.index) / 25) < 1e-9)
        }
    }

    @Test func videoDetectionsEqualStillDetectionsAndTrackTheKnownBox() async throws {
        let detector = try #require(Self.detector)
        let path = try VideoClips.moving("move.mp4")
        var frames = 0, onTarget = 0
        for try await result in detector.detections(in: try VideoSource(path)) {
            frames += 1
            #expect(result.index == frames - 1 && result.dropped == 0)
            #expect(result.detections == (try detector.detect(result.frame.image, options: DetectionOptions(), timing: nil)))
            let truth = VideoClips.personBox(at: result.time)
            let people = result.detections.filter { $0.label == "person" }
                .map { $0.pixelRect(width: result.frame.image.width, height: result.frame.image.height) }
            if people.contains(where: { $0.iou(truth) >= 0.7 }) { onTarget += 1 }
        }
        #expect(frames == 50)
        #expect(Double(onTarget) >= 0.9 * Double(frames), "person found at IoU ≥ 0.7 in \(onTarget) of \(frames) frames")
    }

    @Test func displayRotationIsApplied() throws {
        let moving = try VideoClips.moving("move.mp4")
        let path = VideoClips.folder + "/rotated.mp4"
        // The rotate tag (FFmpeg 5.1) becomes the stream's display matrix; no pixels change.
        try VideoClips.run(["-i", moving, "-c", "copy", "-metadata:s:v:0", "rotate=90", path])
        let source = try VideoSource(path)
        #expect(source.width == 360 && source.height == 640)
        let ours = try decodeAll(path)
        let theirs = try VideoClips.ffmpegFrames(path, width: 360, height: 640)
        let stored = try VideoClips.ffmpegFrames(path, width: 640, height: 360, autorotate: false)
        #expect(ours.count == theirs.count && ours.count == 50 && stored.count == 50)
        for n in 0..<5 {
            // Turned the way ffmpeg turns it. ffmpeg rotates the YUV planes before converting, so chroma is
            // interpolated along the other axis: up to 35 levels apart at colour edges, 0.3 on average.
            let (mean, _) = difference(ours[n].image, theirs[n])
            #expect(mean < 0.5, "frame \(n): mean \(mean)")
            // And exactly the stored picture turned 90° counter-clockwise (display matrix: +90°).
            #expect(difference(ours[n].image, stored[n].rotated(clockwise: 270)).max <= 1, "frame \(n)")
        }
    }

    @Test func variableFrameRateTimesAreThePresentationTimes() throws {
        let path = try VideoClips.moving("vfr.mkv", seconds: 1, filter: "setpts='if(lt(N,10),N*0.04,0.4+(N-10)*0.1)/TB'",
                                        extra: ["-fps_mode", "vfr"])
        let times = try decodeAll(path).map(\.time)
        // ffprobe's presentation times for the same frames (the 25 fps encoder clock rounds some of the
        // 0.1 s steps to 0.04 s multiples, so the file's times, not the formula, are the reference).
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        probe.arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time",
                           "-of", "csv=p=0", path]
        let pipe = Pipe()
        probe.standardOutput = pipe
        try probe.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        let expected = text.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ", "))) }
        #expect(times.count == 25 && expected.count == 25)
        #expect(Set(zip(times.dropFirst(), times).map { (($0 - $1) * 100).rounded() }).count > 1, "not variable: \(times)")
        for (n, (time, reference)) in zip(times, expected).enumerated() {
            #expect(abs(time - reference) < 1e-6, "frame \(n): \(time) s, ffprobe \(reference) s")
        }
    }

    @Test func truncatedFileYieldsItsFramesThenAnError() throws {
        let path = try VideoClips.moving("gop10.mp4", gop: 10)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = VideoClips.folder + "/truncated.mp4"
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let source = try VideoSource(cut)
        var frames = 0
        #expect {
            while try source.nextFrame() != nil { frames += 1 }
        } throws: { error in
            "\(error)".hasPrefix(cut + ": ") && "\(error)".contains("truncated")
        }
        #expect(frames >= 10 && frames < 50, "\(frames) frames before the damage")
        #expect(try source.nextFrame() == nil, "the end after the error, as the decoder has ended")
    }

    @Test func sourcesThatCannotBeOpenedNameThemselves() throws {
        let folder = VideoClips.folder
        let audio = folder + "/audio-only.mp4"
        try VideoClips.run(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", audio])
        let text = folder + "/not-a-video.mp4"
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: text))
        let cases: [(String, String)] = [
            (folder + "/missing.mp4", "no such file"), (audio, "no video stream"),
            (text, "not a video file"), ("rtsp://127.0.0.1:9/none", "cannot open the stream"),
            ("/dev/video99", "no such camera"),
        ]
        for (location, message) in cases {
            #expect { _ = try VideoSource(location) } throws: { error in
                let line = "\(error)"
                return error is YOLOError && line.hasPrefix(location + ": ") && line.contains(message) && !line.contains("\n")
            }
        }
    }

    @Test func latestPolicyDropsLateFramesAndKeepsTheDelayBounded() async throws {
        let detector = try #require(Self.detector)
        // 100 frames/s played in real time: far faster than detection, so most frames must be dropped.
        let path = try VideoClips.moving("fast.mp4", seconds: 3, rate: 100, size: (320, 180))
        var taken = 0, lastDropped = 0, previousDetection = Duration.zero
        for try await result in detector.detections(in: try VideoSource(path), policy: .latest, realtime: true) {
            taken += 1
            #expect(result.dropped >= lastDropped)
            lastDropped = result.dropped
            // A frame waits in the slot at most while the previous frame is detected, then is detected itself:
            // under two detection times, plus 25 ms for the hand-overs between threads (the whole suite runs
            // beside this test on two cores, and a resumed task may wait that long for one: 5 ms was exceeded
            // by 4.5 ms once under `make test`). A queue that grew would add a whole detection time (≥ 40 ms)
            // per frame. Not a timing of the engine: the bound is built from detection times of the same run.
            if taken > 1 {
                let bound = previousDetection + result.detectionTime + .milliseconds(25)
                #expect(result.latency <= bound, "frame \(result.index): latency \(result.latency), bound \(bound)")
            }
            previousDetection = result.detectionTime
        }
        // Every decoded frame was either detected or counted as dropped.
        #expect(taken + lastDropped == 300, "\(taken) detected + \(lastDropped) dropped")
        #expect(lastDropped > 100)
    }

    @Test func leavingTheLoopStopsTheDecoder() async throws {
        let path = try VideoClips.moving("long.mp4", seconds: 8)
        let source = try VideoSource(path)
        var seen = 0
        for try await _ in source.frames() {
            seen += 1
            if seen == 3 { break }
        }
        try await Task.sleep(for: .milliseconds(300))
        let stopped = source.nextIndex
        try await Task.sleep(for: .milliseconds(300))
        #expect(source.nextIndex == stopped && stopped < 200, "decoder still running: \(stopped) → \(source.nextIndex)")
    }

    /// The helper is found beside the running executable (here the test bundle, beside `yolo-video` in the build
    /// folder); where there is none, the error is one line naming where it looked.
    @Test func theHelperIsFoundBesideTheExecutableOrNamedWhereLookedFor() throws {
        let candidates = VideoTool.candidates
        let beside = try #require(candidates.first)
        let folder = URL(fileURLWithPath: TestPaths.yoloBinary).deletingLastPathComponent().path
        #expect(URL(fileURLWithPath: beside).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: folder + "/yolo-video").resolvingSymlinksInPath().path)
        #expect(try VideoTool.locate() == beside)
        let clips = VideoClips.folder
        #expect { try VideoTool.locate(path: nil, candidates: [clips + "/a/yolo-video", clips + "/b/yolo-video"]) } throws: { error in
            let line = "\(error)"
            return line.contains("not at \(clips)/a/yolo-video (beside this executable) nor in PATH") && line.contains("VideoTool.path")
                && !line.contains("\n")
        }
        #expect { try VideoTool.locate(path: clips + "/none", candidates: candidates) } throws: { error in
            "\(error)".contains("VideoTool.path = \(clips)/none is not an executable file")
        }
    }

    /// A helper that dies in the middle of a stream: the frames before, then one error naming the file.
    @Test func aHelperThatDiesIsAnErrorNamingTheFile() throws {
        let path = try VideoClips.moving("move.mp4")
        let source = try VideoSource(path)
        _ = try #require(try source.nextFrame())
        source.killHelperForTesting()
        #expect { _ = try source.nextFrame() } throws: { error in
            let line = "\(error)"
            return line.hasPrefix(path + ": ") && line.contains("the video helper was killed by signal 9") && !line.contains("\n")
        }
        #expect(try source.nextFrame() == nil)
    }

    @Test func strideTakesEveryNthFrame() async throws {
        let path = try VideoClips.moving("move.mp4")
        var indices: [Int] = []
        for try await frame in try VideoSource(path).frames(policy: .stride(7)) { indices.append(frame.index) }
        #expect(indices == Array(stride(from: 0, to: 50, by: 7)))
    }
}
