// Embedder memory: what one Detector costs an app that embeds SwiftYOLO, through the public API only.
//
//   cd Benchmarks && swift run -c release Embedder [--model PATH] [--cache N]
//
// Prints the resident set size (RSS, /proc/self/status) at each step:
// 1. after loading the model and making a Detector (default residency, lut8 model);
// 2. after the first detect (the network for the model's size is built, one scratch set);
// 3. after 8 concurrent detects from 8 threads (up to 8 scratch sets);
// 4. after detects at `.automatic(pixelBudget: 416·416)` on 19 aspect ratios, 3:1 to 1:3 (each
//    ratio has its own network size; the Detector keeps at most `--cache` networks, default 4);
// 5. after `releaseCaches()`.
import Foundation
import BenchSupport
import YOLO

func measure() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    let modelPath = value(of: "--model", default: root + "/Weights/yolov3-tiny-lut8.yolo")
    let cache = Int(value(of: "--cache", default: "4")) ?? 4
    let clock = ContinuousClock()
    func report(_ step: String, since start: ContinuousClock.Instant? = nil) {
        let time = start.map { start -> String in
            let elapsed = start.duration(to: clock.now).components
            return String(format: ", %.0f ms", Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15)
        } ?? ""
        print(step.padding(toLength: 58, withPad: " ", startingAt: 0) + String(format: " RSS %7.1f MB", residentMegabytes()) + time)
    }
    report("start")
    let detector = try Detector(model: Model(contentsOf: modelPath), maximumCachedNetworks: cache)
    report("model loaded, Detector made (\(URL(fileURLWithPath: modelPath).lastPathComponent))")
    let image = try Image(contentsOf: root + "/Samples/coffee.png")
    var t = clock.now
    _ = try detector.detect(image)
    report("after the first detect", since: t)
    t = clock.now
    DispatchQueue.concurrentPerform(iterations: 8) { _ in _ = try? detector.detect(image) }
    report("after 8 concurrent detects", since: t)
    var options = DetectionOptions()
    options.inputSize = .automatic(pixelBudget: 416 * 416)
    t = clock.now
    for k in 0..<19 {
        // Aspect ratios from 3:1 to 1:3, in steps of a ninth of the logarithm.
        let ratio = pow(3.0, Double(9 - k) / 9)
        let width = Int((640 * ratio.squareRoot()).rounded()), height = Int((640 / ratio.squareRoot()).rounded())
        var random = SystemRandomNumberGenerator()
        let pixels = (0..<width * height * 3).map { _ in UInt8.random(in: 0...255, using: &random) }
        _ = try detector.detect(Image(width: width, height: height, pixels: pixels), options: options)
    }
    report("after 19 aspect ratios, automatic sizes, cache \(cache)", since: t)
    detector.releaseCaches()
    report("after releaseCaches()")
}

do { try measure() } catch { print("Embedder: \(error.localizedDescription)"); exit(1) }
