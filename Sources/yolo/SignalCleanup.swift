import Dispatch
import Foundation
import Synchronization
@_spi(Engine) import YOLO

/// The `yolo` tool's signal handling: on SIGINT, SIGTERM or SIGHUP, deletes the temporary files being written
/// (`FileIO.removeTemporaries`), then exits with 128 + the signal number (the shell's convention). The signals
/// are handled on a dispatch queue, not in a signal handler, so the cleanup may take locks.
enum SignalCleanup {
    /// While true, SIGINT is left to the command's own handler (`InterruptFlag`, which removes the temporaries
    /// before it quits); SIGTERM and SIGHUP still clean up and exit.
    static let interruptsHandledElsewhere = Atomic<Bool>(false)

    private static let sources = Locked<[DispatchSourceSignal]>([])

    /// Whether `install()` has installed the handlers (and `stop()` has not removed them).
    static var isInstalled: Bool { sources.withLock { !$0.isEmpty } }

    /// Installs the handlers; call once, early.
    static func install() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM, SIGHUP] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    // A command that turns Ctrl-C into "stop after this step" (`yolo eval`) handles SIGINT itself.
                    if number == SIGINT && interruptsHandledElsewhere.load(ordering: .sequentiallyConsistent) { return }
                    FileIO.removeTemporaries()
                    _exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Removes the handlers, for a command that handles SIGINT and SIGTERM itself (`yolo serve` drains its
    /// requests and exits 0). The signals stay ignored by the default handler.
    static func stop() {
        sources.withLock { sources in
            sources.forEach { $0.cancel() }
            sources.removeAll()
        }
    }
}
