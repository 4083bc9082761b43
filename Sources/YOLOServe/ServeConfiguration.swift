import Foundation

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
    /// The most working memory one request's network may need (a request's `size` beyond it: 400).
    package var memoryBudget = 1 << 30
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
}
