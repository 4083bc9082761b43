import Dispatch
import Foundation
@_spi(Engine) import YOLO

/// Bounds the work a server takes on: at most `slots` inferences run at once and at most `queue` more
/// requests wait for one; anything beyond is refused at once (HTTP 429).
///
/// A request calls `enter()` once its whole body has arrived (so a client that sends slowly holds no
/// place; `UploadBudget` bounds the bodies' memory), `run(_:)` for its CPU work (decoding and detection,
/// on a dispatch worker, never on the server's event loops), and `leave()` when it is answered. Waiters
/// get slots in arrival order.
package final class Admission: Sendable {
    package let slots: Int
    package let queue: Int

    private struct State {
        var admitted = 0
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var draining = false
        /// When the last admitted request left (or the admission began).
        var quietSince = ContinuousClock.now
    }

    private let state = Locked(State())

    package init(slots: Int, queue: Int) {
        self.slots = max(1, slots)
        self.queue = max(0, queue)
    }

    package enum Refusal: Error, Equatable {
        /// Every slot is busy and the queue is full.
        case full
        /// The server is shutting down.
        case draining
    }

    /// Admits one request, or says why not.
    package func enter() throws(Refusal) {
        let refusal: Refusal? = state.withLock { s in
            if s.draining { return .draining }
            guard s.admitted < slots + queue else { return .full }
            s.admitted += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Ends an admitted request.
    package func leave() {
        state.withLock { s in
            s.admitted -= 1
            if s.admitted == 0 { s.quietSince = .now }
        }
    }

    /// How long no request has been admitted; nil while one is.
    package var quietFor: Duration? {
        state.withLock { s in s.admitted == 0 ? ContinuousClock.now - s.quietSince : nil }
    }

    /// From now on `enter()` refuses with `.draining`; admitted requests go on.
    package func drain() {
        state.withLock { $0.draining = true }
    }

    package var isDraining: Bool { state.withLock { $0.draining } }

    /// Requests admitted and not yet running (waiting for a slot).
    package var waiting: Int { state.withLock { $0.admitted - $0.running } }

    /// Requests waiting for a slot in `run` now.
    package var queued: Int { state.withLock { $0.waiters.count } }

    /// Inferences running now.
    package var running: Int { state.withLock { $0.running } }

    /// Runs `work` in a slot on a dispatch worker, waiting for a free slot first.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.running < slots {
                    s.running += 1
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the slot to the longest waiter, or frees it.
    private func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
