import Foundation

/// A small parallel-for over the calling thread's `WorkerPool` that honours an explicit thread count.
///
/// The engine does its own threading: layers split their work with `Parallel` and call OpenBLAS
/// single-threaded inside each part (see `Workspace`). Loops run on the pool `Network.forward` made current
/// (the workspace's), else on the shared pool (`WorkerPool.shared`). With one thread the body runs inline.
@_spi(Engine) public enum Parallel {
    /// Calls `body(range)` for `threads` contiguous, near-equal parts of `0..<count`, one part per
    /// worker, and returns when all are done. Parts are empty-free: fewer workers run when
    /// `count < threads`. `body` must only write memory no other part touches.
    public static func forRanges(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
        forWorkers(count, threads: threads) { _, range in body(range) }
    }

    /// Like `forRanges`, also passing each part's worker index (`0 ..< min(threads, count)`), so a
    /// worker can use its own slice of preallocated scratch memory.
    public static func forWorkers(_ count: Int, threads: Int, _ body: (_ worker: Int, _ range: Range<Int>) -> Void) {
        let workers = min(max(threads, 1), count)
        guard workers > 1 else {
            if count > 0 { body(0, 0..<count) }
            return
        }
        // Each worker gets a disjoint part; the caller promises the parts touch disjoint memory.
        WorkerPool.currentCore.run(parts: workers) { worker in
            body(worker, part(worker, of: workers, count: count))
        }
    }

    /// Calls `body(i)` for every `i` in `0..<count`, split into `threads` contiguous parts.
    public static func forEach(_ count: Int, threads: Int, _ body: (Int) -> Void) {
        forRanges(count, threads: threads) { range in
            for i in range { body(i) }
        }
    }

    /// The `worker`-th of `workers` contiguous parts of `0..<count`; sizes differ by at most one.
    @inlinable
    public static func part(_ worker: Int, of workers: Int, count: Int) -> Range<Int> {
        let base = count / workers
        let extra = count % workers
        let start = worker * base + min(worker, extra)
        return start..<(start + base + (worker < extra ? 1 : 0))
    }

    /// Like `part(_:of:count:)`, but every boundary except the last is a multiple of `alignment`
    /// (e.g. SIMD width), so parts never split an aligned group.
    @inlinable
    public static func alignedPart(_ worker: Int, of workers: Int, count: Int, alignment: Int) -> Range<Int> {
        let groups = (count + alignment - 1) / alignment
        let range = part(worker, of: workers, count: groups)
        return min(range.lowerBound * alignment, count)..<min(range.upperBound * alignment, count)
    }
}

/// Carries a value the compiler cannot prove `Sendable` into a concurrent region whose callers
/// guarantee there is no data race (each worker writes only its own part).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
