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
/// part until none is left, and the caller then waits only for parts already being run. A worker that has
/// not started by the time the caller finishes its own part loses its part to the caller.
///
/// A forward pass opens about 70 regions, a few tens of microseconds apart. Waking a sleeping
/// thread through a condition variable takes about as long as a small region's work, and longer on
/// a virtual machine whose idle vCPU the host has descheduled, so waiting threads spin for 2 ms, and only
/// then sleep on the condition variables. They do not `sched_yield` while they wait: on a core shared with
/// another process each yield hands that process a whole time slice (the scheduler moves the yielding
/// thread's deadline back by one), and a worker that yielded between regions got a third of its core
/// instead of half.
///
/// On a busy machine (another process running on the cores) the pool places its threads (`CPUAffinity`,
/// Linux): a waiting worker that finds itself on the caller's CPU moves off it, so the two do not take
/// turns on one core; it then shares a core with the other process and helps whenever the scheduler runs
/// it. A worker the scheduler preempts in the middle of a part would make the caller wait up to a time
/// slice for that part; instead, as soon as the worker's CPU-time clock stands still (20 µs), the caller
/// moves the worker onto its own CPU and yields to it until the part is done (a hand-off), then sends it
/// back.
/// (Before: with fixed assignment, two threads ran 2× slower than one with a CPU-bound process beside
/// them; with regions run on the caller alone whenever the worker was preempted, as fast as one.)
///
/// One region runs at a time. A caller that finds the pool busy (another thread's region) or that is
/// itself a pool worker (a nested region) runs its parts inline, one after another.
final class WorkerPool: @unchecked Sendable {
    /// Threads besides the caller: the machine's cores minus one.
    static let shared = WorkerPool(threads: max(0, Parallel.coreCount - 1))

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Held by the thread that owns the current region.
    private let region = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let threadCount: Int
    /// Whether the pool has threads besides the caller (not on a one-CPU machine).
    var hasWorkers: Bool { threadCount >= 1 }
    /// The current region: generation (bits 32...), part count (bits 16..<32), next unclaimed part
    /// (bits 0..<16). `job` is written before a new generation is stored (release) and read only
    /// after a part of that generation was claimed (acquire).
    private let state = Atomic<Int>(0)
    /// Parts of the current region not yet finished.
    private let remaining = Atomic<Int>(0)
    /// Workers asleep on `wake`, and whether the caller sleeps on `finished` (changed under `lock`).
    private let sleepers = Atomic<Int>(0)
    private let callerSleeps = Atomic<Bool>(false)
    private nonisolated(unsafe) var job: ((Int) -> Void)?
    private nonisolated(unsafe) var generation = 0
    /// The workers' thread IDs (`Locked`, which ThreadSanitizer can see, unlike `Synchronization.Mutex`).
    private let workerIDs = Locked<[pthread_t]>([])
    /// Per worker: its kernel thread ID and the part it is in, for hand-offs.
    private let slots: [WorkerSlot]
    /// The CPU the caller of the current region started it on (-1: unknown, or placement unavailable).
    private let callerCPU = Atomic<Int>(-1)
    /// Hand-offs so far (a worker moved to the caller's CPU to finish its part), for tests and diagnosis.
    let handOffs = Atomic<Int>(0)

    init(threads: Int) {
        threadCount = threads
        slots = (0..<threads).map { _ in WorkerSlot() }
        pthread_mutex_init(lock, nil)
        pthread_mutex_init(region, nil)
        pthread_cond_init(wake, nil)
        pthread_cond_init(finished, nil)
        workerIDs.withLock { $0.reserveCapacity(threads) }
        for index in 0..<threads {
            let slot = slots[index]
            let thread = Thread { [unowned self] in self.work(slot) }
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
        // Sleeping workers are woken for the next region: this one runs on the caller alone.
        guard workersAwake() else {
            pthread_mutex_unlock(region)
            for part in 0..<parts { body(part) }
            return
        }
        callerCPU.store(CPUAffinity.currentCPU(), ordering: .relaxed)
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
            runParts(of: generation, body, slot: nil)
            waitForParts()
            job = nil
        }
        pthread_mutex_unlock(region)
    }

    /// Whether the workers are awake (spinning between regions): asked by every region, and by
    /// `Network.forward` before each layer (a layer planned for one thread is faster than one planned for two
    /// whose parts the caller runs alone). Wakes sleeping workers and returns false: they will be waiting
    /// by the next region.
    func workersAwake() -> Bool {
        guard threadCount >= 1 else { return false }
        guard sleepers.load(ordering: .sequentiallyConsistent) > 0 else { return true }
        pthread_mutex_lock(lock)
        pthread_cond_broadcast(wake)   // they find no new region, and spin until the next one
        pthread_mutex_unlock(lock)
        return false
    }

    fileprivate static func monotonicNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    /// Claims and runs parts of region `generation` until none is left. A worker notes in its `slot` when it
    /// started the part it is in.
    private func runParts(of generation: Int, _ body: (Int) -> Void, slot: WorkerSlot?) {
        while true {
            let current = state.load(ordering: .acquiring)
            let (next, parts) = (current & 0xffff, (current >> 16) & 0xffff)
            guard current >> 32 == generation, next < parts else { return }
            guard state.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing).exchanged
            else { continue }
            slot?.partStart.store(Self.monotonicNanoseconds(), ordering: .relaxed)
            body(next)
            slot?.partStart.store(0, ordering: .relaxed)
            if remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
               callerSleeps.load(ordering: .sequentiallyConsistent) {
                pthread_mutex_lock(lock)
                pthread_cond_signal(finished)
                pthread_mutex_unlock(lock)
            }
        }
    }

    /// Spins, then sleeps, until every claimed part has finished. A worker in a part whose CPU time stands
    /// still (`preemptedNanoseconds` of wall time with under a quarter of it on a CPU) has been preempted by
    /// another process on its CPU, and is handed the caller's CPU: moved there while the caller yields to it
    /// until the part is done, then moved off it again.
    private func waitForParts() {
        var wait = Backoff()
        var handedOff = false
        let cpu = callerCPU.load(ordering: .relaxed)
        for slot in slots { slot.seenAt = 0 }
        var checks = 0
        while remaining.load(ordering: .acquiring) > 0 {
            checks += 1
            if cpu >= 0 && checks % 64 == 0 {
                let now = Self.monotonicNanoseconds()
                for slot in slots where slot.partStart.load(ordering: .relaxed) != 0 {
                    let used = slot.cpuTime(), elapsed = now - slot.seenAt
                    // First look, or the worker ran for a quarter of the time since: watch afresh from now.
                    if slot.seenAt == 0 || used - slot.seenUsed >= elapsed / 4 {
                        (slot.seenAt, slot.seenUsed) = (now, used)
                    } else if elapsed >= Self.preemptedNanoseconds && CPUAffinity.pin(slot.threadID, to: cpu) {
                        slot.handedOff = true
                        handedOff = true
                        handOffs.add(1, ordering: .relaxed)
                    }
                }
                if handedOff { break }
            }
            guard wait.next() else { break }
        }
        // Give the CPU to the worker handed off to it by yielding, not sleeping: a sleeping caller's CPU
        // goes idle, and the scheduler may then pull the other process onto it.
        if handedOff {
            while remaining.load(ordering: .acquiring) > 0 { sched_yield() }
        }
        if remaining.load(ordering: .acquiring) > 0 {
            pthread_mutex_lock(lock)
            callerSleeps.store(true, ordering: .sequentiallyConsistent)
            while remaining.load(ordering: .sequentiallyConsistent) > 0 { pthread_cond_wait(finished, lock) }
            callerSleeps.store(false, ordering: .relaxed)
            pthread_mutex_unlock(lock)
        }
        guard handedOff else { return }
        let now = CPUAffinity.currentCPU()
        callerCPU.store(now, ordering: .relaxed)
        for slot in slots where slot.handedOff {
            CPUAffinity.exclude(now, from: slot.threadID)
            slot.handedOff = false
        }
    }

    private var isWorkerThread: Bool {
        let me = pthread_self()
        return workerIDs.withLock { ids in ids.contains { pthread_equal($0, me) != 0 } }
    }

    private func work(_ slot: WorkerSlot) {
        DenormalMode.flushOnThisThread()
        slot.threadID = CPUAffinity.threadID()
        slot.hasClock = pthread_getcpuclockid(pthread_self(), &slot.clock) == 0
        workerIDs.withLock { $0.append(pthread_self()) }
        var seen = 0  // generations start at 1: a region started before this thread got here still runs
        while true {
            var wait = Backoff()
            var checks = 0
            while state.load(ordering: .acquiring) >> 32 == seen {
                checks += 1
                if checks % 64 == 0 { keepOffCallerCPU() }
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
            runParts(of: seen, { part in job!(part) }, slot: slot)
        }
    }

    /// Moves the calling worker off the CPU the last region's caller ran on, when it finds itself there: two
    /// threads of one region on one CPU would take turns, each at half speed, while the other process keeps
    /// a core to itself.
    private func keepOffCallerCPU() {
        let caller = callerCPU.load(ordering: .relaxed)
        guard caller >= 0, CPUAffinity.currentCPU() == caller else { return }
        CPUAffinity.exclude(caller, from: 0)
    }

    /// A waiting thread's schedule: plain checks until it has spun for `spinNanoseconds` (the clock read every
    /// 256 checks); `next()` is false when it is time to sleep. Only time on a CPU counts: a gap of over 50 µs
    /// between two reads is the scheduler running another thread, and a worker that was preempted while it
    /// waited would otherwise go to sleep the moment it got its CPU back.
    private struct Backoff {
        var count = 0
        var spun = 0
        var last = 0
        mutating func next() -> Bool {
            count += 1
            guard count % 256 == 0 else { return true }
            let now = WorkerPool.monotonicNanoseconds()
            if last != 0 && now - last < 50_000 { spun += now - last }
            last = now
            return spun < WorkerPool.spinNanoseconds
        }
    }

    /// How long a worker's CPU time must stand still before the caller counts it as preempted.
    static let preemptedNanoseconds = 20_000

    /// How long a waiting thread spins before it sleeps.
    static let spinNanoseconds = 2_000_000
}

/// What a region's caller needs to know about one worker thread.
private final class WorkerSlot: @unchecked Sendable {
    /// The worker's kernel thread ID; written by the worker before it registers (the pool's initializer
    /// waits for that), read by callers after.
    nonisolated(unsafe) var threadID: Int32 = 0
    /// When the worker started the part it is running (`CLOCK_MONOTONIC` nanoseconds); 0 between parts.
    let partStart = Atomic<Int>(0)
    /// The worker's CPU-time clock (`pthread_getcpuclockid`); written like `threadID`.
    nonisolated(unsafe) var clock = clockid_t(0)
    nonisolated(unsafe) var hasClock = false
    /// Whether the region's caller moved the worker onto its own CPU, and when it last saw the worker's CPU
    /// time move, and to what (only the caller reads and writes these).
    nonisolated(unsafe) var handedOff = false
    nonisolated(unsafe) var seenAt = 0
    nonisolated(unsafe) var seenUsed = 0

    /// Nanoseconds the worker has run on a CPU (0 where its clock cannot be read).
    func cpuTime() -> Int {
        var time = timespec()
        guard hasClock, clock_gettime(clock, &time) == 0 else { return 0 }
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
