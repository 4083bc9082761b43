import Foundation

/// Per-caller memory for running a `Network`: every layer's output, the shared scratch buffer and
/// the input-pointer table, carved out of one allocation made at init.
///
/// Reused across forward passes, so after the first pass nothing is allocated. Not thread-safe:
/// give each concurrent caller its own workspace (the `Network` itself can be shared).
public final class Workspace {
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
    /// Worker threads each layer may use during `Network.forward` (at least 1).
    public var threads: Int {
        didSet { threads = max(1, threads) }
    }

    /// Allocates memory for every layer of `network`.
    ///
    /// - Parameter threads: worker threads per layer; default: the machine's active processor count.
    ///   The engine does its own threading, so this sets OpenBLAS (process-wide) to one thread.
    public init(for network: Network, threads: Int = Parallel.coreCount) {
        self.threads = max(1, threads)
        if BLAS.threads != 1 { BLAS.threads = 1 }
        var offsets: [Int] = []
        var total = 0
        for layer in network.layers {
            offsets.append(total)
            // Keep each tensor 64-byte aligned for vector loads.
            total += (layer.outputShape.count + 15) / 16 * 16
        }
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
                output: arena + offsets[layer], scratch: scratch, threads: threads)
    }

    /// The output of `layer` from the last forward pass (valid until the next pass).
    public func output(of layer: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: arena + offsets[layer], count: shapes[layer].count)
    }

    /// A copy of the output of `layer` as a tensor.
    public func tensor(of layer: Int) -> Tensor {
        Tensor(shape: shapes[layer], copying: arena + offsets[layer])
    }
}
