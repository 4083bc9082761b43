import Foundation

/// What a `Detector` holds beyond its model: the networks it built (one per input size) and the scratch
/// memory of its calls (one workspace and input buffer each), with the bounds on both.
///
/// - At most `passLimit` calls run their pass at once; the others wait.
/// - At most `maximumNetworks` networks stay built; the least recently used goes first.
/// - With a `byteLimit`, the networks' own bytes (`Network.ownedBytes`) and every scratch, idle or in
///   use, stay within it: a call that needs a new scratch first drops idle scratch and networks nobody is
///   using (least recently used first), then waits for running calls to give theirs back. A call that
///   does not fit even with nothing else held fails at once.
///
/// One mutex guards everything; scratch memory is allocated and freed outside it.
final class DetectorMemory: @unchecked Sendable {
    struct Size: Hashable { var width: Int; var height: Int }

    /// A workspace and an input buffer for one network, used by one call at a time.
    final class Scratch: @unchecked Sendable {
        let workspace: Workspace
        let input: UnsafeMutablePointer<Float>
        let bytes: Int
        init(network: Network, pool: WorkerPool, bytes: Int) {
            workspace = Workspace(for: network, pool: pool, keeping: Set(network.headIndices))
            input = .allocate(capacity: network.inputShape.count)
            self.bytes = bytes
        }
        deinit { input.deallocate() }
    }

    /// A built network and what it costs.
    private struct Entry {
        var network: Network
        /// `network.ownedBytes`.
        var bytes: Int
        /// One scratch for it: its workspace (keeping the heads) and its input.
        var scratchBytes: Int
        /// Calls running a pass on it now.
        var users = 0
        /// In the cache (false: evicted while calls still ran on it; dropped when the last one returns).
        var cached = true
    }

    let passLimit: Int
    let byteLimit: Int?
    let maximumNetworks: Int

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private nonisolated(unsafe) var entries: [Size: Entry] = [:]
    /// Cached sizes, least recently used first.
    private nonisolated(unsafe) var order: [Size] = []
    private nonisolated(unsafe) var idle: [Size: [Scratch]] = [:]
    private nonisolated(unsafe) var running = 0
    /// Bytes of the scratch running calls hold, and of idle scratch.
    private nonisolated(unsafe) var runningBytes = 0
    private nonisolated(unsafe) var idleBytes = 0

    init(passLimit: Int, byteLimit: Int?, maximumNetworks: Int) {
        self.passLimit = max(1, passLimit)
        self.byteLimit = byteLimit
        self.maximumNetworks = max(1, maximumNetworks)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        changed.deallocate()
        lock.deallocate()
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body()
    }

    /// Bytes held now: networks (cached or in use) and scratch (idle or in use).
    var heldBytes: Int { locked { heldLocked } }

    private var heldLocked: Int { entries.values.reduce(0) { $0 + $1.bytes } + idleBytes + runningBytes }

    /// Cached sizes, least recently used first.
    var cachedSizes: [Size] { locked { order } }

    /// The cached network for `size`, now the most recently used; nil if none.
    func network(_ size: Size) -> Network? {
        locked {
            guard let entry = entries[size], entry.cached else { return nil }
            touch(size)
            return entry.network
        }
    }

    /// Caches `network` (built by the caller outside the lock) unless another call cached one for its size
    /// meanwhile; returns the cached one. Evicts beyond `maximumNetworks`.
    func insert(_ network: Network) -> Network {
        let size = Size(width: network.inputShape.width, height: network.inputShape.height)
        let bytes = network.ownedBytes
        let scratchBytes = Self.scratchBytes(network)
        var dropped: [Scratch] = []
        let result: Network = locked {
            // A network already cached for the size wins; one evicted while calls still run on it is cached again.
            var entry = entries[size] ?? Entry(network: network, bytes: bytes, scratchBytes: scratchBytes)
            entry.cached = true
            entries[size] = entry
            touch(size)
            while order.count > maximumNetworks { dropped += evict(order[0]) }
            return entry.network
        }
        _ = dropped  // freed here, outside the lock
        return result
    }

    /// Starts a pass at `network`'s size: a scratch for it, waiting while `passLimit` calls run or, with a
    /// byte limit, until the scratch fits. Returns the network to run: `network`, or the one cached for its
    /// size if another call cached one while this call waited (the same model and plan). End the pass with
    /// `giveBack(_:for:)`.
    /// - Throws: `YOLOError.invalidArgument` when this network and one scratch alone exceed the byte limit.
    func borrow(for network: Network, pool: WorkerPool) throws -> (network: Network, scratch: Scratch) {
        let size = Size(width: network.inputShape.width, height: network.inputShape.height)
        let ownScratchBytes = Self.scratchBytes(network)
        var dropped: [Scratch] = []
        defer { _ = dropped }  // freed outside the lock
        let (chosen, reused, bytes): (Network, Scratch?, Int) = try locked {
            while true {
                if entries[size] == nil {
                    // Evicted while this call waited: counted again for as long as the call runs.
                    entries[size] = Entry(network: network, bytes: network.ownedBytes, scratchBytes: ownScratchBytes, cached: false)
                }
                let entry = entries[size]!
                if running < passLimit {
                    if let scratch = idle[size]?.popLast() {
                        idleBytes -= scratch.bytes
                        admit(size, bytes: scratch.bytes)
                        return (entry.network, scratch, scratch.bytes)
                    }
                    let need = entry.scratchBytes
                    if fits(need) || makeRoom(need, keeping: size, into: &dropped) {
                        admit(size, bytes: need)
                        return (entry.network, nil, need)
                    }
                    if running == 0 {
                        if !entry.cached && entry.users == 0 { entries[size] = nil }
                        throw YOLOError.invalidArgument(
                            "the \(size.width)x\(size.height) input needs \(MemoryBudget.format(entry.bytes + need)) "
                            + "(its network \(MemoryBudget.format(entry.bytes)), one pass's scratch \(MemoryBudget.format(need))), "
                            + "more than the detector's memory limit of \(MemoryBudget.format(byteLimit ?? 0))")
                    }
                }
                pthread_cond_wait(changed, lock)
            }
        }
        return (chosen, reused ?? Scratch(network: chosen, pool: pool, bytes: bytes))
    }

    /// Bytes of one scratch for `network`: its workspace keeping the heads, and its input.
    static func scratchBytes(_ network: Network) -> Int {
        Workspace.byteCount(for: network, keeping: Set(network.headIndices)) + network.inputShape.count * MemoryLayout<Float>.stride
    }

    /// Ends the pass that borrowed `scratch`: keeps it for the next call at its size while its network is
    /// cached (and the idle ones stay within `passLimit`), otherwise frees it.
    func giveBack(_ scratch: Scratch, for network: Network) {
        let size = Size(width: network.inputShape.width, height: network.inputShape.height)
        var dropped: [Scratch] = [scratch]
        locked {
            running -= 1
            runningBytes -= scratch.bytes
            if var entry = entries[size], entry.network.identity == network.identity {
                entry.users -= 1
                if !entry.cached && entry.users == 0 {
                    entries[size] = nil
                } else {
                    entries[size] = entry
                    let idleCount = idle.values.reduce(0) { $0 + $1.count }
                    if entry.cached && scratch.workspace.isBuilt(for: network) && idleCount + running < passLimit {
                        idle[size, default: []].append(scratch)
                        idleBytes += scratch.bytes
                        dropped.removeAll()
                    }
                }
            }
            pthread_cond_broadcast(changed)
        }
        _ = dropped
    }

    /// Drops every network nobody is using and every idle scratch, except the networks for `keeping`
    /// (their idle scratch goes too). Running calls keep what they use.
    func release(keeping: Set<Size>) {
        var dropped: [Scratch] = []
        locked {
            for (_, scratches) in idle { dropped += scratches }
            idle = [:]
            idleBytes = 0
            for size in order where !keeping.contains(size) { dropped += evict(size) }
            pthread_cond_broadcast(changed)
        }
        _ = dropped
    }

    // MARK: Under the lock

    private func touch(_ size: Size) {
        order.removeAll { $0 == size }
        order.append(size)
    }

    private func admit(_ size: Size, bytes: Int) {
        running += 1
        runningBytes += bytes
        entries[size]!.users += 1
        touch(size)
    }

    private func fits(_ need: Int) -> Bool {
        guard let byteLimit else { return true }
        return heldLocked + need <= byteLimit
    }

    /// Drops idle scratch, then unused networks other than `keeping`'s, least recently used first, until
    /// `need` more bytes fit; true when they do.
    private func makeRoom(_ need: Int, keeping: Size, into dropped: inout [Scratch]) -> Bool {
        for size in order where !fits(need) {
            if let scratches = idle[size], size != keeping {
                dropped += scratches
                idleBytes -= scratches.reduce(0) { $0 + $1.bytes }
                idle[size] = nil
            }
        }
        if !fits(need), let scratches = idle[keeping] {
            dropped += scratches
            idleBytes -= scratches.reduce(0) { $0 + $1.bytes }
            idle[keeping] = nil
        }
        for size in order where !fits(need) && size != keeping && entries[size]?.users == 0 {
            dropped += evict(size)
        }
        return fits(need)
    }

    /// Takes `size` out of the cache with its idle scratch; its entry stays while calls still run on it.
    private func evict(_ size: Size) -> [Scratch] {
        order.removeAll { $0 == size }
        let scratches = idle.removeValue(forKey: size) ?? []
        idleBytes -= scratches.reduce(0) { $0 + $1.bytes }
        if let entry = entries[size] {
            if entry.users == 0 { entries[size] = nil } else { entries[size]!.cached = false }
        }
        return scratches
    }
}
