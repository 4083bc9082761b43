import CZlib

/// zlib streams (RFC 1950) for the model file's deflated LUT codes (storage 2, format 1.3): deflated at
/// level 9 when written, inflated into memory of exactly the expected size when read.
///
/// The reader treats a stream as hostile: it never writes past the expected length (a stream that would
/// inflate to more stops there and fails), and a stream that ends short, is corrupt or is followed by
/// more bytes fails too. zlib's own state (about 7 KB, and its 32 KB window only when a stream stops
/// early) is all it allocates.
enum ZlibStream {
    /// deflate's largest expansion: a 258-byte match costs at least 2 bits, so a stream of `n` bytes
    /// never inflates to more than `1032 · n` bytes (the reader checks a declared length against it
    /// before allocating anything).
    static let maxRatio = 1032

    /// zlib's best compression. With zlib's default window (32 KB), memory level (8) and strategy
    /// the same bytes give the same stream with the same zlib implementation.
    static let level: Int32 = 9

    /// `bytes` as one zlib stream at `level`.
    static func deflate(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var z = z_stream()
        let status = deflateInit_(&z, level, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "ZlibStream.deflate: zlib could not start (\(status)), out of memory")
        defer { deflateEnd(&z) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&z, uLong(bytes.count))))
        var inputLeft = bytes.count
        z.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
        let written = output.withUnsafeMutableBytes { out -> Int in
            z.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
            var result: Int32
            repeat {
                // zlib counts in 32 bits: feed at most 1 GB per call.
                let chunk = min(inputLeft, 1 << 30)
                z.avail_in = uInt(chunk)
                z.avail_out = uInt(min(out.count - Int(z.total_out), 1 << 30))
                result = CZlib.deflate(&z, chunk == inputLeft ? Z_FINISH : Z_NO_FLUSH)
                inputLeft -= chunk - Int(z.avail_in)
            } while result == Z_OK
            precondition(result == Z_STREAM_END, "ZlibStream.deflate: zlib failed (\(result))")
            return Int(z.total_out)
        }
        output.removeLast(output.count - written)
        return output
    }

    /// Inflates the zlib stream `stream` into `output`, which it must fill exactly.
    /// - Returns: nil on success, else what is wrong, for an error message (one line).
    static func inflate(_ stream: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> String? {
        guard let input = stream.baseAddress, !stream.isEmpty else { return "the zlib stream is empty" }
        var z = z_stream()
        guard inflateInit_(&z, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return "zlib could not start (out of memory)"
        }
        defer { inflateEnd(&z) }
        z.next_in = UnsafeMutablePointer(mutating: input.assumingMemoryBound(to: Bytef.self))
        z.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        var inputLeft = stream.count, outputLeft = output.count
        var status: Int32
        repeat {
            // zlib counts in 32 bits: at most 1 GB of input and of output per call.
            let inputChunk = min(inputLeft, 1 << 30), outputChunk = min(outputLeft, 1 << 30)
            z.avail_in = uInt(inputChunk)
            z.avail_out = uInt(outputChunk)
            status = CZlib.inflate(&z, Z_FINISH)
            inputLeft -= inputChunk - Int(z.avail_in)
            outputLeft -= outputChunk - Int(z.avail_out)
            // Go on only when a chunk limit, not the end of the input or of the output, stopped zlib.
        } while status == Z_BUF_ERROR && ((z.avail_in == 0 && inputLeft > 0) || (z.avail_out == 0 && outputLeft > 0))
        return problem(status: status, message: z.msg, inputLeft: inputLeft, produced: output.count - outputLeft,
                       expected: output.count)
    }

    /// What an inflation that ended with `status` did wrong, or nil when it inflated to exactly
    /// `expected` bytes and used every input byte.
    private static func problem(status: Int32, message: UnsafePointer<CChar>?, inputLeft: Int, produced: Int,
                                expected: Int) -> String? {
        switch status {
        case Z_STREAM_END:
            if produced < expected { return "the zlib stream inflates to \(produced) bytes, expected \(expected)" }
            if inputLeft > 0 { return "\(inputLeft) bytes follow the end of the zlib stream" }
            return nil
        case Z_BUF_ERROR where produced == expected && inputLeft > 0:
            return "the zlib stream inflates to more than the expected \(expected) bytes"
        case Z_BUF_ERROR where inputLeft == 0:
            return "the zlib stream is truncated (it stops after \(produced) of \(expected) bytes, before its end)"
        case Z_DATA_ERROR, Z_NEED_DICT:
            let reason = status == Z_NEED_DICT ? "it needs a preset dictionary" : message.map { String(cString: $0) } ?? "invalid data"
            return "the zlib stream is corrupt (\(reason)) after \(produced) of \(expected) bytes"
        case Z_MEM_ERROR:
            return "out of memory while inflating the zlib stream"
        default:
            return "zlib stopped with status \(status) after \(produced) of \(expected) bytes"
        }
    }
}
