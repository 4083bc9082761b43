import Foundation

/// Per-caller memory for running a `Network`: every layer's output, the shared scratch buffer and
/// the input-pointer table, carved out of one allocation made at init.
///
/// Reused across forward passes, so after the first pass nothing is allocated. Not thread-safe:
/// give each concurrent caller its own workspace (the `Network` itself can be shared).
@_spi(Engine) public final class Workspace {
    /// Offsets (in floats) of each layer's output in `arena`.
    private let offsets: [Int]
    private let shapes: [Shape]
    private let arena: UnsafeMutablePointer<Float>
    /// Floats in `arena`.
    public let arenaCount: Int
    private let scratch: UnsafeMutablePointer<Float>
    /// For each layer, where its input pointers start in `pointerTable`.
    private let tableStarts: [Int]
    private let inputIndices: [[Int]]
    private let pointerTable: UnsafeMutablePointer<UnsafePointer<Float>>
    private let networkIdentity: UInt64
    private var input: UnsafePointer<Float>?
    /// Layers whose outputs survive a pass; nil: all.
    private let kept: Set<Int>?
    /// Layers the forward pass skips: a later layer computes them, fused (`ConvolutionMaxPool`).
    private let skipped: [Bool]
    /// Layers that compute a skipped layer themselves (`LayerIO.fused`).
    private let fusing: [Bool]
    /// Worker threads each layer may use during `Network.forward` (at least 1).
    public var threads: Int {
        didSet { threads = max(1, threads) }
    }

    /// Allocates memory for every layer of `network`.
    ///
    /// - Parameter threads: worker threads per layer; default: the machine's active processor count.
    ///   The engine does its own threading, so this sets OpenBLAS (process-wide) to one thread.
    /// - Parameter keeping: the layers whose outputs must stay readable after a pass (`output(of:)`).
    ///   `nil` (the default) keeps every layer's output. With a set (e.g. the heads), layers whose outputs
    ///   are no longer needed share memory, which makes the workspace much smaller.
    public init(for network: Network, threads: Int = Parallel.coreCount, keeping: Set<Int>? = nil) {
        self.threads = max(1, threads)
        if BLAS.threads != 1 { BLAS.threads = 1 }
        var skipped = [Bool](repeating: false, count: network.layers.count)
        var fusing = skipped
        if let keeping {
            for (index, layer) in network.layers.enumerated() {
                if let fused = layer as? ConvolutionMaxPool, !keeping.contains(fused.convolutionIndex) {
                    skipped[fused.convolutionIndex] = true
                    fusing[index] = true
                }
            }
        }
        self.skipped = skipped
        self.fusing = fusing
        let (offsets, total) = Workspace.place(network.layers, keeping: keeping, skipped: skipped)
        self.kept = keeping
        let scratchCount = network.layers.map(\.scratchCount).max() ?? 0
        // 64-byte aligned (a cache line, one AVX-512 vector): every offset below is a multiple of 16 floats.
        arena = UnsafeMutableRawPointer.allocate(byteCount: (total + scratchCount + 16) * MemoryLayout<Float>.stride,
                                                 alignment: 64)
            .bindMemory(to: Float.self, capacity: total + scratchCount + 16)
        arena.initialize(repeating: 0, count: total + scratchCount + 16)
        arenaCount = total + scratchCount
        scratch = arena + total
        self.offsets = offsets
        shapes = network.layers.map(\.outputShape)
        inputIndices = network.layers.map(\.inputs)
        var starts: [Int] = []
        var entries = 0
        for inputs in inputIndices {
            starts.append(entries)
            entries += inputs.count
        }
        tableStarts = starts
        pointerTable = .allocate(capacity: max(entries, 1))
        networkIdentity = network.identity
        // Fill the table once; only entries that point at the network input change per pass.
        for (layer, inputs) in inputIndices.enumerated() {
            for (k, source) in inputs.enumerated() where source >= 0 {
                pointerTable[starts[layer] + k] = UnsafePointer(arena + offsets[source])
            }
        }
    }

    deinit {
        arena.deallocate()
        pointerTable.deallocate()
    }

    func isBuilt(for network: Network) -> Bool {
        network.identity == networkIdentity
    }

    func setInput(_ pointer: UnsafePointer<Float>) {
        guard input != pointer else { return }
        input = pointer
        for (layer, inputs) in inputIndices.enumerated() {
            for (k, source) in inputs.enumerated() where source < 0 {
                pointerTable[tableStarts[layer] + k] = pointer
            }
        }
    }

    func io(for layer: Int) -> LayerIO {
        LayerIO(inputs: UnsafeBufferPointer(start: pointerTable + tableStarts[layer], count: inputIndices[layer].count),
                output: arena + offsets[layer], scratch: scratch, threads: threads, fused: fusing[layer])
    }

    /// True when the forward pass does not run `layer`: a later layer computes it, fused, and its
    /// output is not kept.
    public func skips(_ layer: Int) -> Bool { skipped[layer] }

    /// The output of `layer` from the last forward pass (valid until the next pass).
    /// - Precondition: the workspace keeps that layer's output (see `init(for:threads:keeping:)`).
    public func output(of layer: Int) -> UnsafeBufferPointer<Float> {
        precondition(kept?.contains(layer) ?? true, "Workspace.output(of: \(layer)): this workspace does not keep that layer's output")
        return UnsafeBufferPointer(start: arena + offsets[layer], count: shapes[layer].count)
    }

    /// A copy of the output of `layer` as a tensor.
    public func tensor(of layer: Int) -> Tensor {
        precondition(kept?.contains(layer) ?? true, "Workspace.tensor(of: \(layer)): this workspace does not keep that layer's output")
        return Tensor(shape: shapes[layer], copying: arena + offsets[layer])
    }

    // MARK: - Memory plan

    /// Offsets (in floats, multiples of 16 for 64-byte alignment) of every layer's output, and the total.
    ///
    /// Without `keeping`, outputs are laid end to end. With it, each output lives from its layer to its last
    /// reader (kept layers: to the end of the pass); outputs are placed largest first at the lowest offset
    /// that overlaps no output alive at the same time (a greedy interval packing).
    /// Skipped layers take no memory.
    static func place(_ layers: [any Layer], keeping: Set<Int>?, skipped: [Bool]) -> (offsets: [Int], total: Int) {
        place(counts: layers.indices.map { skipped[$0] ? 0 : layers[$0].outputShape.count }, inputs: layers.map(\.inputs),
              keeping: keeping)
    }

    /// `place` for outputs of `counts` floats read by `inputs` (what a layer's `inputs` lists).
    static func place(counts: [Int], inputs: [[Int]], keeping: Set<Int>?) -> (offsets: [Int], total: Int) {
        let sizes = counts.map { ($0 + 15) / 16 * 16 }
        let layers = inputs.indices
        guard let keeping else {
            var offsets: [Int] = []
            var total = 0
            for size in sizes {
                offsets.append(total)
                total += size
            }
            return (offsets, total)
        }
        var lastUse = Array(layers)
        for (index, sources) in inputs.enumerated() {
            for source in sources where source >= 0 { lastUse[source] = max(lastUse[source], index) }
        }
        for index in keeping where layers.contains(index) { lastUse[index] = layers.count }
        var offsets = [Int](repeating: 0, count: layers.count)
        var placed: [Int] = []
        for index in layers.sorted(by: { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) }) {
            // Address ranges of outputs alive at the same time as this one, by start.
            let conflicts = placed.filter { other in index <= lastUse[other] && other <= lastUse[index] }
                .map { (offsets[$0], offsets[$0] + sizes[$0]) }
                .sorted { $0.0 < $1.0 }
            var offset = 0
            for (start, end) in conflicts where offset + sizes[index] > start {
                offset = max(offset, end)
            }
            offsets[index] = offset
            placed.append(index)
        }
        let total = layers.map { offsets[$0] + sizes[$0] }.max() ?? 0
        return (offsets, total)
    }
}
