import Foundation
import Testing
import YOLO
import YOLOTestSupport

/// Test clips made with the `ffmpeg` command (Debian's ffmpeg, installed by scripts/install-deps.sh): the
/// astronaut sample moving over a flat background, so the person's true box is known in every frame.
enum VideoClips {
    static let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { ffmpeg != nil }
    static let noFFmpeg: Comment = "the ffmpeg command is absent: run `make deps` (scripts/install-deps.sh)"

    static let folder = TestPaths.temporaryFolder()
    static let astronaut = TestPaths.root + "/Samples/astronaut.png"

    /// The moving clip's geometry: a 640×360 frame, the 512² photo scaled to `side`², its top-left at
    /// (`x0 + speed · t`, `y0`), 25 frames/s.
    static let (frameWidth, frameHeight, side, x0, y0, speed, rate) = (640, 360, 256, 16.0, 52.0, 150.0, 25.0)

    /// The person in Samples/astronaut.png (512×512), labelled by eye: hair to the bottom edge, left arm to
    /// right shoulder, helmet excluded.
    static let personInPhoto = Rect(x1: 18, y1: 14, x2: 362, y2: 512)

    /// The person's true box in frame pixels at time `t`.
    static func personBox(at t: Double) -> Rect {
        let s = Double(side) / 512
        return Rect(x: x0 + speed * t + personInPhoto.x * s, y: y0 + personInPhoto.y * s,
                    width: personInPhoto.width * s, height: personInPhoto.height * s)
    }

    /// Runs ffmpeg quietly; true on success.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg!)
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// The moving astronaut, `seconds` long, H.264 with a keyframe every `gop` frames; `extra` options go
    /// before the output name, `filter` is appended to the filter graph. Made once per name. Suites run in
    /// parallel and several ask for the same clip, so ffmpeg writes to a name of its own and the clip appears
    /// under `name` only when complete (a rename): a suite never reads another's half-written file.
    static func moving(_ name: String, seconds: Double = 2, rate: Double = VideoClips.rate, size: (Int, Int)? = nil,
                       gop: Int = 250, filter: String? = nil, extra: [String] = []) throws -> String {
        let path = folder + "/" + name
        if FileManager.default.fileExists(atPath: path) { return path }
        let (w, h) = size ?? (frameWidth, frameHeight)
        // Same extension, so ffmpeg picks the same container.
        let partial = folder + "/partial-" + UUID().uuidString + "-" + name
        let ok = try run(["-f", "lavfi", "-i", "color=c=0x406080:s=\(w)x\(h):r=\(rate):d=\(seconds)", "-i", astronaut,
                          "-filter_complex", "[1]scale=\(side):\(side)[a];[0][a]overlay=x='\(x0)+\(speed)*t':y=\(y0)" + (filter.map { "," + $0 } ?? ""),
                          "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "\(gop)", "-movflags", "+faststart"]
                         + extra + [partial])
        precondition(ok, "ffmpeg could not make \(name)")
        precondition(rename(partial, path) == 0, "could not move the finished \(name) into place")
        return path
    }

    /// Every frame of `path` as ffmpeg decodes it (display rotation applied, as ffmpeg does by default),
    /// packed RGB, converted with the swscale flags `VideoSource` uses (accurate rounding, full chroma
    /// interpolation; ffmpeg's default fast path is up to 58 levels off at colour edges).
    static func ffmpegFrames(_ path: String, width: Int, height: Int, autorotate: Bool = true) throws -> [Image] {
        let raw = folder + "/" + UUID().uuidString + ".rgb"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let ok = try run((autorotate ? [] : ["-noautorotate"]) + ["-i", path, "-sws_flags", "bilinear+accurate_rnd+full_chroma_int", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        precondition(ok, "ffmpeg could not decode \(path)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = width * height * 3
        return stride(from: 0, to: bytes.count - size + 1, by: size).map {
            Image(width: width, height: height, pixels: Array(bytes[$0..<$0 + size]))
        }
    }
}
