import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// Paths and helpers shared by the tests.
enum TestPaths {
    /// The package root (three levels above this file).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let fixtures = root + "/Tests/YOLOTests/Fixtures"
    /// The workplace's shared data folder (`../shared` beside the package), when present.
    static let shared = URL(fileURLWithPath: root).deletingLastPathComponent().appendingPathComponent("shared").path
    static var hasShared: Bool { FileManager.default.fileExists(atPath: shared + "/data/reference-outputs/MANIFEST.md") }

    static let cfg = root + "/Weights/yolov3-tiny.cfg"
    static let weights = root + "/Weights/yolov3-tiny.weights"
    static let names = root + "/Weights/coco.names"
    static var hasWeights: Bool { FileManager.default.fileExists(atPath: weights) }
    static let v4Cfg = root + "/Weights/yolov4-tiny.cfg"
    static let v4Weights = root + "/Weights/yolov4-tiny.weights"
    static var hasV4Weights: Bool { FileManager.default.fileExists(atPath: v4Weights) }

    /// The `yolo` executable built next to the test bundle.
    static var yoloBinary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("yolo").path
    }

    /// A fresh temporary folder, removed when the test process exits.
    static func temporaryFolder() -> String { TemporaryFolders.make(prefix: "yolo-tests-") }
}

/// Temporary folders the tests make, removed with everything in them when the test process exits (each
/// run of the suite left about fifty behind in /tmp before).
enum TemporaryFolders {
    private static let made = Locked<[String]>([])
    /// Registers the removal once, with the first folder.
    private static let removalAtExit: Void = { atexit { TemporaryFolders.removeAll() } }()

    /// A new folder `NSTemporaryDirectory()/<prefix><UUID>`.
    static func make(prefix: String) -> String {
        _ = removalAtExit
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        made.withLock { $0.append(path) }
        return path
    }

    static func removeAll() {
        for path in made.withLock({ paths in defer { paths = [] }; return paths }) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// Reasons printed when tests skip.
enum Skip {
    static let noWeights = "Weights/yolov3-tiny.weights is absent: run `make weights` (Weights/fetch.sh)"
    static let noShared = "../shared (the workplace's reference data) is absent"
    static let noV4Weights = "Weights/yolov4-tiny.weights is absent: run `make weights` (Weights/fetch.sh)"
}

/// The yolov3-tiny model, loaded once for all tests that need it.
enum TinyYOLO {
    static let model: Model? = try? Model(cfg: TestPaths.cfg, weights: TestPaths.weights, names: TestPaths.names)
    /// AlexeyAB's yolov4-tiny (float weights from the darknet files).
    static let v4: Model? = try? Model(cfg: TestPaths.v4Cfg, weights: TestPaths.v4Weights, names: TestPaths.names)
}

/// Deterministic pseudo-random floats (xorshift), so tests never depend on the system generator.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E3779B97F4A7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    /// Uniform in [lower, upper).
    mutating func float(_ lower: Float = -1, _ upper: Float = 1) -> Float {
        lower + (upper - lower) * Float(next() >> 40) / Float(1 << 24)
    }
    mutating func floats(_ count: Int, _ lower: Float = -1, _ upper: Float = 1) -> [Float] {
        (0..<count).map { _ in float(lower, upper) }
    }
}

/// Result of running the `yolo` executable.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built `yolo` binary with `arguments` (through `prefix`, e.g. `taskset -c 0`, when given).
func runYOLO(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) throws -> ProcessResult {
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
func runYOLOFloat(_ arguments: [String]) throws -> ProcessResult {
    try runYOLO([arguments[0], "--cfg", TestPaths.cfg, "--weights", TestPaths.weights, "--names", TestPaths.names]
                + arguments.dropFirst())
}

/// Runs one layer on `inputs` with a fresh workspace-like set of buffers and returns its output.
func runLayer(_ layer: any Layer, inputs: [[Float]]) -> [Float] {
    var output = [Float](repeating: .nan, count: layer.outputShape.count)
    var scratch = [Float](repeating: .nan, count: max(layer.scratchCount, 1))
    let buffers = inputs.map { values -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: max(values.count, 1))
        p.initialize(from: values, count: values.count)
        return p
    }
    defer { buffers.forEach { $0.deallocate() } }
    let pointers = buffers.map { UnsafePointer($0) }
    pointers.withUnsafeBufferPointer { inputPointers in
        output.withUnsafeMutableBufferPointer { out in
            scratch.withUnsafeMutableBufferPointer { s in
                layer.forward(LayerIO(inputs: inputPointers, output: out.baseAddress!, scratch: s.baseAddress!))
            }
        }
    }
    return output
}
