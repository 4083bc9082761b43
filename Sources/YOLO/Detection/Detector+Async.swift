import Dispatch

extension Detector {
    /// Detects objects in `image` without holding one of Swift's cooperative threads: the forward pass
    /// runs on a dispatch worker (its own helper threads as usual) while the calling task is suspended.
    ///
    /// ```swift
    /// let detections = try await detector.detections(in: image)
    /// ```
    ///
    /// A name of its own, not an `async` overload of `detect(_:options:)`: in an `async` function
    /// `try detector.detect(image)` stays the synchronous call (it blocks the calling thread for the pass,
    /// tens of milliseconds), and awaiting is asked for by name. Cancellation is checked before the pass
    /// starts (`CancellationError`); a pass once started runs to its end. Results equal `detect(_:options:)`'s,
    /// bit for bit.
    public func detections(in image: Image, options: DetectionOptions = DetectionOptions()) async throws -> [Detection] {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try self.detect(image, options: options, timing: nil) })
            }
        }
    }
}
