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

    /// The solo-spell rule: a spell starts when the caller waited for a CPU for over a fifth of a window, lasts
    /// while it waits for over a tenth, and a window opened by another thread is not judged.
    @Test func soloSpellsStartAndEndOnTheCallersShareOfWaiting() {
        let me = pthread_self(), window = WorkerPool.windowNanoseconds
        var meter = SpellWindow()
        #expect(meter.isDue(at: 1))
        #expect(meter.close(at: 1_000, delay: 500, thread: me, inSpell: false) == nil)  // opens the first window
        #expect(!meter.isDue(at: 1_000 + window - 1) && meter.isDue(at: 1_000 + window))
        // 25 % of a window waiting: a spell starts; 15 % in a spell: it goes on; 5 %: it ends.
        var now = 1_000, delay = 500
        func close(share: Double, inSpell: Bool) -> Bool? {
            now += window
            delay += Int(share * Double(window))
            return meter.close(at: now, delay: delay, thread: me, inSpell: inSpell)
        }
        #expect(close(share: 0.15, inSpell: false) == false)
        #expect(close(share: 0.25, inSpell: false) == true)
        #expect(close(share: 0.15, inSpell: true) == true)
        #expect(close(share: 0.05, inSpell: true) == false)
        // Another thread's window is not judged.
        let otherThread = Locked(pthread_t(bitPattern: 0))
        let thread = Thread { otherThread.withLock { $0 = pthread_self() } }
        thread.start()
        while !thread.isFinished { usleep(1_000) }
        let other = otherThread.withLock { $0 }
        #expect(meter.close(at: now + window, delay: delay + window, thread: other, inSpell: false) == nil)
    }

    /// The run delay is the kernel's count of the time this thread waited for a CPU: it grows when more threads
    /// want to run than there are CPUs.
    @Test(.enabled(if: WorkerPool.runDelay() != nil, "needs /proc/thread-self/schedstat (Linux)"))
    func runDelayGrowsOnAnOversubscribedMachine() throws {
        let before = try #require(WorkerPool.runDelay())
        let stop = Atomic<Bool>(false)
        let spinners = 2 * Parallel.coreCount + 1
        let started = Atomic<Int>(0)
        for _ in 0..<spinners {
            Thread {
                started.add(1, ordering: .relaxed)
                while !stop.load(ordering: .relaxed) {}
            }.start()
        }
        defer { stop.store(true, ordering: .relaxed) }
        while started.load(ordering: .relaxed) < spinners { sched_yield() }
        // Stay runnable for 200 ms beside them.
        let end = Date().addingTimeInterval(0.2)
        while Date() < end {}
        let after = try #require(WorkerPool.runDelay())
        #expect(after > before)
    }
}
