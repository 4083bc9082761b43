import Foundation
import YOLO

/// The frames of a `VideoSource` as an `AsyncSequence`, decoded on a thread of their own.
///
/// The decoding thread starts with the first iterator and stops when the stream ends, when the task
/// iterating is cancelled (the loop then ends with `CancellationError`), or when the iterator is dropped
/// (a `break` out of the loop); a blocked network read is interrupted at once. Errors (a broken stream, a truncated file) arrive after the frames before them.
public struct VideoFrames: AsyncSequence, Sendable {
    public typealias Element = VideoFrame

    let source: VideoSource
    let policy: FramePolicy
    let realtime: Bool

    public func makeAsyncIterator() -> Iterator {
        let channel = FrameChannel(capacity: policy == .latest ? 1 : 2, overwrite: policy == .latest)
        let (source, policy, realtime) = (self.source, self.policy, self.realtime)
        let thread = Thread { VideoFrames.decode(source, policy: policy, realtime: realtime, into: channel) }
        thread.name = "yolo video decoder"
        thread.stackSize = 1 << 20
        thread.start()
        return Iterator(channel: channel, source: source)
    }

    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let owner: Owner

        init(channel: FrameChannel, source: VideoSource) {
            owner = Owner(channel: channel, source: source)
        }

        /// The next frame, nil at the end.
        /// - Throws: `CancellationError` once the iterating task is cancelled (decoding has then stopped); the
        ///   source's decoding errors, after the frames before them.
        public mutating func next() async throws -> VideoFrame? {
            let owner = self.owner
            let frame = try await withTaskCancellationHandler {
                try await owner.channel.take()
            } onCancel: {
                owner.stop()
            }
            if frame == nil { try Task.checkCancellation() }
            return frame
        }
    }

    /// Stops the decoding thread when the last copy of the iterator goes away.
    fileprivate final class Owner: Sendable {
        let channel: FrameChannel
        let source: VideoSource
        init(channel: FrameChannel, source: VideoSource) {
            self.channel = channel
            self.source = source
        }
        func stop() {
            channel.cancel()
            source.cancel()
        }
        deinit { stop() }
    }

    /// The decoding thread's loop.
    private static func decode(_ source: VideoSource, policy: FramePolicy, realtime: Bool, into channel: FrameChannel) {
        var clockStart: (wall: ContinuousClock.Instant, stream: Double)?
        do {
            while !channel.isCancelled {
                // A frame the policy skips is decoded (the next ones depend on it) but not converted.
                var wanted = true
                if case .stride(let n) = policy { wanted = source.nextIndex % Swift.max(n, 1) == 0 }
                guard let frame = try source.nextFrame(convert: wanted) else { break }
                guard wanted else { continue }
                if realtime {
                    // Pace by the timestamps: frame t is due at start + (t − first t).
                    let start = clockStart ?? (ContinuousClock.now, frame.time)
                    clockStart = start
                    let due = start.wall + .seconds(Swift.max(frame.time - start.stream, 0))
                    let wait = (due - .now).components
                    let seconds = Double(wait.seconds) + Double(wait.attoseconds) * 1e-18
                    if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
                }
                if !channel.put(frame) { break }
            }
            channel.finish(nil)
        } catch {
            channel.finish(error)
        }
    }
}

/// The hand-over between the decoding thread and the consumer: a small queue that either makes the
/// decoder wait (`.everyFrame`) or replaces the waiting frame and counts the drop (`.latest`).
final class FrameChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private let overwrite: Bool
    // Guarded by `condition`.
    private var buffer: [VideoFrame] = []
    private var waiter: CheckedContinuation<VideoFrame?, any Error>?
    private var ending: (any Error)??
    private var cancelled = false
    private var dropped = 0

    init(capacity: Int, overwrite: Bool) {
        self.capacity = capacity
        self.overwrite = overwrite
    }

    var isCancelled: Bool { condition.withLock { cancelled } }

    /// Hands a frame over; false once the consumer has gone (the decoder should stop).
    func put(_ frame: VideoFrame) -> Bool {
        condition.lock()
        if cancelled {
            condition.unlock()
            return false
        }
        if let waiter {
            self.waiter = nil
            var frame = frame
            frame.dropped = dropped
            condition.unlock()
            waiter.resume(returning: frame)
            return true
        }
        if overwrite {
            if buffer.count >= capacity {
                buffer.removeFirst()
                dropped += 1
            }
        } else {
            while buffer.count >= capacity && !cancelled { condition.wait() }
        }
        buffer.append(frame)
        let open = !cancelled
        condition.unlock()
        return open
    }

    /// The decoder is done: `error` nil at a clean end.
    func finish(_ error: (any Error)?) {
        condition.lock()
        ending = .some(error)
        let waiter = self.waiter
        self.waiter = nil
        condition.unlock()
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    /// The consumer has gone: wake everyone, end the sequence.
    func cancel() {
        condition.lock()
        cancelled = true
        buffer.removeAll()
        let waiter = self.waiter
        self.waiter = nil
        condition.broadcast()
        condition.unlock()
        waiter?.resume(returning: nil)
    }

    /// The next frame, waiting for the decoder if needed; nil at the end.
    func take() async throws -> VideoFrame? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if !buffer.isEmpty {
                var frame = buffer.removeFirst()
                frame.dropped = dropped
                condition.broadcast()
                condition.unlock()
                continuation.resume(returning: frame)
            } else if cancelled {
                condition.unlock()
                continuation.resume(returning: nil)
            } else if let ending {
                self.ending = .some(nil)  // an error is thrown once; the sequence then ends
                condition.unlock()
                if let error = ending {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: nil)
                }
            } else {
                waiter = continuation
                condition.unlock()
            }
        }
    }
}
