import Foundation

/// The parts of a `multipart/form-data` body (RFC 7578): each with its form field name, file name if
/// any, content type if any, and bytes. Only what a form upload needs; nested multiparts are not read.
///
/// One pass over the body: each delimiter is searched for once, from where the previous part ended
/// (`memchr` for its first byte, then a compare of at most 74 bytes), so parsing costs time linear in
/// the body's size whatever its shape. Parsing stops at the first part beyond `Limits.parts`, the first
/// header block beyond `Limits.headerBytes` and the first field beyond `Limits.fieldBytes`, having looked
/// at no byte past that limit.
package struct MultipartForm {
    package struct Part {
        package var name: String
        package var filename: String?
        package var contentType: String?
        package var data: Data
    }

    /// What a form may hold; beyond it parsing fails with `.overLimit`.
    package struct Limits: Sendable {
        /// The most parts a form may have.
        package var parts = 16
        /// The most bytes of one part's headers.
        package var headerBytes = 4096
        /// The most bytes of one part's value, except the parts named in `unboundedFields` (a file).
        package var fieldBytes = 4096
        /// Parts whose value only the body's own limit bounds.
        package var unboundedFields: Set<String> = ["image"]

        package init() {}
    }

    package var parts: [Part]

    package enum Failure: Error, Equatable {
        /// Not a well-formed form; the text says where.
        case malformed(String)
        /// Well-formed as far as read, but over one of `Limits`; the text names it.
        case overLimit(String)
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
    package init(body: Data, boundary: String, limits: Limits = Limits()) throws(Failure) {
        let bytes = ByteView(body)
        let delimiter = Array("--\(boundary)".utf8)
        let partEnd = Array("\r\n--\(boundary)".utf8)
        guard var cursor = bytes.find(delimiter, from: 0).map({ $0 + delimiter.count }) else {
            throw .malformed("the body has no part delimited by the boundary '\(boundary)'")
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" closes the body, else CRLF starts a part.
            if bytes.matches([0x2D, 0x2D], at: cursor) { break }
            guard bytes.matches([0x0D, 0x0A], at: cursor) else { throw .malformed("a boundary line is not followed by CRLF") }
            guard parts.count < limits.parts else {
                throw .overLimit("the form has more than \(limits.parts) parts (the limit)")
            }
            cursor += 2
            guard let headerEnd = bytes.find([0x0D, 0x0A, 0x0D, 0x0A], from: cursor, within: limits.headerBytes + 4) else {
                if bytes.count - cursor > limits.headerBytes + 4 {
                    throw .overLimit("a part's headers are over \(limits.headerBytes) bytes (the limit)")
                }
                throw .malformed("a part's headers do not end")
            }
            var part = Self.part(headers: bytes.string(cursor..<headerEnd))
            guard !part.name.isEmpty else { throw .malformed("a part has no Content-Disposition name") }
            let start = headerEnd + 4
            let window = limits.unboundedFields.contains(part.name) ? nil : limits.fieldBytes + partEnd.count
            guard let end = bytes.find(partEnd, from: start, within: window) else {
                if let window, bytes.count - start >= window {
                    throw .overLimit("the form field '\(Self.printable(part.name))' is over \(limits.fieldBytes) bytes (the limit)")
                }
                throw .malformed("a part does not end with the boundary (truncated body?)")
            }
            part.data = body[body.startIndex + start..<body.startIndex + end]
            parts.append(part)
            cursor = end + partEnd.count
        }
        self.parts = parts
    }

    /// A part with the name, file name and content type its header block gives, and no data yet.
    private static func part(headers: String) -> Part {
        var part = Part(name: "", filename: nil, contentType: nil, data: Data())
        for line in headers.components(separatedBy: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let field = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            if field == "content-type" { part.contentType = value }
            if field == "content-disposition" {
                part.name = parameter("name", in: value) ?? ""
                part.filename = parameter("filename", in: value)
            }
        }
        return part
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

    /// A client's name for an error message: no control characters, 64 at most.
    package static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(64)))
    }
}

/// Searches in a `Data`'s bytes by offset from its start.
private struct ByteView {
    let data: Data
    var count: Int { data.count }

    init(_ data: Data) { self.data = data }

    /// Whether `pattern` is at `offset`.
    func matches(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, count - offset >= pattern.count else { return false }
        return data.withUnsafeBytes { raw in memcmp(raw.baseAddress! + offset, pattern, pattern.count) == 0 }
    }

    /// The offset of the first `pattern` that starts at or after `start` and ends within `within` bytes of
    /// it (nil: anywhere); `nil` when there is none. Time: linear in the bytes looked at, times at most
    /// the pattern's length where its first byte recurs.
    func find(_ pattern: [UInt8], from start: Int, within: Int? = nil) -> Int? {
        let end = within.map { min(count, start + $0) } ?? count
        guard let first = pattern.first, start >= 0, end - start >= pattern.count else { return nil }
        return data.withUnsafeBytes { raw -> Int? in
            let base = raw.baseAddress!
            let last = end - pattern.count
            var i = start
            while i <= last {
                guard let hit = memchr(base + i, Int32(first), last - i + 1) else { return nil }
                let offset = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + offset, pattern, pattern.count) == 0 { return offset }
                i = offset + 1
            }
            return nil
        }
    }

    /// The bytes in `range` as UTF-8 text (invalid sequences replaced).
    func string(_ range: Range<Int>) -> String {
        String(decoding: data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound], as: UTF8.self)
    }
}
