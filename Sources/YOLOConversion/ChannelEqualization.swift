import Foundation
@_spi(Engine) import YOLO

/// Rescales channels between convolutions before int8 quantization, leaving the float model's function as it is
/// (cross-layer equalization): output channel `c` of a convolution `P` is multiplied by `s_c ≥ 1` (its weights and
/// bias), and every convolution reading that channel divides its weights on it by `s_c`.
///
/// That is exact where the values of `P` reach their readers only through operations that commute with a positive
/// scale per channel: `P`'s activation (linear, leaky, relu), max-pool, upsample and route (concatenations and group
/// slices keep channels apart); a shortcut, a head or another activation leaves `P` as it is.
///
/// Why: a u8 activation tensor has one scale, set by the channel reaching furthest, so a channel whose values stay
/// small gets few codes. Channel `c` (largest magnitude `r_c` on the calibration inputs, `R` the largest of its tensor)
/// is scaled by `s_c = R / (headroom · r_c)`, within `1…maximumScale`: it keeps `headroom` times its calibration
/// range below the tensor's edge, for the values new images bring; the readers' per-output-channel s8 weights absorb
/// `1 / s_c` across their input channels.
///
/// Which convolutions (measured on yolov4-tiny, docs/QUANTIZATION.md): a per-channel largest value is only as good
/// as the positions behind it, so only convolutions with at least `minimumSamples` output positions per channel
/// over the calibration inputs, and only those whose tensor is no other convolution's too (a concatenation shares
/// one u8 range between its parts). Rescaling the deep layers (13×13: 1,690 positions over ten photos) or every
/// layer clipped channels that were quiet on the calibration photos and not on new images.
enum ChannelEqualization {
    /// Largest scale given to one channel.
    static let maximumScale: Float = 16
    /// Each rescaled channel's calibration range stays this many times below its tensor's largest value.
    static let headroom: Float = 2
    /// Output positions per channel (summed over the calibration inputs) a convolution needs to be rescaled.
    static let minimumSamples = 100_000

    /// Where each channel of each layer's output comes from: (convolution, its output channel), or nil (the network
    /// input, or a layer that mixes channels other than a convolution).
    static func origins(_ description: ModelDescription, geometry: [LayerGeometry]) -> [[(layer: Int, channel: Int)?]] {
        var result: [[(layer: Int, channel: Int)?]] = []
        for (index, spec) in description.layers.enumerated() {
            let g = geometry[index]
            func source(_ i: Int) -> [(layer: Int, channel: Int)?] {
                g.inputs[i] >= 0 ? result[g.inputs[i]] : [(layer: Int, channel: Int)?](repeating: nil, count: g.inputShapes[i].channels)
            }
            switch spec {
            case .convolution:
                result.append((0..<g.outputShape.channels).map { (layer: index, channel: $0) })
            case .maxPool, .upsample:
                result.append(source(0))
            case .route(let s):
                var channels: [(layer: Int, channel: Int)?] = []
                for i in g.inputs.indices {
                    let all = source(i), part = all.count / s.groups
                    channels += all[s.groupIndex * part ..< (s.groupIndex + 1) * part]
                }
                result.append(channels)
            case .shortcut, .yolo, .attention:
                result.append([(layer: Int, channel: Int)?](repeating: nil, count: g.outputShape.channels))
            }
        }
        return result
    }

    /// The convolutions whose output channels may be rescaled exactly: a homogeneous activation, and no reader of
    /// their values other than a convolution, a max-pool, an upsample or a route.
    static func scalable(_ model: Model, geometry: [LayerGeometry],
                         origins: [[(layer: Int, channel: Int)?]]) -> Set<Int> {
        let layers = model.description.layers
        var result = Set(layers.indices.filter {
            guard case .convolution(let s) = layers[$0], s.groups == 1, model.convolutions[$0] != nil else { return false }
            return s.activation == .linear || s.activation == .leaky || s.activation == .relu
        })
        for (index, spec) in layers.enumerated() {
            switch spec {
            case .convolution(let s) where s.groups == 1: continue
            case .maxPool, .upsample, .route: continue
            case .convolution, .shortcut, .yolo, .attention:
                // A grouped convolution reads its input channels by group (its weights would need the scales by
                // group); the others mix channels.
                for source in geometry[index].inputs where source >= 0 {
                    for origin in origins[source] { if let origin { result.remove(origin.layer) } }
                }
            }
        }
        return result
    }

    /// The convolutions `equalize` rescales: `scalable` ones alone in their tensor group
    /// (`ActivationCalibration.groups`) with at least `minimumSamples` output positions per channel over `inputs`.
    static func chosen(_ model: Model, geometry: [LayerGeometry], inputs: [Tensor], minimumSamples: Int) -> [Int] {
        let description = model.description
        let origins = origins(description, geometry: geometry)
        let groups = ActivationCalibration.groups(description, geometry: geometry)
        var producersInGroup: [Int: Int] = [:]
        for index in description.layers.indices {
            if ActivationCalibration.isProducer(description.layers[index]), let group = groups[index] { producersInGroup[group, default: 0] += 1 }
        }
        let (width, height) = (description.inputShape.width, description.inputShape.height)
        let positions = inputs.reduce(0.0) { total, input in
            total + Double(input.shape.width * input.shape.height) / Double(width * height)
        }
        return scalable(model, geometry: geometry, origins: origins).sorted().filter { index in
            guard let group = groups[index], producersInGroup[group] == 1 else { return false }
            return positions * Double(geometry[index].outputShape.planeCount) >= Double(minimumSamples)
        }
    }

    /// `model` with the channels of `chosen(…)` rescaled (see the type), measured on the float model's values on
    /// `inputs`; each rescaled layer's scales alongside (empty when none).
    ///
    /// - Throws: `YOLOError` when an input does not fit the network.
    static func equalize(_ model: Model, inputs: [Tensor], minimumSamples: Int = minimumSamples) throws
        -> (model: Model, scales: [Int: [Float]]) {
        let description = model.description
        let allFloat = description.layers.indices.allSatisfy {
            if case .convolution = description.layers[$0] { return model.convolutions[$0] != nil }
            return true
        }
        guard allFloat, !inputs.isEmpty else { return (model, [:]) }
        let geometry = try description.geometry(width: description.inputShape.width, height: description.inputShape.height)
        let producers = chosen(model, geometry: geometry, inputs: inputs, minimumSamples: minimumSamples)
        guard !producers.isEmpty else { return (model, [:]) }
        // Largest magnitude of each producer's channels.
        var magnitudes: [Int: [Float]] = [:]
        try ActivationCalibration.forEachOutput(model: model, inputs: inputs, layers: producers) { layer, values in
            let channels = geometry[layer].outputShape.channels
            let plane = values.count / channels
            var m = magnitudes[layer] ?? [Float](repeating: 0, count: channels)
            for c in 0..<channels {
                for v in values[c * plane ..< (c + 1) * plane] where v.isFinite { m[c] = max(m[c], abs(v)) }
            }
            magnitudes[layer] = m
        }
        var scales: [Int: [Float]] = [:]
        for layer in producers {
            let largest = magnitudes[layer]!.max() ?? 0
            guard largest > 0 else { continue }
            scales[layer] = magnitudes[layer]!.map { r in r > 0 ? max(1, min(maximumScale, largest / (headroom * r))) : 1 }
        }
        var result = model
        for (layer, s) in scales {
            let p = model.convolutions[layer]!
            let rowLength = p.weights.count / s.count
            let weights = p.weights.buffer, biases = p.biases.buffer
            result.convolutions[layer] = ConvolutionParameters(
                weights: FloatBuffer((0..<p.weights.count).map { weights[$0] * s[$0 / rowLength] }),
                biases: FloatBuffer((0..<s.count).map { biases[$0] * s[$0] }))
        }
        // Readers: divide each input channel's weights by its origin's scale.
        let origins = origins(description, geometry: geometry)
        for (index, spec) in description.layers.enumerated() {
            guard case .convolution(let c) = spec, geometry[index].inputs[0] >= 0 else { continue }
            let inputOrigins = origins[geometry[index].inputs[0]]
            let divisors = inputOrigins.map { o in o.flatMap { scales[$0.layer]?[$0.channel] } ?? 1 }
            guard divisors.contains(where: { $0 != 1 }) else { continue }
            let p = result.convolutions[index]!
            let taps = c.size * c.size, rowLength = inputOrigins.count * taps
            let weights = p.weights.buffer
            result.convolutions[index] = ConvolutionParameters(
                weights: FloatBuffer((0..<p.weights.count).map { weights[$0] / divisors[($0 % rowLength) / taps] }),
                biases: p.biases)
        }
        return (result, scales)
    }
}
