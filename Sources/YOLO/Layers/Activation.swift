import Foundation

/// A darknet activation function, applied element-wise.
public enum Activation: String, Sendable, CaseIterable {
    case linear, leaky, relu, logistic

    /// The function on one value. Leaky uses darknet's slope 0.1.
    @inlinable
    public func callAsFunction(_ x: Float) -> Float {
        switch self {
        case .linear: return x
        case .leaky: return x > 0 ? x : 0.1 * x
        case .relu: return x > 0 ? x : 0
        case .logistic: return 1 / (1 + expf(-x))
        }
    }

    /// Adds `bias` to each of `count` values at `values` and applies the activation, in one pass.
    @inlinable
    public func applyBiased(_ values: UnsafeMutablePointer<Float>, count: Int, bias: Float) {
        switch self {
        case .linear:
            for i in 0..<count { values[i] += bias }
        case .leaky:
            for i in 0..<count {
                let v = values[i] + bias
                values[i] = v > 0 ? v : 0.1 * v
            }
        case .relu:
            for i in 0..<count { values[i] = max(values[i] + bias, 0) }
        case .logistic:
            for i in 0..<count { values[i] = 1 / (1 + expf(-(values[i] + bias))) }
        }
    }
}
