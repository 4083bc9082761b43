import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which CPUs a thread may run on (Linux `sched_getaffinity` / `sched_setaffinity`): read for the default
/// thread count, written only for worker threads the caller asked to pin (`Threading.workerCPUs`).
///
/// Swift's Glibc module does not import the GNU scheduling calls, so they are looked up once by name in the
/// C library. Where they are missing (another platform or libc) every answer is "unknown" and nothing is pinned.
enum CPUAffinity {
    #if os(Linux)
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32

    private static let calls: (get: AffinityCall, set: AffinityCall)? = {
        guard let library = dlopen(nil, RTLD_NOW),
              let get = dlsym(library, "sched_getaffinity"), let set = dlsym(library, "sched_setaffinity") else { return nil }
        return (unsafeBitCast(get, to: AffinityCall.self), unsafeBitCast(set, to: AffinityCall.self))
    }()
    #endif

    /// The CPUs the calling thread may run on, ascending, or nil where that cannot be read.
    static func allowedCPUs() -> [Int]? {
        #if os(Linux)
        guard let calls else { return nil }
        var mask = cpu_set_t()
        return withUnsafeMutableBytes(of: &mask) { bytes -> [Int]? in
            guard calls.get(0, bytes.count, bytes.baseAddress) == 0 else { return nil }
            var cpus: [Int] = []
            for (index, byte) in bytes.enumerated() where byte != 0 {
                for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 { cpus.append(index * 8 + bit) }
            }
            return cpus
        }
        #else
        return nil
        #endif
    }

    /// The largest CPU number a mask can hold.
    static var maximumCPU: Int { MemoryLayout<cpu_set_t>.size * 8 - 1 }

    /// Lets the calling thread run only on `cpu`. False when that did not work (the CPU is not allowed, a
    /// sandbox refuses the call, or the platform has no such call).
    @discardableResult
    static func pinCurrentThread(to cpu: Int) -> Bool {
        #if os(Linux)
        guard let calls, cpu >= 0, cpu <= maximumCPU else { return false }
        var mask = cpu_set_t()
        return withUnsafeMutableBytes(of: &mask) { bytes in
            bytes[cpu / 8] = 1 << UInt8(cpu % 8)
            return calls.set(0, bytes.count, bytes.baseAddress) == 0
        }
        #else
        return false
        #endif
    }
}

/// What the machine gives this process: the facts behind `Threading.defaultThreadCount`.
///
/// Read once, the first time a default is needed: the calling thread's affinity mask, the cgroup CPU quota
/// (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`, the smallest along the path from the
/// process's cgroup up to the root), and which allowed CPUs are SMT siblings of one core
/// (`/sys/devices/system/cpu/cpuN/topology/core_cpus_list`, older kernels `thread_siblings_list`).
struct CPUBudget: Equatable {
    /// CPUs this process may run on.
    var allowedCPUs: Int
    /// Physical cores among them (SMT siblings counted once).
    var cores: Int
    /// The cgroup CPU quota in CPUs (e.g. 2.5), nil when there is none.
    var quota: Double?

    /// Threads worth running: the allowed physical cores, no more than the quota (rounded down, at least 1).
    var threads: Int {
        var count = max(1, cores)
        if let quota { count = min(count, max(1, Int(quota.rounded(.down)))) }
        return count
    }

    /// The budget of this process, read through `read` (a file's text, or nil when it cannot be read).
    static func current(read: (String) -> String? = CPUBudget.readFile) -> CPUBudget {
        let allowed = CPUAffinity.allowedCPUs() ?? Array(0..<max(1, ProcessInfo.processInfo.activeProcessorCount))
        return CPUBudget(allowedCPUs: max(1, allowed.count), cores: max(1, physicalCores(of: allowed, read: read)),
                         quota: cgroupQuota(read: read))
    }

    /// Distinct SMT sibling groups among `cpus`; a CPU whose group cannot be read counts as a core of its own.
    static func physicalCores(of cpus: [Int], read: (String) -> String?) -> Int {
        var groups = Set<String>()
        for cpu in cpus {
            let base = "/sys/devices/system/cpu/cpu\(cpu)/topology/"
            let group = read(base + "core_cpus_list") ?? read(base + "thread_siblings_list")
            groups.insert(group?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "cpu\(cpu)")
        }
        return groups.count
    }

    /// The smallest CPU quota along the process's cgroup path (v2, then v1), in CPUs; nil when unlimited.
    static func cgroupQuota(read: (String) -> String?) -> Double? {
        guard let membership = read("/proc/self/cgroup") else { return nil }
        var best: Double?
        func keep(_ quota: Double?) {
            guard let quota, quota > 0 else { return }
            best = min(best ?? quota, quota)
        }
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let controllers = fields[1].split(separator: ","), path = String(fields[2])
            if fields[0] == "0" && controllers.isEmpty {
                for folder in ancestors(of: path, under: "/sys/fs/cgroup") {
                    keep(read(folder + "/cpu.max").flatMap(parseCPUMax))
                }
            } else if controllers.contains("cpu") {
                for mount in ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"] {
                    for folder in ancestors(of: path, under: mount) {
                        guard let quota = read(folder + "/cpu.cfs_quota_us").flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                              let period = read(folder + "/cpu.cfs_period_us").flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                              quota > 0, period > 0 else { continue }
                        keep(Double(quota) / Double(period))
                    }
                }
            }
        }
        return best
    }

    /// `root + path`, then each parent folder up to `root` itself.
    static func ancestors(of path: String, under root: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init)
        var folders: [String] = []
        while true {
            folders.append(([root] + parts).joined(separator: "/"))
            guard !parts.isEmpty else { return folders }
            parts.removeLast()
        }
    }

    /// cgroup v2's `cpu.max`: "max 100000" (no limit) or "QUOTA PERIOD" in microseconds.
    static func parseCPUMax(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 else { return nil }
        return Double(quota) / Double(period)
    }

    /// A small text file's contents, or nil.
    static func readFile(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), data.count < 65_536 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
