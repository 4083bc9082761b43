import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import YOLO

@Suite struct ParallelTests {
    @Test(arguments: [0, 1, 2, 7, 16, 1000], [1, 2, 3, 8])
    func everyIndexRunsExactlyOnce(count: Int, threads: Int) {
        let hits = UnsafeMutablePointer<Int>.allocate(capacity: max(count, 1))
        defer { hits.deallocate() }
        hits.initialize(repeating: 0, count: max(count, 1))
        Parallel.forEach(count, threads: threads) { hits[$0] += 1 }
        #expect((0..<count).allSatisfy { hits[$0] == 1 })
    }

    @Test func partsAreContiguousAndBalanced() {
        for count in [0, 1, 5, 17, 100] {
            for workers in 1...6 {
                let parts = (0..<workers).map { Parallel.part($0, of: workers, count: count) }
                #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == count)
                #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                let sizes = parts.map(\.count)
                #expect(sizes.max()! - sizes.min()! <= 1)
            }
        }
    }

    @Test func alignedPartsKeepGroupsWhole() {
        for count in [1, 15, 16, 17, 100, 173] {
            for workers in 1...4 {
                let parts = (0..<workers).map { Parallel.alignedPart($0, of: workers, count: count, alignment: 16) }
                #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == count)
                #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                #expect(parts.dropLast().allSatisfy { $0.upperBound % 16 == 0 || $0.upperBound == count })
            }
        }
    }

    /// Claimed pieces: each runs once, on a worker index below the thread count, and no two pieces run on one
    /// worker index at once (so a piece may use its worker's scratch).
    @Test(arguments: [0, 1, 3, 40], [1, 2, 3])
    func claimedPiecesRunOnceOnDistinctWorkers(pieces: Int, threads: Int) {
        let pool = WorkerPool(Threading(threads: 3))
        let hits = Locked([Int](repeating: 0, count: max(pieces, 1)))
        let busy = Locked([false, false, false])
        let overlaps = Atomic<Int>(0), outside = Atomic<Int>(0)
        pool.withCurrent {
            Parallel.forClaimed(pieces, threads: threads) { worker, piece in
                guard worker < min(threads, max(pieces, 1)) else {
                    outside.add(1, ordering: .relaxed)
                    return
                }
                if busy.withLock({ let was = $0[worker]; $0[worker] = true; return was }) { overlaps.add(1, ordering: .relaxed) }
                hits.withLock { $0[piece] += 1 }
                usleep(200)
                busy.withLock { $0[worker] = false }
            }
        }
        #expect(hits.withLock { Array($0.prefix(pieces)) } == [Int](repeating: 1, count: pieces))
        #expect(outside.load(ordering: .relaxed) == 0 && overlaps.load(ordering: .relaxed) == 0)
    }

    /// A worker stalled inside a claimed piece holds up only that piece: the caller claims every other one.
    @Test func aStalledWorkerHoldsOnlyItsOwnPiece() {
        let pool = WorkerPool(Threading(threads: 2))
        let caller = pthread_self()
        let byCaller = Atomic<Int>(0), ran = Atomic<Int>(0)
        pool.run(parts: 2) { _ in }  // starts the worker
        pool.withCurrent {
            Parallel.forClaimed(16, threads: 2) { _, _ in
                if pthread_equal(pthread_self(), caller) != 0 { byCaller.add(1, ordering: .relaxed) } else { usleep(30_000) }
                ran.add(1, ordering: .relaxed)
            }
        }
        #expect(ran.load(ordering: .relaxed) == 16)
        #expect(byCaller.load(ordering: .relaxed) >= 14)
    }

    /// Band pieces cover the rows once, in bands of at most `band` rows that never cross a part's end (with
    /// `aligned`, parts of whole bands, so every band starts on a multiple of `band`).
    @Test func bandPiecesCoverTheRowsWithinTheirParts() {
        for count in [1, 7, 13, 52, 208] {
            for parts in 1...4 {
                for band in [1, 3, 8, 46] {
                    for aligned in [false, true] {
                        let bands = BandPieces(count: count, parts: parts, band: band, aligned: aligned)
                        let rows = (0..<bands.pieces).map(bands.rows).filter { !$0.isEmpty }
                        #expect(rows.flatMap { Array($0) }.sorted() == Array(0..<count))
                        #expect(rows.allSatisfy { $0.count <= band })
                        let ends = Set((0..<parts).map {
                            (aligned ? Parallel.alignedPart($0, of: parts, count: count, alignment: band)
                                : Parallel.part($0, of: parts, count: count)).upperBound })
                        #expect(rows.allSatisfy { r in !ends.contains(where: { r.lowerBound < $0 && $0 < r.upperBound }) })
                        if aligned { #expect(rows.allSatisfy { $0.lowerBound % band == 0 }) }
                    }
                }
            }
        }
    }

    /// A grid's pieces cover every (filter, pixel) of the product once, on aligned boundaries.
    @Test func gridPiecesCoverTheProductOnce() {
        for (rows, columns) in [(16, 169), (255, 676), (512, 169), (32, 43264), (6, 16)] {
            for (f, c) in [(1, 1), (1, 2), (2, 1), (2, 8), (3, 2)] {
                let grid = ConvolutionPlan.Split(filters: f, columns: c)
                var hits = [Int](repeating: 0, count: rows * columns)
                for piece in 0..<grid.pieces {
                    let (r, s) = grid.piece(piece, rows: rows, columns: columns, rowAlignment: 6, columnAlignment: 16)
                    if !r.isEmpty && !s.isEmpty { #expect(r.lowerBound % 6 == 0 && s.lowerBound % 16 == 0) }
                    for i in r { for j in s { hits[i * columns + j] += 1 } }
                }
                #expect(hits.allSatisfy { $0 == 1 }, "\(rows)x\(columns) in \(f)x\(c)")
            }
        }
    }

    /// Four callers open regions on one pool at once: every part of every region runs exactly once, and the
    /// pool never runs more worker threads than it was made for.
    @Test func concurrentCallersShareOnePool() {
        let pool = WorkerPool(Threading(threads: 3))
        let callers = 4, regions = 200, parts = 5
        let hits = Locked([Int](repeating: 0, count: callers * regions * parts))
        let most = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: callers) { caller in
            for region in 0..<regions {
                pool.run(parts: parts) { part in
                    hits.withLock { $0[(caller * regions + region) * parts + part] += 1 }
                    most.max(pool.liveWorkers, ordering: .relaxed)
                }
            }
        }
        #expect(hits.withLock { $0.allSatisfy { $0 == 1 } })
        #expect(most.load(ordering: .relaxed) <= 2)
    }

    /// Workers start with the first region, exit after the idle timeout, and start again for the next region.
    @Test func workersStartOnDemandAndExitWhenIdle() {
        let pool = WorkerPool(Threading(threads: 2, idleTimeout: .milliseconds(20)))
        #expect(pool.liveWorkers == 0)
        pool.run(parts: 2) { _ in }
        #expect(pool.liveWorkers == 1)
        let deadline = Date().addingTimeInterval(5)
        while pool.liveWorkers > 0 && Date() < deadline { usleep(5_000) }
        #expect(pool.liveWorkers == 0)
        let hits = Locked([0, 0])
        pool.run(parts: 2) { part in hits.withLock { $0[part] += 1 } }
        #expect(hits.withLock { $0 } == [1, 1])
        #expect(pool.liveWorkers == 1)
    }

    /// The end of a pass stops the workers' polling for a next region: with a 30 s spin, the worker that ran a part
    /// of the pass's last region goes to sleep when the pass ends (and, idle for 20 ms, exits) instead of polling on.
    @Test func theEndOfAPassStopsPolling() {
        let pool = WorkerPool(Threading(threads: 2, spin: .seconds(30), idleTimeout: .milliseconds(20)))
        let started = Atomic<Int>(0)
        pool.withPass {
            Parallel.forEach(2, threads: 2) { _ in
                // Each part waits for the other to start, so that the worker runs one.
                started.add(1, ordering: .relaxed)
                let deadline = Date().addingTimeInterval(5)
                while started.load(ordering: .relaxed) < 2 && Date() < deadline { usleep(100) }
            }
            usleep(50_000)  // the pass's last, single-threaded stretch: the worker polls through it
        }
        #expect(started.load(ordering: .relaxed) == 2)
        let deadline = Date().addingTimeInterval(5)
        while pool.liveWorkers > 0 && Date() < deadline { usleep(5_000) }
        #expect(pool.liveWorkers == 0)
    }

    /// A worker stalled inside its part (here it sleeps, as it stands still when another process holds its CPU)
    /// holds up only that part: the caller runs every other one, and with no spin at all the region still ends.
    @Test(arguments: [Duration.zero, .microseconds(100)])
    func aStalledWorkerHoldsOnlyItsOwnPart(spin: Duration) {
        let pool = WorkerPool(Threading(threads: 2, spin: spin))
        let caller = pthread_self()
        let byCaller = Atomic<Int>(0), ran = Atomic<Int>(0)
        pool.run(parts: 2) { _ in }  // starts the worker
        pool.run(parts: 16) { _ in
            if pthread_equal(pthread_self(), caller) != 0 {
                byCaller.add(1, ordering: .relaxed)
            } else {
                usleep(30_000)
            }
            ran.add(1, ordering: .relaxed)
        }
        #expect(ran.load(ordering: .relaxed) == 16)
        #expect(byCaller.load(ordering: .relaxed) >= 14)
    }

    /// No thread's CPU affinity changes unless pinning is asked for; with `workerCPUs`, each worker runs only
    /// on its CPU and the caller keeps its own mask.
    @Test(.enabled(if: (CPUAffinity.allowedCPUs()?.count ?? 0) >= 2, "needs Linux and two CPUs for this process"))
    func workersArePinnedOnlyWhenAsked() throws {
        let allowed = try #require(CPUAffinity.allowedCPUs())
        let caller = pthread_self()
        for pinned in [[Int](), [allowed[1]]] {
            let pool = WorkerPool(Threading(threads: 2, workerCPUs: pinned))
            let seen = Locked<[[Int]]>([])
            let deadline = Date().addingTimeInterval(10)
            while seen.withLock({ $0.isEmpty }) && Date() < deadline {
                pool.run(parts: 64) { _ in
                    guard pthread_equal(pthread_self(), caller) == 0 else {
                        usleep(100)
                        return
                    }
                    let mask = CPUAffinity.allowedCPUs() ?? []
                    seen.withLock { $0.append(mask) }
                }
            }
            let masks = seen.withLock { $0 }
            #expect(!masks.isEmpty)
            #expect(masks.allSatisfy { $0 == (pinned.isEmpty ? allowed : pinned) }, "\(pinned): \(masks)")
            #expect(CPUAffinity.allowedCPUs() == allowed)
        }
    }

    /// A nested region (a part that opens a region itself) runs on the same pool and completes.
    @Test func nestedRegionsComplete() {
        let pool = WorkerPool(Threading(threads: 3))
        let hits = Locked([Int](repeating: 0, count: 16))
        pool.withCurrent {
            Parallel.forEach(4, threads: 3) { outer in
                Parallel.forEach(4, threads: 3) { inner in hits.withLock { $0[outer * 4 + inner] += 1 } }
            }
        }
        #expect(hits.withLock { $0 } == [Int](repeating: 1, count: 16))
    }
}
