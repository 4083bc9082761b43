import Foundation

/// The process's memory figures from /proc/self/status (Linux), for `yolo forward`'s memory line.
enum MemoryStatus {
    /// `VmHWM 61.2 MB (peak), VmRSS ..., RssAnon ..., RssFile ...`, or a note when unavailable.
    static func summary() -> String {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return "unavailable (no /proc/self/status)"
        }
        let wanted = ["VmHWM", "VmRSS", "RssAnon", "RssFile"]
        var parts: [String] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            guard fields.count >= 2, wanted.contains(String(fields[0])), let kilobytes = Double(fields[1]) else { continue }
            parts.append(String(format: "%@ %.1f MB", String(fields[0]), kilobytes * 1024 / 1e6))
        }
        return parts.joined(separator: ", ")
    }
}
