import Foundation
@_spi(Engine) import YOLO

/// The error of approximated weights against the originals.
@_spi(Engine) public struct WeightError: Sendable, Equatable {
    /// Root mean square of `ŵ − w`.
    public var rmse: Double
    /// Largest `|ŵ − w|`.
    public var maxError: Float
    /// Root mean square of the original weights (to judge `rmse` against).
    public var rms: Double

    /// Compares `approximation` with `original` (same count).
    public init(_ original: UnsafeBufferPointer<Float>, _ approximation: UnsafeBufferPointer<Float>) {
        precondition(original.count == approximation.count, "WeightError: \(original.count) vs \(approximation.count) weights")
        var squared = 0.0, energy = 0.0
        var worst: Float = 0
        for i in 0..<original.count {
            let d = approximation[i] - original[i]
            squared += Double(d) * Double(d)
            energy += Double(original[i]) * Double(original[i])
            worst = max(worst, abs(d))
        }
        let n = Double(max(original.count, 1))
        rmse = (squared / n).squareRoot()
        rms = (energy / n).squareRoot()
        maxError = worst
    }
}

/// One convolution of two models side by side: how each stores it and how far apart the weights are.
@_spi(Engine) public struct LayerWeightComparison: Sendable {
    public var layer: Int
    /// Storage in model A and B, e.g. `f32`, `lut8 per-channel`.
    public var storageA: String
    public var storageB: String
    /// Bytes of weights (codes, tables and scales) plus biases, in A and in B.
    public var bytesA: Int
    public var bytesB: Int
    public var weights: Int
    /// B's weights against A's.
    public var error: WeightError
    /// Largest |Δ| between the biases.
    public var biasMaxError: Float

    /// Compares every convolution of `a` and `b` (same network description required).
    ///
    /// - Throws: `YOLOError.invalidArgument` when the models' convolutions differ in shape.
    public static func compare(_ a: Model, _ b: Model) throws -> [LayerWeightComparison] {
        var rows: [LayerWeightComparison] = []
        for (index, layer) in a.description.layers.enumerated() {
            guard case .convolution = layer else { continue }
            guard let pa = a.parameters(ofLayer: index), let pb = b.parameters(ofLayer: index),
                  pa.weights.count == pb.weights.count, pa.biases.count == pb.biases.count else {
                throw YOLOError.invalidArgument("the models differ at layer \(index): they are not the same network")
            }
            var biasError: Float = 0
            for i in 0..<pa.biases.count { biasError = max(biasError, abs(pa.biases[i] - pb.biases[i])) }
            let sa = a.storage(ofLayer: index), sb = b.storage(ofLayer: index)
            rows.append(LayerWeightComparison(layer: index, storageA: sa.name, storageB: sb.name, bytesA: sa.bytes, bytesB: sb.bytes,
                                              weights: pa.weights.count,
                                              error: withExtendedLifetime((pa, pb)) { WeightError(pa.weights.buffer, pb.weights.buffer) },
                                              biasMaxError: biasError))
        }
        return rows
    }
}
