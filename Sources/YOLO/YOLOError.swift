import Foundation

/// The one error type for user errors: bad files, bad formats, bad options.
///
/// Every case carries the file it is about (when there is one) and what was expected and found,
/// so that `description` is a single line a command-line user can act on.
/// Programmer errors (violated preconditions) are not reported through this type.
public enum YOLOError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The file does not exist.
    case fileNotFound(path: String)
    /// The file exists but could not be read (permissions, a directory, an I/O error).
    case unreadableFile(path: String, reason: String)
    /// A darknet `.cfg` file is malformed or asks for something unsupported, at `line` (1-based).
    case invalidConfig(path: String, line: Int, message: String)
    /// A darknet `.weights` file holds a different number of floats than the cfg needs.
    case weightCountMismatch(path: String, expected: Int, found: Int)
    /// A weights, model or array file is malformed.
    case invalidFile(path: String, message: String)
    /// An image could not be decoded or is unacceptable (too large, empty).
    case invalidImage(path: String, message: String)
    /// A command-line option or API argument has an unacceptable value.
    case invalidArgument(String)
    /// A JSON input (COCO annotations, COCO results) is not valid JSON, lacks a key, holds a value of the wrong
    /// type or an inconsistent value (a duplicate id, a reference to an unknown image). `location` is the path
    /// inside the document, e.g. `annotations[12].bbox`, or empty for the document as a whole.
    case invalidJSON(path: String, location: String, message: String)

    /// One line, whatever the file held: control characters (newlines, carriage returns, escapes) are
    /// shown escaped, and a message over 500 characters (a cfg line of 100,000 characters quoted back)
    /// is shortened in the middle.
    public var description: String {
        let text = unsanitizedDescription
        var line = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                line += scalar.escaped(asASCII: true)
            } else {
                line.unicodeScalars.append(scalar)
            }
        }
        guard line.count > 500 else { return line }
        return String(line.prefix(300)) + " … " + String(line.suffix(150))
    }

    private var unsanitizedDescription: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): no such file"
        case .unreadableFile(let path, let reason):
            return "\(path): cannot read: \(reason)"
        case .invalidConfig(let path, let line, let message):
            return "\(path):\(line): \(message)"
        case .weightCountMismatch(let path, let expected, let found):
            let verdict = found < expected ? "too short" : "too long"
            return "\(path): weights file is \(verdict): the cfg needs \(expected) floats after the header, the file holds \(found)"
        case .invalidFile(let path, let message):
            return "\(path): \(message)"
        case .invalidImage(let path, let message):
            return "\(path): \(message)"
        case .invalidArgument(let message):
            return message
        case .invalidJSON(let path, let location, let message):
            return location.isEmpty ? "\(path): \(message)" : "\(path): \(location): \(message)"
        }
    }

    /// The same line as `description`, so `error.localizedDescription` in an app says what went wrong.
    public var errorDescription: String? { description }
}
