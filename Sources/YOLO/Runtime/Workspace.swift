import Foundation

/// Per-caller memory for running a `Network`: every layer's output, the shared scratch buffer and
/// the input-pointer table, carved out of one allocation made at init.
///
/// Reused across forward passes, so after the first pass nothing is allocated. Not thread-safe:
/// give each concurrent caller its own workspace (the `Network` itself can be shared).
@_spi(Engine) public final class Workspace {
    /// Offsets (in bytes) of each layer's output in `arena`.
    private let offsets: [Int]
    /// How each layer's output is stored (`NetworkPlan.outputs`: float, or u8 between int8 layers).
    public let formats: [TensorFormat]
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
    /// Layers the forward pass skips: a later layer computes them, fused (`FusingLayer`).
    private let skipped: [Bool]
    /// Layers that compute a skipped layer themselves (`LayerIO.fused`).
    private let fusing: [Bool]
    /// Threads a pass may use (at least 1, at most the network's `maxThreads` and the pool's `threads`).
    public let threads: Int
    /// Threads each layer gets: `threads`, fewer for a layer with too little work to share (the network
    /// plan's `threadCaps`).
    private let layerThreads: [Int]
    /// The threads the pass runs on.
    public let pool: WorkerPool

    /// Allocates memory for every layer of `network`, to run on `pool`'s threads (shared, e.g. by every
    /// workspace of a `Detector`).
    ///
    /// - Parameter keeping: the layers whose outputs must stay readable after a pass (`output(of:)`).
    ///   `nil` (the default) keeps every layer's output. With a set (e.g. the heads), layers whose outputs
    ///   are no longer needed share memory, which makes the workspace much smaller.
    public init(for network: Network, pool: WorkerPool, keeping: Set<Int>? = nil) {
        self.pool = pool
        let threads = max(1, min(pool.threads, network.maxThreads))
        self.threads = threads
        layerThreads = network.plan.threadCaps.map { min(threads, $0) }
        if !KernelFamily.active.hasOwnKernel { BLAS.keepSingleThreaded() }
        let (skipped, fusing) = Workspace.skips(network, keeping: keeping)
        self.skipped = skipped
        self.fusing = fusing
        formats = network.plan.outputs
        let (offsets, totalBytes) = Workspace.placeBytes(network.layers, keeping: keeping, skipped: skipped,
                                                         elementBytes: formats.map(\.elementBytes))
        let total = totalBytes / 4
        self.kept = keeping
        let scratchCount = network.layers.map(\.scratchCount).max() ?? 0
        // 64-byte aligned (a cache line, one AVX-512 vector): every offset below is a multiple of 16 floats.
        arena = LargeAllocation.allocate(byteCount: (total + scratchCount + 16) * MemoryLayout<Float>.stride,
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
                pointerTable[starts[layer] + k] = UnsafePointer(address(arena, offsets[source]))
            }
        }
    }

    /// The layers a workspace keeping `keeping` skips (a fusing layer computes them) and the layers that
    /// then compute them fused.
    private static func skips(_ network: Network, keeping: Set<Int>?) -> (skipped: [Bool], fusing: [Bool]) {
        var skipped = [Bool](repeating: false, count: network.layers.count)
        var fusing = skipped
        if let keeping {
            for (index, layer) in network.layers.enumerated() {
                if let fused = layer as? any FusingLayer, !keeping.contains(fused.fusedIndex) {
                    skipped[fused.fusedIndex] = true
                    fusing[index] = true
                }
            }
        }
        return (skipped, fusing)
    }

    /// The bytes `init(for:pool:keeping:)` would allocate for its arena, computed without allocating.
    public static func byteCount(for network: Network, keeping: Set<Int>?) -> Int {
        let (_, totalBytes) = placeBytes(network.layers, keeping: keeping, skipped: skips(network, keeping: keeping).skipped,
                                         elementBytes: network.plan.outputs.map(\.elementBytes))
        return (totalBytes / 4 + (network.layers.map(\.scratchCount).max() ?? 0) + 16) * MemoryLayout<Float>.stride
    }

    /// A workspace with a pool of its own for `threads` threads (0: the network's `maxThreads`; the pool's
    /// other settings are `Threading`'s defaults).
    public convenience init(for network: Network, threads: Int = 0, keeping: Set<Int>? = nil) {
        let count = threads <= 0 ? network.maxThreads : min(threads, network.maxThreads)
        self.init(for: network, pool: WorkerPool(Threading(threads: count)), keeping: keeping)
    }

    deinit {
        arena.deallocate()
        pointerTable.deallocate()
    }

    /// The output at `offset` bytes into `arena`, typed as the layers' `LayerIO` takes it (a u8 output is
    /// rebound by the layer that reads it; it may not be 4-byte aligned).
    private func address(_ arena: UnsafeMutablePointer<Float>, _ offset: Int) -> UnsafeMutablePointer<Float> {
        UnsafeMutablePointer(OpaquePointer(UnsafeMutableRawPointer(arena) + offset))
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
                output: address(arena, offsets[layer]), scratch: scratch, threads: threads > 1 ? min(layerThreads[layer], pool.availableThreads) : 1, fused: fusing[layer])
    }

    /// True when the forward pass does not run `layer`: a later layer computes it, fused, and its
    /// output is not kept.
    public func skips(_ layer: Int) -> Bool { skipped[layer] }

    /// The output of `layer` from the last forward pass (valid until the next pass).
    /// - Precondition: the workspace keeps that layer's output (see `init(for:threads:keeping:)`), and it is
    ///   float (`formats`; `tensor(of:)` also reads u8 outputs).
    public func output(of layer: Int) -> UnsafeBufferPointer<Float> {
        precondition(kept?.contains(layer) ?? true, "Workspace.output(of: \(layer)): this workspace does not keep that layer's output")
        precondition(formats[layer] == .float, "Workspace.output(of: \(layer)): the output is u8 codes (use tensor(of:))")
        return UnsafeBufferPointer(start: address(arena, offsets[layer]), count: shapes[layer].count)
    }

    /// A copy of the output of `layer` as a float tensor (u8 outputs are dequantized).
    public func tensor(of layer: Int) -> Tensor {
        precondition(kept?.contains(layer) ?? true, "Workspace.tensor(of: \(layer)): this workspace does not keep that layer's output")
        guard case .bytes(let q) = formats[layer] else { return Tensor(shape: shapes[layer], copying: address(arena, offsets[layer])) }
        let codes = UnsafeRawPointer(arena) + offsets[layer]
        return Tensor(shape: shapes[layer], values: (0..<shapes[layer].count).map { q.value(codes.load(fromByteOffset: $0, as: UInt8.self)) })
    }

    // MARK: - Memory plan

    /// Offsets (in floats) of every layer's output, and the total.
    ///
    /// Routes share memory instead of copying where they can (`routeAliases`): a route of one source is a
    /// view of its channels, and the sources of a concatenation are computed straight into their parts of
    /// the route's output. The rest are outputs of their own ("roots", at multiples of 16 floats).
    /// Without `keeping`, roots are laid end to end. With it, each root lives from the first layer that
    /// writes into it to the last reader of anything in it (kept layers: to the end of the pass); roots are
    /// placed largest first at the lowest offset that overlaps no root alive at the same time (a greedy
    /// interval packing). Skipped layers take no memory.
    static func place(_ layers: [any Layer], keeping: Set<Int>?, skipped: [Bool]) -> (offsets: [Int], total: Int) {
        let (offsets, total) = placeBytes(layers, keeping: keeping, skipped: skipped, elementBytes: layers.map { _ in 4 })
        return (offsets.map { $0 / 4 }, total / 4)
    }

    /// `place` in bytes, for outputs of `elementBytes` bytes per value (4 float, 1 u8); a route and the sources
    /// it aliases have the same element size (`NetworkPlan.tensorFormats`).
    static func placeBytes(_ layers: [any Layer], keeping: Set<Int>?, skipped: [Bool],
                           elementBytes: [Int]) -> (offsets: [Int], total: Int) {
        placeBytes(counts: layers.indices.map { skipped[$0] ? 0 : layers[$0].outputShape.count }, elementBytes: elementBytes,
                   inputs: layers.map(\.inputs), keeping: keeping, aliases: routeAliases(layers, skipped: skipped))
    }

    /// Where a layer's output lives inside another's instead of on its own: `parent`'s output, `offset`
    /// floats in. A route of one source (darknet's channel-group slice, or a plain reference) is a view of
    /// that source; each source of a concatenation (`groups` 1) that is computed by a layer of its own,
    /// is not already placed elsewhere and appears once writes its part of the route's output directly, and so
    /// does the source of views that split it whole into consecutive parts (`wholeSplit`); `Route.forward` then
    /// copies only the other parts. (yolov4-tiny: 11 routes, about 1 ms of copies
    /// per pass at 1 thread, and a smaller workspace.) A YOLO head, which passes its input through, is a view of it
    /// too.
    static func routeAliases(_ layers: [any Layer], skipped: [Bool]) -> [(parent: Int, offset: Int)?] {
        var aliases = [(parent: Int, offset: Int)?](repeating: nil, count: layers.count)
        var isView = [Bool](repeating: false, count: layers.count)
        for (index, layer) in layers.enumerated() {
            guard !skipped[index], layer.inputs.count == 1, let source = layer.inputs.first, source >= 0, source < index,
                  !skipped[source] else { continue }
            if let route = layer as? Route {
                aliases[index] = (source, route.groupIndex * (route.inputShapes[0].count / route.groups))
            } else if layer is YOLOHead {
                aliases[index] = (source, 0)
            } else {
                continue
            }
            isView[index] = true
        }
        for (index, layer) in layers.enumerated() {
            guard let route = layer as? Route, !skipped[index], route.inputs.count > 1, route.groups == 1 else { continue }
            var offset = 0
            for (k, source) in route.inputs.enumerated() {
                defer { offset += route.inputShapes[k].count }
                let placed = source >= 0 && isView[source] ? wholeSplit(route, at: k, layers) : source
                guard let placed, placed >= 0, placed < index, !skipped[placed], !isView[placed], aliases[placed] == nil,
                      placed != source || route.inputs.firstIndex(of: source) == k else { continue }
                aliases[placed] = (index, offset)
            }
        }
        return aliases
    }

    /// The layer whose output `route`'s inputs `k ..< k + g` split into all of its `g` channel groups in order (each a
    /// route of that one source, group 0, 1, …: Ultralytics' C2f and C3k2 blocks concatenate both halves of a split
    /// with what the bottlenecks made of one), so that it can be computed straight into those parts; nil otherwise.
    static func wholeSplit(_ route: Route, at k: Int, _ layers: [any Layer]) -> Int? {
        /// Input `k + j` of the route when it is a route layer (not the network input, -1).
        func view(_ j: Int) -> Route? {
            let input = route.inputs[k + j]
            return input >= 0 ? layers[input] as? Route : nil
        }
        guard let first = view(0), first.inputs.count == 1, first.groups > 1, first.groupIndex == 0,
              k + first.groups <= route.inputs.count else { return nil }
        let source = first.inputs[0]
        for j in 1..<first.groups {
            guard let next = view(j), next.inputs == [source], next.groups == first.groups, next.groupIndex == j else { return nil }
        }
        return source
    }

    /// `place` for outputs of `counts` floats read by `inputs` (what a layer's `inputs` lists), with
    /// `aliases` as `routeAliases` gives them (nil: none).
    static func place(counts: [Int], inputs: [[Int]], keeping: Set<Int>?,
                      aliases: [(parent: Int, offset: Int)?]? = nil) -> (offsets: [Int], total: Int) {
        let (offsets, total) = placeBytes(counts: counts, elementBytes: counts.map { _ in 4 }, inputs: inputs, keeping: keeping,
                                          aliases: aliases)
        return (offsets.map { $0 / 4 }, total / 4)
    }

    /// `place(counts:inputs:keeping:aliases:)` in bytes, each output `elementBytes` bytes per value (alias offsets
    /// count values); every root starts on a 64-byte boundary.
    static func placeBytes(counts: [Int], elementBytes: [Int], inputs: [[Int]], keeping: Set<Int>?,
                           aliases: [(parent: Int, offset: Int)?]? = nil) -> (offsets: [Int], total: Int) {
        let layers = inputs.indices
        // Each layer's root and its offset inside the root.
        var root = Array(layers)
        var within = [Int](repeating: 0, count: layers.count)
        if let aliases {
            for index in layers {
                var (current, offset, steps) = (index, 0, 0)
                while let alias = aliases[current], steps < layers.count {
                    (current, offset, steps) = (alias.parent, offset + alias.offset, steps + 1)
                }
                (root[index], within[index]) = (current, offset)
            }
        }
        let sizes = layers.map { root[$0] == $0 ? (counts[$0] * elementBytes[$0] + 63) / 64 * 64 : 0 }
        within = layers.map { within[$0] * elementBytes[$0] }
        var offsets = [Int](repeating: 0, count: layers.count)
        guard let keeping else {
            var total = 0
            for index in layers where root[index] == index {
                offsets[index] = total
                total += sizes[index]
            }
            for index in layers { offsets[index] = offsets[root[index]] + within[index] }
            return (offsets, total)
        }
        // A root is alive from the first layer writing into it to the last reader of anything in it.
        var lastUse = Array(layers)
        for (index, sources) in inputs.enumerated() {
            for source in sources where source >= 0 { lastUse[source] = max(lastUse[source], index) }
        }
        for index in keeping where layers.contains(index) { lastUse[index] = layers.count }
        var start = Array(layers), end = Array(layers)
        for index in layers {
            let r = root[index]
            start[r] = min(start[r], index)
            end[r] = max(end[r], lastUse[index])
        }
        var placed: [Int] = []
        for index in layers.sorted(by: { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) })
            where root[index] == index {
            // Address ranges of roots alive at the same time as this one, by start.
            let conflicts = placed.filter { other in start[index] <= end[other] && start[other] <= end[index] }
                .map { (offsets[$0], offsets[$0] + sizes[$0]) }
                .sorted { $0.0 < $1.0 }
            var offset = 0
            for (first, last) in conflicts where offset + sizes[index] > first {
                offset = max(offset, last)
            }
            offsets[index] = offset
            placed.append(index)
        }
        let total = layers.map { offsets[$0] + sizes[$0] }.max() ?? 0
        for index in layers { offsets[index] = offsets[root[index]] + within[index] }
        return (offsets, total)
    }
}
