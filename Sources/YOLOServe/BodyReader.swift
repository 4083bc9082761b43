import Foundation
import Hummingbird
@_spi(Engine) import YOLO
import YOLOReport

/// The bytes of request bodies the server holds at once, bounded: bodies being received, and received
/// bodies waiting for a slot or being detected. Each body takes its bytes as they arrive (not what its
/// `Content-Length` announces, so a client that announces much and sends little holds little) and gives
/// them back when its request is answered.
package final class UploadBudget: Sendable {
    /// The most bytes held at once.
    package let limit: Int
    private let held = Locked(0)

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Bytes held now.
    package var bytes: Int { held.withLock { $0 } }

    /// What one request holds; `release()` gives it back.
    package final class Hold: Sendable {
        let budget: UploadBudget
        private let taken = Locked(0)

        init(_ budget: UploadBudget) { self.budget = budget }

        /// Takes `count` more bytes, or says that the budget has not that many left.
        package func take(_ count: Int) -> Bool {
            let granted = budget.held.withLock { held in
                guard held + count <= budget.limit else { return false }
                held += count
                return true
            }
            if granted { taken.withLock { $0 += count } }
            return granted
        }

        /// Gives back everything taken.
        package func release() {
            let count = taken.withLock { value in defer { value = 0 }; return value }
            budget.held.withLock { $0 -= count }
        }
    }

    package func hold() -> Hold { Hold(self) }
}

/// Reads a request body whole, within a size limit, a deadline and the upload budget. Every way it can
/// fail is a `ServeError` whose answer closes the connection (the rest of the body is not read).
struct BodyReader {
    var limit: Int
    var timeout: Duration
    var hold: UploadBudget.Hold
    /// What a 429 tells the client to wait, in seconds.
    var retryAfterSeconds: Int

    /// The body's bytes. `expected` is the `Content-Length`, if any (already checked against `limit`).
    func read(_ body: RequestBody, expected: Int?) async throws(ServeError) -> Data {
        let limit = self.limit, hold = self.hold, timeout = self.timeout, retryAfter = String(retryAfterSeconds)
        let outcome = await withTaskGroup(of: Result<Data, ServeError>?.self) { group in
            group.addTask { await Self.collect(body, limit: limit, hold: hold, retryAfter: retryAfter) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                if Task.isCancelled { return nil }
                return .failure(ServeError(.requestTimeout, "the body did not arrive within \(String(format: "%g", timeout.seconds)) s (--body-timeout)",
                                           headers: [.connection: "close"]))
            }
            var first: Result<Data, ServeError>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(ServeError(.badRequest, "could not read the body", headers: [.connection: "close"]))
        }
        let data = try outcome.get()
        if let expected, data.count != expected {
            throw ServeError(.badRequest, "the body ended after \(data.count) of its \(expected) bytes (Content-Length)", headers: [.connection: "close"])
        }
        return data
    }

    private static func collect(_ body: RequestBody, limit: Int, hold: UploadBudget.Hold, retryAfter: String) async -> Result<Data, ServeError> {
        var data = Data()
        do {
            for try await buffer in body {
                let count = buffer.readableBytes
                guard data.count + count <= limit else {
                    return .failure(ServeError(.contentTooLarge, "the body is larger than the limit of \(limit) bytes (--max-body)",
                                               headers: [.connection: "close"]))
                }
                guard hold.take(count) else {
                    let budget = hold.budget
                    return .failure(ServeError(.tooManyRequests, "busy: request bodies already hold \(MemoryBudget.format(budget.bytes)) "
                                               + "of \(MemoryBudget.format(budget.limit)); retry later",
                                               headers: [.connection: "close", .retryAfter: retryAfter]))
                }
                buffer.withUnsafeReadableBytes { data.append(contentsOf: $0) }
            }
        } catch {
            // Cancelled by the deadline, whose answer is the one given; otherwise the connection failed.
            return .failure(ServeError(.badRequest, "could not read the body: \(error)", headers: [.connection: "close"]))
        }
        return .success(data)
    }
}
