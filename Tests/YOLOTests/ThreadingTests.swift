import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `Threading`'s settings and defaults and `CPUBudget`'s reading of the machine.
@Suite struct ThreadingTests {
    /// A fake file system: path → contents.
    static func files(_ table: [String: String]) -> (String) -> String? { { table[$0] } }

    @Test func cgroupV2QuotaIsTheSmallestAlongThePath() {
        let read = Self.files([
            "/proc/self/cgroup": "0::/app/worker\n",
            "/sys/fs/cgroup/app/worker/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/app/cpu.max": "250000 100000\n",
            "/sys/fs/cgroup/cpu.max": "800000 100000\n",
        ])
        #expect(CPUBudget.cgroupQuota(read: read) == 2.5)
    }

    @Test func cgroupV1QuotaAndNoQuota() {
        let v1 = Self.files([
            "/proc/self/cgroup": "4:memory:/x\n3:cpu,cpuacct:/job\n",
            "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us": "150000\n",
            "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        ])
        #expect(CPUBudget.cgroupQuota(read: v1) == 1.5)
        let none = Self.files(["/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "max 100000\n"])
        #expect(CPUBudget.cgroupQuota(read: none) == nil)
        #expect(CPUBudget.cgroupQuota(read: Self.files([:])) == nil)
    }

    @Test func smtSiblingsCountAsOneCore() {
        let read = Self.files([
            "/sys/devices/system/cpu/cpu0/topology/core_cpus_list": "0,8\n",
            "/sys/devices/system/cpu/cpu8/topology/core_cpus_list": "0,8\n",
            "/sys/devices/system/cpu/cpu1/topology/thread_siblings_list": "1,9\n",
        ])
        #expect(CPUBudget.physicalCores(of: [0, 8, 1, 2], read: read) == 3)  // {0,8}, {1,9}, cpu2 unknown: its own
    }

    @Test func defaultThreadsFollowCoresAndQuota() {
        #expect(CPUBudget(allowedCPUs: 16, cores: 8, quota: nil).threads == 8)
        #expect(CPUBudget(allowedCPUs: 64, cores: 64, quota: 2.5).threads == 2)
        #expect(CPUBudget(allowedCPUs: 4, cores: 4, quota: 0.5).threads == 1)
        #expect(Threading.defaultThreadCount >= 1 && Threading.defaultThreadCount <= Threading.allowedCPUCount)
    }

    @Test func settingsOutOfRangeAreErrors() throws {
        #expect(throws: YOLOError.self) { try Threading(threads: -1).validate() }
        #expect(throws: YOLOError.self) { try Threading(spin: .microseconds(-1)).validate() }
        #expect(throws: YOLOError.self) { try Threading(workerCPUs: [-3]).validate() }
        #expect(throws: YOLOError.self) { try Threading(maximumConcurrentPasses: -2).validate() }
        try Threading().validate()
        #expect(Threading(threads: 0).resolvedThreads == Threading.defaultThreadCount)
        #expect(Threading.parseCPUList("0-3,8") == [0, 1, 2, 3, 8])
        #expect(Threading.parseCPUList("3-1") == nil && Threading.parseCPUList("a") == nil && Threading.parseCPUList("") == nil)
        #expect(Threading.describe([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11")
    }
}
