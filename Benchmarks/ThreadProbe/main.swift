// What the engine's threads do inside an embedding app, through the public API only (issue: threads an
// embedder can reason about). One JSON line per check, then "probe: ok" or the failed checks; exit 1 on a failure.
//
//   cd Benchmarks && swift run -c release ThreadProbe [--model PATH] [--frames 50] [--callers 100]
//
// 1. default: the default thread count and what it follows (allowed CPUs; under `taskset -c 1` it must be 1).
// 2. affinity: every thread's CPU mask (/proc/self/task/*/status, Cpus_allowed_list) after 20 detects with the
//    default settings equals the process's mask at start: nothing was pinned.
// 3. paced: `--frames` detects at 5 frames per second with the default settings; the process's CPU time over
//    that run against the CPU time of the same detects at the same pace on one thread (the compute they need).
//    Bar: at most 1.15×. Also the calling thread's and the other threads' (the workers') CPU
//    (/proc/self/task/*/schedstat; a thread that exited during the run is missing there) and the 1-minute load average.
// 4. memory: 1, 8 and `--callers` raw threads call one detector at once (two detects each); RSS growth above the
//    RSS after one detect against the cap (`maximumConcurrentPasses` × `scratchBytes`, + 32 MB of thread stacks and
//    images), and the images/s of the calls together.
import BenchSupport
import Foundation
import YOLO

struct Probe {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    var failures: [String] = []

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Each thread's Cpus_allowed_list, by thread ID.
    static func threadMasks() -> [String: String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var masks: [String: String] = [:]
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { continue }
            masks[task] = line.split(separator: "\t").last.map(String.init) ?? ""
        }
        return masks
    }

    /// CPU seconds each live thread has run (/proc/self/task/*/schedstat, nanoseconds), by thread ID, with its name.
    static func threadCPU() -> [String: (name: String, seconds: Double)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var result: [String: (name: String, seconds: Double)] = [:]
        for task in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                  let ns = stat.split(separator: " ").first.flatMap({ Double($0) }) else { continue }
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            result[task] = (name, ns / 1e9)
        }
        return result
    }

    /// The 1-minute load average (/proc/loadavg), to report how busy the machine was.
    static func loadAverage() -> Double {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.flatMap { Double($0) } ?? -1
    }

    /// `frames` detects at 5 per second: the process's CPU time over them (and 0.2 s after), their summed and
    /// median wall time, and the CPU time of the calling thread and of the process's other threads (the
    /// detector's workers).
    func paced(_ detector: Detector, image: Image, frames: Int)
        throws -> (cpu: Double, wall: Double, median: Double, caller: Double, workers: Double) {
        usleep(300_000)
        // "/proc/thread-self" links to "PID/task/TID".
        let callerID = ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "")
            .split(separator: "/").last.map(String.init) ?? ""
        let threadsBefore = Self.threadCPU()
        let cpu = Self.cpuSeconds()
        var times: [Double] = []
        let start = Self.now()
        for frame in 0..<frames {
            let wait = start + Double(frame) * 0.2 - Self.now()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
            let t = Self.now()
            _ = try detector.detect(image)
            times.append(Self.now() - t)
        }
        usleep(200_000)
        let threadsAfter = Self.threadCPU()
        func grown(_ task: String) -> Double { (threadsAfter[task]?.seconds ?? 0) - (threadsBefore[task]?.seconds ?? 0) }
        let caller = grown(callerID)
        let workers = threadsAfter.keys.filter { $0 != callerID }.reduce(0) { $0 + grown($1) }
        return (Self.cpuSeconds() - cpu, times.reduce(0, +), times.sorted()[times.count / 2] * 1000, caller, workers)
    }

    mutating func check(_ name: String, _ passed: Bool, _ fields: [String: Any]) {
        var line = fields
        line["check"] = name
        line["passed"] = passed
        let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        if !passed { failures.append(name) }
    }

    mutating func run() throws {
        let modelPath = value(of: "--model", default: root + "/Weights/yolov4-tiny-lut8.yolo")
        let frames = Int(value(of: "--frames", default: "50")) ?? 50
        let callers = Int(value(of: "--callers", default: "100")) ?? 100
        let model = try Model(contentsOf: modelPath)
        let image = try Image(contentsOf: root + "/Samples/coffee.png")
        let processMask = Self.threadMasks()[String(getpid())] ?? "?"

        check("default", true, ["threads": Threading.defaultThreadCount, "allowed_cpus": Threading.allowedCPUCount,
                                "process_mask": processMask])

        // 2. Affinity.
        let detector = try Detector(model: model)
        for _ in 0..<20 { _ = try detector.detect(image) }
        let masks = Self.threadMasks()
        let changed = masks.filter { $0.value != processMask }
        check("affinity", changed.isEmpty, ["threads_seen": masks.count, "changed": changed.map { "\($0.key): \($0.value)" }])

        // 3. Paced at 5 frames per second: the same detects on one thread (the compute they need at that pace:
        //    caches and clocks are colder between frames than in a back-to-back loop), then with the defaults.
        let single = try Detector(model: model, threading: Threading(threads: 1))
        _ = try single.detect(image)
        let alone = try paced(single, image: image, frames: frames)
        let defaults = try paced(detector, image: image, frames: frames)
        let ratio = defaults.cpu / alone.cpu
        check("paced", ratio <= 1.15, ["frames": frames, "threads": detector.threads, "cpu_s": defaults.cpu,
                                       "cpu_s_one_thread": alone.cpu, "ratio": ratio,
                                       "median_ms": defaults.median, "median_ms_one_thread": alone.median,
                                       "cpu_per_detect_wall": defaults.cpu / defaults.wall,
                                       "cpu_s_caller": defaults.caller, "cpu_s_other_threads": defaults.workers,
                                       "cpu_s_caller_one_thread": alone.caller, "load_1min": Self.loadAverage()])

        // 4. Concurrent callers on one detector (1, 8, then `--callers`): RSS growth over the RSS after one detect,
        //    against the cap, and the images/s of the calls together.
        for count in [1, 8, callers] {
            let shared = try Detector(model: model)
            _ = try shared.detect(image)
            let after = residentMegabytes()
            let scratch = try Double(shared.scratchBytes(width: 416, height: 416)) / 1_048_576
            let cap = Double(shared.threading.resolvedConcurrentPasses) * scratch
            let peak = LockedMax()
            let group = DispatchGroup()
            let start = Self.now()
            for _ in 0..<count {
                group.enter()
                Thread {
                    for _ in 0..<2 { _ = try? shared.detect(image) }
                    peak.note(residentMegabytes())
                    group.leave()
                }.start()
            }
            group.wait()
            let elapsed = Self.now() - start
            let grown = peak.value - after
            check("memory", grown <= cap + 32, ["callers": count, "rss_after_one_mb": after, "rss_peak_mb": peak.value,
                                               "grown_mb": grown, "cap_mb": cap, "scratch_mb": scratch,
                                               "concurrent_passes": shared.threading.resolvedConcurrentPasses,
                                               "images_per_s": Double(2 * count) / elapsed])
            shared.releaseCaches()
        }
    }
}

/// The largest value noted from any thread.
final class LockedMax: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0.0
    func note(_ value: Double) { lock.lock(); current = max(current, value); lock.unlock() }
    var value: Double { lock.lock(); defer { lock.unlock() }; return current }
}

var probe = Probe()
do {
    try probe.run()
    print(probe.failures.isEmpty ? "probe: ok" : "probe: failed \(probe.failures.joined(separator: ", "))")
    exit(probe.failures.isEmpty ? 0 : 1)
} catch {
    print("ThreadProbe: \(error)")
    exit(1)
}
