import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Persistent worker threads for `Parallel`: a parallel region wakes them instead of going through
/// libdispatch, which allocates bookkeeping on every `concurrentPerform` (about 200 small blocks per
/// forward pass) and let the heap creep. The pool allocates nothing per region.
///
/// A forward pass opens about 45 regions, a few tens of microseconds apart. Waking a sleeping
/// thread through a condition variable takes about as long as a small region's work, and longer on
/// a virtual machine whose idle vCPU the host has descheduled, so workers (and the caller, waiting
/// for them) first spin on atomics for `spinLimit` checks (about 2 ms) and only then sleep on the
/// condition variables: a worker stays awake through a whole forward pass and idles ~2 ms after it.
/// (With a 20,000-check spin, ~20 µs, two-thread passes on this 2-vCPU VM ranged 17–59 ms instead
/// of 12–30 ms.)
///
/// One region runs at a time. A caller that finds the pool busy (another thread's region) or that is
/// itself a pool worker (a nested region) runs its parts inline, one after another.
final class WorkerPool: @unchecked Sendable {
    /// Threads besides the caller: the machine's cores minus one.
    static let shared = WorkerPool(threads: max(0, Parallel.coreCount - 1))

    /// Atomic checks before a waiting thread goes to sleep (about 2 ms).
    static let spinLimit = 2_000_000

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Held by the thread that owns the current region.
    private let region = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let threadCount: Int
    /// Bumped to start a region; `job` and `parts` are written before (release), read after (acquire).
    private let generation = Atomic<Int>(0)
    /// Workers still running the current region.
    private let pending = Atomic<Int>(0)
    /// Workers asleep on `wake`, and whether the caller sleeps on `finished` (changed under `lock`).
    private let sleepers = Atomic<Int>(0)
    private let callerSleeps = Atomic<Bool>(false)
    private nonisolated(unsafe) var job: ((Int) -> Void)?
    private nonisolated(unsafe) var parts = 0
    private let workerIDs = Mutex<[pthread_t]>([])

    init(threads: Int) {
        threadCount = threads
        pthread_mutex_init(lock, nil)
        pthread_mutex_init(region, nil)
        pthread_cond_init(wake, nil)
        pthread_cond_init(finished, nil)
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work(index: index + 1) }
            thread.name = "yolo-worker-\(index + 1)"
            thread.start()
        }
    }

    /// Runs `body(0)` on the caller and `body(1) … body(parts − 1)` on workers, and returns when all
    /// are done. Runs them inline when the pool is busy, too small, or called from a worker.
    func run(parts: Int, _ body: (Int) -> Void) {
        guard parts > 1, threadCount >= parts - 1, !isWorkerThread, pthread_mutex_trylock(region) == 0 else {
            for part in 0..<parts { body(part) }
            return
        }
        withoutActuallyEscaping(body) { body in
            job = body
            self.parts = parts
            pending.store(threadCount, ordering: .relaxed)
            generation.add(1, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                pthread_mutex_lock(lock)
                pthread_cond_broadcast(wake)
                pthread_mutex_unlock(lock)
            }
            body(0)
            waitForWorkers()
            job = nil
        }
        pthread_mutex_unlock(region)
    }

    /// Spins, then sleeps, until every worker has finished the current region.
    private func waitForWorkers() {
        var spins = 0
        while pending.load(ordering: .acquiring) > 0 && spins < Self.spinLimit { spins += 1 }
        guard pending.load(ordering: .acquiring) > 0 else { return }
        pthread_mutex_lock(lock)
        callerSleeps.store(true, ordering: .sequentiallyConsistent)
        while pending.load(ordering: .sequentiallyConsistent) > 0 { pthread_cond_wait(finished, lock) }
        callerSleeps.store(false, ordering: .relaxed)
        pthread_mutex_unlock(lock)
    }

    private var isWorkerThread: Bool {
        let me = pthread_self()
        return workerIDs.withLock { ids in ids.contains { pthread_equal($0, me) != 0 } }
    }

    private func work(index: Int) {
        workerIDs.withLock { $0.append(pthread_self()) }
        var seen = 0  // the first generation is 1: a region started before this thread got here still runs
        while true {
            var spins = 0
            while generation.load(ordering: .acquiring) == seen && spins < Self.spinLimit { spins += 1 }
            if generation.load(ordering: .acquiring) == seen {
                pthread_mutex_lock(lock)
                sleepers.add(1, ordering: .sequentiallyConsistent)
                while generation.load(ordering: .sequentiallyConsistent) == seen { pthread_cond_wait(wake, lock) }
                sleepers.subtract(1, ordering: .relaxed)
                pthread_mutex_unlock(lock)
            }
            seen = generation.load(ordering: .acquiring)
            if index < parts, let body = job { body(index) }
            if pending.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
               callerSleeps.load(ordering: .sequentiallyConsistent) {
                pthread_mutex_lock(lock)
                pthread_cond_signal(finished)
                pthread_mutex_unlock(lock)
            }
        }
    }
}
