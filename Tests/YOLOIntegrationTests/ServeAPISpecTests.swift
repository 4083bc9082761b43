import Foundation
import Testing
import Yams
@_spi(Engine) import YOLO
import YOLOTestSupport

/// A JSON Schema check of the subset docs/openapi.yaml uses: type, properties, required,
/// additionalProperties: false, items, minItems/maxItems, enum, minimum/maximum (inclusive and
/// exclusive) and local `$ref`s.
struct SchemaChecker {
    let document: [String: Any]

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        document = try #require(try Yams.load(yaml: text) as? [String: Any])
    }

    func resolve(_ node: [String: Any]) throws -> [String: Any] {
        guard let ref = node["$ref"] as? String else { return node }
        var current: Any = document
        for key in ref.dropFirst(2).split(separator: "/") {
            current = try #require((current as? [String: Any])?[String(key)], "unresolved \(ref)")
        }
        return try resolve(try #require(current as? [String: Any]))
    }

    /// Problems of `value` against `schema`, each with its JSON path; empty when it conforms.
    func problems(_ value: Any, _ schema: [String: Any], at path: String = "$") throws -> [String] {
        let schema = try resolve(schema)
        var found: [String] = []
        if let choices = schema["enum"] as? [Any], !choices.contains(where: { "\($0)" == "\(value)" }) {
            found.append("\(path): \(value) is not one of \(choices)")
        }
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { return ["\(path): not an object"] }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil { found.append("\(path): no '\(name)'") }
            if schema["additionalProperties"] as? Bool == false {
                for name in object.keys where properties[name] == nil { found.append("\(path): unexpected '\(name)'") }
            }
            for (name, item) in object {
                if let sub = properties[name] as? [String: Any] { found += try problems(item, sub, at: "\(path).\(name)") }
            }
        case "array":
            guard let array = value as? [Any] else { return ["\(path): not an array"] }
            if let min = schema["minItems"] as? Int, array.count < min { found.append("\(path): \(array.count) items < \(min)") }
            if let max = schema["maxItems"] as? Int, array.count > max { found.append("\(path): \(array.count) items > \(max)") }
            if let items = schema["items"] as? [String: Any] {
                for (i, item) in array.enumerated() { found += try problems(item, items, at: "\(path)[\(i)]") }
            }
        case "string":
            if !(value is String) { found.append("\(path): not a string") }
        case "boolean":
            if !(value is Bool) { found.append("\(path): not a boolean") }
        case "integer", "number":
            guard let number = (value as? NSNumber)?.doubleValue, !(value is String) else { return ["\(path): not a number"] }
            if schema["type"] as? String == "integer", number.rounded() != number { found.append("\(path): \(number) is not an integer") }
            func bound(_ key: String) -> Double? { (schema[key] as? NSNumber)?.doubleValue ?? (schema[key] as? Int).map(Double.init) }
            if let min = bound("minimum"), number < min { found.append("\(path): \(number) < \(min)") }
            if let max = bound("maximum"), number > max { found.append("\(path): \(number) > \(max)") }
            if let min = bound("exclusiveMinimum"), number <= min { found.append("\(path): \(number) <= \(min)") }
            if let max = bound("exclusiveMaximum"), number >= max { found.append("\(path): \(number) >= \(max)") }
        default:
            break
        }
        return found
    }

    /// Problems of one exchange against the operation the spec gives for `method` `path`.
    func check(method: String, path: String, _ answer: HTTPExchange) throws -> [String] {
        let paths = try #require(document["paths"] as? [String: Any])
        let route = path.split(separator: "?").first.map(String.init) ?? path
        var responseSpec: [String: Any]
        if let operations = paths[route] as? [String: Any] {
            guard let operation = operations[method.lowercased()] as? [String: Any] ?? (answer.status == 405 ? operations.values.first as? [String: Any] : nil) else {
                return ["\(method) \(route) is not in the spec"]
            }
            guard let response = (operation["responses"] as? [String: Any])?[String(answer.status)] as? [String: Any] else {
                return ["\(method) \(route): status \(answer.status) is not documented"]
            }
            responseSpec = try resolve(response)
        } else {
            // Paths the API does not have: the generic error answer.
            guard answer.status == 404 else { return ["\(route): \(answer.status) for an undocumented path"] }
            responseSpec = try resolve(["$ref": "#/components/responses/Error"])
        }
        let contentType = answer.headers["content-type"]?.split(separator: ";").first.map(String.init) ?? ""
        guard let media = (responseSpec["content"] as? [String: Any])?[contentType] as? [String: Any],
              let schema = media["schema"] as? [String: Any] else {
            return ["\(method) \(route) \(answer.status): content type '\(contentType)' is not documented"]
        }
        if let headers = responseSpec["headers"] as? [String: Any] {
            for name in headers.keys where answer.headers[name.lowercased()] == nil { return ["\(method) \(route): no \(name) header"] }
        }
        if contentType == "application/json" {
            guard let value = try? JSONSerialization.jsonObject(with: answer.body) else { return ["\(method) \(route): body is not JSON"] }
            return try problems(value, schema)
        }
        return []
    }
}

@Suite(.serialized, .enabled(if: TestPaths.hasV4Weights, Comment(rawValue: Skip.noV4Weights)))
struct ServeAPISpecTests {
    static let spec = TestPaths.root + "/docs/openapi.yaml"

    @Test func checkerRejectsWhatTheSpecForbids() throws {
        let checker = try SchemaChecker(path: Self.spec)
        let detection = ["$ref": "#/components/schemas/DetectionResult"]
        let good: [String: Any] = ["image": "-", "width": 10, "height": 10, "time_ms": 1.5, "detections": [
            ["label": "cat", "classIndex": 15, "confidence": 0.9, "box": [1, 2, 3, 4], "objectness": 0.95,
             "labels": [["label": "cat", "classIndex": 15, "confidence": 0.9]]]]]
        #expect(try checker.problems(good, detection).isEmpty)
        var extra = good
        extra["extra"] = 1
        #expect(try !checker.problems(extra, detection).isEmpty)
        var missing = good
        missing["width"] = nil
        #expect(try !checker.problems(missing, detection).isEmpty)
        var badBox = good
        badBox["detections"] = [["label": "cat", "classIndex": 15, "confidence": 1.5, "box": [1, 2, 3], "objectness": 0.9, "labels": []]]
        #expect(try checker.problems(badBox, detection).count == 2)
    }

    /// A detection whose body stops after one of its 100 bytes: the answer at the body timeout (408).
    static func bodyTimeout(port: Int) throws -> HTTPExchange {
        let fd = try HTTPExchange.connect(port: port)
        defer { close(fd) }
        _ = HTTPExchange.writeAll(fd, Data("POST /v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: 100\r\n\r\n\u{89}".utf8))
        return try HTTPExchange.parse(HTTPExchange.readAll(fd))
    }

    /// Every kind of answer the server gives, checked against docs/openapi.yaml.
    @Test func answersMatchTheSpec() throws {
        let checker = try SchemaChecker(path: Self.spec)
        let server = try ServerProcess(["--slots", "1", "--queue", "0", "--max-body", "1MB", "--body-timeout", "1"])
        let png = try sampleBytes("astronaut.png")
        var exchanges: [(String, String, HTTPExchange)] = [
            ("POST", "/v1/detect", try server.detect(png)),
            ("POST", "/v1/detect", try server.detect(Data("text".utf8))),
            ("POST", "/v1/detect", try server.detect(Data(repeating: 1, count: 2 << 20))),
            ("POST", "/v1/detect", try server.detect(png, type: "text/plain")),
            ("POST", "/v1/detect", try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "image/png"), ("Expect", "200-ok")], body: png)),
            ("POST", "/v1/detect", try server.send(method: "POST", "/v1/detect", headers: [("Content-Type", "image/png"), ("Transfer-Encoding", "gzip")],
                                                   body: png, chunked: true)),
            ("POST", "/v1/detect", try Self.bodyTimeout(port: server.port)),
            ("GET", "/v1/detect", try server.send("/v1/detect")),
            ("GET", "/v1/models", try server.send("/v1/models")),
            ("GET", "/healthz", try server.send("/healthz")),
            ("GET", "/readyz", try server.send("/readyz")),
            ("GET", "/metrics", try server.send("/metrics")),
            ("GET", "/nowhere", try server.send("/nowhere")),
        ]
        // 429: one slow request holds the only slot, the next finds no queue place.
        let slow = Locked<HTTPExchange?>(nil)
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            slow.withLock { $0 = try? server.detect(png, query: "size=1248x1248") }
            group.leave()
        }
        // Once it runs (the metrics say so), the next request finds no slot and no queue place.
        var polls = 0
        while try !server.send("/metrics").text.contains("yolo_inferences_running 1") && polls < 5000 {
            polls += 1
            usleep(2_000)
        }
        let busy = try server.detect(png)
        group.wait()
        exchanges.append(("POST", "/v1/detect", busy))
        exchanges.append(("POST", "/v1/detect", try #require(slow.withLock { $0 })))
        var statuses = Set<Int>()
        for (method, path, answer) in exchanges {
            statuses.insert(answer.status)
            let problems = try checker.check(method: method, path: path, answer)
            #expect(problems.isEmpty, "\(method) \(path) \(answer.status): \(problems) \(answer.text)")
        }
        #expect(statuses == [200, 400, 404, 405, 408, 413, 415, 417, 429, 501])
        #expect(server.stop() == 0)
    }
}
