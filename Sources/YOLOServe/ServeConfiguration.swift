import Foundation
@_spi(Engine) import YOLO

/// How `yolo serve` listens and how much work it takes on.
package struct ServeConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// 0 picks a free port (the server reports the one it got).
    package var port = 8080
    /// Inferences that run at once.
    package var slots = 2
    /// Requests that may wait for a slot; more are refused with 429.
    package var queue = 8
    /// The largest request body, in bytes (larger: 413).
    package var maxBodyBytes = 20 << 20
    /// The largest image, in pixels, a request may send (its header is read before any pixel memory).
    package var maxPixels = 40_000_000
    /// The most memory decoding one image may take, in bytes: pixel buffers, intermediate buffers and a
    /// progressive JPEG's coefficients, computed from its header before any is allocated (more: 400).
    /// 256 MiB holds an 8-bit RGB image of 40 MP, an RGBA one of 38 MP, a 16-bit RGB one of 29 MP.
    package var maxImageBytes = 256 << 20
    /// The service's memory beyond the loaded model, in bytes: the request bodies it holds
    /// (`uploadBudgetBytes`), one image per slot (`slots × maxImageBytes`) and, in the rest
    /// (`detectorMemoryBytes`), the detector's networks and scratch memory (`Detector.memoryLimit`). `nil`:
    /// the first two plus `defaultDetectorMemory`.
    package var memoryBytes: Int?
    /// The detector's part when `memoryBytes` is not set: networks for a few input sizes and their scratch.
    package static let defaultDetectorMemory = 512 << 20
    /// After this long with no request, the detector frees every network but the model's own size and all
    /// idle scratch memory (`Detector.releaseCaches(keepingInputSizes:)`).
    package var idleRelease: Duration = .seconds(10)
    /// What a 429 tells clients to wait, in seconds.
    package var retryAfterSeconds = 1
    /// How long a connection may take to send a request's headers, counted from when it opened or its last
    /// answer was sent; also the longest pause inside a body. A connection past it is closed.
    package var headerTimeout: Duration = .seconds(10)
    /// How long a request's whole body may take to arrive once its headers have (longer: 408, and the
    /// connection is closed).
    package var bodyTimeout: Duration = .seconds(30)
    /// After an answer that closes the connection before the request's body has been read, how long the
    /// client may go on sending (so that it reads the answer rather than a reset) before the close.
    package var closeLinger: Duration = .seconds(2)
    /// What a multipart form may hold (parts, header and field sizes; more: 413).
    package var formLimits = MultipartForm.Limits()
    /// The most bytes of request bodies held at once, received or arriving (more: 429); `nil`: (slots +
    /// queue) × `maxBodyBytes`, what admitted requests could hold before bodies were read ahead of admission.
    package var uploadBytes: Int?
    /// The model's name, as `/v1/models` reports it.
    package var modelName = "model"

    package init() {}

    /// `uploadBytes`, or its default.
    package var uploadBudgetBytes: Int { uploadBytes ?? (slots + queue) * maxBodyBytes }

    /// The whole budget: `memoryBytes`, or its default.
    package var memoryBudget: Int { memoryBytes ?? uploadBudgetBytes + slots * maxImageBytes + Self.defaultDetectorMemory }

    /// What the budget leaves the detector once bodies and images have their parts (may be 0 or less:
    /// `checkMemory()` refuses that).
    package var detectorMemoryBytes: Int { memoryBudget - uploadBudgetBytes - slots * maxImageBytes }

    /// Checks that the budget leaves the detector something, naming each part when it does not.
    package func checkMemory() throws {
        guard detectorMemoryBytes > 0 else {
            throw YOLOError.invalidArgument(
                "--memory-budget \(MemoryBudget.format(memoryBudget)) leaves nothing for the detector's networks: request bodies take "
                + "\(MemoryBudget.format(uploadBudgetBytes)) ((slots + queue) x --max-body) and images \(MemoryBudget.format(slots * maxImageBytes)) "
                + "(slots x --max-image-memory); raise the budget or lower those")
        }
    }
}
