import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO

struct Info: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Show a model's layers: type, filters, size/stride, shapes, BFLOPs and parameters.")

    @Argument(help: "A darknet .cfg file, a SwiftYOLO model file (.yolo) or a model name (yolov4-tiny, yolov3-tiny: the converted file) (default: the fetched yolov4-tiny.cfg).")
    var model: String?

    @Option(help: "Darknet .weights file; when given, the weights are loaded and checked against the cfg.")
    var weights: String?

    @Option(help: "Network input size WxH (default: the cfg's).")
    var size: String?

    @Flag(help: "Only list the kernel families this CPU runs, best first, one per line (make test runs the suite once for each).")
    var kernels = false

    @Flag(help: "Show how each layer runs (the planner's choice: algorithm, blocking, weights, fusion, threads) instead of the layer table.")
    var plan = false

    @Option(help: "With --plan: threads per pass to plan for (default: the default count).")
    var threads: Int?

    @Option(help: "With --plan: the convolution algorithm asked for: \(ConvolutionAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")).")
    var algorithm: String = ConvolutionAlgorithm.auto.rawValue

    @Option(help: "With --plan and a .yolo model: codes (LUT weights stay as codes, as yolo detect runs a few images) or expanded (float, as for many images; the default).")
    var residency: String = "expanded"

    @OptionGroup var kernelOptions: KernelOptions

    func validate() throws {
        if let threads, threads < 0 { throw ValidationError("--threads must be 0 (the default) or more, got \(threads)") }
        guard ConvolutionAlgorithm(rawValue: algorithm) != nil else {
            throw ValidationError("--algorithm must be one of \(ConvolutionAlgorithm.allCases.map(\.rawValue)), got '\(algorithm)'")
        }
        guard ["codes", "expanded"].contains(residency) else { throw ValidationError("--residency must be codes or expanded, got '\(residency)'") }
    }

    func run() throws {
        if kernels {
            return KernelFamily.runnable.forEach { print($0.name.rawValue) }
        }
        if let model = try model.map(Defaults.resolve), model.hasSuffix(".\(ModelFile.fileExtension)") {
            guard plan else { return try showModelFile(model) }
            let loaded = try Model(contentsOf: model, residency: residency == "codes" ? .codes : .expanded)
            return try showPlan(loaded.description, lutCodes: Set(loaded.quantizedConvolutions.keys), int8: loaded.int8Quantization)
        }
        let cfg = model ?? Defaults.cfg
        let description = try ModelDescription(cfgPath: cfg)
        let (width, height) = try parseSize(size) ?? (description.inputShape.width, description.inputShape.height)
        let geometry = try description.geometry(width: width, height: height)
        if let weights {
            _ = try DarknetWeights.load(weights, for: description)
        }
        if plan { return try showPlan(description, lutCodes: []) }
        print(LayerTable(description: description, geometry: geometry).render())
        printScaling(description.preferredScaling, description.preferredResampling)
        printKernel()
    }

    /// Every layer's plan (`NetworkPlan`) at `--size`, for `--threads` and `--algorithm`, on the active family.
    func showPlan(_ description: ModelDescription, lutCodes: Set<Int>, int8: [Int: Int8Quantization] = [:]) throws {
        let (width, height) = try parseSize(size) ?? (description.inputShape.width, description.inputShape.height)
        let geometry = try description.geometry(width: width, height: height)
        let count = threads.flatMap { $0 == 0 ? nil : $0 } ?? Threading.defaultThreadCount
        let networkPlan = NetworkPlan(description: description, geometry: geometry, lutCodes: lutCodes, int8: int8,
                                      int8Kernel: KernelFamily.active.int8Kernel,
                                      algorithm: ConvolutionAlgorithm(rawValue: algorithm)!, threads: count)
        print(networkPlan.render(description: description, geometry: geometry))
        print("planned for \(count) thread\(count == 1 ? "" : "s"), \(width)x\(height), algorithm \(algorithm)")
        printGridBalance(networkPlan, description: description, geometry: geometry)
        printKernel()
    }

    /// How evenly the whole-map products (`gemm in F × C parts`) share their work: the multiply-adds of an even share
    /// (a layer's over its threads) summed over those layers, and of the largest parts (`Split.largestShare` times
    /// that) against it.
    func printGridBalance(_ plan: NetworkPlan, description: ModelDescription, geometry: [LayerGeometry]) {
        var (layers, largest, even) = (0, 0.0, 0.0)
        for (index, spec) in description.layers.enumerated() {
            guard case .convolution(let s) = spec, let convolution = plan.convolutions[index],
                  case .gemm(let split) = convolution.algorithm else { continue }
            let g = geometry[index]
            let macs = Double(s.filters) * Double(g.outputShape.planeCount) * Double(g.inputShapes[0].channels * s.size * s.size)
            let share = macs / Double(plan.threadCaps[index])
            (layers, largest, even) = (layers + 1, largest + share * split.largestShare, even + share)
        }
        guard layers > 0 else { return }
        print(String(format: "whole-map products (%d layers): an even share %.1f M multiply-adds a thread; the largest parts %.2fx that (tiles counted whole)",
                     layers, even / 1e6, largest / even))
    }

    /// How images are fitted into this model's input by default.
    func printScaling(_ scaling: DetectionOptions.Scaling, _ resampling: DetectionOptions.Resampling) {
        let meanings = ["fit": "letterbox, pjreddie's darknet detect", "stretch": "darknet's resize, AlexeyAB's detector test",
                        "fill": "OpenCV's stretch", "crop": "centre crop"]
        let name = OptionText.name(scaling, resampling)
        print("default scaling: \(name)\(meanings[name].map { " (\($0))" } ?? "") (--scale overrides)")
    }

    /// Which kernel family would run this model here, and why.
    func printKernel() {
        print("kernel family: \(KernelFamily.active) (\(KernelFamily.reason))")
        print("int8 kernel: " + (KernelFamily.active.int8Kernel.map(\.description) ?? "none (int8 layers run in float)"))
    }

    /// The layer table of a .yolo file, then how each convolution's weights are stored.
    func showModelFile(_ path: String) throws {
        let start = ContinuousClock.now
        let loaded = try Model(contentsOf: path, residency: .codes)
        let elapsed = ContinuousClock.now - start
        let description = loaded.description
        let (width, height) = try parseSize(size) ?? (description.inputShape.width, description.inputShape.height)
        let geometry = try description.geometry(width: width, height: height)
        print(LayerTable(description: description, geometry: geometry).render())
        print("layer  storage                 parameter bytes")
        var total = 0
        for index in description.layers.indices {
            guard case .convolution = description.layers[index] else { continue }
            let storage = loaded.storage(ofLayer: index)
            total += storage.bytes
            print("\(String(repeating: " ", count: max(0, 5 - String(index).count)))\(index)  \(storage.name.padding(toLength: 22, withPad: " ", startingAt: 0))  \(storage.bytes)")
        }
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        printScaling(description.preferredScaling, description.preferredResampling)
        print("\(path): \(fileBytes) bytes, parameters \(total) bytes, \(loaded.labels.count) labels, loaded and verified in \(elapsed.formattedMilliseconds)")
        printKernel()
    }
}

/// Parses `WxH` (e.g. `416x256`).
func parseSize(_ text: String?) throws -> (Int, Int)? {
    guard let text else { return nil }
    return try OptionText.size(text, name: "--size")
}
