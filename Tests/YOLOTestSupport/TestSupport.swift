import Foundation
@_spi(Engine) import YOLO

// Helpers both test targets use (YOLOTests, YOLOIntegrationTests): paths, fixtures, skip reasons, the real
// models, seeded data, running the `yolo` binary. A plain target, so only public and SPI API here (no
// @testable import: a release build without -enable-testing compiles it too); `package` access.

/// Paths and helpers shared by the tests.
package enum TestPaths {
    /// The package root (three levels above this file).
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The committed fixtures, which both test targets read by path.
    package static let fixtures = root + "/Tests/YOLOTests/Fixtures"
    /// The workplace's shared data folder: `$SWIFTYOLO_SHARED` when set, else `../shared` beside the package.
    package static let shared = ProcessInfo.processInfo.environment["SWIFTYOLO_SHARED"]
        ?? URL(fileURLWithPath: root).deletingLastPathComponent().appendingPathComponent("shared").path
    package static var hasShared: Bool { FileManager.default.fileExists(atPath: shared + "/data/reference-outputs/MANIFEST.md") }
    /// The single-object tracking sequences (Crossing, bag, car1), each `NAME/img/*.jpg` and `NAME/groundtruth.txt`.
    package static let trackingData = shared + "/data/tracking"
    package static var hasTrackingData: Bool { FileManager.default.fileExists(atPath: trackingData + "/car1/groundtruth.txt") }

    package static let cfg = root + "/Weights/yolov3-tiny.cfg"
    package static let weights = root + "/Weights/yolov3-tiny.weights"
    package static let names = root + "/Weights/coco.names"
    package static var hasWeights: Bool { FileManager.default.fileExists(atPath: weights) }
    package static let v4Cfg = root + "/Weights/yolov4-tiny.cfg"
    package static let v4Weights = root + "/Weights/yolov4-tiny.weights"
    package static var hasV4Weights: Bool { FileManager.default.fileExists(atPath: v4Weights) }

    /// The `yolo` executable built next to the test bundle.
    package static var yoloBinary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("yolo").path
    }

    /// A fresh temporary folder, removed when the test process exits.
    package static func temporaryFolder() -> String { TemporaryFolders.make(prefix: "yolo-tests-") }
}

/// Temporary folders the tests make, removed with everything in them when the test process exits (each
/// run of the suite left about fifty behind in /tmp before).
package enum TemporaryFolders {
    private static let made = Locked<[String]>([])
    /// Registers the removal once, with the first folder.
    private static let removalAtExit: Void = { atexit { TemporaryFolders.removeAll() } }()

    /// A new folder `NSTemporaryDirectory()/<prefix><UUID>`.
    package static func make(prefix: String) -> String {
        _ = removalAtExit
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        made.withLock { $0.append(path) }
        return path
    }

    package static func removeAll() {
        for path in made.withLock({ paths in defer { paths = [] }; return paths }) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// Reasons printed when tests skip.
package enum Skip {
    package static let noWeights = "Weights/yolov3-tiny.weights is absent: run `make weights` (Weights/fetch.sh)"
    package static let noShared = "../shared (the workplace's reference data) is absent (or set SWIFTYOLO_SHARED)"
    package static let noTrackingData = "../shared/data/tracking (the single-object sequences) is absent (or set SWIFTYOLO_SHARED)"
    package static let noV4Weights = "Weights/yolov4-tiny.weights is absent: run `make weights` (Weights/fetch.sh)"
}

/// The yolov3-tiny model, loaded once for all tests that need it.
package enum TinyYOLO {
    package static let model: Model? = try? Model(cfg: TestPaths.cfg, weights: TestPaths.weights, names: TestPaths.names)
    /// AlexeyAB's yolov4-tiny (float weights from the darknet files).
    package static let v4: Model? = try? Model(cfg: TestPaths.v4Cfg, weights: TestPaths.v4Weights, names: TestPaths.names)
}

/// Deterministic pseudo-random floats (xorshift), so tests never depend on the system generator.
package struct SeededRandom {
    private var state: UInt64
    package init(seed: UInt64) { state = seed == 0 ? 0x9E3779B97F4A7C15 : seed }
    package mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    /// Uniform in [lower, upper).
    package mutating func float(_ lower: Float = -1, _ upper: Float = 1) -> Float {
        lower + (upper - lower) * Float(next() >> 40) / Float(1 << 24)
    }
    package mutating func floats(_ count: Int, _ lower: Float = -1, _ upper: Float = 1) -> [Float] {
        (0..<count).map { _ in float(lower, upper) }
    }
}

/// Result of running the `yolo` executable.
package struct ProcessResult {
    package var status: Int32
    package var stdout: String
    package var stderr: String
}

/// Runs the built `yolo` binary with `arguments` (through `prefix`, e.g. `taskset -c 0`, when given).
package func runYOLO(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: prefix.first ?? TestPaths.yoloBinary)
    process.arguments = prefix.isEmpty ? arguments : Array(prefix.dropFirst()) + [TestPaths.yoloBinary] + arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: stderr, as: UTF8.self))
}

/// Runs `yolo SUBCOMMAND` with darknet's float yolov3-tiny named explicitly (`--cfg/--weights/--names`), so
/// results do not depend on whether the converted default model has been made.
package func runYOLOFloat(_ arguments: [String]) throws -> ProcessResult {
    try runYOLO([arguments[0], "--cfg", TestPaths.cfg, "--weights", TestPaths.weights, "--names", TestPaths.names]
                + arguments.dropFirst())
}
