import Foundation

/// C2PSA's multi-head attention (`AttentionSpec`): per head, each position `i` of the map attends to every
/// position `j` with `softmax_j(scale · q_i · k_j)` and takes that mix of the values.
///
/// Computed one query row at a time, so no N × N map is ever stored: a worker's scratch holds the N scores of
/// its current row (the keys added along it channel by channel, eight lanes at a time), which are scaled,
/// exponentiated after subtracting their maximum, summed, and then dotted with each value channel and divided by
/// the sum. The threads split the heads' rows; the layer reads float input and writes float output.
@_spi(Engine) public struct Attention: Layer {
    public let inputs: [Int]
    public let outputShape: Shape
    public let heads: Int
    public let keyChannels: Int
    public let valueChannels: Int
    public let scale: Float
    /// The most threads a pass gives the layer: its scratch holds one score row per worker.
    public let maxThreads: Int

    /// - Precondition: `inputShape` has `heads · (2 · keyChannels + valueChannels)` channels (the validator checks).
    public init(input: Int, inputShape: Shape, heads: Int, keyChannels: Int, valueChannels: Int, scale: Float, threads: Int) {
        precondition(heads >= 1 && keyChannels >= 1 && valueChannels >= 1, "Attention: bad geometry")
        precondition(inputShape.channels == heads * (2 * keyChannels + valueChannels), "Attention: \(inputShape.channels) input channels")
        self.inputs = [input]
        self.outputShape = Shape(channels: heads * valueChannels, height: inputShape.height, width: inputShape.width)
        (self.heads, self.keyChannels, self.valueChannels, self.scale) = (heads, keyChannels, valueChannels, scale)
        self.maxThreads = max(1, threads)
    }

    public var algorithm: String { "attention by query rows" }

    var positions: Int { outputShape.planeCount }

    public var scratchCount: Int { lineRounded(positions) * maxThreads }

    public func forward(_ io: LayerIO) {
        let input = UncheckedSendable(io.input), output = UncheckedSendable(io.output), scratch = UncheckedSendable(io.scratch)
        let n = positions
        Parallel.forClaimedRanges(heads * n, threads: min(io.threads, maxThreads)) { worker, rows in
            let scores = scratch.value + worker * lineRounded(n)
            for r in rows { row(r / n, r % n, input: input.value, output: output.value, scores: scores) }
        }
    }

    /// Query position `i` of head `h`.
    func row(_ h: Int, _ i: Int, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, scores: UnsafeMutablePointer<Float>) {
        let n = positions
        let queries = input + h * keyChannels * n
        let keys = input + (heads + h) * keyChannels * n
        let values = input + (2 * heads * keyChannels + h * valueChannels) * n
        scores.initialize(repeating: 0, count: n)
        for c in 0..<keyChannels {
            Self.addScaled(scores, keys + c * n, queries[c * n + i], count: n)
        }
        var largest = -Float.infinity
        for j in 0..<n {
            scores[j] *= scale
            largest = max(largest, scores[j])
        }
        var sum: Float = 0
        for j in 0..<n {
            let e = expf(scores[j] - largest)
            scores[j] = e
            sum += e
        }
        let out = output + h * valueChannels * n
        for d in 0..<valueChannels {
            out[d * n + i] = Self.dot(values + d * n, scores, count: n) / sum
        }
    }

    /// `a[j] += w · b[j]` for `j` in `0..<count`.
    @inline(__always)
    static func addScaled(_ a: UnsafeMutablePointer<Float>, _ b: UnsafePointer<Float>, _ w: Float, count: Int) {
        var j = 0
        let scale = SIMD8<Float>(repeating: w)
        while j + 8 <= count {
            let x = UnsafeRawPointer(b + j).loadUnaligned(as: SIMD8<Float>.self)
            let y = UnsafeRawPointer(a + j).loadUnaligned(as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(a + j).storeBytes(of: y + scale * x, as: SIMD8<Float>.self)
            j += 8
        }
        while j < count { a[j] += w * b[j]; j += 1 }
    }

    /// `Σ a[j] · b[j]` over `0..<count` (eight partial sums, then the rest).
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        var j = 0
        var lanes = SIMD8<Float>()
        while j + 8 <= count {
            lanes += UnsafeRawPointer(a + j).loadUnaligned(as: SIMD8<Float>.self) * UnsafeRawPointer(b + j).loadUnaligned(as: SIMD8<Float>.self)
            j += 8
        }
        var sum = lanes.sum()
        while j < count { sum += a[j] * b[j]; j += 1 }
        return sum
    }
}
