import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// `GroupedConvolution` against the plain Double loop run group by group (each group a plain convolution of its
/// channels), the planner's rule for grouped layers, and their model-file kind (1.6).
@Suite struct GroupedConvolutionTests {
    /// The reference: per group, `LayerTestSupport.directConvolution` on that group's input channels and filters.
    static func reference(_ input: [Float], shape: Shape, weights: [Float], biases: [Float], filters: Int, size: Int,
                          stride: Int, padding: Int, groups: Int, activation: Activation) -> (output: [Float], scale: [Double]) {
        let (perGroup, filtersPerGroup) = (shape.channels / groups, filters / groups)
        let groupShape = Shape(channels: perGroup, height: shape.height, width: shape.width)
        let filterLength = perGroup * size * size
        var output: [Float] = [], scale: [Double] = []
        for g in 0..<groups {
            let slice = Array(input[g * groupShape.count ..< (g + 1) * groupShape.count])
            let w = Array(weights[g * filtersPerGroup * filterLength ..< (g + 1) * filtersPerGroup * filterLength])
            let b = Array(biases[g * filtersPerGroup ..< (g + 1) * filtersPerGroup])
            let part = LayerTestSupport.directConvolution(slice, shape: groupShape, weights: w, biases: b, filters: filtersPerGroup,
                                                          size: size, stride: stride, padding: padding, activation: activation)
            output += part.output
            scale += part.scale
        }
        return (output, scale)
    }

    /// Depthwise 3×3 (YOLO11's DWConv and pe) at strides 1 and 2, a general grouping (3 groups of 2 channels, 2
    /// filters each) and a 5×5 padding-2 and unpadded 1×1 case, with SiLU and linear outputs, on 1 and 3 threads:
    /// within 1e-6 of the reference, relative to Σ|w·x| + |b|.
    @Test(arguments: [
        (16, 16, 16, 3, 1, 1, Activation.swish), (16, 16, 16, 3, 2, 1, .linear), (6, 6, 3, 3, 1, 1, .swish),
        (6, 12, 3, 3, 2, 1, .leaky), (8, 8, 8, 5, 1, 2, .linear), (8, 16, 4, 1, 1, 0, .swish),
    ])
    func matchesThePlainLoop(_ c: (channels: Int, filters: Int, groups: Int, size: Int, stride: Int, padding: Int, activation: Activation)) {
        let shape = Shape(channels: c.channels, height: 11, width: 21)
        let input = LayerTestSupport.values(shape.count, seed: 7)
        let weights = LayerTestSupport.values(c.filters * c.channels / c.groups * c.size * c.size, seed: 8)
        let biases = LayerTestSupport.values(c.filters, seed: 9)
        let expected = Self.reference(input, shape: shape, weights: weights, biases: biases, filters: c.filters, size: c.size,
                                      stride: c.stride, padding: c.padding, groups: c.groups, activation: c.activation)
        let layer = GroupedConvolution(input: -1, inputShape: shape, filters: c.filters, size: c.size, stride: c.stride,
                                       padding: c.padding, groups: c.groups, activation: c.activation,
                                       weights: FloatBuffer(weights), biases: FloatBuffer(biases))
        #expect(layer.outputShape.count == expected.output.count)
        for threads in [1, 3] {
            let output = LayerTestSupport.run(layer, input: input, threads: threads)
            let worst = zip(zip(output, expected.output), expected.scale).map { Double(abs($0.0 - $0.1)) / max($1, 1) }.max() ?? .infinity
            #expect(worst < 1e-6, "\(c), \(threads) threads: relative error \(worst)")
        }
    }

    /// The planner gives every grouped layer the grouped direct path, whatever the family, the storage or the
    /// algorithm asked for, and a network builds `GroupedConvolution` for it.
    @Test func plannerChoosesTheGroupedPath() {
        let layer = ConvolutionPlanner.Layer(input: Shape(channels: 64, height: 40, width: 40), filters: 64, size: 3, stride: 1,
                                             padding: 1, groups: 64)
        for family in KernelFamily.all {
            for algorithm in [ConvolutionAlgorithm.auto, .winograd4, .im2col] {
                let plan = ConvolutionPlanner.plan(layer, algorithm: algorithm, threads: 4, family: family)
                #expect(plan.algorithm == .grouped && plan.weights == .float && plan.precision == .fp32 && plan.fusion == nil)
            }
        }
        var plain = layer
        plain.groups = 1
        #expect(ConvolutionPlanner.plan(plain, threads: 4).algorithm != .grouped)
    }

    /// A small network with a depthwise layer: the model file writes it as kind 8 (1.6) and reads it back; the
    /// reader refuses groups that do not divide the channels, and LUT codes for a grouped layer.
    @Test func modelFileKindAndChecks() throws {
        let layers: [LayerSpec] = [
            .convolution(ConvolutionSpec(filters: 8, size: 3, stride: 2, padding: 1, batchNormalize: false, activation: .swish, line: 1)),
            .convolution(ConvolutionSpec(filters: 8, size: 3, stride: 1, padding: 1, batchNormalize: false, activation: .swish, line: 2,
                                         groups: 8)),
            .convolution(ConvolutionSpec(filters: 64 + 2, size: 1, stride: 1, padding: 0, batchNormalize: false, activation: .linear, line: 3)),
            .yolo(YOLOSpec(mask: [], anchors: [], classes: 2, scaleXY: 1, distributionBins: 16, line: 4)),
        ]
        let description = ModelDescription(inputShape: Shape(channels: 3, height: 16, width: 16), layers: layers, path: "g.yolo")
        try description.validate()
        let parameters: [Int: ConvolutionParameters] = [
            0: ConvolutionParameters(weights: FloatBuffer(LayerTestSupport.values(8 * 27, seed: 1)), biases: FloatBuffer(LayerTestSupport.values(8, seed: 2))),
            1: ConvolutionParameters(weights: FloatBuffer(LayerTestSupport.values(8 * 9, seed: 3)), biases: FloatBuffer(LayerTestSupport.values(8, seed: 4))),
            2: ConvolutionParameters(weights: FloatBuffer(LayerTestSupport.values(66 * 8, seed: 5)), biases: FloatBuffer(LayerTestSupport.values(66, seed: 6))),
        ]
        let model = Model(description: description, convolutions: parameters, labels: [])
        let bytes = [UInt8](ModelFile.encode(model))
        #expect(bytes[10] == 6)
        let loaded = try Model(modelFileData: Data(bytes), path: "g.yolo")
        guard case .convolution(let spec) = loaded.description.layers[1] else { Issue.record("layer 1 is not a convolution"); return }
        #expect(spec.groups == 8 && loaded.convolutions[1]?.weights.count == 72)
        let input = Tensor(shape: description.inputShape, values: LayerTestSupport.values(3 * 16 * 16, seed: 10).map { abs($0) })
        #expect(try Network(model: loaded).forward(input).map(\.values) == Network(model: model).forward(input).map(\.values))
        // Groups that do not divide the filters.
        var bad = description
        bad.layers[1] = .convolution(ConvolutionSpec(filters: 8, size: 3, stride: 1, padding: 1, batchNormalize: false, activation: .swish,
                                                     line: 2, groups: 3))
        #expect(throws: YOLOError.self) { try bad.validate() }
        // Groups that divide the filters but not the input channels (8 filters in 4 groups reading 6 channels).
        bad.layers[0] = .convolution(ConvolutionSpec(filters: 6, size: 3, stride: 2, padding: 1, batchNormalize: false, activation: .swish, line: 1))
        bad.layers[1] = .convolution(ConvolutionSpec(filters: 8, size: 3, stride: 1, padding: 1, batchNormalize: false, activation: .swish,
                                                     line: 2, groups: 4))
        #expect(throws: YOLOError.self) { try bad.validate() }
        // LUT codes for the grouped layer: written by hand (the converters never do), refused by the reader.
        var quantized = model
        let weights = LUTQuantizer(type: .lut8, granularity: .perChannel, method: .kmeans, refinement: LUTRefinement(maxRounds: 0))
            .quantize(parameters[1]!.weights.buffer, rows: 8)
        quantized.convolutions[1] = nil
        quantized.quantizedConvolutions[1] = QuantizedConvolution(weights: weights, biases: parameters[1]!.biases)
        #expect {
            try Model(modelFileData: ModelFile.encode(quantized, compressCodes: false), path: "q.yolo")
        } throws: { error in "\(error)".contains("a grouped convolution's weights must be float32") }
    }
}
