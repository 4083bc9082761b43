import Foundation
import Synchronization

/// A small parallel-for over the calling thread's `WorkerPool` that honours an explicit thread count.
///
/// The engine does its own threading: layers split their work with `Parallel` and call OpenBLAS
/// single-threaded inside each part (see `Workspace`). Loops run on the pool `Network.forward` made current
/// (the workspace's), else on the shared pool (`WorkerPool.shared`). With one thread the body runs inline.
@_spi(Engine) public enum Parallel {
    /// How many pieces per thread the claimed loops (`forRanges`, `forClaimed`, `forClaimedRanges`) cut their
    /// work into. The threads take pieces in order as they finish the last, so a thread held up (preempted by
    /// another process, or on a virtual CPU the host runs slower) holds its loop up by one piece, not by a whole
    /// even share decided in advance; a piece is large enough that claiming it (one atomic add) costs nothing.
    /// `YOLO_PIECES=N` sets it (1 ... `mostPiecesPerThread`; 1: one even part per thread); `yolo` rejects any other
    /// value with a one-line error (`piecesRequest`), the library keeps the default of 4.
    public static let piecesPerThread: Int = (try? piecesRequest(ProcessInfo.processInfo.environment["YOLO_PIECES"])) ?? 4

    /// The most pieces per thread `YOLO_PIECES` may ask for.
    public static let mostPiecesPerThread = 64

    /// `text` (the value of `YOLO_PIECES`) as pieces per thread, nil when it is unset.
    /// - Throws: `YOLOError.invalidArgument` naming the variable when it is not an integer in 1 ... `mostPiecesPerThread`.
    public static func piecesRequest(_ text: String?) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), (1...mostPiecesPerThread).contains(value) else {
            throw YOLOError.invalidArgument("YOLO_PIECES \(text): expected pieces per thread, an integer from 1 to \(mostPiecesPerThread)")
        }
        return value
    }

    /// Calls `body(range)` for contiguous, near-equal pieces of `0..<count` (`piecesPerThread` for each of
    /// `threads` threads, at most `count`), which the threads claim in order, and returns when all are done.
    /// Pieces are never empty. `body` must only write memory no other piece touches.
    public static func forRanges(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
        let workers = min(max(threads, 1), count)
        guard workers > 1 else {
            if count > 0 { body(0..<count) }
            return
        }
        let pieces = pieceCount(count, workers: workers)
        WorkerPool.currentCore.run(parts: pieces) { piece in body(part(piece, of: pieces, count: count)) }
    }

    /// Calls `body(worker, piece)` for every `piece` in `0..<pieces`: `min(threads, pieces)` threads take the
    /// pieces in order, one at a time, each passing its own `worker` index (`0 ..< min(threads, pieces)`, one
    /// thread at a time per index), so that a piece can use the worker's slice of preallocated scratch memory.
    /// With one thread the pieces run in order on the caller (worker 0). `body` must only write memory no other
    /// piece touches, besides its worker's scratch.
    public static func forClaimed(_ pieces: Int, threads: Int, _ body: (_ worker: Int, _ piece: Int) -> Void) {
        let workers = min(max(threads, 1), pieces)
        guard workers > 1 else {
            for piece in 0..<max(pieces, 0) { body(0, piece) }
            return
        }
        let next = Atomic<Int>(0)
        WorkerPool.currentCore.run(parts: workers) { worker in
            while true {
                let piece = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard piece < pieces else { return }
                body(worker, piece)
            }
        }
    }

    /// `forClaimed` over contiguous, near-equal pieces of `0..<count` (`piecesPerThread` for each thread, at
    /// most `count`): `body(worker, range)`. For loops whose pieces may start and end anywhere at no cost.
    public static func forClaimedRanges(_ count: Int, threads: Int, _ body: (_ worker: Int, _ range: Range<Int>) -> Void) {
        let workers = min(max(threads, 1), count)
        let pieces = pieceCount(count, workers: workers)
        forClaimed(pieces, threads: workers) { worker, piece in body(worker, part(piece, of: pieces, count: count)) }
    }

    /// Pieces of `0..<count` for `workers` threads: `piecesPerThread` each, at most `count`; one (none for an empty
    /// loop) with one thread.
    static func pieceCount(_ count: Int, workers: Int) -> Int {
        workers > 1 ? min(count, workers * piecesPerThread) : min(count, 1)
    }

    /// One contiguous, near-equal part of `0..<count` per worker, fixed in advance, with the part's worker
    /// index (`0 ..< min(threads, count)`), so a worker can use its own slice of preallocated scratch memory.
    /// For loops whose parts are cheaper whole (a fused pair's bands reuse rows); `forClaimedRanges` otherwise.
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

    /// Calls `body(i)` for every `i` in `0..<count`, in the contiguous pieces of `forRanges`.
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

/// Bands of at most `band` rows inside `parts` contiguous parts of `0..<count` (near-equal parts, or with
/// `aligned` parts of whole bands): the pieces a banded layer's threads claim (`Parallel.forClaimed`). A band
/// never crosses a part's end, so the bands are the same whatever the thread count when `parts` is fixed by
/// the plan.
struct BandPieces {
    let count: Int, parts: Int, band: Int, aligned: Bool
    /// Bands in the largest part (the first); a smaller part's last pieces are empty.
    let perPart: Int

    init(count: Int, parts: Int, band: Int, aligned: Bool) {
        (self.count, self.parts, self.band, self.aligned) = (count, max(1, parts), max(1, band), aligned)
        let first = aligned ? Parallel.alignedPart(0, of: self.parts, count: count, alignment: self.band)
            : Parallel.part(0, of: self.parts, count: count)
        perPart = (first.count + self.band - 1) / self.band
    }

    var pieces: Int { parts * perPart }

    /// Piece `piece`'s rows (possibly empty).
    func rows(_ piece: Int) -> Range<Int> {
        let (p, b) = piece.quotientAndRemainder(dividingBy: perPart)
        let part = aligned ? Parallel.alignedPart(p, of: parts, count: count, alignment: band) : Parallel.part(p, of: parts, count: count)
        let start = min(part.lowerBound + b * band, part.upperBound)
        return start ..< min(start + band, part.upperBound)
    }
}

/// Carries a value the compiler cannot prove `Sendable` into a concurrent region whose callers
/// guarantee there is no data race (each worker writes only its own part).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
