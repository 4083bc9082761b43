import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO

struct Bench: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Time the forward pass: whole network, and with --layers layer by layer.",
        discussion: """
            Runs the network on a fixed pseudo-random input for each thread count: --warmup passes, \
            then --runs timed passes; prints median, min, max and p90 in milliseconds. The engine \
            threads its own work and keeps OpenBLAS single-threaded; OPENBLAS_CORETYPE picks the \
            OpenBLAS kernel (the header says which one ran).
            """)

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Network input size WxH (default: the cfg's).")
    var size: String?

    @Option(help: "Comma-separated thread counts, e.g. 1,2 (default: 1 and the default count, one per physical core this process may use).")
    var threads: String = Threading.defaultThreadCount > 1 ? "1,\(Threading.defaultThreadCount)" : "1"

    @OptionGroup var threading: ThreadingOptions

    @Option(help: "Untimed passes before timing.")
    var warmup: Int = 5

    @Option(help: "Timed passes.")
    var runs: Int = 40

    @Flag(help: "Also time every layer (in separate passes, so the whole-network figures stay untimed).")
    var layers = false

    @Option(help: "Convolution algorithm: \(ConvolutionAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")).")
    var algorithm: String = ConvolutionAlgorithm.auto.rawValue

    @Option(help: "Output format: table, json or csv.")
    var format: String = "table"

    @Option(help: "With --layers: the image whose preprocessing, decoding and NMS are timed (default: Samples/coffee.png).")
    var image: String?

    @Option(help: "Write a per-layer bar chart (SVG) to this file; implies --layers.")
    var svg: String?

    func validate() throws {
        guard warmup >= 0 else { throw ValidationError("--warmup must be 0 or more, got \(warmup)") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1, got \(runs)") }
        guard ["table", "json", "csv"].contains(format) else {
            throw ValidationError("--format must be table, json or csv, got '\(format)'")
        }
        guard ConvolutionAlgorithm(rawValue: algorithm) != nil else {
            throw ValidationError("--algorithm must be one of \(ConvolutionAlgorithm.allCases.map(\.rawValue)), got '\(algorithm)'")
        }
        _ = try threadCounts()
        _ = try inputSize()
    }

    func run() throws {
        do {
            let loaded = try model.load(withNames: false)
            let (width, height) = try inputSize() ?? (nil, nil)
            let network = try Network(model: loaded, width: width, height: height,
                                      algorithm: ConvolutionAlgorithm(rawValue: algorithm)!, memoryBudget: model.memoryBudgetBytes,
                                      threads: try threadCounts().max() ?? 1)
            let report = BenchReport(
                machine: .current, model: model.sourceDescription, size: "\(network.inputShape.width)x\(network.inputShape.height)",
                algorithm: algorithm, warmup: warmup,
                results: try threadCounts().map { try measure(network, threads: $0) })
            switch format {
            case "json": print(try report.json())
            case "csv": print(report.csv(), terminator: "")
            default: print(report.table(), terminator: "")
            }
            if let svg {
                try FileIO.writeAtomically(Data(report.svg().utf8), to: svg)
            }
        }
    }

    // MARK: - Measuring

    func measure(_ network: Network, threads: Int) throws -> BenchReport.Result {
        // Like `Detector` (and any inference engine): only the heads' outputs are kept, so layers whose
        // outputs are no longer needed share memory and stay in cache.
        let workspace = Workspace(for: network, pool: WorkerPool(try threading.threading(threads: threads)),
                                  keeping: Set(network.headIndices))
        let input = Bench.input(count: network.inputShape.count)
        var totals: [Double] = []
        var layerSamples: [[Double]] = Array(repeating: [], count: network.layers.count)
        input.withUnsafeBufferPointer { input in
            let pointer = input.baseAddress!
            for _ in 0..<warmup { network.forward(pointer, workspace: workspace) }
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                network.forward(pointer, workspace: workspace)
                totals.append(Double(DispatchTime.now().uptimeNanoseconds - start) * 1e-6)
            }
            guard layers || svg != nil else { return }
            let seconds = UnsafeMutableBufferPointer<Double>.allocate(capacity: network.layers.count)
            defer { seconds.deallocate() }
            for _ in 0..<runs {
                network.forwardTimed(pointer, workspace: workspace, seconds: seconds)
                for (i, s) in seconds.enumerated() { layerSamples[i].append(s * 1e3) }
            }
        }
        var layerResults: [BenchReport.Layer]?
        if layers || svg != nil {
            let flops = network.layerFlops
            let summaries = layerSamples.map { TimingSummary($0) }
            let medians = summaries.map(\.median)
            let sum = medians.reduce(0, +)
            layerResults = network.layers.indices.map { i in
                let layer = network.layers[i]
                // A layer that computes the skipped one before it (fused) is credited with both layers' work.
                let skipped = workspace.skips(i)
                let work = i > 0 && workspace.skips(i - 1) ? flops[i - 1] + flops[i] : flops[i]
                return BenchReport.Layer(
                    index: i, type: Bench.typeName(layer), output: layer.outputShape.description,
                    ms: medians[i], minMs: summaries[i].min, percent: sum > 0 ? 100 * medians[i] / sum : 0,
                    gflops: medians[i] > 0 && !skipped ? work / (medians[i] * 1e6) : 0,
                    algorithm: skipped ? "fused into layer \(i + 1)" : layer.algorithm)
            }
        }
        return BenchReport.Result(threads: threads, blasCore: BLAS.coreName, times: totals, layers: layerResults, stages: layers ? try stageTimes(network, threads: threads) : nil)
    }

    /// Median times of the detection stages around the forward pass (preprocessing = letterbox into the
    /// input tensor, decoding = anchors, suppression = NMS), over `runs` `Detector.detect` calls on the
    /// sample image; nil when the default sample is not there or, without `--image`, when the network has no
    /// YOLO layer to detect with (e.g. one layer cut out of a model to time alone). An `--image` that cannot be
    /// read is an error.
    func stageTimes(_ network: Network, threads: Int) throws -> BenchReport.Stages? {
        let path = image ?? (URL(fileURLWithPath: Defaults.weightsFolder).deletingLastPathComponent().path + "/Samples/coffee.png")
        guard image != nil || (!network.heads.isEmpty && FileManager.default.fileExists(atPath: path)) else { return nil }
        let picture = try Image(contentsOf: path)
        let detector = try Detector(model: network.model, algorithm: ConvolutionAlgorithm(rawValue: algorithm) ?? .auto,
                                    threading: try threading.threading(threads: threads))
        var options = DetectionOptions()
        options.inputSize = .fixed(width: network.inputShape.width, height: network.inputShape.height)
        options.memoryBudget = model.memoryBudgetBytes
        var samples: [DetectionStage: [Double]] = [:]
        for run in 0..<(warmup + runs) {
            _ = try? detector.detect(picture, options: options) { stage, duration in
                if run >= warmup { samples[stage, default: []].append(duration.milliseconds) }
            }
        }
        func median(_ stage: DetectionStage) -> Double { TimingSummary(samples[stage] ?? [0]).median }
        return BenchReport.Stages(image: path, preprocess: median(.preprocess), forward: median(.forward),
                                  decode: median(.decode), suppress: median(.suppress))
    }

    /// A fixed pseudo-random input in [0, 1] (the timing does not depend on the values).
    static func input(count: Int) -> [Float] {
        var state: UInt32 = 12345
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(state >> 8) / Float(1 << 24)
        }
    }

    static func typeName(_ layer: any Layer) -> String {
        switch layer {
        case is Convolution: return "conv"
        case is MaxPool: return "max"
        case is ConvolutionMaxPool: return "conv+max"
        case is ConvolutionPair: return "conv"
        case is Upsample: return "upsample"
        case is Route: return "route"
        case is Shortcut: return "shortcut"
        case is YOLOHead: return "yolo"
        default: return String(describing: type(of: layer))
        }
    }

    // MARK: - Parsing

    func threadCounts() throws -> [Int] {
        let parts = threads.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? 0) >= 1 }) else {
            throw ValidationError("--threads must be positive integers separated by commas, got '\(threads)'")
        }
        return parts.map { $0! }
    }

    func inputSize() throws -> (Int?, Int?)? {
        guard let size else { return nil }
        let parts = size.lowercased().split(separator: "x").map { Int($0) }
        guard parts.count == 2, let w = parts[0], let h = parts[1], w > 0, h > 0 else {
            throw ValidationError("--size must be WxH with positive integers, e.g. 416x416, got '\(size)'")
        }
        return (w, h)
    }
}
