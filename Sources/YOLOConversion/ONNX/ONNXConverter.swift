import Foundation
@_spi(Engine) import YOLO

extension Model {
    /// A model converted from an Ultralytics-exported YOLOv8 or YOLO11 detector in ONNX format (float32 weights; the
    /// supported graphs are in docs/ONNX.md). Class names: `names` (a file, one per line) when given, else the
    /// file's `names` metadata, else none.
    ///
    /// - Throws: `YOLOError` naming the file, and the node, for anything unreadable or unsupported.
    public init(onnx path: String, names: String? = nil) throws {
        let onnx = try ONNXModel(contentsOf: path)
        self = try ONNXConverter.model(onnx, path: path, names: try names.map(Model.readLabels))
    }
}

/// Maps an Ultralytics-exported YOLOv8 or YOLO11 detector (ONNX) onto SwiftYOLO's layers.
///
/// The feature network: Conv (with its SiLU written as `Sigmoid` and `Mul`, fused into the convolution as
/// `swish`; with `group` > 1 a grouped convolution), Split along channels into equal parts (routes with groups),
/// Concat along channels (routes), Add (shortcuts), MaxPool (symmetric padding), nearest Resize ×2 (upsample), and
/// C2PSA's attention (`ONNXAttention.swift`: an attention layer and a route to its values). The detection head is found as
/// the channel Concats of a box branch (4 × bins channels) and a class branch that feed the exported decode
/// chain (Reshape, Softmax, the DFL convolution, anchor arithmetic); each becomes an anchor-free head layer
/// (`YOLOSpec.distributionBins`), decoded natively, and the chain itself is not run. Anything else fails with
/// one line naming the node and what is missing.
@_spi(Engine) public enum ONNXConverter {
    /// Operators the exported decode chain after the head's Concats may use (they are checked, then dropped).
    static let decodeOperators: Set<String> = [
        "Reshape", "Concat", "Split", "Slice", "Transpose", "Softmax", "Conv", "Sub", "Add", "Div", "Mul", "Sigmoid",
        "Shape", "Gather", "Unsqueeze", "Cast", "Range", "Expand", "ConstantOfShape", "Constant", "Identity", "Squeeze",
    ]

    /// The model described by `onnx`; `path` names the file in errors. Class names: `names` when given, else
    /// the file's `names` metadata (Ultralytics writes a Python dict), else none (`class N`).
    ///
    /// - Throws: `YOLOError.invalidFile` naming the node and what is not supported.
    public static func model(_ onnx: ONNXModel, path: String, names: [String]? = nil) throws -> Model {
        var mapping = try GraphMapping(onnx, path: path)
        try mapping.run()
        var description = ModelDescription(inputShape: mapping.inputShape, layers: mapping.layers, path: path,
                                           preferredScaling: .scaleFit)
        description.preferredResampling = .openCV
        description.letterboxFill = 114 / 255
        // The layers' "cfg lines" are the ONNX nodes' positions (1-based) in the graph.
        try description.validate()
        let classes = description.classCount
        var labels = names ?? []
        if names == nil, let text = onnx.metadata.first(where: { $0.key == "names" })?.value {
            labels = try parseNames(text, path: path)
        }
        if !labels.isEmpty, labels.count != classes {
            throw YOLOError.invalidFile(path: path, message: "\(labels.count) class names for a head of \(classes) classes")
        }
        return Model(description: description, convolutions: mapping.parameters, labels: labels)
    }

    /// Parses Ultralytics' `names` metadata, a Python dict literal `{0: 'person', 1: "it's"}` with keys 0..<n.
    static func parseNames(_ text: String, path: String) throws -> [String] {
        func fail(_ why: String) -> YOLOError { .invalidFile(path: path, message: "metadata 'names' \(why)") }
        var characters = Array(text.unicodeScalars)[...]
        func skipSpace() { while let c = characters.first, c == " " || c == "\n" || c == "\t" || c == "," { characters.removeFirst() } }
        skipSpace()
        guard characters.popFirst() == "{" else { throw fail("is not a {index: 'name'} dict") }
        var names: [Int: String] = [:]
        while true {
            skipSpace()
            if characters.first == "}" { break }
            var digits = ""
            while let c = characters.first, ("0"..."9").contains(c) { digits.unicodeScalars.append(c); characters.removeFirst() }
            guard let key = Int(digits), key < 1_000_000 else { throw fail("has a key that is not an index") }
            skipSpace()
            guard characters.popFirst() == ":" else { throw fail("misses a ':' after key \(key)") }
            skipSpace()
            guard let quote = characters.popFirst(), quote == "'" || quote == "\"" else { throw fail("value of \(key) is not a quoted string") }
            var value = ""
            while true {
                guard let c = characters.popFirst() else { throw fail("ends inside the value of \(key)") }
                if c == quote { break }
                if c == "\\" {
                    guard let escaped = characters.popFirst() else { throw fail("ends inside the value of \(key)") }
                    value.unicodeScalars.append(escaped == "n" ? "\n" : escaped == "t" ? "\t" : escaped)
                } else {
                    value.unicodeScalars.append(c)
                }
            }
            guard names[key] == nil else { throw fail("repeats key \(key)") }
            names[key] = value
        }
        guard names.keys.sorted() == Array(0..<names.count) else { throw fail("keys are not 0..<\(names.count)") }
        return (0..<names.count).map { names[$0]! }
    }
}

/// One pass over the graph: finds the head, orders the feature nodes, and emits layers.
struct GraphMapping {
    let onnx: ONNXModel
    let path: String
    let nodes: [ONNXNode]
    var constants: [String: ONNXTensor] = [:]
    /// Which node makes each tensor.
    var producer: [String: Int] = [:]
    /// Which nodes read each tensor.
    var consumers: [String: [Int]] = [:]
    var inputName = ""
    var inputShape = Shape(channels: 3, height: 640, width: 640)

    var layers: [LayerSpec] = []
    var parameters: [Int: ConvolutionParameters] = [:]
    /// Each layer's output channels.
    var channels: [Int] = []
    /// The layer holding each tensor (-1: the network input).
    var layerOf: [String: Int] = [:]
    /// The "cfg line" of the layers being emitted: the ONNX node's index + 1.
    var currentLine = 1
    /// C2PSA attentions found in the graph, by the index of their first Reshape.
    var attentions: [Int: AttentionMatch] = [:]
    /// The qkv convolutions of those attentions: the order of their output channels (new channel → ONNX channel).
    var qkvOrder: [Int: [Int]] = [:]

    init(_ onnx: ONNXModel, path: String) throws {
        self.onnx = onnx
        self.path = path
        self.nodes = onnx.graph.nodes
        constants = onnx.graph.initializers
        for (index, node) in nodes.enumerated() {
            for output in node.outputs where !output.isEmpty { producer[output] = index }
            for input in node.inputs where !input.isEmpty { consumers[input, default: []].append(index) }
            if node.opType == "Constant", let output = node.outputs.first {
                guard let tensor = node.attribute("value")?.tensor else {
                    throw fail(node, "only a Constant with a 'value' tensor is supported")
                }
                constants[output] = tensor
            }
        }
    }

    func fail(_ node: ONNXNode, _ message: String) -> YOLOError {
        .invalidFile(path: path, message: "\(node.label): \(message)")
    }

    func fail(_ message: String) -> YOLOError { .invalidFile(path: path, message: message) }

    // MARK: Input and head

    mutating func readInput() throws {
        if let opset = onnx.defaultOpset, !(7...22).contains(opset) {
            throw fail("operator set \(opset) is not supported (7...22)")
        }
        let inputs = onnx.graph.inputs.filter { constants[$0.name] == nil }
        guard inputs.count == 1, let input = inputs.first else {
            throw fail("the graph has \(inputs.count) inputs; one image input is supported")
        }
        guard input.elementType == 1 else { throw fail("input '\(input.name)' has element type \(input.elementType), not FLOAT") }
        guard input.dimensions.count == 4, input.dimensions[1] == 3 || input.dimensions[1] == 1,
              input.dimensions[0] == nil || input.dimensions[0] == 1 else {
            throw fail("input '\(input.name)' has dimensions \(input.dimensions.map { $0.map(String.init) ?? "?" }); N×3×H×W (N 1) is supported")
        }
        // A dynamic height or width takes the size the model was trained at (Ultralytics' `imgsz` metadata), else 640.
        var size = (640, 640)
        if let imgsz = onnx.metadata.first(where: { $0.key == "imgsz" })?.value {
            let numbers = imgsz.split { !$0.isNumber }.compactMap { Int($0) }
            if numbers.count == 2 { size = (numbers[0], numbers[1]) }
        }
        let height = input.dimensions[2].map(Int.init) ?? size.0
        let width = input.dimensions[3].map(Int.init) ?? size.1
        let side = 1...ModelLimits.standard.maximumSide
        guard side.contains(height), side.contains(width) else { throw fail("input '\(input.name)' is \(width)x\(height), outside \(side)") }
        inputName = input.name
        inputShape = Shape(channels: Int(input.dimensions[1]!), height: height, width: width)
        layerOf[inputName] = -1
    }

    /// The head's Concats: two channel-concatenated Conv outputs (box, then classes) read by a Reshape.
    func headConcats() -> [Int] {
        nodes.indices.filter { index in
            let node = nodes[index]
            guard node.opType == "Concat", node.attribute("axis")?.int == 1, node.inputs.count == 2,
                  let output = node.outputs.first else { return false }
            let fromConvolutions = node.inputs.allSatisfy { producer[$0].map { nodes[$0].opType == "Conv" } ?? false }
            let reshaped = (consumers[output] ?? []).contains { nodes[$0].opType == "Reshape" }
            return fromConvolutions && reshaped
        }
    }

    /// Nodes needed to compute `targets` (the tensors' producers and theirs, constants excluded).
    func ancestors(of targets: [String]) -> Set<Int> {
        var result = Set<Int>()
        var stack = targets
        while let name = stack.popLast() {
            guard let index = producer[name], constants[name] == nil, result.insert(index).inserted else { continue }
            stack.append(contentsOf: nodes[index].inputs.filter { !$0.isEmpty })
        }
        return result
    }

    /// The bins per side, from the DFL convolution of the decode chain (weights 0, 1, ..., bins − 1).
    func distributionBins(decode: [Int]) throws -> Int {
        for index in decode {
            let node = nodes[index]
            guard node.opType == "Conv" else { continue }
            guard node.inputs.count >= 2, let weight = constants[node.inputs[1]], weight.dimensions.count == 4,
                  weight.dimensions[0] == 1, weight.dimensions[2] == 1, weight.dimensions[3] == 1 else {
                throw fail(node, "a convolution in the decode chain is not the 1×1 DFL convolution")
            }
            let values = try floats(weight, node)
            guard values.enumerated().allSatisfy({ $0.element == Float($0.offset) }) else {
                throw fail(node, "the DFL convolution's weights are not 0, 1, ..., \(values.count - 1)")
            }
            return values.count
        }
        return 16
    }

    func floats(_ tensor: ONNXTensor, _ node: ONNXNode) throws -> [Float] {
        do { return try tensor.floats() } catch { throw fail(node, error.message) }
    }

    func integers(_ tensor: ONNXTensor, _ node: ONNXNode) throws -> [Int64] {
        do { return try tensor.integers() } catch { throw fail(node, error.message) }
    }

    // MARK: Mapping

    mutating func run() throws {
        try readInput()
        let heads = headConcats()
        guard !heads.isEmpty else {
            throw fail("no detection head found: expected Concat nodes (axis 1) of a box and a class Conv read by a Reshape, as Ultralytics exports YOLOv8 detectors")
        }
        let headInputs = heads.flatMap { nodes[$0].inputs }
        let feature = ancestors(of: headInputs)
        let decode = nodes.indices.filter { !feature.contains($0) }
        for index in decode where !ONNXConverter.decodeOperators.contains(nodes[index].opType) {
            throw fail(nodes[index], "operator \(nodes[index].opType) is not supported (not part of the YOLOv8 feature network or its exported decode chain)")
        }
        for index in feature where nodes[index].domain != "" && nodes[index].domain != "ai.onnx" {
            throw fail(nodes[index], "operator domain '\(nodes[index].domain)' is not supported")
        }
        let bins = try distributionBins(decode: decode)
        try findAttentions(feature)
        for unit in try schedule(feature) { try emit(unit) }
        var classes: Int?
        for index in heads {
            let node = nodes[index]
            guard let box = layerOf[node.inputs[0]], let cls = layerOf[node.inputs[1]], box >= 0, cls >= 0 else {
                throw fail(node, "the head's inputs are not mapped layers")
            }
            guard channels[box] == 4 * bins else {
                throw fail(node, "the box branch has \(channels[box]) channels, expected 4 × \(bins) distribution bins")
            }
            guard classes == nil || classes == channels[cls] else {
                throw fail(node, "the class branch has \(channels[cls]) channels, another head has \(classes!)")
            }
            classes = channels[cls]
            append(.route(RouteSpec(layers: [box, cls], groups: 1, groupIndex: 0, line: index + 1)), channels: 4 * bins + channels[cls])
            var spec = YOLOSpec(mask: [], anchors: [], classes: channels[cls], scaleXY: 1, line: index + 1)
            spec.distributionBins = bins
            append(.yolo(spec), channels: 4 * bins + channels[cls])
        }
        if let output = onnx.graph.outputs.first, output.dimensions.count == 3, let rows = output.dimensions[1], let classes,
           rows != Int64(4 + classes) {
            throw fail("output '\(output.name)' has \(rows) rows per box, but the head gives 4 + \(classes)")
        }
    }

    /// A unit of emission: one node, or a Conv with the Sigmoid and Mul of its SiLU.
    struct Unit {
        var nodes: [Int]
        /// Data inputs (constants excluded) and the tensor the unit produces last.
        var inputs: [String]
        var outputs: [String]
    }

    /// The feature nodes as units, in a topological order that keeps chains together (a unit whose first input
    /// is the tensor just made goes next), so few inputs need a copy to become the "previous layer".
    func schedule(_ feature: Set<Int>) throws -> [Unit] {
        var absorbed = Set<Int>()
        var units: [Unit] = []
        for index in feature.sorted() where !absorbed.contains(index) {
            let node = nodes[index]
            let dataInputs = node.inputs.filter { !$0.isEmpty && constants[$0] == nil }
            if let attention = attentions[index] {
                absorbed.formUnion(attention.nodes)
                units.append(Unit(nodes: [index] + attention.nodes.filter { $0 != index }.sorted(), inputs: [attention.input],
                                  outputs: [attention.output, attention.values]))
            } else if node.opType == "Conv", let y = node.outputs.first, let silu = siluAfter(y), feature.contains(silu.sigmoid),
               feature.contains(silu.mul) {
                absorbed.formUnion([silu.sigmoid, silu.mul])
                units.append(Unit(nodes: [index, silu.sigmoid, silu.mul], inputs: dataInputs, outputs: nodes[silu.mul].outputs))
            } else {
                units.append(Unit(nodes: [index], inputs: dataInputs, outputs: node.outputs.filter { !$0.isEmpty }))
            }
        }
        for unit in units where unit.nodes.contains(where: absorbed.contains) && unit.nodes.count == 1 {
            throw fail(nodes[unit.nodes[0]], "internal: node scheduled twice")
        }
        var made: Set<String> = [inputName]
        var pending = Array(units.indices)
        var order: [Unit] = []
        var last = inputName
        while !pending.isEmpty {
            let ready = pending.filter { units[$0].inputs.allSatisfy(made.contains) }
            guard let first = ready.first else {
                throw fail(nodes[units[pending[0]].nodes[0]], "an input is made by no node (the graph is not a DAG of supported nodes)")
            }
            let pick = ready.first { units[$0].inputs.first == last } ?? first
            pending.removeAll { $0 == pick }
            order.append(units[pick])
            made.formUnion(units[pick].outputs)
            last = units[pick].outputs.last ?? last
        }
        return order
    }

    /// The Sigmoid and Mul computing `y · sigmoid(y)` when they are `y`'s only readers.
    func siluAfter(_ y: String) -> (sigmoid: Int, mul: Int)? {
        let readers = consumers[y] ?? []
        guard readers.count == 2, !onnx.graph.outputs.contains(where: { $0.name == y }),
              let s = readers.first(where: { nodes[$0].opType == "Sigmoid" }),
              let m = readers.first(where: { nodes[$0].opType == "Mul" }),
              let sigmoidOutput = nodes[s].outputs.first, consumers[sigmoidOutput] == [m] else { return nil }
        let operands = Set(nodes[m].inputs)
        guard operands == [y, sigmoidOutput], nodes[m].inputs.count == 2 else { return nil }
        return (s, m)
    }

    mutating func append(_ layer: LayerSpec, channels count: Int) {
        layers.append(layer)
        channels.append(count)
    }

    /// The layer index of tensor `name` as the next layer's previous one: a one-source route copies it when
    /// it is not the last layer made.
    mutating func asPrevious(_ name: String, _ node: ONNXNode) throws -> Int {
        guard let source = layerOf[name] else { throw fail(node, "input '\(name)' is not made by a supported layer") }
        if source == layers.count - 1 { return source }
        guard source >= 0 else { throw fail(node, "reads the network input after other layers; only the first layer may") }
        append(.route(RouteSpec(layers: [source], groups: 1, groupIndex: 0, line: currentLine)), channels: channels[source])
        return layers.count - 1
    }

    func source(_ name: String, _ node: ONNXNode) throws -> Int {
        guard let source = layerOf[name], source >= 0 else {
            throw fail(node, "input '\(name)' is not made by a supported layer")
        }
        return source
    }

    func inputChannels(_ index: Int) -> Int { index < 0 ? inputShape.channels : channels[index] }

    mutating func emit(_ unit: Unit) throws {
        let node = nodes[unit.nodes[0]]
        let line = unit.nodes[0] + 1
        currentLine = line
        func ints(_ name: String) -> [Int64]? { node.attribute(name).map(\.ints) }
        if let attention = attentions[unit.nodes[0]] {
            try emitAttention(attention, node: node, line: line)
            return
        }
        switch node.opType {
        case "Conv":
            let previous = try asPrevious(node.inputs[0], node)
            guard node.inputs.count >= 2, let weight = constants[node.inputs[1]] else { throw fail(node, "the weights are not a constant") }
            let w = weight.dimensions
            guard w.count == 4, w[2] == w[3], w[2] >= 1, w[2] <= Int64(ModelLimits.standard.maximumKernel) else {
                throw fail(node, "weights of shape \(w): a square 2-D kernel is supported")
            }
            let size = Int(w[2])
            let group = node.attribute("group")?.int ?? 1
            let inputs = Int64(inputChannels(previous))
            guard group >= 1, group <= inputs, inputs % group == 0, w[0] % group == 0 else {
                throw fail(node, "group \(group) does not divide the \(inputs) input channels and \(w[0]) filters")
            }
            guard (ints("dilations") ?? [1, 1]).allSatisfy({ $0 == 1 }) else { throw fail(node, "dilations \(ints("dilations")!) are not supported") }
            guard ["", "NOTSET"].contains(node.attribute("auto_pad")?.string ?? "") else { throw fail(node, "auto_pad is not supported") }
            if let k = ints("kernel_shape"), k != [w[2], w[3]] { throw fail(node, "kernel_shape \(k) differs from the weights \(w)") }
            let strides = ints("strides") ?? [1, 1]
            guard strides.count == 2, strides[0] == strides[1], strides[0] >= 1, strides[0] <= Int64(ModelLimits.standard.maximumStride) else {
                throw fail(node, "strides \(strides): equal strides are supported")
            }
            let pads = ints("pads") ?? [0, 0, 0, 0]
            guard pads.count == 4, Set(pads).count == 1, pads[0] >= 0, pads[0] < w[2] else {
                throw fail(node, "pads \(pads): the same padding on every side, below the kernel size, is supported")
            }
            guard w[1] * group == inputs else {
                throw fail(node, "weights for \(w[1]) input channels per group (\(group) groups), the input has \(inputs)")
            }
            guard w[0] >= 1, w[0] <= Int64(ModelLimits.standard.maximumChannels) else { throw fail(node, "\(w[0]) filters") }
            let filters = Int(w[0])
            var weights = try floats(weight, node)
            var biases = [Float](repeating: 0, count: filters)
            if node.inputs.count >= 3, !node.inputs[2].isEmpty {
                guard let bias = constants[node.inputs[2]], bias.dimensions == [w[0]] else { throw fail(node, "the bias is not a constant of \(filters) values") }
                biases = try floats(bias, node)
            }
            if let order = qkvOrder[unit.nodes[0]] {
                // An attention's qkv convolution: its filters regrouped as the attention layer reads them.
                guard order.count == filters else { throw fail(node, "\(filters) filters, the attention after it needs \(order.count)") }
                let row = weights.count / filters
                weights = order.flatMap { weights[$0 * row ..< ($0 + 1) * row] }
                biases = order.map { biases[$0] }
            }
            // The check every model-file loader applies: a converted file must load back.
            if let problem = WeightSanity.problem(weights: weights, biases: biases) { throw fail(node, problem) }
            let activation: Activation = unit.nodes.count == 3 ? .swish : .linear
            append(.convolution(ConvolutionSpec(filters: filters, size: size, stride: Int(strides[0]), padding: Int(pads[0]),
                                                batchNormalize: false, activation: activation, line: line, groups: Int(group))),
                   channels: filters)
            parameters[layers.count - 1] = ConvolutionParameters(weights: FloatBuffer(weights), biases: FloatBuffer(biases))
        case "MaxPool":
            _ = try asPrevious(node.inputs[0], node)
            guard let k = ints("kernel_shape"), k.count == 2, k[0] == k[1], k[0] >= 1, k[0] <= Int64(ModelLimits.standard.maximumKernel) else {
                throw fail(node, "kernel_shape \(ints("kernel_shape") ?? []): a square 2-D window is supported")
            }
            let strides = ints("strides") ?? [1, 1]
            guard strides.count == 2, strides[0] == strides[1], strides[0] >= 1, strides[0] <= Int64(ModelLimits.standard.maximumStride) else {
                throw fail(node, "strides \(strides): equal strides are supported")
            }
            let pads = ints("pads") ?? [0, 0, 0, 0]
            // Darknet's window starts padding/2 before the input: symmetric ONNX pads p are darknet's padding 2p.
            guard pads.count == 4, Set(pads).count == 1, pads[0] >= 0, pads[0] < k[0] else {
                throw fail(node, "pads \(pads): the same padding on every side, below the window, is supported")
            }
            guard (node.attribute("ceil_mode")?.int ?? 0) == 0 else { throw fail(node, "ceil_mode 1 is not supported") }
            guard (ints("dilations") ?? [1, 1]).allSatisfy({ $0 == 1 }) else { throw fail(node, "dilations are not supported") }
            guard ["", "NOTSET"].contains(node.attribute("auto_pad")?.string ?? "") else { throw fail(node, "auto_pad is not supported") }
            guard node.outputs.count == 1 else { throw fail(node, "the Indices output is not supported") }
            let c = channels[layers.count - 1]
            append(.maxPool(MaxPoolSpec(size: Int(k[0]), stride: Int(strides[0]), padding: 2 * Int(pads[0]), line: line)), channels: c)
        case "Resize", "Upsample":
            _ = try asPrevious(node.inputs[0], node)
            guard (node.attribute("mode")?.string ?? "nearest") == "nearest" else {
                throw fail(node, "mode '\(node.attribute("mode")!.string)': only nearest is supported")
            }
            let transform = node.attribute("coordinate_transformation_mode")?.string ?? "half_pixel"
            let rounding = node.attribute("nearest_mode")?.string ?? "round_prefer_floor"
            // For an integer factor 2 these pick source cell floor(x / 2), what darknet's upsample repeats.
            let floorLike = (transform == "asymmetric" && ["floor", "round_prefer_floor"].contains(rounding))
                || (["half_pixel", "pytorch_half_pixel"].contains(transform) && ["round_prefer_floor", "round_prefer_ceil"].contains(rounding))
            guard floorLike || node.opType == "Upsample" else {
                throw fail(node, "coordinate_transformation_mode '\(transform)' with nearest_mode '\(rounding)' is not supported")
            }
            var scales: [Float] = []
            let scaleInput = node.opType == "Upsample" ? 1 : (node.inputs.count == 2 ? 1 : 2)
            if node.inputs.count > scaleInput, !node.inputs[scaleInput].isEmpty {
                guard let tensor = constants[node.inputs[scaleInput]] else { throw fail(node, "the scales are not a constant") }
                scales = try floats(tensor, node)
            } else if node.opType == "Upsample", let attribute = node.attribute("scales") {
                scales = attribute.floats
            } else if node.inputs.count > 3, let tensor = constants[node.inputs[3]] {
                throw fail(node, "Resize by sizes \((try? integers(tensor, node)) ?? []) is not supported; scales are")
            }
            guard scales.count == 4, scales[0] == 1, scales[1] == 1, scales[2] == scales[3], scales[2] == 2 else {
                throw fail(node, "scales \(scales): only ×2 in height and width is supported")
            }
            let c = channels[layers.count - 1]
            append(.upsample(UpsampleSpec(stride: 2, scale: 1, line: line)), channels: c)
        case "Split":
            let source = try source(node.inputs[0], node)
            let axis = node.attribute("axis")?.int ?? 0
            guard axis == 1 else { throw fail(node, "axis \(axis): only the channel axis 1 is supported") }
            let parts = node.outputs.count
            var sizes: [Int64] = node.attribute("split")?.ints ?? []
            if node.inputs.count >= 2, !node.inputs[1].isEmpty {
                guard let tensor = constants[node.inputs[1]] else { throw fail(node, "the split sizes are not a constant") }
                sizes = try integers(tensor, node)
            }
            let total = channels[source]
            if sizes.isEmpty { sizes = Array(repeating: Int64(total / max(parts, 1)), count: parts) }
            guard parts >= 1, sizes.count == parts, Set(sizes).count == 1, (1...Int64(total)).contains(sizes[0]),
                  sizes[0] * Int64(parts) == Int64(total) else {
                throw fail(node, "split \(sizes) of \(total) channels: only equal parts of all channels are supported")
            }
            for (k, output) in node.outputs.enumerated() {
                append(.route(RouteSpec(layers: [source], groups: parts, groupIndex: k, line: line)), channels: total / parts)
                layerOf[output] = layers.count - 1
            }
            return
        case "Concat":
            let axis = node.attribute("axis")?.int ?? 0
            guard axis == 1 || axis == -3 else { throw fail(node, "axis \(axis): only the channel axis is supported") }
            let sources = try node.inputs.map { try source($0, node) }
            guard (1...ModelLimits.standard.maximumRouteSources).contains(sources.count) else {
                throw fail(node, "\(sources.count) inputs; 1...\(ModelLimits.standard.maximumRouteSources) are supported")
            }
            append(.route(RouteSpec(layers: sources, groups: 1, groupIndex: 0, line: line)),
                   channels: sources.reduce(0) { $0 + channels[$1] })
        case "Add":
            guard node.inputs.count == 2 else { throw fail(node, "\(node.inputs.count) inputs") }
            let a = try source(node.inputs[0], node), b = try source(node.inputs[1], node)
            guard channels[a] == channels[b] else { throw fail(node, "adds \(channels[a]) to \(channels[b]) channels (broadcasting is not supported)") }
            // The shortcut adds `from` to the previous layer: whichever operand is last made stays in place.
            let (kept, from) = a == layers.count - 1 ? (a, b) : (b == layers.count - 1 ? (b, a) : (try asPrevious(node.inputs[1], node), a))
            _ = kept
            append(.shortcut(ShortcutSpec(from: from, activation: .linear, line: line)), channels: channels[from])
        case "Identity":
            layerOf[node.outputs[0]] = try source(node.inputs[0], node)
            return
        case "Sigmoid", "Mul":
            throw fail(node, "\(node.opType) outside a convolution's SiLU (x · sigmoid(x) right after a Conv) is not supported")
        case "Reshape", "Transpose", "MatMul", "Softmax":
            throw fail(node, "\(node.opType) outside C2PSA's attention (qkv Conv, Reshape, Split into q, k, v, MatMul, Softmax, MatMul, Reshape) is not supported")
        default:
            throw fail(node, "operator \(node.opType) is not supported")
        }
        layerOf[unit.outputs.last!] = layers.count - 1
    }
}
