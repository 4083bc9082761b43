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
        pthread_mutex_init(spellLock, nil)
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
        // Sleeping workers are woken for the next region: this one runs on the caller alone. So does every
        // region of a solo spell.
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

    /// Whether the workers are awake (spinning between regions) and no solo spell is on: asked by every region,
    /// and by `Network.forward` before each layer (a layer planned for one thread is faster than one planned for
    /// two whose parts the caller runs alone). Wakes sleeping workers (outside spells) and returns false: they
    /// will be waiting by the next region.
    func workersAwake() -> Bool {
        guard threadCount >= 1, !inSoloSpell() else { return false }
        guard sleepers.load(ordering: .sequentiallyConsistent) > 0 else { return true }
        pthread_mutex_lock(lock)
        pthread_cond_broadcast(wake)   // they find no new region, and spin until the next one
        pthread_mutex_unlock(lock)
        return false
    }

    /// How often the caller measures how long it waited for a CPU (its run delay); the share of a window past
    /// which a solo spell starts, and below which one ends.
    static let windowNanoseconds = 10_000_000
    static let soloStartShare = 0.2
    static let soloEndShare = 0.1
    /// Until when (`CLOCK_MONOTONIC` nanoseconds) a solo spell runs regions, and `Network.forward`'s layers, on
    /// the caller alone: two windows ahead, renewed at each window while the spell lasts.
    private let soloUntil = Atomic<Int>(0)
    /// Guards `window` (taken with trylock: a caller that finds it taken skips the measurement).
    private let spellLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private nonisolated(unsafe) var window = SpellWindow()
    /// Nanoseconds callers have yielded to handed-off workers: waiting for a CPU that does not count.
    private let yielded = Atomic<Int>(0)

    /// Solo spells. On a machine with more runnable threads than cores the caller itself loses its CPU to other
    /// processes part of the time, and a worker beside it costs more than it brings: each region waits for
    /// whichever of the two is preempted (two threads took 1.7× one thread's time with two CPU-bound processes
    /// beside them on two cores). So the caller measures, once a window (`windowNanoseconds`), how long it
    /// waited for a CPU. Past `soloStartShare` of the window a spell starts: regions and layers run on the
    /// caller alone without waking the worker, which goes to sleep. The spell lasts while the caller, now
    /// alone, still waits for a CPU for more than `soloEndShare` of each window (the machine is oversubscribed),
    /// and ends at the first window it does not (it had shared its CPU with another process while the worker
    /// had one to itself: with the worker asleep the scheduler separates them within milliseconds). Waiting for
    /// a CPU is counted by the kernel (/proc/thread-self/schedstat), so a hypervisor holding the vCPU back does
    /// not start a spell; the time the caller yielded to a handed-off worker is not counted. Returns whether a
    /// spell is on.
    private func inSoloSpell() -> Bool {
        let now = Self.monotonicNanoseconds()
        let spell = now < soloUntil.load(ordering: .relaxed)
        guard pthread_mutex_trylock(spellLock) == 0 else { return spell }
        defer { pthread_mutex_unlock(spellLock) }
        guard window.isDue(at: now), let delay = Self.runDelay() else { return spell }
        switch window.close(at: now, delay: delay - yielded.load(ordering: .relaxed), thread: pthread_self(), inSpell: spell) {
        case true?:
            soloUntil.store(now + 2 * Self.windowNanoseconds, ordering: .relaxed)
            return true
        case false? where spell:
            soloUntil.store(0, ordering: .relaxed)
            return false
        default:
            return spell
        }
    }

    /// Nanoseconds the calling thread has spent runnable but waiting for a CPU (the second field of
    /// /proc/thread-self/schedstat), or nil where that cannot be read. Reads into a stack buffer: no allocation.
    static func runDelay() -> Int? {
        #if os(Linux)
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &text) { bytes -> Int? in
            let file = open("/proc/thread-self/schedstat", O_RDONLY)
            guard file >= 0 else { return nil }
            defer { close(file) }
            let count = read(file, bytes.baseAddress, bytes.count)
            guard count > 0 else { return nil }
            // "8114386151 14209547 34163\n": run time, run delay, time slices.
            var field = 0, value = 0, digits = 0
            for byte in bytes.prefix(count) {
                if byte == UInt8(ascii: " ") {
                    field += 1
                    if field == 2 { break }
                } else if field == 1 {
                    guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                }
            }
            return digits > 0 ? value : nil
        }
        #else
        return nil
        #endif
    }

    fileprivate static func monotonicNanoseconds() -> Int { nanoseconds(on: CLOCK_MONOTONIC) ?? 0 }

    /// The reading of `clock` in nanoseconds, or nil where it cannot be read.
    fileprivate static func nanoseconds(on clock: clockid_t) -> Int? {
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return nil }
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    /// Claims and runs parts of region `generation` until none is left. A worker notes in its `slot` whether
    /// it is in a part.
    private func runParts(of generation: Int, _ body: (Int) -> Void, slot: WorkerSlot?) {
        while true {
            let current = state.load(ordering: .acquiring)
            let (next, parts) = (current & 0xffff, (current >> 16) & 0xffff)
            guard current >> 32 == generation, next < parts else { return }
            guard state.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing).exchanged
            else { continue }
            slot?.inPart.store(true, ordering: .relaxed)
            body(next)
            slot?.inPart.store(false, ordering: .relaxed)
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
                for slot in slots where slot.inPart.load(ordering: .relaxed) {
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
            let start = Self.monotonicNanoseconds()
            while remaining.load(ordering: .acquiring) > 0 { sched_yield() }
            yielded.add(Self.monotonicNanoseconds() - start, ordering: .relaxed)
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
    /// Whether the worker is running a part.
    let inPart = Atomic<Bool>(false)
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
        hasClock ? WorkerPool.nanoseconds(on: clock) ?? 0 : 0
    }
}

/// The caller's measurement window for solo spells (`WorkerPool.inSoloSpell`).
struct SpellWindow {
    /// When the window opened (`CLOCK_MONOTONIC` nanoseconds; 0: none open), the caller's run delay then, and
    /// which thread it is.
    var start = 0
    var delay = 0
    var thread = pthread_t(bitPattern: 0)

    /// Whether it is time to measure: no window is open, or the open one is `windowNanoseconds` old.
    func isDue(at now: Int) -> Bool { start == 0 || now - start >= WorkerPool.windowNanoseconds }

    /// Closes the window and opens the next one at `now`. Returns whether a spell should be on (the share of
    /// the window `thread` waited for a CPU is past `soloEndShare` in a spell, past `soloStartShare` outside
    /// one), or nil when there is nothing to judge (no window was open, or another thread opened it).
    mutating func close(at now: Int, delay: Int, thread: pthread_t, inSpell: Bool) -> Bool? {
        defer { (start, self.delay, self.thread) = (now, delay, thread) }
        guard start != 0, pthread_equal(self.thread, thread) != 0, now > start else { return nil }
        let share = Double(delay - self.delay) / Double(now - start)
        return share > (inSpell ? WorkerPool.soloEndShare : WorkerPool.soloStartShare)
    }
}
