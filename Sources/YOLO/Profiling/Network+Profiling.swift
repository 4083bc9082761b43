import Foundation

/// A forward pass that times every layer. Separate from `Network.forward`, which stays untimed.
extension Network {
    /// Runs every layer like `forward(_:workspace:)` and writes each layer's wall-clock time, in
    /// seconds, to `seconds[layer]`. Allocates nothing.
    ///
    /// - Precondition: `seconds.count == layers.count`.
    public func forwardTimed(_ input: UnsafePointer<Float>, workspace: Workspace,
                             seconds: UnsafeMutableBufferPointer<Double>) {
        precondition(seconds.count == layers.count, "Network.forwardTimed: need one slot per layer")
        var last = DispatchTime.now().uptimeNanoseconds
        forward(input, workspace: workspace) { index in
            let now = DispatchTime.now().uptimeNanoseconds
            seconds[index] = Double(now - last) * 1e-9
            last = now
        }
    }

    /// Floating-point operations of each layer at this network's size (a multiply-add counts 2),
    /// as `yolo info` counts them. Winograd layers are credited with the direct convolution's count.
    public var layerFlops: [Double] {
        guard let geometry = try? model.description.geometry(width: inputShape.width, height: inputShape.height) else {
            return layers.map { _ in 0 }
        }
        return LayerTable(description: model.description, geometry: geometry).rows.map(\.flops)
    }
}

/// Order statistics of repeated timings.
@_spi(Engine) public struct TimingSummary: Sendable, Equatable {
    public let runs: Int
    public let median: Double
    public let min: Double
    public let max: Double
    /// The 90th percentile (nearest rank).
    public let p90: Double

    /// Summarizes `samples` (any unit; the summary keeps it).
    /// - Precondition: `samples` is not empty.
    public init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "TimingSummary: no samples")
        let sorted = samples.sorted()
        let n = sorted.count
        runs = n
        median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        self.min = sorted[0]
        self.max = sorted[n - 1]
        let rank = Int((0.9 * Double(n)).rounded(.up))
        p90 = sorted[Swift.max(0, Swift.min(n - 1, rank - 1))]
    }
}
