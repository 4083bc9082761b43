import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOReport
import YOLOTestSupport

/// `yolo serve`: answers, every documented error, bounded admission, graceful shutdown. Each test starts
/// its own server process on a free port (darknet's yolov4-tiny files, the default model).
@Suite(.serialized, .enabled(if: TestPaths.hasV4Weights, Comment(rawValue: Skip.noV4Weights)))
struct ServeTests {
    /// A 640×480 JPEG of the chelsea sample (the size the load bar names).
    static func jpeg() throws -> Data {
        let image = try Image(contentsOf: TestPaths.root + "/Samples/chelsea.png")
        let pixels = image.resizedOpenCVLinear(region: PixelRegion(x: 0, y: 0, width: image.width, height: image.height), width: 640, height: 480)
        return try Image(width: 640, height: 480, pixels: pixels).jpegData(quality: 90)
    }

    /// What `yolo detect --format json` prints for `path`, as one object.
    static func detectJSON(_ path: String, _ options: [String] = []) throws -> [String: Any] {
        let result = try runYOLO(["detect", path, "--format", "json"] + options)
        #expect(result.status == 0, "\(result.stderr)")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return try #require(array.first)
    }

    /// Detections exactly as printed: every field, every number as the renderer wrote it (the server and the
    /// CLI share `DetectionReport` and find the same bits, DeterminismTests), nothing rounded here.
    static func detections(_ object: [String: Any]) -> [String] {
        (object["detections"] as? [[String: Any]] ?? []).map { d in
            let data = (try? JSONSerialization.data(withJSONObject: d, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    @Test func detectAnswersWhatYoloDetectPrints() throws {
        let server = try ServerProcess([])
        let folder = TestPaths.temporaryFolder()
        let jpegPath = folder + "/chelsea-640.jpg"
        try Self.jpeg().write(to: URL(fileURLWithPath: jpegPath))
        for (path, type) in [(TestPaths.root + "/Samples/astronaut.png", "image/png"), (jpegPath, "image/jpeg")] {
            let answer = try server.detect(Data(contentsOf: URL(fileURLWithPath: path)), type: type)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.headers["content-type"] == "application/json")
            let served = try #require(answer.json)
            let printed = try Self.detectJSON(path)
            #expect(served["width"] as? Int == printed["width"] as? Int)
            #expect(served["height"] as? Int == printed["height"] as? Int)
            #expect(Set(served.keys) == Set(printed.keys))
            #expect(!Self.detections(printed).isEmpty)
            #expect(Self.detections(served) == Self.detections(printed))
        }
        // Options as query parameters, then as form fields of a multipart upload: the same filters as the flags.
        let astronaut = TestPaths.root + "/Samples/astronaut.png"
        let flags = try Self.detectJSON(astronaut, ["--conf", "0.5", "--classes", "person", "--max-det", "1"])
        let query = try server.detect(try sampleBytes("astronaut.png"), query: "conf=0.5&classes=person&max_det=1")
        #expect(query.status == 200)
        #expect(Self.detections(try #require(query.json)) == Self.detections(flags))
        #expect(Self.detections(flags).count == 1)
        let boundary = "yolo-test-boundary-42"
        var form = Data()
        for (name, value) in [("conf", "0.5"), ("classes", "person"), ("max_det", "1")] {
            form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"astronaut.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        form += try sampleBytes("astronaut.png") + Data("\r\n--\(boundary)--\r\n".utf8)
        let multipart = try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: form)
        #expect(multipart.status == 200, "\(multipart.text)")
        let formAnswer = try #require(multipart.json)
        #expect(formAnswer["image"] as? String == "astronaut.png")
        #expect(Self.detections(formAnswer) == Self.detections(flags))
        #expect(server.stop() == 0)
        // One log line per request at info.
        #expect(server.stderr.components(separatedBy: "POST /v1/detect").count - 1 == 4, "\(server.stderr)")
    }

    @Test func infoEndpoints() throws {
        let server = try ServerProcess(["--slots", "2", "--queue", "3"])
        let health = try server.send("/healthz")
        #expect(health.status == 200)
        #expect(health.json?["status"] as? String == "ok")
        let ready = try server.send("/readyz")
        #expect(ready.status == 200)
        let models = try #require(try server.send("/v1/models").json)
        #expect(models["slots"] as? Int == 2)
        #expect(models["queue"] as? Int == 3)
        #expect((models["classes"] as? [String])?.count == 80)
        #expect((models["input"] as? [String: Any])?["width"] as? Int == 416)
        #expect(models["kernel_family"] as? String == KernelFamily.active.name.rawValue)
        _ = try server.detect(try sampleBytes("coffee.png"))
        _ = try server.detect(Data("not an image".utf8))
        let metrics = try server.send("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        let text = metrics.text
        #expect(text.contains("yolo_http_requests_total{route=\"/v1/detect\",method=\"POST\",status=\"200\"} 1"), "\(text)")
        #expect(text.contains("yolo_http_requests_total{route=\"/v1/detect\",method=\"POST\",status=\"400\"} 1"), "\(text)")
        #expect(text.contains("yolo_inference_duration_seconds_count 1"), "\(text)")
        #expect(text.contains("yolo_http_request_duration_seconds_bucket{route=\"/v1/detect\""), "\(text)")
        #expect(text.contains("yolo_queue_depth 0"), "\(text)")
        #expect(text.contains("yolo_slots 2"), "\(text)")
        #expect(server.stop() == 0)
    }

    /// Every bad request gets its documented status and a JSON error, and the server goes on serving.
    @Test func badRequests() throws {
        let server = try ServerProcess(["--max-body", "1MB"])
        let png = try sampleBytes("coffee.png")
        var truncated = try Self.jpeg()
        truncated = truncated.prefix(truncated.count / 3)
        // A PNG header claiming 12000 × 9000 pixels (108 MP), with nothing after it.
        var huge = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        for value in [UInt32(12000), UInt32(9000)] { withUnsafeBytes(of: value.bigEndian) { huge.append(contentsOf: $0) } }
        huge += Data([8, 2, 0, 0, 0, 0, 0, 0, 0])
        let big = Data(repeating: 0x42, count: 3 << 20)
        let cases: [(String, () throws -> HTTPExchange, Int, String)] = [
            ("empty body", { try server.detect(Data()) }, 400, "empty"),
            ("truncated JPEG", { try server.detect(truncated, type: "image/jpeg") }, 400, "truncated"),
            ("text file", { try server.detect(Data("hello, this is text\n".utf8), type: "image/png") }, 400, "not a JPEG or PNG"),
            ("100-MP PNG header", { try server.detect(huge) }, 400, "pixels"),
            ("body over the limit", { try server.detect(big) }, 413, "limit"),
            ("body over the limit, chunked", {
                try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "image/png")], body: big, chunked: true)
            }, 413, "limit"),
            ("media type", { try server.detect(png, type: "text/plain") }, 415, "Content-Type"),
            ("no media type", { try server.send(method: "POST", "/v1/detect", body: png) }, 415, "Content-Type"),
            ("bad conf", { try server.detect(png, query: "conf=2") }, 400, "conf"),
            ("conf not a number", { try server.detect(png, query: "conf=abc") }, 400, "conf"),
            ("bad iou", { try server.detect(png, query: "iou=0") }, 400, "iou"),
            ("unknown class", { try server.detect(png, query: "classes=unicorn") }, 400, "unicorn"),
            ("bad roi", { try server.detect(png, query: "roi=1,2") }, 400, "roi"),
            ("bad scale", { try server.detect(png, query: "scale=zoom") }, 400, "scale"),
            ("bad max_det", { try server.detect(png, query: "max_det=0") }, 400, "max_det"),
            ("unknown option", { try server.detect(png, query: "confidence=0.5") }, 400, "confidence"),
            ("size over the memory budget", { try server.detect(png, query: "size=8192x8192") }, 400, "memory"),
            ("multipart without image", {
                try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "multipart/form-data; boundary=b")],
                                body: Data("--b\r\nContent-Disposition: form-data; name=\"conf\"\r\n\r\n0.3\r\n--b--\r\n".utf8))
            }, 400, "image"),
            ("multipart without boundary", { try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "multipart/form-data")], body: png) }, 400, "boundary"),
            ("wrong method", { try server.send("/v1/detect") }, 405, "POST"),
            ("wrong method on models", { try server.send(method: "POST", "/v1/models", body: png) }, 405, "GET"),
            ("wrong path", { try server.send("/v2/detect") }, 404, "no such endpoint"),
        ]
        for (name, request, status, fragment) in cases {
            let answer = try request()
            #expect(answer.status == status, "\(name): \(answer.status) \(answer.text)")
            #expect(answer.headers["content-type"] == "application/json", "\(name)")
            let message = answer.json?["error"] as? String ?? ""
            #expect(message.contains(fragment) || fragment == "-", "\(name): \(message)")
            #expect(!message.isEmpty && !message.contains("\n"), "\(name): \(answer.text)")
            // Still serving.
            #expect(try server.send("/healthz").status == 200, "\(name)")
        }
        #expect(try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "image/png")], body: png).status == 200)
        #expect(server.stop() == 0)
    }

    /// Over capacity: 429 with Retry-After, never a 5xx; nothing lost below capacity.
    @Test func saturationAnswers429Only() throws {
        let server = try ServerProcess(["--slots", "1", "--queue", "1"])
        let png = try sampleBytes("coffee.png")
        let statuses = Locked<[Int]>([])
        let retryAfter = Locked<[String]>([])
        // Eight clients at once, each on its own thread; 832×832 takes four times as long as 416, so the
        // first requests are still running when the rest arrive.
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                let answer = try? server.detect(png, query: "size=832x832")
                statuses.withLock { $0.append(answer?.status ?? -1) }
                if answer?.status == 429 { retryAfter.withLock { $0.append(answer?.headers["retry-after"] ?? "") } }
                group.leave()
            }
        }
        group.wait()
        let all = statuses.withLock { $0 }
        #expect(all.allSatisfy { $0 == 200 || $0 == 429 }, "\(all)")
        #expect(all.filter { $0 == 200 }.count >= 2, "\(all)")
        #expect(all.contains(429), "\(all)")
        #expect(retryAfter.withLock { $0 }.allSatisfy { $0 == "1" })
        #expect(try server.detect(png).status == 200)
        #expect(try server.send("/metrics").text.contains("yolo_rejected_requests_total{reason=\"queue_full\"}"))
        #expect(server.stop() == 0)
    }

    /// SIGTERM: admitted requests finish with their answers, new ones are refused, exit status 0.
    @Test func gracefulShutdown() throws {
        let server = try ServerProcess(["--slots", "1", "--queue", "4"])
        let png = try sampleBytes("astronaut.png")
        let answers = Locked<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                let answer = try? server.detect(png, query: "size=832x832")
                answers.withLock { $0.append(answer.map { $0.json?["detections"] == nil ? -$0.status : $0.status } ?? -1) }
                group.leave()
            }
        }
        // Wait until all three are admitted (one running, two queued).
        var admitted = false
        let deadline = Date().addingTimeInterval(30)
        while !admitted && Date() < deadline {
            let text = try server.send("/metrics").text
            admitted = text.contains("yolo_queue_depth 2") && text.contains("yolo_inferences_running 1")
            if !admitted { usleep(5_000) }
        }
        #expect(admitted)
        kill(server.process.processIdentifier, SIGTERM)
        usleep(100_000)
        // A new request now: refused (connection refused once the listener is closed, or 503).
        if let late = try? server.detect(png) {
            #expect(late.status == 503, "\(late.status) \(late.text)")
        }
        group.wait()
        #expect(answers.withLock { $0 } == [200, 200, 200])
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0, "\(server.stderr)")
        #expect(server.stderr.contains("shutting down"))
    }

    @Test func badFlagsAndBusyPortFailCleanly() throws {
        let first = try ServerProcess([])
        let busy = try runYOLO(["serve", "--port", String(first.port)])
        #expect(busy.status == 1)
        #expect(busy.stderr.contains("cannot serve on 127.0.0.1:\(first.port)"), "\(busy.stderr)")
        #expect(first.stop() == 0)
        for flags in [["--slots", "0"], ["--max-body", "lots"], ["--port", "70000"], ["--log-level", "loud"]] {
            let result = try runYOLO(["serve"] + flags)
            #expect(result.status == 1, "\(flags)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(flags): \(result.stderr)")
        }
        let missing = try runYOLO(["serve", "--model", "/nonexistent/model.yolo"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/model.yolo"))
        // yolo bench-serve: a missing image and bad flags, one line each.
        for arguments in [["bench-serve", "/nonexistent/photo.jpg"], ["bench-serve", TestPaths.root + "/Samples/coffee.png", "--clients", "0"],
                          ["bench-serve", TestPaths.root + "/Samples/coffee.png", "--seconds", "-1"]] {
            let result = try runYOLO(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        #expect(try runYOLO(["bench-serve", "/nonexistent/photo.jpg"]).stderr.contains("/nonexistent/photo.jpg"))
    }
}
