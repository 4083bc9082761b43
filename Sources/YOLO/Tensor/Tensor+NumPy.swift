import Foundation

// MARK: - NumPy .npy files (float32, C order)

extension Tensor {
    /// Reads a little-endian float32 C-order `.npy` array of shape (1, C, H, W), (C, H, W), (H, W) or (N).
    ///
    /// - Throws: `YOLOError.invalidFile` naming the path and what is wrong.
    public static func readNumPy(_ path: String) throws -> Tensor {
        let data = try FileIO.read(path)
        return try parseNumPy(data, path: path)
    }

    /// Parses `.npy` bytes; `path` is only used in error messages.
    public static func parseNumPy(_ data: Data, path: String) throws -> Tensor {
        func fail(_ message: String) -> YOLOError { .invalidFile(path: path, message: message) }
        let bytes = [UInt8](data.prefix(12))
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1...5]) == Array("NUMPY".utf8) else {
            throw fail("not a NumPy .npy file (bad magic)")
        }
        let major = bytes[6]
        let headerLength: Int
        let headerStart: Int
        switch major {
        case 1:
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        case 2, 3:
            guard bytes.count >= 12 else { throw fail("truncated .npy header") }
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            headerStart = 12
        default:
            throw fail("unsupported .npy version \(major)")
        }
        guard data.count >= headerStart + headerLength else { throw fail("truncated .npy header") }
        let headerBytes = data.subdata(in: data.startIndex + headerStart ..< data.startIndex + headerStart + headerLength)
        guard let header = String(data: headerBytes, encoding: .ascii) else { throw fail("unreadable .npy header") }
        guard header.contains("'descr': '<f4'") else {
            throw fail("expected float32 little-endian data ('<f4'), header is \(header.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard header.contains("'fortran_order': False") else { throw fail("Fortran-order arrays are not supported") }
        guard let open = header.range(of: "'shape': ("), let close = header[open.upperBound...].firstIndex(of: ")") else {
            throw fail("no shape in .npy header")
        }
        let dims = try header[open.upperBound..<close].split(separator: ",").map { part -> Int in
            let text = part.trimmingCharacters(in: .whitespaces)
            guard let value = Int(text), value >= 0 else { throw fail("bad dimension '\(text)' in .npy shape") }
            return value
        }
        let shape: Shape
        switch dims.count {
        case 4 where dims[0] == 1: shape = Shape(channels: dims[1], height: dims[2], width: dims[3])
        case 3: shape = Shape(channels: dims[0], height: dims[1], width: dims[2])
        case 2: shape = Shape(channels: 1, height: dims[0], width: dims[1])
        case 1: shape = Shape(channels: 1, height: 1, width: dims[0])
        default: throw fail("unsupported .npy shape \(dims) (want 1xCxHxW, CxHxW, HxW or N)")
        }
        let payloadStart = headerStart + headerLength
        // Overflow-safe: a hostile shape's product must not trap; the data then bounds the allocation.
        var expectedBytes = 4
        for dimension in dims {
            let (product, overflow) = expectedBytes.multipliedReportingOverflow(by: dimension)
            guard !overflow, product <= data.count else {
                throw fail("shape \(dims) needs more data bytes than the file's \(data.count)")
            }
            expectedBytes = product
        }
        guard data.count - payloadStart == expectedBytes else {
            throw fail("shape \(dims) needs \(expectedBytes) data bytes, file holds \(data.count - payloadStart)")
        }
        var values = [Float](repeating: 0, count: shape.count)
        _ = values.withUnsafeMutableBytes { destination in
            data.copyBytes(to: destination, from: data.startIndex + payloadStart ..< data.startIndex + payloadStart + expectedBytes)
        }
        return Tensor(shape: shape, values: values)
    }

    /// The `.npy` (version 1.0) encoding of this tensor with shape (1, C, H, W).
    public func numPyData() -> Data {
        let dims = "(1, \(shape.channels), \(shape.height), \(shape.width))"
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': \(dims), }"
        // Magic (6) + version (2) + length (2) + header + newline is padded to a multiple of 64.
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var data = Data([0x93] + Array("NUMPY".utf8) + [1, 0])
        let length = UInt16(header.utf8.count)
        data.append(contentsOf: [UInt8(length & 0xff), UInt8(length >> 8)])
        data.append(contentsOf: Array(header.utf8))
        values.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// Writes this tensor as a `.npy` file, atomically.
    public func writeNumPy(_ path: String) throws {
        try FileIO.writeAtomically(numPyData(), to: path)
    }
}
