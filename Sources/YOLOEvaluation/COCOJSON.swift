import Foundation
@_spi(Engine) import YOLO

/// Decoding of the COCO JSON documents with errors that name the file and the place inside it.
///
/// `JSONDecoder` reports a missing key or a wrong type as a `DecodingError` with a coding path;
/// this turns it into `YOLOError.invalidJSON` with the path rendered as `annotations[12].bbox`.
enum COCOJSON {
    // MARK: Decoding

    /// Decodes `type` from `data` (the contents of the file at `path`).
    /// - Throws: `YOLOError.invalidJSON` naming the place and what was wrong.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, path: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw describe(error, path: path, data: data)
        }
    }

    /// Renders a coding path as `images[3].file_name`.
    static func location(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    // MARK: Error mapping

    private static func describe(_ error: DecodingError, path: String, data: Data) -> YOLOError {
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidJSON(path: path, location: location(context.codingPath), message: "missing key '\(key.stringValue)'")
        case .typeMismatch(let type, let context):
            return .invalidJSON(path: path, location: location(context.codingPath), message: "expected \(typeName(type))")
        case .valueNotFound(let type, let context):
            return .invalidJSON(path: path, location: location(context.codingPath), message: "null where \(typeName(type)) was expected")
        case .dataCorrupted(let context):
            var message = context.debugDescription
            if context.codingPath.isEmpty {
                // JSONDecoder says only "not valid JSON"; JSONSerialization says where.
                message = "not valid JSON"
                do {
                    _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
                } catch {
                    if let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String { message += ": " + detail }
                }
            }
            return .invalidJSON(path: path, location: location(context.codingPath), message: message)
        @unknown default:
            return .invalidJSON(path: path, location: "", message: "\(error)")
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: return "an integer"
        case is Double.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "true/false"
        case is [Any].Type: return "an array"
        case is [String: Any].Type: return "an object"
        default: return "\(type)"
        }
    }
}

/// A COCO `iscrowd` value: `0`/`1` as in the COCO files, or `false`/`true`.
struct COCOFlag: Decodable {
    /// The flag.
    let value: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            guard number == 0 || number == 1 else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected 0 or 1, found \(number)")
            }
            value = number == 1
        } else if let flag = try? container.decode(Bool.self) {
            value = flag
        } else {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: decoder.codingPath, debugDescription: "expected 0 or 1"))
        }
    }
}
