import Foundation
import YOLOReport

/// Progress of a long loop on stderr: a redrawn bar with rate and ETA on a terminal, plain lines otherwise
/// (about every 10 % or 30 s) so logs stay readable.
final class ProgressReporter: @unchecked Sendable {  // used by one task at a time
    private let total: Int
    private let label: String
    private let interactive: Bool
    private let start = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?
    private var lastLineFraction = 0.0

    /// - Parameters:
    ///   - total: the number of steps the loop will take.
    ///   - label: what a step is, e.g. `images`.
    init(total: Int, label: String, interactive: Bool = isatty(STDERR_FILENO) == 1) {
        self.total = max(total, 1)
        self.label = label
        self.interactive = interactive
    }

    // MARK: Reporting

    /// Reports that `done` steps are finished.
    func update(done: Int) {
        let now = ContinuousClock.now
        let elapsed = (now - start).seconds
        let fraction = Double(done) / Double(total)
        if interactive {
            if let lastDraw, (now - lastDraw).seconds < 0.1, done < total { return }
            lastDraw = now
            let width = 30
            let filled = min(width, Int(fraction * Double(width)))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            write("\r[\(bar)] \(done)/\(total) \(label) \(rateText(done, elapsed)) ETA \(etaText(done, elapsed))\u{1B}[K")
        } else if done == total || fraction - lastLineFraction >= 0.1 || lastDraw.map({ (now - $0).seconds >= 30 }) ?? (elapsed >= 30) {
            lastDraw = now
            lastLineFraction = fraction
            write("\(done)/\(total) \(label) (\(Int(fraction * 100))%), \(rateText(done, elapsed)), ETA \(etaText(done, elapsed))\n")
        }
    }

    /// Ends the bar (a newline on a terminal).
    func finish() {
        if interactive && lastDraw != nil {
            write("\n")
            lastDraw = nil
        }
    }

    // MARK: Formatting

    private func rateText(_ done: Int, _ elapsed: Double) -> String {
        elapsed > 0 ? String(format: "%.2f %@/s", Double(done) / elapsed, label) : "-"
    }

    private func etaText(_ done: Int, _ elapsed: Double) -> String {
        guard done > 0 else { return "?" }
        let remaining = Int((elapsed / Double(done) * Double(total - done)).rounded())
        return String(format: "%d:%02d", remaining / 60, remaining % 60)
    }


    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
