import Foundation
import Synchronization
import YOLOPrefetch
#if canImport(Glibc)
import Glibc
#endif

/// The worker threads of one `Threading` setting: `threads − 1` threads that help whoever opens a parallel
/// region (`run(parts:_:)`). docs/THREADS.md describes it in one page.
///
/// - **Regions.** A caller opens a region of `parts` parts, runs parts itself, and returns when all are done.
///   Parts are claimed, not assigned: the caller and every awake worker take the next unclaimed part until
///   none is left, so a worker that is late (asleep, or preempted by another process) loses its part to the
///   caller instead of holding the region up. Several callers (concurrent `detect` calls) may each have a
///   region open at once (up to `regionSlots`); workers help all of them, taking the regions in turn.
/// - **Waiting.** A worker out of work polls (with the CPU's `pause` hint) up to `Threading.spin` for the next
///   region, then sleeps on a condition variable; the end of a forward pass (`withPass`) stops its polling at
///   once, as no region follows soon. A region's caller out of parts polls for the others up to `spin` and no
///   longer than its own share took (a part that runs much longer was held up: its thread preempted), then
///   sleeps until the last part ends. A pass wakes the workers when it starts; a region wakes as many sleepers
///   as it has parts for.
/// - **Lifetime.** Workers start with the first region and exit after `Threading.idleTimeout` asleep; the next
///   region starts them again. When the pool is released its workers exit within that time or sooner.
/// - **Solo spells.** A worker that another process preempts in the middle of its part holds its region up
///   until the scheduler runs it again (a time slice, milliseconds). When a region's caller, out of parts (and
///   with no worker asleep when it opened the region: a woken worker is late for another reason),
///   waits longer for the others than it took to run its own and at least `stallNanoseconds`, twice within
///   `firstSpellNanoseconds`, the machine has more runnable threads than CPUs: for a spell (that long, twice
///   the last one when a stall follows the last spell closely, up to `longestSpellNanoseconds`) every region
///   and layer runs on its caller alone and the workers sleep. One thread then costs what it costs alone,
///   instead of waiting on preempted workers; on a machine with a CPU to spare regions are not held up that
///   long (a host holding a virtual CPU back does it now and then, hence the two hold-ups).
/// - **Placement** only when asked (`Threading.workerCPUs`): each worker pins itself when it starts.
///   Nothing here changes or reads any thread's scheduling state otherwise: spells are judged by the clock alone.
///
/// The pool allocates nothing per region.
@_spi(Engine) public final class WorkerPool: @unchecked Sendable {
    /// Threads a region can run on at once: the caller and `threads − 1` workers.
    public let threads: Int
    private let core: PoolCore

    /// A pool for `threading` (its `threads` resolved: 0 is the default count). Starts no thread yet.
    /// - Precondition: `threading.validate()` passes.
    public init(_ threading: Threading = Threading()) {
        threads = max(1, threading.resolvedThreads)
        core = PoolCore(workers: threads - 1, threading: threading)
    }

    deinit { core.shutDown() }

    /// Runs `body(0)` … `body(parts − 1)`, each exactly once, on the caller and the workers, and returns when
    /// all are done. Runs them on the caller alone when there is one part, no worker, or no free region slot.
    public func run(parts: Int, _ body: (Int) -> Void) {
        core.run(parts: parts, body)
    }

    /// Worker threads running now (started and not yet exited), for tests and diagnosis.
    public var liveWorkers: Int { core.live.load(ordering: .relaxed) }

    /// Threads a layer should plan for now: `threads`, or 1 during a solo spell (a layer split for two threads
    /// is slower than one planned for one when the caller runs both parts).
    public var availableThreads: Int { core.inSpell() ? 1 : threads }

    /// Solo spells started so far, for tests and diagnosis.
    public var spells: Int { core.spellCount.load(ordering: .relaxed) }

    /// Parallel regions opened on this pool so far (those run on the caller alone not counted), for diagnosis.
    public var regions: Int { core.regionCount.load(ordering: .relaxed) }

    /// Runs `body` with this pool as the calling thread's current pool: `Parallel` loops inside it run here.
    public func withCurrent<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = PoolCore.current
        PoolCore.current = core
        defer { PoolCore.current = previous }
        return try body()
    }

    /// Runs a forward pass (`body`) on this pool: its current pool, with the workers woken at the start (when
    /// `Threading.spin` is not zero and no solo spell is on) and their polling stopped at the end.
    func withPass<Result>(_ body: () throws -> Result) rethrows -> Result {
        let held = core.beginPass()
        defer { if held { core.endPass() } }
        return try withCurrent(body)
    }

    /// The pool `Parallel` loops run on when no `withCurrent` is active (loading model files, network builds
    /// outside a detector, image encoding, the conversion tools): default thread count, workers that exit
    /// after a second idle. Started on first use.
    static let shared = WorkerPool()

    /// The calling thread's current pool's core, else the shared one's.
    static var currentCore: PoolCore { PoolCore.current ?? shared.core }
}

/// The shared state of a pool, owned jointly by the `WorkerPool` handle and its worker threads (a worker that
/// outlives the handle exits without touching freed memory).
final class PoolCore: @unchecked Sendable {
    let workers: Int
    let spinNanoseconds: Int
    let idleNanoseconds: Int
    let workerCPUs: [Int]

    /// Regions that may be open at once; a caller that finds every slot taken runs its parts alone.
    static let regionSlots = 8
    private let slots: [RegionSlot]
    /// Bumped each time a region opens (and when a pass starts, to wake the workers): a waiting worker polls it.
    private let epoch = Atomic<Int>(0)
    /// Passes ended so far: a worker polling for the next region stops when a pass ends.
    private let passEnds = Atomic<Int>(0)
    /// Regions opened so far (diagnosis).
    let regionCount = Atomic<Int>(0)
    /// Workers asleep on `wake`, and workers started and not yet exited.
    private let sleepers = Atomic<Int>(0)
    let live = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Numbers the workers' threads (names and pinning).
    private let started = Atomic<Int>(0)

    init(workers: Int, threading: Threading) {
        self.workers = max(0, workers)
        spinNanoseconds = Self.nanoseconds(threading.spin)
        idleNanoseconds = max(1_000_000, Self.nanoseconds(threading.idleTimeout))
        workerCPUs = threading.workerCPUs
        pthread_mutex_init(lock, nil)
        slots = (0..<Self.regionSlots).map { [lock] _ in RegionSlot(lock: lock) }
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(lock)
        wake.deallocate()
        lock.deallocate()
    }

    // MARK: The calling thread's pool

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The pool `Parallel` uses on this thread (`WorkerPool.withCurrent`; a worker's own pool), unretained.
    static var current: PoolCore? {
        get { pthread_getspecific(key).map { Unmanaged<PoolCore>.fromOpaque($0).takeUnretainedValue() } }
        set { pthread_setspecific(key, newValue.map { Unmanaged.passUnretained($0).toOpaque() }) }
    }

    // MARK: Regions

    func run(parts: Int, _ body: (Int) -> Void) {
        guard parts > 1, parts < 1 << 16, workers > 0, !inSpell(), let slot = takeSlot() else {
            for part in 0..<parts { body(part) }
            return
        }
        startWorkersIfNeeded()
        let opened = Spin.monotonicNanoseconds()
        withoutActuallyEscaping(body) { body in
            slot.open(body, parts: parts)
            epoch.add(1, ordering: .sequentiallyConsistent)
            // A worker woken now arrives late (tens of microseconds, more on a virtual machine whose idle CPU
            // the host must schedule again): that is not a stall.
            let woke = sleepers.load(ordering: .sequentiallyConsistent) > 0
            if woke {
                pthread_mutex_lock(lock)
                for _ in 1..<min(parts, workers + 1) { pthread_cond_signal(wake) }
                pthread_mutex_unlock(lock)
            }
            regionCount.add(1, ordering: .relaxed)
            slot.runParts()
            let ranOut = Spin.monotonicNanoseconds()
            // The other parts started about when the caller's did: polling longer than the caller's own share
            // took means a thread was held up (preempted), and the caller sleeps instead.
            slot.waitForParts(spinNanoseconds: min(spinNanoseconds, max(ranOut - opened, Self.shortestCallerSpin)))
            slot.close()
            let waited = Spin.monotonicNanoseconds() - ranOut
            if !woke && waited > max(Self.stallNanoseconds, ranOut - opened) { noteStall(at: ranOut + waited) }
        }
    }

    // MARK: Solo spells

    /// A caller's wait for the other parts of its region past which the region counts as held up (a scheduler
    /// time slice is 1–5 ms). On the 2-core VMs, two-thread passes beside a CPU-bound process were held up over
    /// 0.5 ms 40–60 times in 45 passes, mostly for 2–5 ms; on a quiet machine 0–2 times (the host holding a vCPU).
    static let stallNanoseconds = 500_000
    /// The least a caller polls for the others' parts before it sleeps (a few futex round trips).
    static let shortestCallerSpin = 20_000
    /// The first spell's length, and the longest a spell grows to.
    static let firstSpellNanoseconds = 200_000_000
    static let longestSpellNanoseconds = 1_600_000_000
    /// Until when (`CLOCK_MONOTONIC` ns) the current spell lasts, and how long it was.
    private let spellEnd = Atomic<Int>(0)
    private let spellLength = Atomic<Int>(0)
    /// When the last region was held up (0: never).
    private let lastStall = Atomic<Int>(0)
    let spellCount = Atomic<Int>(0)

    func inSpell() -> Bool {
        let end = spellEnd.load(ordering: .relaxed)
        return end != 0 && Spin.monotonicNanoseconds() < end
    }

    /// A region was held up at `now`. Soon after a spell (less than its length after its end) the machine is
    /// still oversubscribed: a spell twice as long starts. Otherwise a spell of `firstSpellNanoseconds` starts if
    /// the previous hold-up was less than that long ago; one hold-up alone (a host holding a vCPU back) starts none.
    private func noteStall(at now: Int) {
        let previous = lastStall.exchange(now, ordering: .relaxed)
        let last = spellLength.load(ordering: .relaxed), end = spellEnd.load(ordering: .relaxed)
        let length: Int
        if last > 0 && now - end < max(last, Self.firstSpellNanoseconds) {
            length = min(2 * last, Self.longestSpellNanoseconds)
        } else if previous != 0 && now - previous < Self.firstSpellNanoseconds {
            length = Self.firstSpellNanoseconds
        } else {
            return
        }
        spellLength.store(length, ordering: .relaxed)
        spellEnd.store(now + length, ordering: .relaxed)
        spellCount.add(1, ordering: .relaxed)
    }

    private func takeSlot() -> RegionSlot? {
        for slot in slots where slot.taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            return slot
        }
        return nil
    }

    // MARK: Passes

    /// Starts a pass: unless `spin` is zero or a spell is on, wakes sleeping or exited workers, so that they are
    /// awake for its first region. Returns whether it did (`endPass` must follow).
    func beginPass() -> Bool {
        guard workers > 0, spinNanoseconds > 0, !inSpell() else { return false }
        startWorkersIfNeeded()
        epoch.add(1, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            pthread_mutex_lock(lock)
            pthread_cond_broadcast(wake)
            pthread_mutex_unlock(lock)
        }
        return true
    }

    /// Ends a pass: workers polling for a next region stop and sleep.
    func endPass() { passEnds.add(1, ordering: .relaxed) }

    // MARK: Workers

    private func startWorkersIfNeeded() {
        guard live.load(ordering: .relaxed) < workers else { return }
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while live.load(ordering: .relaxed) < workers && !stopping.load(ordering: .relaxed) {
            live.add(1, ordering: .relaxed)
            let number = started.add(1, ordering: .relaxed).newValue
            let thread = Thread { [self] in work(number: number) }
            thread.name = "yolo-worker-\((number - 1) % workers + 1)"
            thread.start()
        }
    }

    /// Tells every worker to exit once it is out of work.
    func shutDown() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        pthread_mutex_lock(lock)
        pthread_cond_broadcast(wake)
        pthread_mutex_unlock(lock)
    }

    private func work(number: Int) {
        PoolCore.current = self
        DenormalMode.flushOnThisThread()
        if !workerCPUs.isEmpty { CPUAffinity.pinCurrentThread(to: workerCPUs[(number - 1) % workerCPUs.count]) }
        var turn = number
        while !stopping.load(ordering: .relaxed) {
            let seen = epoch.load(ordering: .sequentiallyConsistent)
            let ends = passEnds.load(ordering: .relaxed)
            if helpOnce(startingAt: &turn) { continue }
            // Poll for the next region, but not past the end of a pass: after its last region none follows soon.
            if Spin.until(nanoseconds: spinNanoseconds, {
                epoch.load(ordering: .relaxed) != seen || passEnds.load(ordering: .relaxed) != ends
            }), epoch.load(ordering: .relaxed) != seen { continue }
            if !sleep(unlessEpochLeaves: seen) { break }
        }
        live.subtract(1, ordering: .relaxed)
    }

    /// Runs the parts of one region with unclaimed parts, looking at the slots from `turn` on (so that the
    /// workers spread over concurrent regions). False when no region had any.
    private func helpOnce(startingAt turn: inout Int) -> Bool {
        for offset in 0..<slots.count {
            let slot = slots[(turn + offset) % slots.count]
            if slot.runParts() {
                turn += offset + 1
                return true
            }
        }
        return false
    }

    /// Sleeps until a region opens (true) or `idleNanoseconds` pass without one or the pool stops (false).
    private func sleep(unlessEpochLeaves seen: Int) -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        sleepers.add(1, ordering: .sequentiallyConsistent)
        defer { sleepers.subtract(1, ordering: .relaxed) }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = deadline.tv_sec * 1_000_000_000 + deadline.tv_nsec + idleNanoseconds
        deadline = timespec(tv_sec: end / 1_000_000_000, tv_nsec: end % 1_000_000_000)
        while epoch.load(ordering: .sequentiallyConsistent) == seen {
            if stopping.load(ordering: .relaxed) { return false }
            if pthread_cond_timedwait(wake, lock, &deadline) == ETIMEDOUT {
                return epoch.load(ordering: .sequentiallyConsistent) != seen
            }
        }
        return true
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds < 1_000_000 else { return Int.max / 4 }
        return max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

/// One open region: its parts, who claimed which, and its caller's wait.
private final class RegionSlot: @unchecked Sendable {
    /// Whether a caller holds the slot.
    let taken = Atomic<Bool>(false)
    /// Generation (bits 32...), part count (bits 16..<32), next unclaimed part (bits 0..<16). `job` is written
    /// before a generation is stored (release) and read only after a part of it was claimed (acquire), so a
    /// worker holding an old reading can never claim a part of a newer region.
    private let state = Atomic<Int>(0)
    /// Parts not yet finished.
    private let remaining = Atomic<Int>(0)
    private let callerSleeps = Atomic<Bool>(false)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private nonisolated(unsafe) var job: ((Int) -> Void)?
    private nonisolated(unsafe) var generation = 0
    /// The pool's lock, which guards the caller's sleep on `finished`.
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    init(lock: UnsafeMutablePointer<pthread_mutex_t>) {
        self.lock = lock
        pthread_cond_init(finished, nil)
    }

    deinit {
        pthread_cond_destroy(finished)
        finished.deallocate()
    }

    /// Publishes a region of `parts` parts (the caller holds the slot).
    func open(_ body: @escaping (Int) -> Void, parts: Int) {
        job = body
        generation = (generation + 1) & 0x7fff_ffff
        remaining.store(parts, ordering: .relaxed)
        state.store(generation << 32 | parts << 16, ordering: .sequentiallyConsistent)
    }

    /// Claims and runs parts of the open region until none is left. True when it ran at least one.
    @discardableResult
    func runParts() -> Bool {
        var ran = false
        while true {
            let current = state.load(ordering: .acquiring)
            let (next, parts) = (current & 0xffff, (current >> 16) & 0xffff)
            guard next < parts else { return ran }
            guard state.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing).exchanged
            else { continue }
            job!(next)
            ran = true
            if remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
               callerSleeps.load(ordering: .sequentiallyConsistent) {
                pthread_mutex_lock(lock)
                pthread_cond_signal(finished)
                pthread_mutex_unlock(lock)
            }
        }
    }

    /// Polls for `spinNanoseconds`, then sleeps, until every claimed part has finished.
    func waitForParts(spinNanoseconds: Int) {
        if Spin.until(nanoseconds: spinNanoseconds, { remaining.load(ordering: .acquiring) == 0 }) { return }
        pthread_mutex_lock(lock)
        callerSleeps.store(true, ordering: .sequentiallyConsistent)
        while remaining.load(ordering: .sequentiallyConsistent) > 0 { pthread_cond_wait(finished, lock) }
        callerSleeps.store(false, ordering: .relaxed)
        pthread_mutex_unlock(lock)
    }

    /// Ends the region and frees the slot.
    func close() {
        job = nil
        taken.store(false, ordering: .releasing)
    }
}

/// Polling with the CPU's spin-wait hint.
enum Spin {
    /// Checks `done` until it is true (returns true) or `nanoseconds` of polling have passed (false). The clock
    /// is read every 64 checks; each check is preceded by a `pause`, which on x86 keeps a polling thread from
    /// slowing its SMT sibling and from flooding the memory system with loads.
    @inline(__always)
    static func until(nanoseconds: Int, _ done: () -> Bool) -> Bool {
        if done() { return true }
        guard nanoseconds > 0 else { return false }
        let start = monotonicNanoseconds()
        var checks = 0
        while true {
            spinPause()
            if done() { return true }
            checks += 1
            if checks & 63 == 0 && monotonicNanoseconds() - start >= nanoseconds { return false }
        }
    }

    static func monotonicNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
