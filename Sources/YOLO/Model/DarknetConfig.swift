/// The sections of a darknet `.cfg` file, as written: `[name]` headers followed by `key=value` lines.
///
/// This type only splits the text; `ModelDescription` gives the keys their meaning.
/// Comments start with `#` or `;`. Every section and entry remembers its 1-based line number so
/// later errors can point at it.
@_spi(Engine) public struct DarknetConfig: Sendable {
    public struct Entry: Sendable {
        public var key: String
        public var value: String
        public var line: Int
    }

    public struct Section: Sendable {
        /// Lower-cased name without brackets, e.g. `convolutional`.
        public var name: String
        public var line: Int
        public var entries: [Entry]
    }

    /// The file the text came from (for error messages).
    public var path: String
    public var sections: [Section]

    /// Reads and splits the cfg file at `path`.
    public init(contentsOf path: String) throws {
        try self.init(text: FileIO.readText(path), path: path)
    }

    /// Splits `text`; `path` is only used in error messages.
    public init(text: String, path: String) throws {
        self.path = path
        var sections: [Section] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = index + 1
            let line = rawLine.filter { !$0.isWhitespace }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw YOLOError.invalidConfig(path: path, line: lineNumber, message: "malformed section header '\(rawLine)'")
                }
                sections.append(Section(name: String(line.dropFirst().dropLast()).lowercased(), line: lineNumber, entries: []))
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw YOLOError.invalidConfig(path: path, line: lineNumber, message: "expected key=value, found '\(rawLine)'")
            }
            guard !sections.isEmpty else {
                throw YOLOError.invalidConfig(path: path, line: lineNumber, message: "'\(rawLine)' appears before any [section]")
            }
            let key = String(line[..<equals]).lowercased()
            guard !key.isEmpty else {
                throw YOLOError.invalidConfig(path: path, line: lineNumber, message: "missing key in '\(rawLine)'")
            }
            sections[sections.count - 1].entries.append(Entry(key: key, value: String(line[line.index(after: equals)...]), line: lineNumber))
        }
        guard !sections.isEmpty else {
            throw YOLOError.invalidConfig(path: path, line: 1, message: "no sections: not a darknet cfg file")
        }
        self.sections = sections
    }
}
