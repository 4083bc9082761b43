import Dispatch

extension Detector {
    /// Detects objects in `image` without holding one of Swift's cooperative threads: the forward pass
    /// runs on a dispatch worker (its own helper threads as usual) while the calling task is suspended.
    ///
    /// Cancellation is checked before the pass starts; a pass once started runs to its end (tens of
    /// milliseconds). Results equal the synchronous `detect(_:options:)`'s.
    public func detect(_ image: Image, options: DetectionOptions = DetectionOptions()) async throws -> [Detection] {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try self.detect(image, options: options, timing: nil) })
            }
        }
    }
}
