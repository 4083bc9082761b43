import Foundation
@_spi(Engine) import YOLO

/// Ultralytics' C2PSA attention as the exporter writes it, found in the feature network.
struct AttentionMatch {
    /// The first Reshape and every node after it up to the two outputs (the qkv Conv excluded).
    var nodes: [Int]
    /// The qkv Conv node and its output tensor.
    var convolution: Int
    var input: String
    /// `Reshape(v @ attnᵀ)` to [1, C, H, W], and `Reshape(v)` to [1, C, H, W] (the pe convolution's input).
    var output: String
    var values: String
    var heads: Int
    var keyChannels: Int
    var valueChannels: Int
    var scale: Float
    /// The shape constants of the first Reshape ([1, heads, per head, N]) and of the two last ([1, C, H, W]).
    var positions: Int64
    var outputShapes: [[Int64]]
}

extension GraphMapping {
    /// Finds every C2PSA attention in `feature`: a Reshape of a Conv read by a Split along axis 2 starts one, and
    /// the rest must follow Ultralytics' `Attention.forward` exactly (`matchAttention`). Records the qkv
    /// convolutions' channel order: the ONNX layout is, head by head, `key_dim` queries, `key_dim` keys and
    /// `head_dim` values; the attention layer reads every head's queries, then keys, then values.
    mutating func findAttentions(_ feature: Set<Int>) throws {
        for index in feature.sorted() where nodes[index].opType == "Reshape" {
            guard let output = nodes[index].outputs.first,
                  (consumers[output] ?? []).contains(where: { nodes[$0].opType == "Split" }) else { continue }
            let match = try matchAttention(index, feature: feature)
            attentions[index] = match
            let (h, kd, vd) = (match.heads, match.keyChannels, match.valueChannels)
            let per = 2 * kd + vd
            var order: [Int] = []
            for (offset, count) in [(0, kd), (kd, kd), (2 * kd, vd)] {
                for head in 0..<h { order.append(contentsOf: (0..<count).map { head * per + offset + $0 }) }
            }
            qkvOrder[match.convolution] = order
        }
    }

    /// The attention starting at Reshape `start`, or an error naming the node that departs from the pattern.
    func matchAttention(_ start: Int, feature: Set<Int>) throws -> AttentionMatch {
        var absorbed = [start]
        let reshape = nodes[start]
        func only(_ tensor: String, _ node: ONNXNode, _ opType: String, _ what: String) throws -> Int {
            let readers = consumers[tensor] ?? []
            guard readers.count == 1, let reader = readers.first, nodes[reader].opType == opType, feature.contains(reader),
                  !onnx.graph.outputs.contains(where: { $0.name == tensor }) else {
                throw fail(node, "C2PSA attention: \(what) must be read by one \(opType) only")
            }
            absorbed.append(reader)
            return reader
        }
        func shape(_ node: ONNXNode) throws -> [Int64] {
            guard node.inputs.count == 2, let tensor = constants[node.inputs[1]] else {
                throw fail(node, "C2PSA attention: the Reshape's shape is not a constant (dynamic-shape exports are not supported)")
            }
            return try integers(tensor, node)
        }
        func transposesLastTwo(_ node: ONNXNode) -> Bool { node.attribute("perm")?.ints == [0, 1, 3, 2] }
        func tensor(_ index: Int) -> String { nodes[index].outputs.first ?? "" }

        // qkv: a Conv read only by this Reshape.
        guard let input = reshape.inputs.first, let convolution = producer[input], nodes[convolution].opType == "Conv",
              consumers[input] == [start] else {
            throw fail(reshape, "C2PSA attention: the Reshape before the q, k, v Split must read a Conv that nothing else reads")
        }
        let split4 = try shape(reshape)
        guard split4.count == 4, split4[0] == 1, (1...4096).contains(split4[1]), (1...65_536).contains(split4[2]), split4[3] >= 1 else {
            throw fail(reshape, "C2PSA attention: shape \(split4), expected [1, heads, 2 key_dim + head_dim, H·W]")
        }
        // Split into q, k, v along axis 2.
        let split = try only(tensor(start), reshape, "Split", "the reshaped qkv")
        let splitNode = nodes[split]
        var sizes = splitNode.attribute("split")?.ints ?? []
        if splitNode.inputs.count >= 2, !splitNode.inputs[1].isEmpty {
            guard let constant = constants[splitNode.inputs[1]] else { throw fail(splitNode, "C2PSA attention: the split sizes are not a constant") }
            sizes = try integers(constant, splitNode)
        }
        guard splitNode.attribute("axis")?.int == 2, splitNode.outputs.count == 3, sizes.count == 3, sizes[0] == sizes[1],
              sizes.allSatisfy({ $0 >= 1 }), sizes.reduce(0, +) == split4[2] else {
            throw fail(splitNode, "C2PSA attention: expected a Split along axis 2 into q, k, v of key_dim, key_dim, head_dim (sizes \(sizes), axis \(splitNode.attribute("axis")?.int ?? 0))")
        }
        let (q, k, v) = (splitNode.outputs[0], splitNode.outputs[1], splitNode.outputs[2])
        // attn = softmax((qᵀ @ k) · scale)
        let transposeQ = try only(q, splitNode, "Transpose", "q")
        guard transposesLastTwo(nodes[transposeQ]) else { throw fail(nodes[transposeQ], "C2PSA attention: q must be transposed with perm [0, 1, 3, 2]") }
        let scores = try only(tensor(transposeQ), nodes[transposeQ], "MatMul", "qᵀ")
        guard nodes[scores].inputs == [tensor(transposeQ), k], consumers[k] == [scores] else {
            throw fail(nodes[scores], "C2PSA attention: expected qᵀ @ k, with k read by nothing else")
        }
        let scaling = consumers[tensor(scores)] ?? []
        guard scaling.count == 1, let scaleNode = scaling.first, ["Mul", "Div"].contains(nodes[scaleNode].opType), feature.contains(scaleNode) else {
            throw fail(nodes[scores], "C2PSA attention: qᵀ @ k must be read by one Mul (the scale) only")
        }
        absorbed.append(scaleNode)
        let scaleInputs = nodes[scaleNode].inputs
        guard scaleInputs.count == 2, let factorName = scaleInputs.first(where: { $0 != tensor(scores) }), scaleInputs.contains(tensor(scores)),
              let factor = constants[factorName], factor.elementCount == 1,
              nodes[scaleNode].opType == "Mul" || scaleInputs[1] == factorName else {
            throw fail(nodes[scaleNode], "C2PSA attention: the scale must be a constant scalar")
        }
        let value = try floats(factor, nodes[scaleNode])[0]
        let scale = nodes[scaleNode].opType == "Mul" ? value : 1 / value
        guard scale.isFinite, scale > 0 else { throw fail(nodes[scaleNode], "C2PSA attention: scale \(scale) is not a positive finite number") }
        let softmax = try only(tensor(scaleNode), nodes[scaleNode], "Softmax", "the scaled scores")
        let axis = nodes[softmax].attribute("axis")?.int ?? ((onnx.defaultOpset ?? 13) >= 13 ? -1 : 1)
        guard axis == -1 || axis == 3 else { throw fail(nodes[softmax], "C2PSA attention: softmax over axis \(axis); the last axis is supported") }
        // out = Reshape(v @ attnᵀ), values = Reshape(v)
        let transposeA = try only(tensor(softmax), nodes[softmax], "Transpose", "the attention map")
        guard transposesLastTwo(nodes[transposeA]) else { throw fail(nodes[transposeA], "C2PSA attention: the map must be transposed with perm [0, 1, 3, 2]") }
        let mix = try only(tensor(transposeA), nodes[transposeA], "MatMul", "the transposed map")
        guard nodes[mix].inputs == [v, tensor(transposeA)] else { throw fail(nodes[mix], "C2PSA attention: expected v @ attnᵀ") }
        let outReshape = try only(tensor(mix), nodes[mix], "Reshape", "v @ attnᵀ")
        let valueReaders = consumers[v] ?? []
        guard valueReaders.count == 2, valueReaders.contains(mix), let valueReshape = valueReaders.first(where: { $0 != mix }),
              nodes[valueReshape].opType == "Reshape", feature.contains(valueReshape) else {
            throw fail(splitNode, "C2PSA attention: v must be read by the MatMul and one Reshape (the pe convolution's input)")
        }
        absorbed.append(valueReshape)
        let shapes = [try shape(nodes[outReshape]), try shape(nodes[valueReshape])]
        let (heads, keyChannels, valueChannels) = (Int(split4[1]), Int(sizes[0]), Int(sizes[2]))
        // The values are the qkv map's second half only when head_dim = 2 key_dim (Ultralytics' attn_ratio 0.5).
        guard valueChannels == 2 * keyChannels else {
            throw fail(splitNode, "C2PSA attention: key_dim \(keyChannels) with head_dim \(valueChannels); only head_dim = 2 × key_dim (attn_ratio 0.5) is supported")
        }
        return AttentionMatch(nodes: absorbed, convolution: convolution, input: input, output: tensor(outReshape),
                              values: tensor(valueReshape), heads: heads, keyChannels: keyChannels, valueChannels: valueChannels,
                              scale: scale, positions: split4[3], outputShapes: shapes)
    }

    /// The attention layer (reading the qkv convolution, whose filters `qkvOrder` regrouped) and a route to the
    /// values (the qkv map's second half) for the pe convolution.
    mutating func emitAttention(_ match: AttentionMatch, node: ONNXNode, line: Int) throws {
        let qkv = try asPrevious(match.input, node)
        let spec = AttentionSpec(heads: match.heads, keyChannels: match.keyChannels, valueChannels: match.valueChannels,
                                 scale: match.scale, line: line)
        guard channels[qkv] == spec.inputChannels else {
            throw fail(node, "C2PSA attention: the qkv Conv has \(channels[qkv]) channels, \(spec.heads) heads of 2 × \(spec.keyChannels) + \(spec.valueChannels) need \(spec.inputChannels)")
        }
        // The map's size, from the layers so far (the Reshapes' constants must agree with it).
        let description = ModelDescription(inputShape: inputShape, layers: layers, path: path, preferredScaling: .scaleFit)
        let map: Shape
        do { map = try description.geometry(width: inputShape.width, height: inputShape.height)[qkv].outputShape } catch {
            throw fail(node, "C2PSA attention: \(error)")
        }
        let expected: [Int64] = [1, Int64(spec.outputChannels), Int64(map.height), Int64(map.width)]
        guard match.positions == Int64(map.planeCount), match.outputShapes.allSatisfy({ $0 == expected }) else {
            throw fail(node, "C2PSA attention: Reshapes to [1, heads, ·, \(match.positions)] and \(match.outputShapes) on a \(map.width)x\(map.height) map of \(spec.outputChannels) output channels; expected H·W = \(map.planeCount) and \(expected)")
        }
        append(.attention(spec), channels: spec.outputChannels)
        layerOf[match.output] = layers.count - 1
        append(.route(RouteSpec(layers: [qkv], groups: 2, groupIndex: 1, line: line)), channels: spec.outputChannels)
        layerOf[match.values] = layers.count - 1
    }
}
