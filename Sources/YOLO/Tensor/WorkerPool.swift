import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Persistent worker threads for `Parallel`: a parallel region wakes them instead of going through
/// libdispatch, which allocates bookkeeping on every `concurrentPerform` (about 200 small blocks per
/// forward pass) and let the heap creep. The pool allocates nothing per region.
///
/// Parts are claimed, not assigned: the caller and every awake worker take the region's next unclaimed
/// part until none is left, and the caller then waits only for parts already being run. On a quiet
/// machine each thread takes one part, as before; on a busy one (another process on the cores) a
/// worker that has not started by the time the caller finishes its own part loses its part to the
/// caller, so a region is never slower than running it on one thread plus the part a preempted worker
/// already holds. (With fixed assignment, two threads ran 2× slower than one with a CPU-bound process
/// beside them: the caller waited for a worker the scheduler had not run yet.)
///
/// A forward pass opens about 45 regions, a few tens of microseconds apart. Waking a sleeping
/// thread through a condition variable takes about as long as a small region's work, and longer on
/// a virtual machine whose idle vCPU the host has descheduled, so waiting threads first spin briefly,
/// then keep checking between `sched_yield` calls for about 2 ms (giving the core away at once to
/// any other runnable thread, ours or another process's), and only then sleep on the condition
/// variables.
///
/// A worker found preempted (its heartbeat still for 50 µs, not just woken) has the layer or region at hand
/// run without it. One still for 1 ms over several checks while the machine has more runnable threads than
/// cores starts a solo spell: for `soloNanoseconds` regions, and `Network.forward`'s layers, run on the
/// caller alone without waking it, so it sleeps instead of spinning beside the process that took its core.
///
/// One region runs at a time. A caller that finds the pool busy (another thread's region) or that is
/// itself a pool worker (a nested region) runs its parts inline, one after another.
final class WorkerPool: @unchecked Sendable {
    /// Threads besides the caller: the machine's cores minus one.
    static let shared = WorkerPool(threads: max(0, Parallel.coreCount - 1))

    /// Pure spins before a waiting thread starts yielding, and yields before it sleeps (~2 ms).
    static let spinLimit = 20_000
    static let yieldLimit = 4_000
    /// Checks of the heartbeat before a caller decides no worker is running (a few microseconds).
    static let heartbeatChecks = 5_000

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Held by the thread that owns the current region.
    private let region = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let threadCount: Int
    /// The current region: generation (bits 32...), part count (bits 16..<32), next unclaimed part
    /// (bits 0..<16). `job` is written before a new generation is stored (release) and read only
    /// after a part of that generation was claimed (acquire).
    private let state = Atomic<Int>(0)
    /// Parts of the current region not yet finished.
    private let remaining = Atomic<Int>(0)
    /// Workers asleep on `wake`, and whether the caller sleeps on `finished` (changed under `lock`).
    private let sleepers = Atomic<Int>(0)
    private let callerSleeps = Atomic<Bool>(false)
    /// Advanced by every waiting worker at each check: a caller that sees it move knows a worker is on
    /// a CPU right now.
    private let heartbeat = Atomic<Int>(0)
    private nonisolated(unsafe) var job: ((Int) -> Void)?
    private nonisolated(unsafe) var generation = 0
    /// The workers' thread IDs (`Locked`, which ThreadSanitizer can see, unlike `Synchronization.Mutex`).
    private let workerIDs = Locked<[pthread_t]>([])

    init(threads: Int) {
        threadCount = threads
        pthread_mutex_init(lock, nil)
        pthread_mutex_init(region, nil)
        pthread_cond_init(wake, nil)
        pthread_cond_init(finished, nil)
        workerIDs.withLock { $0.reserveCapacity(threads) }
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "yolo-worker-\(index + 1)"
            thread.start()
        }
        // Wait until every worker runs: the caller shares regions only with running workers, so a
        // worker that started late would otherwise register (and allocate) in the middle of a pass.
        while workerIDs.withLock({ $0.count }) < threads { sched_yield() }
    }

    /// Runs `body(0)` … `body(parts − 1)`, each exactly once, on the caller and the workers, and
    /// returns when all are done. Runs them inline when the pool is busy, too small, or called from a
    /// worker.
    func run(parts: Int, _ body: (Int) -> Void) {
        guard parts > 1, parts < 1 << 16, threadCount >= 1, !isWorkerThread, pthread_mutex_trylock(region) == 0 else {
            for part in 0..<parts { body(part) }
            return
        }
        // Share the region only with workers that are running now: a sleeping worker is woken for the
        // next region, and one the scheduler has preempted (its heartbeat does not move) would make
        // the caller wait for the part it takes. On a busy machine the caller then runs the region
        // alone, at one thread's speed, instead of waiting for a worker that has no CPU.
        guard availability() == .running else {
            pthread_mutex_unlock(region)
            for part in 0..<parts { body(part) }
            return
        }
        withoutActuallyEscaping(body) { body in
            job = body
            generation = (generation + 1) & 0x7fff_ffff
            remaining.store(parts, ordering: .relaxed)
            state.store(generation << 32 | parts << 16, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                pthread_mutex_lock(lock)
                pthread_cond_broadcast(wake)
                pthread_mutex_unlock(lock)
            }
            runParts(of: generation, body)
            waitForParts()
            job = nil
        }
        pthread_mutex_unlock(region)
    }

    /// Whether the workers can share a region now: asked by every region, and by `Network.forward` before
    /// each layer (a layer planned for one thread is faster than one planned for two whose parts the
    /// caller runs alone).
    enum Availability {
        /// A worker is on a CPU, waiting for work.
        case running
        /// The workers were asleep: woken now, they will be spinning by the next region.
        case waking
        /// Awake but not running (the scheduler gave the core to another process), or found so less
        /// than `soloNanoseconds` ago.
        case preempted
    }

    /// How long regions run on the caller alone after a worker was found preempted, without waking it.
    /// A woken worker spins (and yields) for ~2 ms between regions: on a core shared with another
    /// process that is a third runnable thread on two cores, which took CPU time from the caller's
    /// core too (two threads were 1.03× one thread's time with a CPU-bound process beside them). Left
    /// asleep, the caller runs at one thread's speed; after this window a region wakes it again to see.
    static let soloNanoseconds = 200_000_000
    /// How long after waking the workers a still heartbeat is not held against them.
    static let wakeNanoseconds = 5_000_000
    /// How long the heartbeat must stand still before a worker counts as preempted (for the layer or
    /// region being started).
    static let preemptedNanoseconds = 50_000
    /// How long the heartbeat must stand still, over several checks, before a solo spell starts. A virtual
    /// machine's vCPU is often held back by its host for tens to hundreds of microseconds (the Zen 4 VM with a
    /// busy host, 400 two-thread passes: 278 stalls under 50 µs, 23 of 50–100 µs, 9 of 100 µs–1 ms, one
    /// longer); each of the 33 over 50 µs started a 200 ms spell while that was the threshold, about half
    /// of the run at one thread's speed. Another process on the worker's core takes it for a whole time
    /// slice (1.5 ms on two cores), and is seen in the machine's count of runnable threads (`runnableThreads`):
    /// a spell also needs more of them than cores, so that a host holding the vCPU back for longer does not
    /// start one.
    static let spellNanoseconds = 1_000_000
    /// Until when (`CLOCK_MONOTONIC` nanoseconds) regions run on the caller alone.
    private let soloUntil = Atomic<Int>(0)
    /// When sleeping workers were last woken (`CLOCK_MONOTONIC` nanoseconds).
    private let wokenAt = Atomic<Int>(0)
    /// The heartbeat a check found standing still, and when (0: the last check saw it move).
    private let stillBeat = Atomic<Int>(0)
    private let stillSince = Atomic<Int>(0)

    /// `.running` when no worker sleeps and the heartbeat moves within a few microseconds; wakes
    /// sleepers (`.waking`) unless a worker was found preempted less than `soloNanoseconds` ago.
    func availability() -> Availability {
        guard threadCount >= 1 else { return .preempted }
        let now = Self.monotonicNanoseconds()
        if now < soloUntil.load(ordering: .relaxed) { return .preempted }
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            pthread_mutex_lock(lock)
            pthread_cond_broadcast(wake)   // they find no new region, and spin until the next one
            pthread_mutex_unlock(lock)
            wokenAt.store(now, ordering: .relaxed)
            return .waking
        }
        let start = heartbeat.load(ordering: .relaxed)
        for _ in 0..<Self.heartbeatChecks where heartbeat.load(ordering: .relaxed) != start { return running() }
        // A worker woken less than `wakeNanoseconds` ago may not have been scheduled yet (a VM's idle vCPU
        // can take milliseconds to come back): not a verdict.
        if now - wokenAt.load(ordering: .relaxed) < Self.wakeNanoseconds { return .waking }
        // Watch for `preemptedNanoseconds`: a worker between two `sched_yield` calls can miss the short
        // check above, a preempted one stays still for longer.
        let deadline = now + Self.preemptedNanoseconds
        var checks = 0
        while heartbeat.load(ordering: .relaxed) == start {
            checks += 1
            guard checks % 256 == 0 && Self.monotonicNanoseconds() > deadline else { continue }
            // Still since an earlier check found this same beat: a solo spell once that is `spellNanoseconds` ago.
            if stillBeat.load(ordering: .relaxed) == start, stillSince.load(ordering: .relaxed) != 0 {
                if deadline - stillSince.load(ordering: .relaxed) >= Self.spellNanoseconds {
                    // Only when this machine has more runnable threads than cores: then another process holds
                    // the worker's core. Otherwise the hypervisor is holding the worker's vCPU back, and a spell
                    // would run passes at one thread's speed for nothing (a busy host gave two-thread medians
                    // of 29.7 ms against ncnn's 23.4, most passes in spells).
                    if let runnable = Self.runnableThreads(), runnable > Parallel.coreCount {
                        soloUntil.store(deadline + Self.soloNanoseconds, ordering: .relaxed)
                    }
                    stillSince.store(0, ordering: .relaxed)
                }
            } else {
                stillBeat.store(start, ordering: .relaxed)
                stillSince.store(now, ordering: .relaxed)
            }
            return .preempted
        }
        return running()
    }

    /// Threads runnable on this machine right now, the caller included (the fourth field of /proc/loadavg,
    /// `running/total`), or nil where that cannot be read. Reads into a stack buffer: no allocation.
    static func runnableThreads() -> Int? {
        #if os(Linux)
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                   UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &text) { bytes -> Int? in
            let file = open("/proc/loadavg", O_RDONLY)
            guard file >= 0 else { return nil }
            defer { close(file) }
            let count = read(file, bytes.baseAddress, bytes.count - 1)
            guard count > 0 else { return nil }
            // "0.32 1.01 1.13 2/79 18428": the number after the third space.
            var spaces = 0, value = 0, digits = 0
            for byte in bytes.prefix(count) {
                if spaces < 3 {
                    if byte == UInt8(ascii: " ") { spaces += 1 }
                    continue
                }
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { break }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        #else
        return nil
        #endif
    }

    /// `.running`, forgetting any still heartbeat seen before.
    private func running() -> Availability {
        stillSince.store(0, ordering: .relaxed)
        return .running
    }

    fileprivate static func monotonicNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    /// Claims and runs parts of region `generation` until none is left.
    private func runParts(of generation: Int, _ body: (Int) -> Void) {
        while true {
            let current = state.load(ordering: .acquiring)
            let (next, parts) = (current & 0xffff, (current >> 16) & 0xffff)
            guard current >> 32 == generation, next < parts else { return }
            guard state.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing).exchanged
            else { continue }
            body(next)
            if remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
               callerSleeps.load(ordering: .sequentiallyConsistent) {
                pthread_mutex_lock(lock)
                pthread_cond_signal(finished)
                pthread_mutex_unlock(lock)
            }
        }
    }

    /// Spins, yields, then sleeps, until every claimed part has finished.
    private func waitForParts() {
        var wait = Backoff()
        while remaining.load(ordering: .acquiring) > 0 {
            guard wait.next() else { break }
        }
        guard remaining.load(ordering: .acquiring) > 0 else { return }
        pthread_mutex_lock(lock)
        callerSleeps.store(true, ordering: .sequentiallyConsistent)
        while remaining.load(ordering: .sequentiallyConsistent) > 0 { pthread_cond_wait(finished, lock) }
        callerSleeps.store(false, ordering: .relaxed)
        pthread_mutex_unlock(lock)
    }

    private var isWorkerThread: Bool {
        let me = pthread_self()
        return workerIDs.withLock { ids in ids.contains { pthread_equal($0, me) != 0 } }
    }

    private func work() {
        DenormalMode.flushOnThisThread()
        workerIDs.withLock { $0.append(pthread_self()) }
        var seen = 0  // generations start at 1: a region started before this thread got here still runs
        while true {
            var wait = Backoff()
            while state.load(ordering: .acquiring) >> 32 == seen {
                heartbeat.add(1, ordering: .relaxed)
                guard wait.next() else { break }
            }
            if state.load(ordering: .acquiring) >> 32 == seen {
                pthread_mutex_lock(lock)
                sleepers.add(1, ordering: .sequentiallyConsistent)
                while state.load(ordering: .sequentiallyConsistent) >> 32 == seen {
                    pthread_cond_wait(wake, lock)
                    if state.load(ordering: .sequentiallyConsistent) >> 32 == seen { break }  // woken to spin
                }
                sleepers.subtract(1, ordering: .relaxed)
                pthread_mutex_unlock(lock)
            }
            seen = state.load(ordering: .acquiring) >> 32
            // `job` is read only once a part is claimed: the region cannot end before that part does.
            runParts(of: seen) { part in job!(part) }
        }
    }

    /// A waiting thread's schedule: `spinLimit` plain checks, then a `sched_yield` before each check,
    /// `yieldLimit` times or for `yieldNanoseconds`, whichever ends first; `next()` is false when it is
    /// time to sleep. (On a core shared with another busy process each yield can give that process a
    /// whole time slice, so a count alone does not bound how long the waiting thread stays runnable.)
    private struct Backoff {
        var count = 0
        var yieldsEnd = 0
        mutating func next() -> Bool {
            count += 1
            if count <= WorkerPool.spinLimit { return true }
            if count > WorkerPool.spinLimit + WorkerPool.yieldLimit { return false }
            if count == WorkerPool.spinLimit + 1 {
                yieldsEnd = WorkerPool.monotonicNanoseconds() + WorkerPool.yieldNanoseconds
            } else if count % 64 == 0 && WorkerPool.monotonicNanoseconds() > yieldsEnd {
                return false
            }
            sched_yield()
            return true
        }
    }

    /// The longest a waiting thread yields before it sleeps.
    static let yieldNanoseconds = 2_000_000
}
