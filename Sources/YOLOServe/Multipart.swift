import Foundation

/// The parts of a `multipart/form-data` body (RFC 7578): each with its form field name, file name if
/// any, content type if any, and bytes. Only what a form upload needs; nested multiparts are not read.
package struct MultipartForm {
    package struct Part {
        package var name: String
        package var filename: String?
        package var contentType: String?
        package var data: Data
    }

    package var parts: [Part]

    package enum Failure: Error, Equatable {
        case malformed(String)
    }

    /// The `boundary` parameter of a `multipart/form-data` content type, unquoted.
    package static func boundary(inContentType contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// Splits `body` at `boundary`. Text before the first delimiter and after the closing one is ignored.
    package init(body: Data, boundary: String) throws(Failure) {
        let delimiter = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else {
            throw .malformed("the body has no part delimited by the boundary '\(boundary)'")
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" closes the body, else CRLF starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { break }
            guard body[cursor...].starts(with: crlf) else { throw .malformed("a boundary line is not followed by CRLF") }
            cursor += 2
            guard let headerEnd = body.range(of: Data("\r\n\r\n".utf8), in: cursor..<body.endIndex) else {
                throw .malformed("a part's headers do not end")
            }
            let headers = String(decoding: body[cursor..<headerEnd.lowerBound], as: UTF8.self)
            guard let next = body.range(of: crlf + delimiter, in: headerEnd.upperBound..<body.endIndex) else {
                throw .malformed("a part does not end with the boundary (truncated body?)")
            }
            var part = Part(name: "", filename: nil, contentType: nil, data: body[headerEnd.upperBound..<next.lowerBound])
            for line in headers.components(separatedBy: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1)
                guard pair.count == 2 else { continue }
                let field = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = pair[1].trimmingCharacters(in: .whitespaces)
                if field == "content-type" { part.contentType = value }
                if field == "content-disposition" {
                    part.name = Self.parameter("name", in: value) ?? ""
                    part.filename = Self.parameter("filename", in: value)
                }
            }
            guard !part.name.isEmpty else { throw .malformed("a part has no Content-Disposition name") }
            parts.append(part)
            cursor = next.upperBound
        }
        self.parts = parts
    }

    /// A `name="value"` (or unquoted) parameter of a header value.
    private static func parameter(_ name: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}
