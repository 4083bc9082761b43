import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO
import YOLOVideo

/// `yolo bench-video CLIP`: decoding alone, detection alone, and both overlapped, per frame.
struct BenchVideo: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        commandName: "bench-video",
        abstract: "Time video decoding, detection, and the two overlapped (what `yolo detect VIDEO` does).",
        discussion: """
            Three passes over the clip: (1) decode every frame to RGB, nothing else; (2) detect on the first \
            --detect-frames decoded frames held in memory (after --warmup passes); (3) the pipeline: decoding on \
            its own thread, detection on every frame. Prints ms per frame and frames per second for each, and \
            the pipeline's rate against the ideal 1 / max(decode, detect).
            """)

    @Argument(help: "A video file.")
    var clip: String

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Threads per forward pass, this one included (default 0: one per physical core this process may use).")
    var threads: Int?

    @OptionGroup var threading: ThreadingOptions

    @Option(name: .customLong("detect-frames"), help: "Frames timed in the detection-only pass.")
    var detectFrames = 30

    @Option(help: "Untimed detections before the detection-only pass.")
    var warmup = 3

    func validate() throws {
        if let threads, threads < 0 { throw ValidationError("--threads must be 0 (the default) or more, got \(threads)") }
        guard detectFrames >= 1, warmup >= 0 else { throw ValidationError("--detect-frames must be at least 1, --warmup 0 or more") }
    }

    func run() throws {
        let detector = try Detector(model: model.load(residency: .expanded), algorithm: .auto,
                                    threading: threading.threading(threads: threads))
        let machine = BenchReport.Machine.current
        print("yolo bench-video: \(clip), \(detector.threads) thread(s), kernels \(machine.kernel), \(machine.cpu)")

        // (1) Decoding alone.
        var start = ContinuousClock.now
        let source = try VideoSource(clip)
        var frames = 0
        var kept: [Image] = []
        while let frame = try source.nextFrame() {
            frames += 1
            if kept.count < detectFrames { kept.append(frame.image) }
        }
        let decode = (ContinuousClock.now - start).seconds / Double(max(frames, 1))
        guard frames > 0 else { throw YOLOError.invalidFile(path: clip, message: "no frames") }

        // (2) Detection alone, on decoded frames.
        for image in kept.prefix(warmup) { _ = try detector.detect(image) }
        var times: [Double] = []
        for image in kept {
            start = .now
            _ = try detector.detect(image)
            times.append((ContinuousClock.now - start).seconds)
        }
        times.sort()
        let detect = times[times.count / 2]

        // (3) Both, overlapped.
        start = .now
        let pipelined = try blockingAwait { [detector, clip] in
            var count = 0
            for try await _ in detector.detections(in: try VideoSource(clip), policy: .everyFrame) { count += 1 }
            return count
        }
        let total = (ContinuousClock.now - start).seconds
        let ideal = 1 / max(decode, detect)
        let rate = Double(pipelined) / total
        print(String(format: "frames %d (%dx%d, %@)", frames, source.width, source.height, source.codecName))
        print(String(format: "decode only       %7.2f ms/frame  %7.1f frames/s", decode * 1000, 1 / decode))
        print(String(format: "detect only       %7.2f ms/frame  %7.1f frames/s  (median of %d, %.2f–%.2f ms)",
                     detect * 1000, 1 / detect, times.count, times.first! * 1000, times.last! * 1000))
        print(String(format: "decode + detect   %7.2f ms/frame  %7.1f frames/s  = %.1f %% of 1/max(decode, detect) = %.1f frames/s",
                     total / Double(pipelined) * 1000, rate, rate / ideal * 100, ideal))
    }
}
