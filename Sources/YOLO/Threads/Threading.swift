import Foundation

/// How a `Detector` uses threads: how many per forward pass, how long idle threads poll before they sleep,
/// whether its worker threads are pinned to CPUs, and how many passes may run at once.
///
/// The defaults fit where the process runs and change nothing outside the detector's own threads:
/// one thread per physical core the process may use (its CPU affinity mask, its cgroup CPU quota), no
/// pinning, a short spin. Each detector has its own worker threads (`threads − 1` of them: the calling
/// thread always computes too); they start with the first pass and exit after `idleTimeout` without work.
///
/// ```swift
/// var threading = Threading(threads: 4)      // 0: the default count
/// threading.spin = .zero                     // sleep at once when out of work (no busy-waiting)
/// let detector = try Detector(model: model, threading: threading)
/// ```
///
/// What the library touches outside a detector's own threads is listed in the Threads article of the
/// documentation (OpenBLAS's thread count, subnormal flushing while a pass runs, a shared pool for loading).
public struct Threading: Sendable, Hashable {
    /// Threads one forward pass uses, the calling thread included. 0 (the default) means
    /// `Threading.defaultThreadCount`. Negative counts are an error (`Detector` throws).
    public var threads: Int
    /// How long a thread that has run out of work keeps polling for more before it sleeps. A pass is about
    /// seventy parallel regions a few microseconds to a millisecond apart; polling keeps the workers awake
    /// from one to the next (waking a sleeping thread costs tens of microseconds, more on a virtual machine).
    /// `.zero` sleeps at once: the least CPU time, for a machine shared with other busy processes.
    public var spin: Duration
    /// CPUs to pin the worker threads to: worker k (1-based) runs only on `workerCPUs[(k − 1) % count]`.
    /// Empty (the default): no thread's affinity is changed. The calling thread is never pinned.
    public var workerCPUs: [Int]
    /// How long a worker thread waits for work before it exits; the next pass starts it again.
    public var idleTimeout: Duration
    /// Forward passes that may run at once on one detector; a call beyond it waits for one to finish. Each
    /// running pass holds one set of scratch memory (`Detector.scratchBytes`), so this bounds a detector's
    /// working memory under any number of concurrent callers. 0 (the default): the number of CPUs the process
    /// may use (more passes than CPUs would only take turns).
    public var maximumConcurrentPasses: Int

    /// - Parameters: see the properties. The defaults: the machine's count, 100 µs of polling, no pinning,
    ///   one second before idle workers exit, as many concurrent passes as CPUs.
    public init(threads: Int = 0, spin: Duration = .microseconds(100), workerCPUs: [Int] = [],
                idleTimeout: Duration = .seconds(1), maximumConcurrentPasses: Int = 0) {
        self.threads = threads
        self.spin = spin
        self.workerCPUs = workerCPUs
        self.idleTimeout = idleTimeout
        self.maximumConcurrentPasses = maximumConcurrentPasses
    }

    /// The default thread count: the physical cores among the CPUs this process may use (SMT siblings count
    /// once), capped by its cgroup CPU quota (rounded down), at least 1. Read once per process.
    public static var defaultThreadCount: Int { machine.threads }

    /// CPUs this process may use (its affinity mask when it was first asked), at least 1.
    public static var allowedCPUCount: Int { machine.allowedCPUs }

    private static let machine = CPUBudget.current()

    /// `threads` with 0 resolved to the default.
    public var resolvedThreads: Int { threads == 0 ? Self.defaultThreadCount : threads }

    /// `maximumConcurrentPasses` with 0 resolved to the default.
    public var resolvedConcurrentPasses: Int {
        maximumConcurrentPasses == 0 ? Self.allowedCPUCount : maximumConcurrentPasses
    }

    /// Throws `YOLOError.invalidArgument` naming the first setting out of range.
    public func validate() throws {
        guard threads >= 0 else { throw YOLOError.invalidArgument("thread count must be 0 (the default) or positive, got \(threads)") }
        guard threads <= Self.maximumThreads else {
            throw YOLOError.invalidArgument("thread count \(threads) is more than the \(Self.maximumThreads) a pass can use")
        }
        guard spin >= .zero else { throw YOLOError.invalidArgument("spin must not be negative, got \(spin)") }
        guard idleTimeout >= .zero else { throw YOLOError.invalidArgument("idle timeout must not be negative, got \(idleTimeout)") }
        guard maximumConcurrentPasses >= 0 else {
            throw YOLOError.invalidArgument("maximum concurrent passes must be 0 (the default) or positive, got \(maximumConcurrentPasses)")
        }
        if let cpu = workerCPUs.first(where: { $0 < 0 || $0 > CPUAffinity.maximumCPU }) {
            throw YOLOError.invalidArgument("worker CPU \(cpu) is outside 0...\(CPUAffinity.maximumCPU)")
        }
        if !workerCPUs.isEmpty, let allowed = CPUAffinity.allowedCPUs(), let cpu = workerCPUs.first(where: { !allowed.contains($0) }) {
            throw YOLOError.invalidArgument("worker CPU \(cpu) is not one this process may run on (\(Self.describe(allowed)))")
        }
    }

    /// The most threads one pass may use.
    public static let maximumThreads = 1024

    /// Parses a CPU list as `taskset -c` writes it: "0-3,8,10-11". Nil for anything else.
    public static func parseCPUList(_ text: String) -> [Int]? {
        var cpus: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = item.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int(bounds[0]), let high = Int(bounds.last!), low >= 0, low <= high,
                  high <= CPUAffinity.maximumCPU else { return nil }
            cpus.append(contentsOf: low...high)
        }
        return cpus.isEmpty ? nil : cpus
    }

    /// "0-3,8": a CPU list as `taskset -c` takes it.
    static func describe(_ cpus: [Int]) -> String {
        var runs: [String] = []
        var index = 0
        while index < cpus.count {
            var end = index
            while end + 1 < cpus.count && cpus[end + 1] == cpus[end] + 1 { end += 1 }
            runs.append(end == index ? "\(cpus[index])" : "\(cpus[index])-\(cpus[end])")
            index = end + 1
        }
        return runs.joined(separator: ",")
    }
}
