// Shared helpers for the libFuzzer targets.
//
// YOLO entry points used here (public or @_spi(Engine), hence `@_spi(Engine) import YOLO`):
//   DarknetConfig.init(text:path:), ModelDescription.init(config:), ModelDescription.inputShape / .layers,
//   ModelDescription.geometry(width:height:), LayerSpec (.convolution), ConvolutionSpec.filters / .size,
//   LayerGeometry.inputShapes / .outputShape, Shape, Model.init(description:convolutions:labels:),
//   ConvolutionParameters.init(weights:biases:), FloatBuffer (SharedBuffer<Float>.init(_:)),
//   Network.checkMemory(_:width:height:budget:), Network.init(model:width:height:algorithm:memoryBudget:),
//   Network.forward(_: Tensor, workspace:), Tensor.init(zeros:), Detector.init(model:algorithm:threading:),
//   Detector.detect(_:options:), Image.init(width:height:pixels:), DetectionOptions.
import Foundation
import Synchronization
@_spi(Engine) import YOLO

public enum Fuzz {
    /// The fuzzer's input as `Data` (copied; an empty input gives empty data).
    public static func data(_ pointer: UnsafePointer<UInt8>?, _ size: Int) -> Data {
        guard let pointer, size > 0 else { return Data() }
        return Data(bytes: pointer, count: size)
    }

    /// The input as text, invalid UTF-8 repaired (what `FileIO.readText` callers see for a text file).
    public static func text(_ pointer: UnsafePointer<UInt8>?, _ size: Int) -> String {
        guard let pointer, size > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: size), as: UTF8.self)
    }

    /// A per-process scratch file path (tmpfs when there is one), for loaders that only read paths.
    /// Removed when the process exits normally.
    public static func scratchPath(_ name: String) -> String {
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let path = "\(directory)/swiftyolo-fuzz-\(getpid())-\(name)"
        _ = scratchPaths.withLock { $0.insert(path) }
        return path
    }

    /// Writes `data` to `path`, replacing it (not atomically: the fuzz process is the only reader).
    public static func write(_ data: Data, to path: String) {
        guard FileManager.default.createFile(atPath: path, contents: data) else {
            fatalError("fuzz harness: cannot write scratch file \(path)")
        }
    }

    private static let scratchPaths: Mutex<Set<String>> = {
        atexit { Fuzz.removeScratchFiles() }
        return Mutex([])
    }()

    static func removeScratchFiles() {
        scratchPaths.withLock { paths in for path in paths { unlink(path) } }
    }

    // MARK: Running a small network

    /// Largest working memory (bytes) and multiply-adds for which `runIfSmall` builds and runs a network:
    /// a forward pass costs little at these sizes even in a debug ASan build.
    public static let smallWorkspaceBytes = 8 << 20
    public static let smallMultiplyAdds = 4_000_000

    /// Builds a network for `model` at its own input size and runs one forward pass on zeros (through
    /// `Detector` for 1- and 3-channel models, so the letterboxing and decoding run too), when the
    /// network is small. Thrown errors are normal outcomes and are ignored; a crash is a finding.
    public static func runIfSmall(_ model: Model) {
        let description = model.description
        let width = description.inputShape.width, height = description.inputShape.height
        guard let geometry = try? Network.checkMemory(description, width: width, height: height, budget: smallWorkspaceBytes)
        else { return }
        var multiplyAdds = 0
        for (spec, g) in zip(description.layers, geometry) {
            guard case .convolution(let s) = spec else { continue }
            let (perOutput, o1) = s.filters.multipliedReportingOverflow(by: g.inputShapes[0].channels * s.size * s.size)
            let (total, o2) = perOutput.multipliedReportingOverflow(by: g.outputShape.planeCount)
            guard !o1, !o2 else { return }
            multiplyAdds += total
            guard multiplyAdds <= smallMultiplyAdds else { return }
        }
        let channels = description.inputShape.channels
        if !description.heads.isEmpty, channels == 1 || channels == 3 {
            guard let detector = try? Detector(model: model, threading: Threading(threads: 1)) else { return }
            let image = Image(width: 7, height: 5, pixels: [UInt8](repeating: 128, count: 7 * 5 * 3))
            let detections = try? detector.detect(image)
            trace("detect on \(width)x\(height)x\(channels): \(detections.map { "\($0.count) detections" } ?? "threw")")
        } else {
            guard let network = try? Network(model: model, memoryBudget: smallWorkspaceBytes) else { return }
            let outputs = try? network.forward(Tensor(zeros: network.inputShape))
            trace("forward on \(network.inputShape): \(outputs.map { "\($0.count) outputs" } ?? "threw")")
        }
    }

    /// FUZZ_TRACE=1: say which stages an input reached (to check a target exercises what it should).
    public static let tracing = ProcessInfo.processInfo.environment["FUZZ_TRACE"] != nil

    public static func trace(_ message: @autoclosure () -> String) {
        if tracing { print("[fuzz] \(message())") }
    }

    /// `description` with zero weights for every convolution (the sizes `Network` expects), or nil when
    /// its geometry does not hold or the weights would be large.
    package static func zeroWeightModel(_ description: ModelDescription, maximumFloats: Int = 1 << 20) -> Model? {
        let width = description.inputShape.width, height = description.inputShape.height
        guard let geometry = try? description.geometry(width: width, height: height) else { return nil }
        var convolutions: [Int: ConvolutionParameters] = [:]
        var total = 0
        for (index, spec) in description.layers.enumerated() {
            guard case .convolution(let s) = spec else { continue }
            let (count, overflow) = s.filters.multipliedReportingOverflow(by: geometry[index].inputShapes[0].channels * s.size * s.size)
            guard !overflow, count <= maximumFloats - total else { return nil }
            total += count + s.filters
            convolutions[index] = ConvolutionParameters(weights: FloatBuffer([Float](repeating: 0, count: count)),
                                                        biases: FloatBuffer([Float](repeating: 0, count: s.filters)))
        }
        return Model(description: description, convolutions: convolutions, labels: [])
    }
}
