// CameraFrames: a 1920×1080 NV12 camera frame into a 416×416 network input, our way against swscale's.
//
//   cd Benchmarks && swift run -c release CameraFrames [--runs 200] [--network 416]
//
// The frame is Samples/astronaut.png scaled by swscale to 1920×1080 NV12 (BT.709, video range). Each run
// times, interleaved so that the shared machine's load falls on all alike:
//   ours      Image(pixelBuffer:) + Geometry.makeInput (letterbox, as Detector runs it): the planes read
//             and converted inside the resampling, straight into the float input;
//   sws       swscale NV12 → RGB24 of the whole frame alone, with YOLOVideo's flags (bilinear chroma,
//             accurate rounding, full horizontal chroma interpolation);
//   sws-fast  the same with swscale's fastest flags (SWS_FAST_BILINEAR: its SIMD path, chroma not interpolated);
//   sws+prep  sws followed by makeInput on the RGB image: what an app converting frames itself pays.
// One thread throughout. Prints median and min–max in milliseconds per step.
import BenchSupport
import CSwScaleBench
import Foundation
@_spi(Engine) import YOLO

/// Runs the measurement (a function, so that its values are locals rather than main-actor globals).
func cameraFrames() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    let runs = max(1, Int(value(of: "--runs", default: "200")) ?? 200)
    let side = max(32, Int(value(of: "--network", default: "416")) ?? 416)
    let (width, height) = (1920, 1080)

    /// Planes of a 1920×1080 NV12 frame, 64-byte aligned rows.
    let stride = width
    let luma = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * height)
    let chroma = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * height / 2)
    let rgbOut = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height * 3)

    func context(_ source: AVPixelFormat, _ sw: Int, _ sh: Int, _ target: AVPixelFormat, flags: Int32, toRGB: Bool) -> OpaquePointer {
        let context = sws_getContext(Int32(sw), Int32(sh), source, Int32(width), Int32(height), target, flags, nil, nil, nil)!
        let coefficients = sws_getCoefficients(SWS_CS_ITU709)
        _ = sws_setColorspaceDetails(context, coefficients, toRGB ? 0 : 1, coefficients, toRGB ? 1 : 0, 0, 1 << 16, 1 << 16)
        return context
    }

    // The test frame.
    let photo = try Image(contentsOf: root + "/Samples/astronaut.png")
    do {
        let make = context(AV_PIX_FMT_RGB24, photo.width, photo.height, AV_PIX_FMT_NV12, flags: SWS_BICUBIC, toRGB: false)
        photo.pixels.withUnsafeBufferPointer { p in
            var source: [UnsafePointer<UInt8>?] = [p.baseAddress, nil, nil, nil]
            var sourceStride: [Int32] = [Int32(photo.width * 3), 0, 0, 0]
            var target: [UnsafeMutablePointer<UInt8>?] = [luma, chroma, nil, nil]
            var targetStride: [Int32] = [Int32(stride), Int32(stride), 0, 0]
            _ = sws_scale(make, &source, &sourceStride, 0, Int32(photo.height), &target, &targetStride)
        }
        sws_freeContext(make)
    }
    let planes = [PixelBuffer.Plane(UnsafeRawBufferPointer(start: luma, count: stride * height), bytesPerRow: stride),
                  PixelBuffer.Plane(UnsafeRawBufferPointer(start: chroma, count: stride * height / 2), bytesPerRow: stride)]
    let buffer = try PixelBuffer(unsafeNoCopy: planes, width: width, height: height, format: .nv12, matrix: .bt709, range: .video)

    let crop = PixelRegion(x: 0, y: 0, width: width, height: height)
    let plan = Geometry.plan(imageWidth: width, imageHeight: height, crop: crop, scaling: .scaleFit, networkWidth: side, networkHeight: side)
    let input = UnsafeMutablePointer<Float>.allocate(capacity: 3 * side * side)

    let accurate = context(AV_PIX_FMT_NV12, width, height, AV_PIX_FMT_RGB24,
                           flags: SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, toRGB: true)
    let fast = context(AV_PIX_FMT_NV12, width, height, AV_PIX_FMT_RGB24, flags: SWS_FAST_BILINEAR, toRGB: true)

    func swscaleToRGB(_ context: OpaquePointer) {
        var source: [UnsafePointer<UInt8>?] = [UnsafePointer(luma), UnsafePointer(chroma), nil, nil]
        var sourceStride: [Int32] = [Int32(stride), Int32(stride), 0, 0]
        var target: [UnsafeMutablePointer<UInt8>?] = [rgbOut, nil, nil, nil]
        var targetStride: [Int32] = [Int32(width * 3), 0, 0, 0]
        precondition(sws_scale(context, &source, &sourceStride, 0, Int32(height), &target, &targetStride) == Int32(height))
    }

    let steps: [(String, () -> Void)] = [
        ("ours", { Geometry.makeInput(Image(pixelBuffer: buffer), plan: plan, into: input) }),
        ("sws", { swscaleToRGB(accurate) }),
        ("sws-fast", { swscaleToRGB(fast) }),
        ("sws+prep", {
            swscaleToRGB(accurate)
            let rgb = Image(width: width, height: height, pixels: [UInt8](UnsafeBufferPointer(start: rgbOut, count: width * height * 3)))
            Geometry.makeInput(rgb, plan: plan, into: input)
        }),
    ]

    let clock = ContinuousClock()
    for (_, step) in steps { step() }  // warm-up: code paths, caches
    var times = [[Double]](repeating: [], count: steps.count)
    for run in 0..<runs {
        // Interleaved, and the order rotated each run, so neither side always follows the other.
        for k in 0..<steps.count {
            let index = (k + run) % steps.count
            let start = clock.now
            steps[index].1()
            let elapsed = clock.now - start
            times[index].append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
    }

    func cpuName() -> String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    }

    print("1920x1080 NV12 (BT.709 video range) → \(side)x\(side) letterbox input, \(runs) interleaved runs, 1 thread, \(cpuName()), "
          + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs visible, load average \(((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " "))")
    var medians: [String: Double] = [:]
    for (index, (name, _)) in steps.enumerated() {
        let sorted = times[index].sorted()
        let median = sorted[sorted.count / 2]
        medians[name] = median
        print(String(format: "%-9@ median %7.3f ms  (min %7.3f, max %7.3f)", name, median, sorted.first!, sorted.last!))
    }
    print(String(format: "ours / sws %.2f, ours / sws-fast %.2f, ours / sws+prep %.2f", medians["ours"]! / medians["sws"]!,
                 medians["ours"]! / medians["sws-fast"]!, medians["ours"]! / medians["sws+prep"]!))
}

try cameraFrames()
