import Foundation

/// The instruction-set features this CPU and OS offer, read once from Linux's `/proc/cpuinfo` (its
/// `flags` line lists only what the kernel has enabled, e.g. no AVX-512 flags when the OS does not
/// save the AVX-512 registers). On other platforms the set is empty, so only the portable family runs.
struct CPUFeatures: Sendable {
    /// Feature names as `/proc/cpuinfo` spells them (`avx2`, `fma`, `avx512f`, ...).
    let flags: Set<String>
    /// `vendor_id` (`AuthenticAMD`, `GenuineIntel`) and `cpu family` of the first processor, when listed.
    let vendor: String
    let family: Int?

    /// This machine's features.
    static let current = CPUFeatures(cpuinfo: (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")

    /// Features from the text of a `/proc/cpuinfo` (the first `flags` line).
    init(cpuinfo: String) {
        let lines = cpuinfo.split(separator: "\n")
        func value(_ key: String) -> Substring? {
            let line = lines.first { $0.hasPrefix(key) && $0.dropFirst(key.count).first.map { $0 == "\t" || $0 == " " || $0 == ":" } == true }
            return line.flatMap { $0.split(separator: ":", maxSplits: 1).dropFirst().first }
        }
        flags = Set((value("flags")?.split(separator: " ") ?? []).map(String.init))
        vendor = value("vendor_id").map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        family = value("cpu family").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// True on AMD's family 25 (Zen 3 and Zen 4): Zen 4 runs AVX-512 instructions as two 256-bit halves,
    /// so 512-bit vectors add no multiply throughput there, only larger tiles and shuffles.
    var splitsAVX512: Bool { vendor == "AuthenticAMD" && family == 25 }

    /// The features of `required` this CPU lacks.
    func missing(_ required: [String]) -> [String] {
        required.filter { !flags.contains($0) }
    }
}
