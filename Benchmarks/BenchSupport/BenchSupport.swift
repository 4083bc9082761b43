// What the Soak and Embedder measurements share: the process's resident set size and a flag's value.
import Foundation

/// The resident set size in MB (VmRSS in /proc/self/status), NaN where that file is not available.
public func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return .nan }
    return kilobytes / 1024
}

/// The argument after `flag` on the command line, or `fallback`.
public func value(of flag: String, default fallback: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}
