// Soak: many detections in one process, through the public API only.
//
//   cd Benchmarks && swift run -c release Soak [--images N] [--calls N] [--model PATH]
//
// 1. Detects N images (default 10,000) one after another, cycling the shipped samples (decoded from
//    their files each time, like `yolo detect` on a folder), and prints the resident set size (RSS,
//    /proc/self/status) after loading, after the first image, at 1,000 and at N images. The verdict
//    compares RSS at N with RSS at 1,000 (bar: within 10 %).
// 2. Runs N calls (default 10,000) from 8 threads at once on one Detector and checks every result is
//    identical to the serial result for the same image.
// Exit status 1 when either check fails.
import Foundation
import BenchSupport
import YOLO

/// Runs both checks; returns the exit status. A function, not top-level code, so that the values the
/// worker threads share are locals rather than main-actor globals.
func soak() -> Int32 {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    let imageCount = Int(value(of: "--images", default: "10000")) ?? 10_000
    let callCount = Int(value(of: "--calls", default: "10000")) ?? 10_000
    let modelPath = value(of: "--model", default: root + "/Weights/yolov4-tiny-lut8.yolo")  // the default model
    let samples = ["astronaut", "camera", "chelsea", "coffee"].map { root + "/Samples/\($0).png" }

    do {
        let start = residentMegabytes()
        let detector = try Detector(model: Model(contentsOf: modelPath), threading: Threading(threads: 1))
        let loaded = residentMegabytes()
        print(String(format: "model %@, 1 thread per call; RSS at start %.1f MB, after load %.1f MB", modelPath, start, loaded))

        // 1. Serial soak.
        var rss: [Int: Double] = [:]
        let clock = ContinuousClock()
        let began = clock.now
        for i in 1...imageCount {
            let image = try Image(contentsOf: samples[(i - 1) % samples.count])
            _ = try detector.detect(image)
            if i == 1 || i == 1_000 || i == imageCount || i % 1_000 == 0 {
                rss[i] = residentMegabytes()
                let seconds = Double((clock.now - began).components.seconds)
                FileHandle.standardError.write(Data(String(format: "  %6d images, RSS %.1f MB, %.0f s\n", i, rss[i]!, seconds).utf8))
            }
        }
        let atThousand = rss[min(1_000, imageCount)]!, atEnd = rss[imageCount]!
        let growth = (atEnd - atThousand) / atThousand * 100
        print(String(format: "serial: %d images; RSS after the first %.1f MB, at %d %.1f MB, at %d %.1f MB (%+.1f %% from %d)",
                     imageCount, rss[1]!, min(1_000, imageCount), atThousand, imageCount, atEnd, growth, min(1_000, imageCount)))

        // 2. Concurrent calls against serial results.
        let images = try samples.map { try Image(contentsOf: $0) }
        let expected = try images.map { try detector.detect($0) }
        let mismatches = Atomic(0), done = Atomic(0), failures = Atomic(0)
        let threads = 8
        let concurrentStart = clock.now
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            var call = worker
            while call < callCount {
                let k = call % images.count
                do {
                    if try detector.detect(images[k]) != expected[k] { mismatches.add(1) }
                } catch {
                    failures.add(1)
                }
                done.add(1)
                call += threads
            }
        }
        let concurrentSeconds = Double((clock.now - concurrentStart).components.seconds)
        print(String(format: "concurrent: %d calls from %d threads in %.0f s: %d differ from the serial results, %d failed; RSS %.1f MB",
                     done.load(), threads, concurrentSeconds, mismatches.load(), failures.load(), residentMegabytes()))
        let ok = abs(growth) <= 10 && mismatches.load() == 0 && failures.load() == 0 && done.load() == callCount
        print(ok ? "soak: passed" : "soak: FAILED")
        return ok ? 0 : 1
    } catch {
        FileHandle.standardError.write(Data("soak: error: \(error)\n".utf8))
        return 1
    }
}

exit(soak())

/// A counter shared by the worker threads.
final class Atomic: @unchecked Sendable {
    private var value: Int
    private let lock = NSLock()
    init(_ value: Int) { self.value = value }
    func add(_ amount: Int) { lock.lock(); value += amount; lock.unlock() }
    func load() -> Int { lock.lock(); defer { lock.unlock() }; return value }
}
