import Dispatch
import Foundation
import Synchronization
@_spi(Engine) import YOLO

/// Turns Ctrl-C (SIGINT) into a flag a loop checks between steps, so a long run can stop cleanly and
/// still write what it has. A second Ctrl-C quits at once (exit status 130).
final class InterruptFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    // DispatchSourceSignal is thread-safe; kept only so the source lives as long as the flag.
    nonisolated(unsafe) private var source: (any DispatchSourceSignal)?

    /// Starts catching SIGINT; `message` is printed on stderr at the first Ctrl-C.
    init(message: String) {
        SignalCleanup.interruptsHandledElsewhere.store(true, ordering: .sequentiallyConsistent)
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [weak self] in
            guard let self else { return }
            if self.raised.exchange(true, ordering: .sequentiallyConsistent) {
                FileHandle.standardError.write(Data("\nyolo: interrupted again, quitting\n".utf8))
                FileIO.removeTemporaries()
                exit(130)
            }
            FileHandle.standardError.write(Data("\n\(message)\n".utf8))
        }
        source.resume()
        self.source = source
    }

    /// Whether Ctrl-C was pressed.
    var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }

    /// Stops catching SIGINT: Ctrl-C quits again (through `SignalCleanup`'s handler when it is installed, which
    /// removes temporary files first).
    func stop() {
        source?.cancel()
        SignalCleanup.interruptsHandledElsewhere.store(false, ordering: .sequentiallyConsistent)
        if !SignalCleanup.isInstalled { signal(SIGINT, SIG_DFL) }
    }
}
