import Foundation
import Hummingbird
import Logging
@_spi(Engine) import YOLO
import YOLOReport

/// Answers the server's endpoints (docs/openapi.yaml):
///
/// - `POST /v1/detect`: JPEG or PNG bytes, or a `multipart/form-data` form with an `image` part; options
///   as query parameters or form fields (`RequestOptions`); answers what `yolo detect --format json`
///   prints for one image.
/// - `GET /v1/models`, `GET /healthz`, `GET /readyz`, `GET /metrics`.
///
/// Every error is `{"error": "..."}` with its status. Each request is logged at info on one line.
///
/// A detection takes its admission place (`Admission`) only once its whole body has arrived, so clients
/// that send slowly or not at all hold no place; the body itself is bounded in size, time and, with every
/// other body in flight, memory (`BodyReader`, `UploadBudget`).
package struct DetectionService: HTTPResponder {
    package typealias Context = ServeRequestContext

    let detector: Detector
    let configuration: ServeConfiguration
    let admission: Admission
    let uploads: UploadBudget
    let metrics: ServeMetrics
    let logger: Logger

    package init(detector: Detector, configuration: ServeConfiguration, admission: Admission, metrics: ServeMetrics, logger: Logger) {
        self.detector = detector
        self.configuration = configuration
        self.admission = admission
        self.uploads = UploadBudget(limit: configuration.uploadBudgetBytes)
        self.metrics = metrics
        self.logger = logger
    }

    /// The endpoints and their methods; any other path is 404, another method 405.
    static let routes: [String: HTTPRequest.Method] = [
        "/v1/detect": .post, "/v1/models": .get, "/healthz": .get, "/readyz": .get, "/metrics": .get,
    ]

    /// What one request did, for its log line.
    private struct Outcome {
        var detections: Int?
        var bytes: Int?
        var image: String?
    }

    package func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let path = request.uri.path
        var outcome = Outcome()
        var response: Response
        do {
            response = try await route(request, context: context, path: path, outcome: &outcome)
        } catch {
            response = Self.error(error)
        }
        let elapsed = ContinuousClock.now - start
        let route = Self.routes[path] != nil ? path : "other"
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: elapsed)
        var metadata: Logger.Metadata = ["status": "\(response.status.code)", "ms": "\(JSON.number(elapsed.milliseconds))"]
        if let detections = outcome.detections { metadata["detections"] = "\(detections)" }
        if let bytes = outcome.bytes { metadata["bytes"] = "\(bytes)" }
        if let image = outcome.image { metadata["image"] = "\(image)" }
        logger.info("\(request.method.rawValue) \(request.uri)", metadata: metadata)
        return response
    }

    private func route(_ request: Request, context: Context, path: String, outcome: inout Outcome) async throws(ServeError) -> Response {
        try Self.checkTransferCoding(request)
        guard let method = Self.routes[path] else {
            throw ServeError(.notFound, "no such endpoint: \(request.method.rawValue) \(path) (endpoints: \(Self.routes.keys.sorted().joined(separator: ", ")))")
        }
        guard request.method == method || (method == .get && request.method == .head) else {
            throw ServeError(.methodNotAllowed, "\(path) takes \(method.rawValue), not \(request.method.rawValue)", headers: [.allow: method.rawValue])
        }
        switch path {
        case "/healthz":
            return Self.json(.ok, "{\"status\": \"ok\"}")
        case "/readyz":
            if admission.isDraining { throw ServeError(.serviceUnavailable, "shutting down") }
            return Self.json(.ok, "{\"status\": \"ready\"}")
        case "/metrics":
            let text = metrics.exposition(waiting: admission.waiting, running: admission.running)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        case "/v1/models":
            return Self.json(.ok, modelsJSON())
        default:
            return try await detect(request, context: context, outcome: &outcome)
        }
    }

    /// The model, its classes and input, and how the server runs it.
    private func modelsJSON() -> String {
        let model = detector.model
        let input = model.description.inputShape
        let scaling = OptionText.name(model.preferredScaling, model.preferredResampling)
        return "{\"model\": \(JSON.string(configuration.modelName)), "
            + "\"classes\": [\(model.labels.map(JSON.string).joined(separator: ", "))], "
            + "\"input\": {\"width\": \(input.width), \"height\": \(input.height), \"channels\": \(input.channels)}, "
            + "\"scale\": \(JSON.string(scaling)), \"kernel_family\": \(JSON.string(KernelFamily.active.name.rawValue)), "
            + "\"slots\": \(admission.slots), \"threads_per_slot\": \(detector.threads), \"queue\": \(admission.queue), "
            + "\"max_body_bytes\": \(configuration.maxBodyBytes), \"max_pixels\": \(configuration.maxPixels), "
            + "\"max_image_bytes\": \(configuration.maxImageBytes)}"
    }

    private static let mediaTypes = ["image/jpeg", "image/png", "multipart/form-data"]

    /// HTTP/1.1 frames a request body by `Content-Length` or chunked coding; any other transfer coding
    /// (`gzip, chunked`) would hand the decoder bytes it cannot read: 501, as RFC 9112 §6.1 asks.
    private static func checkTransferCoding(_ request: Request) throws(ServeError) {
        let codings = request.headers[values: .transferEncoding].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard codings.isEmpty || codings == ["chunked"] else {
            throw ServeError(.notImplemented, "Transfer-Encoding '\(codings.joined(separator: ", "))' is not supported: send the body as is or chunked",
                             headers: [.connection: "close"])
        }
    }

    private func detect(_ request: Request, context: Context, outcome: inout Outcome) async throws(ServeError) -> Response {
        let hold = uploads.hold()
        defer { hold.release() }
        let expected = request.headers[.contentLength].flatMap { Int($0) }
        let boundary: String?
        var fields: [String: String]
        do {
            (boundary, fields) = try checkBeforeBody(request, expected: expected)
        } catch {
            // The body is not read: the answer ends the connection (`ConnectionGuard`).
            let announcesBody = (expected ?? 0) > 0 || request.headers[.transferEncoding] != nil
            throw announcesBody ? error.closingConnection() : error
        }
        if request.headers[.expect] != nil { await Connection.sendContinue(on: context.channel) }

        var body: Data
        do {
            let reader = BodyReader(limit: configuration.maxBodyBytes, timeout: configuration.bodyTimeout, hold: hold,
                                    retryAfterSeconds: configuration.retryAfterSeconds)
            body = try await reader.read(request.body, expected: expected)
        } catch {
            switch error.status {
            case .contentTooLarge: metrics.rejected("too_large")
            case .requestTimeout: metrics.rejected("body_timeout")
            case .tooManyRequests: metrics.rejected("uploads_full")
            default: break
            }
            throw error
        }
        outcome.bytes = body.count
        var name = "-"
        if let boundary {
            let form: MultipartForm
            do {
                form = try MultipartForm(body: body, boundary: boundary, limits: configuration.formLimits)
            } catch {
                switch error {
                case .malformed(let text): throw ServeError(.badRequest, "multipart body: \(text)")
                case .overLimit(let text):
                    metrics.rejected("too_large")
                    throw ServeError(.contentTooLarge, "multipart body: \(text)")
                }
            }
            guard let image = form.parts.first(where: { $0.name == "image" }) else {
                throw ServeError(.badRequest, "the form has no 'image' part (parts: \(form.parts.map { MultipartForm.printable($0.name) }.joined(separator: ", ")))")
            }
            for part in form.parts where part.name != "image" { fields[part.name] = String(decoding: part.data, as: UTF8.self) }
            body = image.data
            // The client's file name goes into the answer and the log line: no control characters, 255 at most.
            if let filename = image.filename {
                let printable = String(String.UnicodeScalarView(filename.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
                name = printable.isEmpty ? name : String(printable.prefix(255))
            }
        }
        outcome.image = name
        guard !body.isEmpty else { throw ServeError(.badRequest, "the image is empty (0 bytes)") }
        let options = try options(fields)

        // Only now, with the whole body here, does the request take a place.
        do {
            try admission.enter()
        } catch .full {
            metrics.rejected("queue_full")
            throw ServeError(.tooManyRequests, "busy: all \(admission.slots) slots and \(admission.queue) queue places are taken; retry later",
                             headers: [.retryAfter: String(configuration.retryAfterSeconds)])
        } catch {
            metrics.rejected("draining")
            throw ServeError(.serviceUnavailable, "shutting down: no new requests")
        }
        defer { admission.leave() }

        let report: DetectionReport
        do {
            report = try await detection(body, name: name, options: options)
        } catch let error as YOLOError {
            switch error {
            case .invalidImage, .invalidArgument, .invalidFile: throw ServeError(.badRequest, "\(error)")
            default: throw ServeError(.internalServerError, "\(error)")
            }
        } catch {
            throw ServeError(.internalServerError, "\(error)")
        }
        outcome.detections = report.detections.count
        return Self.json(.ok, report.json(pretty: false))
    }

    /// The refusals that need no body, in order: shutting down (503), media type or content coding (415),
    /// no boundary (400), a `Content-Length` over the limit (413), a bad option in the query (400), an
    /// expectation other than `100-continue` (417). Returns the form's boundary and the query's options.
    private func checkBeforeBody(_ request: Request, expected: Int?) throws(ServeError) -> (boundary: String?, fields: [String: String]) {
        if admission.isDraining {
            metrics.rejected("draining")
            throw ServeError(.serviceUnavailable, "shutting down: no new requests")
        }
        let contentType = request.headers[.contentType] ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard Self.mediaTypes.contains(mediaType) || mediaType == "image/jpg" else {
            throw ServeError(.unsupportedMediaType, contentType.isEmpty
                ? "no Content-Type: send image/jpeg or image/png bytes, or multipart/form-data with an 'image' part"
                : "Content-Type \(contentType) is not accepted: send image/jpeg, image/png or multipart/form-data")
        }
        if let coding = request.headers[.contentEncoding], coding.lowercased() != "identity" {
            throw ServeError(.unsupportedMediaType, "Content-Encoding \(coding) is not accepted: send the image's bytes unencoded")
        }
        var boundary: String?
        if mediaType == "multipart/form-data" {
            guard let found = MultipartForm.boundary(inContentType: contentType) else {
                throw ServeError(.badRequest, "multipart/form-data needs a boundary parameter (1 to 70 characters)")
            }
            boundary = found
        }
        if let expected, expected > configuration.maxBodyBytes {
            metrics.rejected("too_large")
            throw ServeError(.contentTooLarge, "the body is \(expected) bytes; the limit is \(configuration.maxBodyBytes) (--max-body)")
        }
        var fields: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { fields[String(name)] = String(value) }
        // Options are checked before the body is read, so a bad option costs no upload.
        _ = try options(fields)
        if let expectation = request.headers[.expect], expectation.lowercased() != "100-continue" {
            throw ServeError(.expectationFailed, "Expect: \(expectation) is not supported (only 100-continue)")
        }
        return (boundary, fields)
    }

    /// Decodes and detects in a slot (waiting for one first): the work of one admitted request, also
    /// what `yolo bench-serve` times without HTTP around it.
    package func detection(_ bytes: Data, name: String, options: DetectionOptions) async throws -> DetectionReport {
        let memory = ImageMemory(detector: detector, options: options, limit: configuration.maxImageBytes)
        var decoding = memory.decodingOptions
        decoding.maxPixels = min(decoding.maxPixels, configuration.maxPixels)
        let detector = self.detector
        let metrics = self.metrics
        let decodingOptions = decoding
        return try await admission.run {
            let start = ContinuousClock.now
            let image = try Image(data: bytes, name: name, options: decodingOptions)
            // `yolo detect` warns and goes on with a truncated JPEG (libjpeg fills the rest with gray); a
            // service tells its client instead, whose upload was probably cut short. Other warnings
            // (junk bytes between markers) leave the image whole and are let through.
            if let cut = image.decodeWarnings.first(where: { $0.localizedCaseInsensitiveContains("premature end") }) {
                throw YOLOError.invalidImage(path: name, message: "the image is truncated (\(cut))")
            }
            try memory.checkPreparation(of: image, name: name)
            let detections = try detector.detect(image, options: options)
            let elapsed = ContinuousClock.now - start
            metrics.inference(elapsed)
            return DetectionReport(path: name, image: image, detections: detections, elapsed: elapsed)
        }
    }

    /// Request options, checked against the model (class names, region); a bad one is a 400.
    private func options(_ fields: [String: String]) throws(ServeError) -> DetectionOptions {
        do {
            let options = try RequestOptions.parse(fields, memoryBudget: configuration.detectorMemoryBytes)
            try detector.validate(options)
            return options
        } catch {
            throw ServeError(.badRequest, "\(error)")
        }
    }

    static func json(_ status: HTTPResponse.Status, _ text: String, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static func error(_ error: ServeError) -> Response {
        json(error.status, "{\"error\": \(JSON.string(error.message))}", headers: error.headers)
    }
}
