import Foundation

/// A value behind a pthread mutex: the engine's one lock type for shared mutable state (the detector's network
/// cache and scratch pool, the temporary-file registry, the kernel-family reason).
///
/// Not `Synchronization.Mutex`: the standard library is not built with ThreadSanitizer, so TSan sees none of
/// that mutex's ordering and reports every access it protects as a race (it did, docs/ROBUSTNESS.md). TSan
/// intercepts pthread mutexes, so with this type a TSan report means a real race.
@_spi(Engine) public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
