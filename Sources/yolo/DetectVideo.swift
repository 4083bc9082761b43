import ArgumentParser
import Dispatch
import Foundation
import YOLOReport
@_spi(Engine) import YOLO
import YOLOVideo

/// `yolo detect VIDEO|URL|/dev/videoN`: detection on each frame a policy lets through, one line (text) or one
/// JSON object (jsonl) per frame, optionally an annotated video.
struct VideoDetectionRun {
    let location: String
    let detector: Detector
    let options: DetectionOptions
    let format: Detect.OutputFormat
    let save: String?
    let policy: FramePolicy?
    let realtime: Bool
    /// Set for `yolo track`: ids, trails and counts.
    var tracking: TrackingRun? = nil

    func run() throws {
        let source = try VideoSource(location)
        let policy = self.policy ?? (realtime ? .latest : source.defaultPolicy)
        let savePath = try save.map { try outputPath($0) }
        let writer = try savePath.map { try VideoWriter(path: $0, width: source.width, height: source.height,
                                                        frameRate: source.frameRate ?? 25) }
        let interrupt = InterruptFlag(message: "yolo: stopping after this frame (Ctrl-C again to quit at once)")
        defer { interrupt.stop() }
        let progress = source.kind == .file && isatty(STDOUT_FILENO) == 0
            ? source.declaredFrameCount.map { ProgressReporter(total: $0, label: "frames") } : nil
        let summary = try blockingAwait { [self] in
            var summary = Summary()
            if let tracking {
                // The tracker sees the low-score boxes its second association needs; the lines show its tracks.
                for try await result in detector.tracks(in: source, options: options, tracking: tracking.parameters,
                                                        policy: policy, realtime: realtime) {
                    if interrupt.isRaised { break }
                    summary.add(objects: result.detections.count, dropped: result.dropped)
                    tracking.update(result)
                    print(trackLine(for: result))
                    try writer?.write(tracking.annotate(result.frame.image, result.objects), time: result.time)
                    progress?.update(done: result.index + 1)
                }
                return summary
            }
            for try await result in detector.detections(in: source, options: options, policy: policy, realtime: realtime) {
                if interrupt.isRaised { break }
                summary.add(objects: result.detections.count, dropped: result.dropped)
                print(line(for: result))
                if let writer {
                    try writer.write(result.frame.image.annotated(with: result.detections, classCount: detector.model.description.classCount),
                                     time: result.time)
                }
                progress?.update(done: result.index + 1)
            }
            return summary
        } onError: {
            writer?.discard()
        }
        progress?.finish()
        try writer?.finish()
        printError("yolo: \(location): \(summary.text)" + (savePath.map { ", saved \($0)" } ?? ""))
    }

    /// `--save` names a file; a folder gets `NAME.mp4` inside it.
    private func outputPath(_ save: String) throws -> String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: save, isDirectory: &isFolder), isFolder.boolValue {
            let stem = URL(fileURLWithPath: location).deletingPathExtension().lastPathComponent
            return (save as NSString).appendingPathComponent((stem.isEmpty ? "video" : stem) + ".mp4")
        }
        return save
    }

    /// One line per frame.
    private func line(for result: FrameDetections) -> String {
        let report = DetectionReport(path: location, image: result.frame.image, detections: result.detections,
                                     elapsed: result.latency)
        switch format {
        case .jsonl, .json:
            return "{\"frame\": \(result.index), \"time\": \(JSON.number(result.time)), \"dropped\": \(result.dropped), "
                + "\"latency_ms\": \(JSON.number(result.latency.milliseconds)), \"detections\": [\(report.detectionItems().joined(separator: ", "))]}"
        case .text:
            let objects = report.detectionLines()
            return "frame \(result.index) \(String(format: "%.3f", result.time)) s: \(objects.count) object\(objects.count == 1 ? "" : "s")"
                + (result.dropped > 0 ? ", \(result.dropped) dropped so far" : "")
                + (objects.isEmpty ? "" : "\n  " + objects.joined(separator: "\n  "))
        }
    }

    /// One line per frame for `yolo track`: each tracked object with its id (boxes: the tracker's, clipped).
    private func trackLine(for result: FrameTracks) -> String {
        let (w, h) = (Double(result.frame.image.width), Double(result.frame.image.height))
        let items = result.objects.map { object -> (json: String, text: String) in
            let r = object.box.clippedToUnit.scaled(width: w, height: h)
            let json = "{\"track_id\": \(object.id), \"label\": \(JSON.string(object.label)), \"classIndex\": \(object.classIndex), "
                + "\"confidence\": \(JSON.number(object.score)), \"box\": [\(JSON.number(r.minX)), \(JSON.number(r.minY)), "
                + "\(JSON.number(r.maxX)), \(JSON.number(r.maxY))]}"
            let text = "#\(object.id) \(object.label): \(Int((object.score * 100).rounded()))%  \(Int(r.minX)),\(Int(r.minY)) \(Int(r.maxX)),\(Int(r.maxY))"
            return (json, text)
        }
        switch format {
        case .jsonl, .json:
            return "{\"frame\": \(result.index), \"time\": \(JSON.number(result.time)), \"dropped\": \(result.dropped), "
                + "\"objects\": [\(items.map(\.json).joined(separator: ", "))]}"
        case .text:
            return "frame \(result.index) \(String(format: "%.3f", result.time)) s: \(items.count) tracked"
                + (result.dropped > 0 ? ", \(result.dropped) dropped so far" : "")
                + (items.isEmpty ? "" : "\n  " + items.map(\.text).joined(separator: "\n  "))
        }
    }

    /// Frames, detections, drops and the rate, for the closing line on stderr.
    struct Summary {
        var frames = 0
        var objects = 0
        var dropped = 0
        let start = ContinuousClock.now

        mutating func add(objects count: Int, dropped: Int) {
            frames += 1
            objects += count
            self.dropped = dropped
        }

        var text: String {
            let seconds = (ContinuousClock.now - start).seconds
            return "\(frames) frame\(frames == 1 ? "" : "s") detected, \(objects) objects, \(dropped) dropped, "
                + String(format: "%.1f frames/s", seconds > 0 ? Double(frames) / seconds : 0)
        }
    }
}

/// Runs `body` on Swift's concurrency pool and waits for it on this (non-pool) thread; `onError` runs
/// before the error is rethrown.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T, onError: () -> Void = {}) throws -> T {
    let outcome = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    switch outcome.withLock({ $0 })! {
    case .success(let value): return value
    case .failure(let error):
        onError()
        throw error
    }
}
