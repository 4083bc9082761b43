import Foundation
@_spi(Engine) import YOLO

/// One row of a MOTChallenge text file (ground truth, public detections or a tracker's results):
/// `frame, id, bb_left, bb_top, bb_width, bb_height, confidence[, x, y, z]` in the MOT15 layout, or
/// `…, confidence, class, visibility` in the MOT16/17 ground-truth layout.
///
/// Coordinates are kept as the file gives them: MOTChallenge counts pixels from 1, so a box touching the
/// image's left edge has `x == 1`.
public struct MOTChallengeRecord: Sendable, Hashable {
    /// The frame number (MOTChallenge counts from 1).
    public var frame: Int
    /// The object's identity (ground truth) or the track's (results); detection files use -1.
    public var id: Int
    /// The box's left edge.
    public var x: Double
    /// The box's top edge.
    public var y: Double
    /// The box's width. A negative width is kept: the box is empty and never matches, as in py-motmetrics.
    public var width: Double
    /// The box's height (negative: as for `width`).
    public var height: Double
    /// Ground truth: 1 for a row to evaluate, 0 for one to ignore. Results: the tracker's score, or -1.
    public var confidence: Double
    /// The fields after the confidence, as read (none to three numbers): the world coordinates x, y, z of
    /// MOT15 files, or the class and visibility of MOT16/17 ground truth.
    public var extra: [Double]

    /// A record; `extra` holds at most three numbers.
    public init(frame: Int, id: Int, x: Double, y: Double, width: Double, height: Double,
                confidence: Double = -1, extra: [Double] = []) {
        precondition(extra.count <= 3, "a MOTChallenge row has at most three fields after the confidence")
        self.frame = frame
        self.id = id
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.confidence = confidence
        self.extra = extra
    }

    /// The box as a rectangle with the file's coordinates (origin `x`, `y`).
    public var box: Rect { Rect(x: x, y: y, width: width, height: height) }
}

/// Reading and writing MOTChallenge text files: one record per line.
///
/// The reader takes the layouts py-motmetrics' `loadtxt(fmt='mot15-2D')` reads, and spaces around commas
/// (which py-motmetrics' reader rejects): fields separated by commas (spaces and tabs around them ignored)
/// or, on a line without commas, by runs of spaces and tabs; blank lines; Windows line ends; a UTF-8
/// byte-order mark. It is strict where py-motmetrics would go on with NaN or misaligned columns: every line
/// has 7 to 10 fields (py-motmetrics silently drops a 6-field line and shifts the columns of an 11-field
/// one), every field is a plain decimal number (no NaN, infinity or hexadecimal), the frame
/// and id are integers, and the box's coordinates are within ±1e9.
public enum MOTChallengeFile {
    /// The largest magnitude accepted for a box coordinate or size: no image is that large, so a value beyond
    /// it means a broken file.
    public static let coordinateLimit = 1e9

    // MARK: Reading

    /// Reads the MOTChallenge file at `path`.
    /// - Throws: `YOLOError.fileNotFound`, `.unreadableFile`, or `.invalidConfig(path:line:message:)` for the
    ///   first malformed line (its 1-based number).
    public static func read(path: String) throws -> [MOTChallengeRecord] {
        try parse(try FileIO.readText(path), path: path)
    }

    /// Parses MOTChallenge text; `path` names the source in error messages only.
    /// - Throws: `YOLOError.invalidConfig(path:line:message:)` for the first malformed line.
    public static func parse(_ text: String, path: String) throws -> [MOTChallengeRecord] {
        // Bytes, not Characters: a file of 100,000 lines is read in a fraction of the time.
        let bytes = Array(text.utf8)
        var records: [MOTChallengeRecord] = []
        var lineNumber = 0
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0  // a UTF-8 byte-order mark
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            let fields = splitFields(bytes[start..<end])
            start = end + 1
            if fields.isEmpty { continue }
            do {
                records.append(try record(fields))
            } catch let problem as LineProblem {
                throw YOLOError.invalidConfig(path: path, line: lineNumber, message: problem.message)
            }
        }
        return records
    }

    // MARK: Writing

    /// One record as a MOTChallenge line (no line end): ten comma-separated fields, or nine for a record with
    /// two extra fields (MOT16/17 ground truth). Integral values are written without a decimal point, others
    /// in Swift's shortest round-trip form, so reading the line gives back the same record. A record without
    /// extra fields gets `-1,-1,-1`, the world coordinates a 2D tracker leaves unset.
    public static func line(_ record: MOTChallengeRecord) -> String {
        let extra = record.extra.isEmpty ? [-1, -1, -1] : record.extra
        let numbers = [record.x, record.y, record.width, record.height, record.confidence] + extra
        return ([String(record.frame), String(record.id)] + numbers.map(number)).joined(separator: ",")
    }

    /// The records as MOTChallenge text, one line each, every line ending in a newline, in the order given
    /// (MOTChallenge files are usually sorted by frame, then id).
    public static func lines(_ records: [MOTChallengeRecord]) -> String {
        var text = ""
        for record in records {
            text += line(record)
            text += "\n"
        }
        return text
    }

    /// Writes the records to `path` atomically (a reader never sees a half-written file).
    /// - Throws: `YOLOError.unreadableFile` when the file cannot be written.
    public static func write(_ records: [MOTChallengeRecord], to path: String) throws {
        try FileIO.writeAtomically(Data(lines(records).utf8), to: path)
    }

    // MARK: Private

    /// Why one line is malformed; turned into a `YOLOError` naming the file and line.
    private struct LineProblem: Error {
        let message: String
    }

    private static let fieldNames = ["frame", "id", "x", "y", "width", "height", "confidence", "extra field 8",
                                     "extra field 9", "extra field 10"]

    /// The line's fields, trimmed; none for a blank line. Commas separate fields when the line has any
    /// (spaces, tabs and carriage returns around them are ignored), else runs of spaces and tabs do.
    private static func splitFields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        guard line.contains(where: { !blank($0) }) else { return [] }
        guard line.contains(UInt8(ascii: ",")) else { return line.split(whereSeparator: blank) }
        return line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { field in
            let start = field.firstIndex(where: { !blank($0) }) ?? field.endIndex
            let end = field.lastIndex(where: { !blank($0) }).map { $0 + 1 } ?? start
            return field[start..<end]
        }
    }

    private static func record(_ fields: [ArraySlice<UInt8>]) throws -> MOTChallengeRecord {
        guard (7...10).contains(fields.count) else {
            throw LineProblem(message: "expected 7 to 10 fields (frame, id, x, y, width, height, confidence, "
                              + "then up to 3 more), found \(fields.count)")
        }
        var values: [Double] = []
        values.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            values.append(try number(field, name: fieldNames[index]))
        }
        for index in 2...5 where abs(values[index]) > coordinateLimit {
            throw LineProblem(message: "\(fieldNames[index]) \(text(fields[index])) is beyond ±1e9")
        }
        return MOTChallengeRecord(frame: try integer(values[0], fields[0], name: "frame"),
                                  id: try integer(values[1], fields[1], name: "id"),
                                  x: values[2], y: values[3], width: values[4], height: values[5],
                                  confidence: values[6], extra: Array(values[7...]))
    }

    /// A plain decimal number (sign, digits, point, exponent): no NaN, infinity or hexadecimal forms.
    private static func number(_ field: ArraySlice<UInt8>, name: String) throws -> Double {
        guard !field.isEmpty else { throw LineProblem(message: "\(name) is empty") }
        let plain = field.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "e"), UInt8(ascii: "E"): true
            default: false
            }
        }
        guard plain, let value = Double(String(decoding: field, as: UTF8.self)) else {
            throw LineProblem(message: "\(name) '\(text(field))' is not a number")
        }
        guard value.isFinite else { throw LineProblem(message: "\(name) \(text(field)) is out of range") }
        return value
    }

    /// A field as text for a message (at most 40 bytes of it).
    private static func text(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix(40), as: UTF8.self)
    }

    /// The frame or id: a whole number (`12` or `12.0`) within ±2^53, where doubles count exactly.
    private static func integer(_ value: Double, _ field: ArraySlice<UInt8>, name: String) throws -> Int {
        guard value == value.rounded(), abs(value) <= 9_007_199_254_740_992, let integer = Int(exactly: value) else {
            throw LineProblem(message: "\(name) \(text(field)) is not an integer")
        }
        return integer
    }

    private static func number(_ value: Double) -> String {
        precondition(value.isFinite, "MOTChallenge files hold finite numbers only")
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }
}
