import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOTestSupport

/// One HTTP/1.1 exchange over a plain socket (the tests need requests a polite client would not send:
/// lying lengths, wrong methods, bodies past the limit), answered in full before it returns.
struct HTTPExchange {
    var status: Int
    var headers: [String: String]
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends one request with `Connection: close` and reads the answer to the end. `chunked` sends the
    /// body in chunked transfer encoding (no Content-Length).
    static func send(port: Int, method: String = "GET", path: String, headers: [(String, String)] = [], body: Data = Data(),
                     chunked: Bool = false, timeout: Int = 60) throws -> HTTPExchange {
        let fd = try connect(port: port, timeout: timeout)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if chunked {
            head += "Transfer-Encoding: chunked\r\n"
        } else if !headers.contains(where: { $0.0.lowercased() == "content-length" }) && (!body.isEmpty || method == "POST") {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var payload = Data(head.utf8)
        if chunked {
            var offset = 0
            while offset < body.count {
                let n = min(65536, body.count - offset)
                payload += Data((String(n, radix: 16) + "\r\n").utf8) + body[offset..<offset + n] + Data("\r\n".utf8)
                offset += n
            }
            payload += Data("0\r\n\r\n".utf8)
        } else {
            payload += body
        }
        // A server may answer (413) and stop reading before the body is sent: then the rest is not written.
        _ = writeAll(fd, payload)
        return try parse(readAll(fd))
    }

    /// A connected socket to 127.0.0.1:port.
    static func connect(port: Int, timeout: Int = 60) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect to port \(port): \(String(cString: strerror(code)))")
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    static func readAll(_ fd: Int32) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 || (errno == ECONNRESET && !data.isEmpty) { return data }
            throw Failure(description: "recv: \(String(cString: strerror(errno))) after \(data.count) bytes")
        }
    }

    static func parse(_ data: Data) throws -> HTTPExchange {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete response head in \(data.count) bytes")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line '\(lines[0])'") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2 { headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces) }
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoded = Data()
            var cursor = body.startIndex
            while let lineEnd = body.range(of: Data("\r\n".utf8), in: cursor..<body.endIndex),
                  let size = Int(String(decoding: body[cursor..<lineEnd.lowerBound], as: UTF8.self), radix: 16), size > 0 {
                decoded += body[lineEnd.upperBound..<lineEnd.upperBound + size]
                cursor = lineEnd.upperBound + size + 2
            }
            body = decoded
        } else if let length = headers["content-length"].flatMap(Int.init) {
            guard body.count >= length else { throw Failure(description: "body cut short: \(body.count) of \(length) bytes") }
            body = body.prefix(length)
        }
        return HTTPExchange(status: status, headers: headers, body: body)
    }
}

/// A `yolo serve` process on a free port, its stderr collected.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private let log = Locked(Data())

    /// Starts `yolo serve --port 0 ARGUMENTS` and waits until it says where it listens.
    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: TestPaths.yoloBinary)
        process.arguments = ["serve", "--port", "0"] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        let log = self.log
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { log.withLock { $0.append(data) } }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let match = stderr.firstMatch(of: /serving .* on http:\/\/127\.0\.0\.1:(\d+)/) {
                port = Int(match.1)!
                return
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        process.terminate()
        throw HTTPExchange.Failure(description: "yolo serve did not start: \(stderr)")
    }

    var stderr: String { log.withLock { String(decoding: $0, as: UTF8.self) } }

    func send(method: String = "GET", _ path: String, headers: [(String, String)] = [], body: Data = Data(), chunked: Bool = false) throws -> HTTPExchange {
        try HTTPExchange.send(port: port, method: method, path: path, headers: headers, body: body, chunked: chunked)
    }

    /// POSTs image bytes to /v1/detect.
    func detect(_ image: Data, type: String = "image/png", query: String = "") throws -> HTTPExchange {
        try send(method: "POST", "/v1/detect" + (query.isEmpty ? "" : "?" + query), headers: [("Content-Type", type)], body: image)
    }

    /// SIGTERM, then the exit status.
    func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Reads a sample image shipped with the package.
func sampleBytes(_ name: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: TestPaths.root + "/Samples/" + name))
}
