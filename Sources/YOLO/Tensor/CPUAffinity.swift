import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which CPUs a thread may run on (Linux `sched_setaffinity`), for `WorkerPool`'s placement on a busy machine.
///
/// Swift's Glibc module does not import the GNU scheduling calls (`sched_getcpu`, `sched_setaffinity`,
/// `gettid`), so they are looked up once by name in the C library. Where one is missing (another platform or
/// libc), where the process may use only one CPU, or once a call has failed (a sandbox refusing it),
/// `currentCPU()` answers -1 and the pool places nothing. Masks are built from the affinity of the thread that
/// first asked (normally the process's): a thread is never given a CPU outside it.
enum CPUAffinity {
    #if os(Linux)
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
    private typealias CPUCall = @convention(c) () -> Int32
    private typealias ThreadIDCall = @convention(c) () -> pid_t

    private struct Calls {
        let setAffinity: AffinityCall
        let currentCPU: CPUCall
        let threadID: ThreadIDCall
        /// The CPUs the first thread to ask may use (its affinity mask, normally the process's).
        let allowed: cpu_set_t
    }

    private static let calls: Calls? = {
        guard let library = dlopen(nil, RTLD_NOW),
              let set = dlsym(library, "sched_setaffinity"), let get = dlsym(library, "sched_getaffinity"),
              let cpu = dlsym(library, "sched_getcpu"), let tid = dlsym(library, "gettid") else { return nil }
        var allowed = cpu_set_t()
        let getAffinity = unsafeBitCast(get, to: AffinityCall.self)
        guard withUnsafeMutableBytes(of: &allowed, { getAffinity(0, $0.count, $0.baseAddress) }) == 0 else { return nil }
        return Calls(setAffinity: unsafeBitCast(set, to: AffinityCall.self), currentCPU: unsafeBitCast(cpu, to: CPUCall.self),
                     threadID: unsafeBitCast(tid, to: ThreadIDCall.self), allowed: allowed)
    }()
    #endif

    /// Set when a call failed: placement stops for the rest of the process.
    private static let failed = Atomic<Bool>(false)

    /// Whether threads can be placed: the calls exist and the process may use at least two CPUs.
    private static let isAvailable: Bool = {
        #if os(Linux)
        guard let calls else { return false }
        return withUnsafeBytes(of: calls.allowed) { bytes in bytes.reduce(0) { $0 + $1.nonzeroBitCount } } >= 2
        #else
        return false
        #endif
    }()

    /// Whether threads can be placed here and now.
    static var canPlace: Bool { currentCPU() >= 0 }

    /// The CPU the calling thread runs on, or -1 when threads cannot be placed.
    static func currentCPU() -> Int {
        #if os(Linux)
        guard isAvailable, !failed.load(ordering: .relaxed), let calls else { return -1 }
        return Int(calls.currentCPU())
        #else
        return -1
        #endif
    }

    /// The calling thread's kernel thread ID, or 0.
    static func threadID() -> Int32 {
        #if os(Linux)
        return calls.map { $0.threadID() } ?? 0
        #else
        return 0
        #endif
    }

    /// Lets thread `thread` (a kernel thread ID) run only on `cpu`. False when that did not work.
    @discardableResult
    static func pin(_ thread: Int32, to cpu: Int) -> Bool {
        guard thread != 0 else { return false }  // 0 would mean the calling thread
        return set(thread) { bytes in
            guard cpu >= 0, cpu < bytes.count * 8 else { return false }
            for index in bytes.indices { bytes[index] = 0 }
            bytes[cpu / 8] = 1 << UInt8(cpu % 8)
            return true
        }
    }

    /// Lets thread `thread` run on every CPU the process may use except `cpu`. False when that did not work.
    @discardableResult
    static func exclude(_ cpu: Int, from thread: Int32) -> Bool {
        set(thread) { bytes in
            guard cpu >= 0, cpu < bytes.count * 8, bytes[cpu / 8] & (1 << UInt8(cpu % 8)) != 0 else { return false }
            bytes[cpu / 8] &= ~(1 << UInt8(cpu % 8))
            return true
        }
    }

    /// Starts from the allowed mask, lets `edit` change it (false: leave the thread as it is), and applies it.
    private static func set(_ thread: Int32, _ edit: (UnsafeMutableRawBufferPointer) -> Bool) -> Bool {
        #if os(Linux)
        guard isAvailable, !failed.load(ordering: .relaxed), let calls else { return false }
        var mask = calls.allowed
        return withUnsafeMutableBytes(of: &mask) { bytes in
            guard edit(bytes) else { return false }
            guard calls.setAffinity(thread, bytes.count, bytes.baseAddress) == 0 else {
                // Stop placing, and give the thread back every CPU it may use, so that none stays pinned.
                failed.store(true, ordering: .relaxed)
                var allowed = calls.allowed
                _ = withUnsafeMutableBytes(of: &allowed) { calls.setAffinity(thread, $0.count, $0.baseAddress) }
                return false
            }
            return true
        }
        #else
        return false
        #endif
    }
}
