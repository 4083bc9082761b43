import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOTestSupport

/// `yolo serve` against clients that try to hold it up (issue 37): bodies that stall or trickle, headers
/// that never end, transfer codings it cannot read, `Expect: 100-continue`, images whose memory is out
/// of proportion to their bytes, forms of many parts. Each test starts its own server on a free port.
/// `scripts/serve-attack.py` (in `make serve-load`) runs the same attacks at scale and times the server's
/// answers to others meanwhile.
@Suite(.serialized, .enabled(if: TestPaths.hasV4Weights, Comment(rawValue: Skip.noV4Weights)))
struct ServeHostileClientTests {
    /// A new connection that has sent `bytes` and reads nothing yet.
    static func open(_ server: ServerProcess, _ bytes: String) throws -> Int32 {
        let fd = try HTTPExchange.connect(port: server.port, timeout: 30)
        _ = HTTPExchange.writeAll(fd, Data(bytes.utf8))
        return fd
    }

    /// Reads until the server closes `fd`: what it sent, and the seconds from `since` to the close.
    static func untilClosed(_ fd: Int32, since: ContinuousClock.Instant) -> (seconds: Double, data: Data) {
        let data = (try? HTTPExchange.readAll(fd)) ?? Data()
        return ((ContinuousClock.now - since).seconds, data)
    }

    /// A detection's head announcing `length` bytes of PNG.
    static func head(length: Int, extra: String = "") -> String {
        "POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: \(length)\r\n\(extra)\r\n"
    }

    /// Before, a request took its place before its body arrived: ten such connections made every
    /// detection 429 for as long as they stayed open. Now they hold no place, and a pause inside a body
    /// longer than the header timeout ends the connection.
    @Test func stalledBodiesHoldNoPlace() throws {
        let server = try ServerProcess(["--slots", "1", "--queue", "0", "--header-timeout", "2"])
        let opened = ContinuousClock.now
        let stalled = try (0..<3).map { _ in try Self.open(server, Self.head(length: 1_000_000) + "\u{89}") }
        defer { stalled.forEach { close($0) } }
        usleep(200_000)
        let answer = try server.detect(try sampleBytes("coffee.png"))
        #expect(answer.status == 200, "\(answer.text)")
        for fd in stalled {
            let (seconds, data) = Self.untilClosed(fd, since: opened)
            #expect((1.5...8).contains(seconds), "closed after \(seconds) s")
            #expect(data.isEmpty || (try? HTTPExchange.parse(data))?.status == 400)
        }
        #expect(!(try server.send("/metrics")).text.contains("queue_full"))
        #expect(server.stop() == 0)
    }

    /// Headers that never end are cut off after the header timeout; a body that trickles in (each byte
    /// restarting the idle clock) gets 408 at the body timeout, and its connection is closed.
    @Test func slowHeadersAndBodiesAreCutOff() throws {
        let server = try ServerProcess(["--header-timeout", "1", "--body-timeout", "2"])
        let opened = ContinuousClock.now
        let slowHead = try Self.open(server, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        defer { close(slowHead) }
        let slowBody = try Self.open(server, Self.head(length: 100_000))
        defer { close(slowBody) }
        let trickle = Thread {
            for _ in 0..<50 {
                guard HTTPExchange.writeAll(slowBody, Data([0x89])) else { return }
                usleep(300_000)
            }
        }
        trickle.start()
        let (headSeconds, headData) = Self.untilClosed(slowHead, since: opened)
        #expect((0.5...5).contains(headSeconds), "slow head closed after \(headSeconds) s")
        #expect(headData.isEmpty)
        let (bodySeconds, bodyData) = Self.untilClosed(slowBody, since: opened)
        #expect((1.5...8).contains(bodySeconds), "slow body closed after \(bodySeconds) s")
        let answer = try HTTPExchange.parse(bodyData)
        #expect(answer.status == 408)
        #expect((answer.json?["error"] as? String)?.contains("--body-timeout") == true, "\(answer.text)")
        #expect(answer.headers["connection"] == "close")
        #expect(try server.send("/healthz").status == 200)
        #expect(try server.send("/metrics").text.contains("yolo_rejected_requests_total{reason=\"body_timeout\"} 1"))
        #expect(server.stop() == 0)
    }

    /// One raw exchange: `head` and `body` sent at once, the answer read to the end.
    static func exchange(_ server: ServerProcess, _ head: String, _ body: Data = Data()) throws -> HTTPExchange {
        let fd = try HTTPExchange.connect(port: server.port)
        defer { close(fd) }
        _ = HTTPExchange.writeAll(fd, Data(head.utf8) + body)
        return try HTTPExchange.parse(HTTPExchange.readAll(fd))
    }

    @Test func transferCodingsAndExpectations() throws {
        let server = try ServerProcess([])
        let png = try sampleBytes("coffee.png")
        let chunked = Data((String(png.count, radix: 16) + "\r\n").utf8) + png + Data("\r\n0\r\n\r\n".utf8)
        let gzip = try Self.exchange(server, "POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
                                     + "Transfer-Encoding: gzip, chunked\r\n\r\n", chunked)
        #expect(gzip.status == 501)
        #expect((gzip.json?["error"] as? String)?.contains("Transfer-Encoding 'gzip, chunked'") == true, "\(gzip.text)")
        let plain = try Self.exchange(server, "POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
                                      + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n", chunked)
        #expect(plain.status == 200, "\(plain.text)")
        let encoded = try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "image/png"), ("Content-Encoding", "gzip")], body: png)
        #expect(encoded.status == 415)
        let odd = try Self.exchange(server, Self.head(length: png.count, extra: "Expect: 200-ok\r\n"))
        #expect(odd.status == 417, "\(odd.text)")

        // Expect: 100-continue gets 100 Continue at once, and the answer after the body.
        let fd = try Self.open(server, Self.head(length: png.count, extra: "Expect: 100-continue\r\nConnection: close\r\n"))
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let start = ContinuousClock.now
        let n = recv(fd, &buffer, buffer.count, 0)
        #expect(ContinuousClock.now - start < .milliseconds(500))
        #expect(n > 0 && String(decoding: buffer[0..<max(n, 0)], as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        _ = HTTPExchange.writeAll(fd, png)
        #expect(try HTTPExchange.parse(HTTPExchange.readAll(fd)).status == 200)
        // A request refused from its head gets the refusal instead of 100 Continue.
        let refused = try Self.exchange(server, "POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                                        + "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n")
        #expect(refused.status == 415)
        #expect(refused.headers["connection"] == "close")
        #expect(server.stop() == 0)
    }

    /// What the HTTP parser rejects from the head gets a one-line JSON error like every other answer.
    @Test func malformedHeadsGetOneLineErrors() throws {
        let server = try ServerProcess([])
        let cases: [(String, Int, String)] = [
            ("HELLO WORLD\r\n\r\n", 400, "malformed HTTP request"),
            ("POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "malformed HTTP request"),
            ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + String(repeating: "a", count: 90_000) + "\r\n\r\n", 431, "headers are too large"),
        ]
        for (head, status, fragment) in cases {
            let answer = try Self.exchange(server, head)
            #expect(answer.status == status, "\(head.prefix(40)): \(answer.text)")
            #expect((answer.json?["error"] as? String)?.contains(fragment) == true, "\(answer.text)")
            #expect(try server.send("/healthz").status == 200)
        }
        #expect(server.stop() == 0)
    }

    /// Memory out of proportion to the bytes: a 1 x 1,000,000 PNG stretched to the network's 416 columns
    /// (5 GB of resampling rows for 3 MB of pixels; the server before took them, and 26 s), refused from
    /// its header; with size=auto (32 columns, whose width follows the image) once decoded. Images over
    /// --max-image-memory; a form of many parts.
    @Test func imagesAndFormsOverTheirLimits() throws {
        let server = try ServerProcess(["--max-image-memory", "64MB"])
        let tall = try Image(width: 1, height: 1_000_000, pixels: [UInt8](repeating: 128, count: 3_000_000)).pngData()
        let stretched = try server.detect(tall, query: "scale=stretch")
        #expect(stretched.status == 400)
        #expect((stretched.json?["error"] as? String)?.contains("bytes of memory, more than the limit of 67108864") == true, "\(stretched.text)")
        let automatic = try server.detect(tall, query: "scale=stretch&size=auto")
        #expect(automatic.status == 400)
        #expect((automatic.json?["error"] as? String)?.contains("--max-image-memory") == true, "\(automatic.text)")
        // At fit: 15 bytes a pixel (the image and its planar floats) and 12 per network column and row:
        // 1800 x 1800 takes 57.6 MB, under 64 MiB; 2400 x 2400 takes 98.4 MB.
        for (side, status) in [(1800, 200), (2400, 400)] {
            let png = try Image(width: side, height: side, pixels: [UInt8](repeating: 90, count: side * side * 3)).pngData()
            #expect(try server.detect(png).status == status, "\(side)x\(side)")
        }
        #expect((try server.send("/v1/models").json?["max_image_bytes"] as? Int) == 64 << 20)

        var form = Data()
        for _ in 0..<100_000 { form += Data("--b\r\nContent-Disposition: form-data; name=\"conf\"\r\n\r\n\r\n".utf8) }
        form += Data("--b--\r\n".utf8)
        let start = ContinuousClock.now
        let answer = try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "multipart/form-data; boundary=b")], body: form)
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(answer.status == 413)
        #expect((answer.json?["error"] as? String)?.contains("more than 16 parts") == true, "\(answer.text)")
        #expect(server.stop() == 0)
    }
}
