import Foundation

/// The instruction-set features this CPU and OS offer, read once from Linux's `/proc/cpuinfo` (its
/// `flags` line lists only what the kernel has enabled, e.g. no AVX-512 flags when the OS does not
/// save the AVX-512 registers). On other platforms the set is empty, so only the portable family runs.
struct CPUFeatures: Sendable {
    /// Feature names as `/proc/cpuinfo` spells them (`avx2`, `fma`, `avx512f`, ...).
    let flags: Set<String>

    /// This machine's features.
    static let current = CPUFeatures(cpuinfo: (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")

    /// Features from the text of a `/proc/cpuinfo` (the first `flags` line).
    init(cpuinfo: String) {
        let line = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }
        let names = line.flatMap { $0.split(separator: ":", maxSplits: 1).last }?.split(separator: " ") ?? []
        flags = Set(names.map(String.init))
    }

    /// The features of `required` this CPU lacks.
    func missing(_ required: [String]) -> [String] {
        required.filter { !flags.contains($0) }
    }
}
