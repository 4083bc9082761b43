import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOReport
import YOLOServe
import YOLOTestSupport

/// The same image bytes give bit-identical detections from the Swift API, the server's detection path and
/// `yolo detect`, at 1, 2 and 3 threads, in the active kernel family (`make test` runs the suite once per
/// family): on the 34 sample and dev images (Samples/*.png, coco-val2017-dev) with the default model.
/// The default model, loaded once.
private enum DefaultModel {
    static let model: Model? = try? Model.loadDefault(searching: [TestPaths.root])
}

@Suite(.serialized, .enabled(if: DefaultModel.model != nil, "the default model (Weights/yolov4-tiny-lut8.yolo, `make model`) is absent"))
struct DeterminismTests {
    static var model: Model? { DefaultModel.model }
    static let threadCounts = [1, 2, 3]

    /// Samples/*.png, then the dev images when ../shared is here.
    static let images: [String] = {
        func files(_ folder: String, _ suffix: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
                .map { folder + "/" + $0 }
        }
        return files(TestPaths.root + "/Samples", ".png") + files(TestPaths.shared + "/data/coco-val2017-dev/images", ".jpg")
    }()

    /// Every number of every detection, as bits: equal fingerprints are bit-identical detections.
    static func fingerprint(_ detections: [Detection]) -> [String] {
        detections.map { d in
            let box = [d.box.x, d.box.y, d.box.width, d.box.height].map { String($0.bitPattern, radix: 16) }.joined(separator: ",")
            let labels = d.labels.map { "\($0.classIndex):\(String($0.confidence.bitPattern, radix: 16))" }.joined(separator: " ")
            return "\(d.classIndex) \(box) \(String(d.objectness.bitPattern, radix: 16)) [\(labels)]"
        }
    }

    /// What the Swift API finds, `Detector(model:)` with every default but the thread count.
    static func apiDetections(threads: Int) throws -> [[String]] {
        let detector = try Detector(model: #require(model), threading: Threading(threads: threads))
        return try images.map { try fingerprint(detector.detect(contentsOf: $0).detections) }
    }

    /// With ../shared, the suite compares the 34 images (4 samples, 30 dev images); without it, the samples alone.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: TestPaths.shared + "/data/coco-val2017-dev/images"),
                   "\(Skip.noShared): the suite compares the 4 samples only"))
    func comparesTheThirtyFourSampleAndDevImages() {
        #expect(Self.images.count == 34)
    }

    @Test func theAPIGivesTheSameBitsAtOneTwoAndThreeThreads() throws {
        #expect(Self.images.count >= 4)
        let reference = try Self.apiDetections(threads: 1)
        #expect(reference.contains { !$0.isEmpty })
        for threads in Self.threadCounts.dropFirst() {
            let found = try Self.apiDetections(threads: threads)
            for (index, path) in Self.images.enumerated() {
                #expect(found[index] == reference[index], "\(threads) threads, \((path as NSString).lastPathComponent)")
            }
        }
    }

    /// A layer planned for three threads gives the same bits run on one or two: what a pass does during a
    /// solo spell (docs/THREADS.md), when every layer runs on the caller alone.
    @Test func headsDoNotDependOnHowAPassIsSplit() throws {
        let model = try #require(Self.model)
        let network = try Network(model: model, width: 416, height: 416, threads: 3)
        var generator = SeededRandom(seed: 37)
        var input = generator.floats(network.inputShape.count, 0, 1)
        func heads(threads: Int) -> [[UInt32]] {
            let workspace = Workspace(for: network, pool: WorkerPool(Threading(threads: threads)))
            input.withUnsafeMutableBufferPointer { network.forward($0.baseAddress!, workspace: workspace) }
            return network.headIndices.map { workspace.tensor(of: $0).values.map(\.bitPattern) }
        }
        let three = heads(threads: 3)
        for threads in [1, 2] { #expect(heads(threads: threads) == three, "a pass on \(threads) thread(s) of a 3-thread plan") }
    }

    /// The server's detection path (`DetectionService.detection`, in process: bytes in, report out) finds the
    /// API's detections, bit for bit, however many threads a slot has.
    @Test func theServerFindsWhatTheAPIFinds() async throws {
        let reference = try Self.apiDetections(threads: 1)
        for threads in Self.threadCounts {
            let detector = try Detector(model: #require(Self.model), threading: Threading(threads: threads))
            let server = DetectionServer(detector: detector, configuration: ServeConfiguration())
            for (index, path) in Self.images.enumerated() {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                let report = try await server.service.detection(bytes, name: path, options: DetectionOptions())
                #expect(Self.fingerprint(report.detections) == reference[index], "\(threads) threads, \((path as NSString).lastPathComponent)")
            }
        }
    }

    /// `yolo detect --format jsonl` prints, for one image as for many, at 1, 2 and 3 threads, what the API's
    /// detections print as (`DetectionReport`, the one renderer of the CLI and the server).
    @Test func yoloDetectPrintsWhatTheAPIFinds() throws {
        let detector = try Detector(model: #require(Self.model), threading: Threading(threads: 1))
        var expected: [String] = []
        for path in Self.images {
            let (image, detections) = try detector.detect(contentsOf: path)
            expected.append(Self.withoutTime(DetectionReport(path: path, image: image, detections: detections, elapsed: .zero).json(pretty: false)))
        }
        for threads in Self.threadCounts {
            let all = try runYOLO(["detect", "--format", "jsonl", "--threads", "\(threads)"] + Self.images)
            #expect(all.status == 0, "\(all.stderr)")
            #expect(all.stdout.split(separator: "\n").map { Self.withoutTime(String($0)) } == expected, "\(threads) threads, all images")
        }
        // One image at a time: the run a shell user starts most.
        for (index, path) in Self.images.prefix(6).enumerated() {
            let one = try runYOLO(["detect", "--format", "jsonl", path])
            #expect(one.status == 0, "\(one.stderr)")
            #expect(Self.withoutTime(one.stdout.trimmingCharacters(in: .newlines)) == expected[index], "\((path as NSString).lastPathComponent) alone")
        }
    }

    /// A report line without its `time_ms` field.
    static func withoutTime(_ line: String) -> String {
        line.replacingOccurrences(of: #""time_ms": [0-9.]+, "#, with: "", options: .regularExpression)
    }
}
