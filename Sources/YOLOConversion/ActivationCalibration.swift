import Foundation
@_spi(Engine) import YOLO

/// The u8 quantization of each activation tensor, from the float model's values on calibration inputs: the
/// whole range they reach (`Int8ActivationRange.observed`), or the clipping with the smallest expected squared
/// error over their histogram (`.mse`).
enum ActivationCalibration {
    /// Bins of each tensor group's histogram.
    static let bins = 2048
    /// Clipping values tried per side of a search round.
    static let candidates = 256

    /// For each layer, the group of tensors that must share one quantization (nil for the heads' outputs, which
    /// no layer quantizes): a max-pool, an upsample by scale 1 and a route (a view, or a concatenation, whose
    /// parts are the sources' own outputs) pass codes through, so they and their sources form one group, named
    /// by its smallest layer index. Every other layer (`isProducer`) starts a group of its own: a convolution,
    /// and the float layers an int8 convolution may read and quantize (a shortcut, an attention block, an
    /// upsample that scales).
    static func groups(_ description: ModelDescription, geometry: [LayerGeometry]) -> [Int?] {
        var parent = Array(description.layers.indices)
        func find(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        var quantizable = [Bool](repeating: true, count: description.layers.count)
        for (index, spec) in description.layers.enumerated() {
            if case .yolo = spec {
                quantizable[index] = false
            } else if !isProducer(spec) {
                for source in geometry[index].inputs where source >= 0 { parent[find(source)] = find(index) }
            }
        }
        var names: [Int: Int] = [:]
        for index in description.layers.indices where quantizable[index] { names[find(index)] = min(names[find(index)] ?? index, index) }
        return description.layers.indices.map { quantizable[$0] ? names[find($0)] : nil }
    }

    /// True when a layer's outputs are values of its own, false for a head and for the layers that pass their
    /// sources' values through (max-pool, route, upsample by scale 1), whose ranges are their sources'.
    static func isProducer(_ spec: LayerSpec) -> Bool {
        switch spec {
        case .convolution, .shortcut, .attention: return true
        case .upsample(let s): return s.scale != 1
        case .maxPool, .route, .yolo: return false
        }
    }

    /// The quantization of every group, from the values of its producers (`isProducer`) in the float model
    /// `model` on `inputs`: one pass for each group's range; for `.mse` one more for its histogram, then
    /// `best(histogram:low:high:)`.
    ///
    /// - Throws: `YOLOError` when an input does not fit the network.
    static func quantizations(model: Model, inputs: [Tensor], groups: [Int?],
                              range: Int8ActivationRange) throws -> [Int: ActivationQuantization] {
        let producers = model.description.layers.indices.filter {
            groups[$0] != nil && isProducer(model.description.layers[$0])
        }
        var ranges: [Int: (low: Float, high: Float)] = [:]
        try forEachOutput(model: model, inputs: inputs, layers: producers) { layer, values in
            let group = groups[layer]!
            var (low, high) = ranges[group] ?? (Float.infinity, -Float.infinity)
            for v in values where v.isFinite { low = min(low, v); high = max(high, v) }
            ranges[group] = (low, high)
        }
        if range == .observed {
            return ranges.mapValues { low, high in
                let (lo, hi) = (min(low, 0), max(high, 0))
                return hi > lo ? ActivationQuantization(covering: lo, hi) : ActivationQuantization(covering: 0, 1)
            }
        }
        var histograms: [Int: [Double]] = [:]
        try forEachOutput(model: model, inputs: inputs, layers: producers) { layer, values in
            let group = groups[layer]!
            let (low, high) = ranges[group]!
            var counts = histograms[group] ?? [Double](repeating: 0, count: bins)
            let width = max(high - low, .leastNormalMagnitude) / Float(bins)
            for v in values where v.isFinite { counts[min(bins - 1, max(0, Int((v - low) / width)))] += 1 }
            histograms[group] = counts
        }
        return histograms.reduce(into: [:]) { result, entry in
            let (low, high) = ranges[entry.key]!
            result[entry.key] = best(histogram: entry.value, low: low, high: high)
        }
    }

    /// Runs the float model on each input and hands `body` the output of each of `layers`.
    static func forEachOutput(model: Model, inputs: [Tensor], layers: [Int],
                              _ body: (Int, UnsafeBufferPointer<Float>) -> Void) throws {
        for input in inputs {
            let network = try Network(model: model, width: input.shape.width, height: input.shape.height, int8Kernel: nil)
            let workspace = Workspace(for: network)
            _ = try network.forward(input, workspace: workspace)
            for layer in layers { body(layer, workspace.output(of: layer)) }
        }
    }

    /// The quantization with the smallest expected squared error over values distributed as `histogram`
    /// (`bins` equal bins over `[low, high]`): out-of-range values cost their distance to the range's edge
    /// squared, in-range ones the rounding's `scale²/12`. Coordinate descent, two rounds: the best upper clip
    /// with the lower one fixed, then the best lower clip (at most 0).
    static func best(histogram: [Double], low: Float, high: Float) -> ActivationQuantization {
        let bins = histogram.count
        let width = Double(max(high - low, .leastNormalMagnitude)) / Double(bins)
        let centers = (0..<bins).map { Double(low) + (Double($0) + 0.5) * width }
        func error(_ q: ActivationQuantization) -> Double {
            let (a, b) = (Double(q.range.low), Double(q.range.high))
            let rounding = Double(q.scale) * Double(q.scale) / 12
            var total = 0.0
            for (i, count) in histogram.enumerated() where count > 0 {
                let c = centers[i]
                total += count * (c < a ? (c - a) * (c - a) : c > b ? (c - b) * (c - b) : rounding)
            }
            return total
        }
        var (lo, hi) = (min(low, 0), max(high, 0))
        guard hi > lo else { return ActivationQuantization(covering: 0, 1) }
        for _ in 0..<2 {
            if hi > 0 {
                let tried = (1...candidates).map { max(high, 0) * Float($0) / Float(candidates) }
                hi = tried.min { error(ActivationQuantization(covering: lo, $0)) < error(ActivationQuantization(covering: lo, $1)) }!
            }
            if lo < 0 {
                let tried = (0...candidates).map { min(low, 0) * Float($0) / Float(candidates) }
                lo = tried.min { error(ActivationQuantization(covering: $0, hi)) < error(ActivationQuantization(covering: $1, hi)) }!
            }
        }
        return ActivationQuantization(covering: lo, hi)
    }
}
