/// A model instantiated for one input size: the layers with their shapes, ready to run.
///
/// Immutable and `Sendable`. Each thread that runs it needs its own `Workspace`, which holds every
/// intermediate tensor; the forward pass itself allocates nothing.
@_spi(Engine) public struct Network: Sendable {
    /// The network input: channels × height × width, float32 in [0, 1], RGB planes.
    public let inputShape: Shape
    public let layers: [any Layer]
    /// Indices of the YOLO heads.
    public let headIndices: [Int]
    public let model: Model
    /// The most threads a pass over this network may use: the layers' scratch and plans are made for it.
    public let maxThreads: Int
    /// How every layer runs (`ConvolutionPlanner`).
    public let plan: NetworkPlan
    /// Distinguishes networks so a `Workspace` can check it was made for this one.
    let identity = UInt64.random(in: 1...UInt64.max)

    /// Builds `model` for a `width × height` input (default: the cfg's own size).
    ///
    /// Each layer runs as the network's `plan` says (`NetworkPlan`, made by `ConvolutionPlanner` from the
    /// description, `algorithm`, `threads`, the weights' storage and the active kernel family). `algorithm`
    /// `.auto` lets the planner choose per layer; `.im2col` gives the plain reference path.
    ///
    /// `memoryBudget` bounds the working memory one workspace for this size needs (estimated before
    /// anything is built: `estimatedWorkspaceBytes`). `threads` is the most threads a pass may use
    /// (`maxThreads`; a workspace asking for more gets this many).
    ///
    /// - Throws: `YOLOError.invalidConfig` when the layers' shapes do not fit at that size,
    ///   `.invalidArgument` for a size outside 1...8192 or one that needs more memory than `memoryBudget`.
    /// `int8Kernel` runs the model's int8 layers (default: the active family's, `KernelFamily.int8Kernel`); nil
    /// runs them in float.
    public init(model: Model, width: Int? = nil, height: Int? = nil, algorithm: ConvolutionAlgorithm = .auto,
                memoryBudget: Int = MemoryBudget.defaultBytes, threads: Int = Threading.defaultThreadCount,
                int8Kernel: Int8KernelFamily? = KernelFamily.active.int8Kernel) throws {
        let description = model.description
        let threads = max(1, threads)
        let width = width ?? description.inputShape.width
        let height = height ?? description.inputShape.height
        let geometry = try Network.checkMemory(description, width: width, height: height, budget: memoryBudget,
                                               threads: threads)
        let plan = NetworkPlan(description: description, geometry: geometry, lutCodes: Set(model.quantizedConvolutions.keys),
                               int8: model.int8Quantization, int8Kernel: int8Kernel, algorithm: algorithm, threads: threads)
        func format(_ source: Int) -> TensorFormat { source < 0 ? .float : plan.outputs[source] }
        var layers: [any Layer] = []
        for (index, spec) in description.layers.enumerated() {
            let g = geometry[index]
            switch spec {
            case .convolution(let s):
                if case .lutCodes = plan.convolutions[index]!.weights, let quantized = model.quantizedConvolutions[index] {
                    layers.append(try LUTConvolution(model: model, layer: index, spec: s, geometry: g, parameters: quantized,
                                                     threads: threads))
                    continue
                }
                if case .int8(let name) = plan.convolutions[index]!.precision, let int8 = model.int8Convolutions[index],
                   let kernel = Int8KernelFamily.named(name) {
                    layers.append(try Int8Convolution(model: model, layer: index, spec: s, geometry: g, parameters: int8,
                                                      plan: plan.convolutions[index]!, kernel: kernel,
                                                      inputIsFloat: format(g.inputs[0]) == .float,
                                                      writesBytes: plan.outputs[index] != .float))
                    continue
                }
                guard let parameters = model.convolutions[index] ?? model.int8Convolutions[index]?.expanded() else {
                    throw YOLOError.invalidConfig(path: description.path, line: s.line, message: "layer \(index) has no weights")
                }
                let expected = s.filters * g.inputShapes[0].channels / s.groups * s.size * s.size
                guard parameters.weights.count == expected, parameters.biases.count == s.filters else {
                    throw YOLOError.invalidConfig(path: description.path, line: s.line,
                        message: "layer \(index) [convolutional]: expects \(g.inputShapes[0].channels) input channels (\(expected) weights), the model holds \(parameters.weights.count)")
                }
                if case .grouped = plan.convolutions[index]!.algorithm {
                    layers.append(GroupedConvolution(input: g.inputs[0], inputShape: g.inputShapes[0], filters: s.filters, size: s.size,
                                                     stride: s.stride, padding: s.padding, groups: s.groups, activation: s.activation,
                                                     weights: parameters.weights, biases: parameters.biases))
                    continue
                }
                let convolution = Convolution(input: g.inputs[0], inputShape: g.inputShapes[0], filters: s.filters, size: s.size,
                                              stride: s.stride, padding: s.padding, activation: s.activation,
                                              weights: parameters.weights, biases: parameters.biases, plan: plan.convolutions[index]!)
                if index > 0, plan.convolutions[index - 1]?.fusion == .nextConvolution, let first = layers[index - 1] as? Convolution {
                    layers.append(ConvolutionPair(unchecked: first, firstIndex: index - 1, second: convolution))
                } else {
                    layers.append(convolution)
                }
            case .maxPool(let s):
                let pool = MaxPool(input: g.inputs[0], inputShape: g.inputShapes[0], size: s.size, stride: s.stride, padding: s.padding,
                                   bytes: plan.outputs[index].elementBytes == 1)
                if index > 0, case .maxPool(let rows)? = plan.convolutions[index - 1]?.fusion, let convolution = layers[index - 1] as? Convolution {
                    layers.append(ConvolutionMaxPool(unchecked: pool, convolution: convolution, convolutionIndex: index - 1, bandRows: rows))
                } else {
                    layers.append(pool)
                }
            case .upsample(let s):
                layers.append(Upsample(input: g.inputs[0], inputShape: g.inputShapes[0], stride: s.stride, scale: s.scale,
                                       bytes: plan.outputs[index].elementBytes == 1))
            case .route(let s):
                layers.append(Route(inputs: g.inputs, inputShapes: g.inputShapes, groups: s.groups, groupIndex: s.groupIndex,
                                    elementBytes: plan.outputs[index].elementBytes))
            case .shortcut(let s):
                layers.append(Shortcut(previous: g.inputs[0], from: s.from, shape: g.outputShape, activation: s.activation))
            case .attention(let s):
                layers.append(Attention(input: g.inputs[0], inputShape: g.inputShapes[0], heads: s.heads, keyChannels: s.keyChannels,
                                        valueChannels: s.valueChannels, scale: s.scale, threads: threads))
            case .yolo(let s):
                layers.append(YOLOHead(input: g.inputs[0], shape: g.outputShape, anchors: s.anchorPairs, mask: s.mask,
                                       classes: s.classes, scaleXY: s.scaleXY, newCoords: s.newCoords,
                                       distributionBins: s.distributionBins))
            }
        }
        self.inputShape = Shape(channels: description.inputShape.channels, height: height, width: width)
        self.layers = layers
        self.headIndices = description.heads.map(\.index)
        self.model = model
        self.maxThreads = threads
        self.plan = plan
    }

    /// The shapes of `description` at `width × height`, after checking that the size is within the limits
    /// and that one workspace for it fits `budget` bytes (`estimatedWorkspaceBytes`). Allocates nothing large.
    ///
    /// - Throws: `YOLOError.invalidArgument` for a size outside 1...8192 or over budget,
    ///   `.invalidConfig` when the layers' shapes do not fit at that size.
    @discardableResult
    public static func checkMemory(_ description: ModelDescription, width: Int, height: Int, budget: Int,
                                   threads: Int = Threading.defaultThreadCount) throws -> [LayerGeometry] {
        let side = 1...ModelLimits.standard.maximumSide
        guard side.contains(width), side.contains(height) else {
            throw YOLOError.invalidArgument("network input size \(width)x\(height) is outside 1...\(side.upperBound) per side")
        }
        let geometry = try description.geometry(width: width, height: height)
        let needed = estimatedWorkspaceBytes(description: description, geometry: geometry, threads: threads)
        guard needed <= budget else {
            throw YOLOError.invalidArgument(
                "\(description.path): the \(width)x\(height) input needs about \(MemoryBudget.format(needed)) of working memory, "
                + "more than the budget of \(MemoryBudget.format(budget)) (use a smaller input size, or raise the memory budget)")
        }
        return geometry
    }

    /// Bytes one workspace keeping only the heads needs at the sizes in `geometry`: the layer outputs,
    /// shared where their lifetimes allow (as `Workspace` places them), plus the largest unfolded
    /// (im2col) convolution input, which bounds the scratch of every convolution algorithm here, and each
    /// worker's GEMM panels (`threads` workers). An estimate made before any layer is built, so an absurd size
    /// fails before it allocates.
    public static func estimatedWorkspaceBytes(description: ModelDescription, geometry: [LayerGeometry],
                                               threads: Int = Threading.defaultThreadCount) -> Int {
        let heads = Set(description.heads.map(\.index))
        let (_, outputs) = Workspace.place(counts: geometry.map(\.outputShape.count), inputs: geometry.map(\.inputs), keeping: heads)
        var scratch = 0
        for (spec, g) in zip(description.layers, geometry) {
            switch spec {
            case .convolution(let s):
                scratch = max(scratch, g.inputShapes[0].channels / s.groups * s.size * s.size * g.outputShape.planeCount)
            case .attention:
                scratch = max(scratch, lineRounded(g.outputShape.planeCount) * max(1, threads))
            default:
                continue
            }
        }
        return (outputs + scratch + 16 + GEMM.scratchCount * max(1, threads)) * MemoryLayout<Float>.stride
    }

    /// The convolution layer `index` computes, also when it stands fused in a `ConvolutionPair` (the pair's
    /// second convolution); nil for other layers.
    @_spi(Engine) public func convolution(at index: Int) -> Convolution? {
        layers[index] as? Convolution ?? (layers[index] as? ConvolutionPair)?.second
    }

    /// Bytes the layers allocated for this network (packed and transformed weights, tables), beyond the
    /// model's weights they share (`Layer.ownedBytes`).
    public var ownedBytes: Int { layers.reduce(0) { $0 + $1.ownedBytes } }

    /// The YOLO head layers, in order.
    public var heads: [YOLOHead] { headIndices.map { layers[$0] as! YOLOHead } }

    /// Runs every layer on `input` (`inputShape.count` floats, CHW) on the workspace's threads. Results stay
    /// in `workspace`; read them with `workspace.output(of:)`. Allocates nothing. Subnormal values are flushed
    /// to zero while it runs (`DenormalMode`).
    public func forward(_ input: UnsafePointer<Float>, workspace: Workspace) {
        forward(input, workspace: workspace, afterLayer: { _ in })
    }

    /// The forward pass: `forward(_:workspace:)`, and `forwardTimed` with `afterLayer` called after each layer
    /// (skipped layers included) on the calling thread.
    func forward(_ input: UnsafePointer<Float>, workspace: Workspace, afterLayer: (Int) -> Void) {
        precondition(workspace.isBuilt(for: self), "Network.forward: workspace was made for another network")
        workspace.setInput(input)
        workspace.pool.withPass {
            DenormalMode.withFlushedDenormals {
                for index in layers.indices {
                    if !workspace.skips(index) { layers[index].forward(workspace.io(for: index)) }
                    afterLayer(index)
                }
            }
        }
    }

    /// Runs the network on `input` and returns copies of the head outputs.
    ///
    /// - Throws: `YOLOError.invalidArgument` when the input shape differs from `inputShape`.
    public func forward(_ input: Tensor, workspace: Workspace? = nil) throws -> [Tensor] {
        try requireInput(input.shape)
        let workspace = workspace ?? Workspace(for: self)
        input.values.withUnsafeBufferPointer { forward($0.baseAddress!, workspace: workspace) }
        return headIndices.map { workspace.tensor(of: $0) }
    }

    /// Checks that a tensor of `shape` can be this network's input.
    public func requireInput(_ shape: Shape) throws {
        guard shape == inputShape else {
            let what = shape.channels != inputShape.channels
                ? "the first convolution expects \(inputShape.channels) input channels, the input has \(shape.channels)"
                : "the network is built for \(inputShape), the input is \(shape)"
            throw YOLOError.invalidArgument("input does not match the network: \(what)")
        }
    }
}
