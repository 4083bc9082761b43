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

    /// `CPUAffinity.exclude` moves a thread off a CPU at once (run on a thread of its own, whose mask does not
    /// outlive the test).
    @Test(.enabled(if: CPUAffinity.canPlace, "needs Linux and at least two CPUs for this process"))
    func excludingTheCurrentCPUMovesTheThread() {
        let result = Locked<(before: Int, after: Int, excluded: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let before = CPUAffinity.currentCPU()
            let excluded = CPUAffinity.exclude(before, from: CPUAffinity.threadID())
            result.withLock { $0 = (before, CPUAffinity.currentCPU(), excluded) }
            done.signal()
        }
        thread.start()
        done.wait()
        let seen = result.withLock { $0 }
        #expect(seen?.excluded == true)
        #expect(seen.map { $0.after >= 0 && $0.after != $0.before } == true)
    }

    /// A worker whose CPU time stands still in the middle of its part (here it sleeps in it, as it stands still
    /// when another process holds its CPU) is handed the caller's CPU: the region still runs every part once,
    /// and the pool counts the hand-off.
    @Test(.enabled(if: CPUAffinity.canPlace && WorkerPool.shared.hasWorkers, "needs CPU placement and a worker thread"))
    func aStalledWorkerIsHandedTheCallersCPU() {
        let pool = WorkerPool.shared
        let before = pool.handOffs.load(ordering: .relaxed)
        let caller = pthread_self()
        let workerRan = Atomic<Bool>(false)
        // Regions run inline while the pool is busy with another test's region or its worker is asleep: try
        // until the worker takes a part.
        let deadline = Date().addingTimeInterval(10)
        while !workerRan.load(ordering: .relaxed) && Date() < deadline {
            let hits = Locked<[Int]>([0, 0])
            pool.run(parts: 2) { part in
                if pthread_equal(pthread_self(), caller) == 0 {
                    workerRan.store(true, ordering: .relaxed)
                    usleep(3_000)
                }
                hits.withLock { $0[part] += 1 }
            }
            #expect(hits.withLock { $0 } == [1, 1])
        }
        let ran = workerRan.load(ordering: .relaxed), after = pool.handOffs.load(ordering: .relaxed)
        #expect(ran)
        #expect(after > before)
    }
}
