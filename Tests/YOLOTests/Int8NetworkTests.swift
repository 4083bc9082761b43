import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) import YOLOConversion
import YOLOTestSupport

/// A whole network with int8 layers: the darknet-features fixture (routes with groups, concatenations,
/// spatial-pyramid max-pools, an upsample, a shortcut, mish/swish/logistic/leaky activations, two heads)
/// converted to int8 on its own input. Its heads are equal bit for bit at 1, 2 and 3 threads on every int8
/// kernel this CPU runs; activations stay u8 between int8 layers; the file keeps every int8 value; and the
/// same model without an int8 kernel (the portable family) runs its layers in float, near the int8 heads.
@Suite struct Int8NetworkTests {
    static let folder = TestPaths.fixtures + "/darknet-features/"

    /// The float model, its int8 conversion and the input: converted once (calibration runs the float model)
    /// and shared by the tests of this suite.
    static func models() throws -> (float: Model, int8: Model, input: Tensor) { try converted.get() }

    private static let converted = Result { () throws -> (float: Model, int8: Model, input: Tensor) in
        let float = try Model(cfg: folder + "features.cfg", weights: folder + "features.weights")
        let input = try Tensor.readNumPy(folder + "input.npy")
        let (int8, _) = try ModelConverter.convertInt8(float, settings: Int8ConversionSettings(sensitivityShare: nil),
                                                       calibration: [input])
        return (float, int8, input)
    }

    @Test func headsAreBitIdenticalAcrossThreadsAndKernels() throws {
        let (_, model, input) = try Self.models()
        #expect(model.int8Convolutions.count == model.description.layers.filter { if case .convolution = $0 { return true }; return false }.count)
        let kernels = Int8KernelFamily.all.filter(\.isSupported)
        var first: [[UInt32]]?
        for kernel in kernels {
            for threads in 1...3 {
                let network = try Network(model: model, threads: threads, int8Kernel: kernel)
                #expect(network.plan.outputs.contains { $0.elementBytes == 1 }, "some activations stay u8")
                let heads = try network.forward(input, workspace: Workspace(for: network, threads: threads))
                let bits = heads.map { $0.values.map(\.bitPattern) }
                if let first { #expect(bits == first, "\(kernel.name) at \(threads) threads") } else { first = bits }
            }
        }
    }

    @Test func withoutAnInt8KernelTheLayersRunInFloat() throws {
        let (_, model, input) = try Self.models()
        let float = try Network(model: model, threads: 1, int8Kernel: nil)
        #expect(float.plan.convolutions.compactMap { $0 }.allSatisfy { $0.precision == .fp32 })
        #expect(float.plan.outputs.allSatisfy { $0 == .float })
        guard let kernel = Int8KernelFamily.all.first(where: \.isSupported) else { return }
        let int8 = try Network(model: model, threads: 1, int8Kernel: kernel)
        let a = try float.forward(input), b = try int8.forward(input)
        for (x, y) in zip(a, b) {
            let scale = x.values.reduce(Float(0)) { max($0, abs($1)) }
            #expect(x.maxAbsDifference(y) <= 0.1 * max(scale, 1), "int8 heads near the float-run heads")
        }
    }

    /// The default activation range (`.observed`) clips nothing the float model produced on the calibration
    /// input: each int8 layer's output codes reach its float outputs' minimum and maximum (within the half
    /// step that rounding the zero point to a code moves the range).
    @Test func observedRangesCoverEveryCalibrationValue() throws {
        let (float, model, input) = try Self.models()
        let network = try Network(model: float, threads: 1, int8Kernel: nil)
        let workspace = Workspace(for: network)
        _ = try network.forward(input, workspace: workspace)
        var checked = 0
        for (index, p) in model.int8Convolutions {
            guard let q = p.output else { continue }
            let values = workspace.output(of: index)
            let (low, high) = (values.min()!, values.max()!)
            #expect(Self.covers(q, low, high), "layer \(index): [\(low), \(high)] within \(q)")
            checked += 1
        }
        #expect(checked > 0)
    }

    /// Each int8 layer's input quantization covers what it reads on the calibration input, whatever made those
    /// values: here layer 9 reads the max-pool of a shortcut (`ONNXImportTests` checks concatenations with
    /// shortcuts in them).
    @Test func inputRangesCoverWhatEachLayerReads() throws {
        let (float, model, input) = try Self.models()
        #expect(try Self.uncoveredInputs(float: float, int8: model, input: input) == [])
    }

    /// The int8 layers of `int8` whose input quantization does not cover, within half a step, the values their
    /// input takes in the float model `float` on `input` (one line each; empty when all do).
    static func uncoveredInputs(float: Model, int8: Model, input: Tensor) throws -> [String] {
        let network = try Network(model: float, threads: 1, int8Kernel: nil)
        let workspace = Workspace(for: network)
        _ = try network.forward(input, workspace: workspace)
        let geometry = try float.description.geometry(width: input.shape.width, height: input.shape.height)
        #expect(!int8.int8Convolutions.isEmpty)
        return int8.int8Convolutions.keys.sorted().compactMap { index in
            let source = geometry[index].inputs[0]
            guard source >= 0 else { return nil }
            let values = workspace.output(of: source)
            let (low, high) = (values.min()!, values.max()!)
            let q = int8.int8Convolutions[index]!.input
            return covers(q, low, high) ? nil : "layer \(index) reads layer \(source): [\(low), \(high)] outside \(q)"
        }
    }

    /// True when `q`'s codes reach `low` and `high` (and 0) within the half step that rounding the zero point to
    /// a code moves the range.
    static func covers(_ q: ActivationQuantization, _ low: Float, _ high: Float) -> Bool {
        q.value(0) <= min(low, 0) + q.scale / 2 && q.value(255) >= max(high, 0) - q.scale / 2
    }

    @Test func modelFilesKeepEveryInt8Value() throws {
        let (_, model, _) = try Self.models()
        let decoded = try Model(modelFileData: ModelFile.encode(model), path: "int8.yolo")
        #expect(decoded.int8Convolutions.keys.sorted() == model.int8Convolutions.keys.sorted())
        for (index, p) in model.int8Convolutions {
            let q = decoded.int8Convolutions[index]!
            #expect(q.weights.values.array == p.weights.values.array)
            #expect(q.weights.scales.array == p.weights.scales.array)
            #expect(q.biases.array == p.biases.array)
            #expect(q.input == p.input && q.output == p.output)
        }
        #expect(ModelFile.encode(model) == ModelFile.encode(decoded), "byte-identical when written again")
    }

    /// Tensors between int8 layers stay u8 unless a reader needs floats: a head's convolution writes float, and
    /// a route mixing formats is float.
    @Test func formatsFollowTheReaders() throws {
        let (_, model, _) = try Self.models()
        guard let kernel = Int8KernelFamily.all.first(where: \.isSupported) else { return }
        let network = try Network(model: model, threads: 1, int8Kernel: kernel)
        let description = model.description
        for head in description.heads.map(\.index) {
            #expect(network.plan.outputs[head - 1] == .float, "layer \(head - 1) feeds a head")
        }
        for (index, spec) in description.layers.enumerated() {
            if case .shortcut = spec {
                let geometry = try description.geometry(width: description.inputShape.width, height: description.inputShape.height)
                for source in geometry[index].inputs where source >= 0 { #expect(network.plan.outputs[source] == .float) }
            }
        }
    }
}
