import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Persistent worker threads for `Parallel`: a parallel region wakes them instead of going through
/// libdispatch, which allocates bookkeeping on every `concurrentPerform` (about 200 small blocks per
/// forward pass) and let the heap creep. The pool allocates nothing per region.
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
    // Guarded by `lock`.
    private var generation = 0
    private var job: ((Int) -> Void)?
    private var parts = 0
    private var pending = 0
    private var workerIDs: [pthread_t] = []

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

    /// Runs `body(part)` for `part` in `0..<parts`: part 0 on the caller, the others on pool threads
    /// (inline when the pool is busy, nested, or too small). Returns when every part is done.
    func run(parts: Int, _ body: (Int) -> Void) {
        guard parts > 1, threadCount >= parts - 1, !isWorkerThread, pthread_mutex_trylock(region) == 0 else {
            for part in 0..<parts { body(part) }
            return
        }
        withoutActuallyEscaping(body) { body in
            pthread_mutex_lock(lock)
            job = body
            self.parts = parts
            pending = threadCount
            generation &+= 1
            pthread_cond_broadcast(wake)
            pthread_mutex_unlock(lock)
            body(0)
            pthread_mutex_lock(lock)
            while pending > 0 { pthread_cond_wait(finished, lock) }
            job = nil
            pthread_mutex_unlock(lock)
        }
        pthread_mutex_unlock(region)
    }

    private var isWorkerThread: Bool {
        let me = pthread_self()
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return workerIDs.contains { pthread_equal($0, me) != 0 }
    }

    private func work(index: Int) {
        pthread_mutex_lock(lock)
        workerIDs.append(pthread_self())
        var seen = 0  // the first generation is 1: a region started before this thread got here still runs
        while true {
            while generation == seen { pthread_cond_wait(wake, lock) }
            seen = generation
            let body = job
            let active = index < parts
            pthread_mutex_unlock(lock)
            if active, let body { body(index) }
            pthread_mutex_lock(lock)
            pending -= 1
            if pending == 0 { pthread_cond_signal(finished) }
        }
    }
}
