import CZlib
import Foundation

/// Writes 8-bit RGB PNG files quickly:
/// - each row is filtered with PNG's `Sub` or `Up` filter, whichever gives smaller bytes;
/// - the rows are cut into strips of about 1 MiB, deflated on several threads at zlib's fastest level
///   (or stored, when a probe of the strip's first 32 KiB does not shrink below 90 %);
/// - the strips' raw deflate streams are joined into one zlib stream (each but the last ends on a byte
///   boundary with a sync flush, as pigz does; their Adler-32 checksums are combined), one IDAT chunk
///   per strip.
///
/// libpng's simplified writer, which this replaces for encoding, compresses on one thread, so saving a
/// large photo would cost as much as detecting in it (docs/IMAGES.md). Each strip starts
/// with an empty dictionary, which costs a little compression at the seams.
enum PNGWriter {
    /// Uncompressed bytes (filtered rows) per strip, about; strips are whole rows.
    static let stripBytes = 1 << 20

    /// The PNG file for `pixels` (`width × height` RGB triples, row by row), tagged sRGB.
    /// - Throws: `YOLOError.invalidArgument` when zlib fails (it should not: only out of memory).
    static func encode(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int,
                       threads: Int = Threading.defaultThreadCount) throws -> Data {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "PNGWriter: pixel count")
        let rowLength = 1 + width * 3
        let rowsPerStrip = max(1, stripBytes / rowLength)
        let count = (height + rowsPerStrip - 1) / rowsPerStrip
        var strips = [Strip](repeating: Strip(), count: count)
        strips.withUnsafeMutableBufferPointer { strips in
            Parallel.forWorkers(count, threads: threads) { _, range in
                // One filtered-rows buffer and one output buffer per worker, reused for its strips.
                let filtered = UnsafeMutablePointer<UInt8>.allocate(capacity: rowsPerStrip * rowLength)
                let sub = UnsafeMutablePointer<UInt8>.allocate(capacity: rowLength)
                defer { filtered.deallocate(); sub.deallocate() }
                var output: UnsafeMutableRawBufferPointer?
                defer { output?.deallocate() }
                for index in range {
                    let rows = index * rowsPerStrip..<min(height, (index + 1) * rowsPerStrip)
                    filter(pixels, width: width, rows: rows, into: filtered, sub: sub)
                    strips[index] = deflate(filtered, length: rows.count * rowLength, first: index == 0,
                                            last: index == count - 1, output: &output)
                }
            }
        }
        if let failed = strips.first(where: { $0.data == nil }) {
            throw YOLOError.invalidArgument("PNG encoding failed: zlib error \(failed.status)")
        }
        // The zlib stream's Adler-32 of all filtered rows closes the last IDAT chunk.
        var adler = adler32(0, nil, 0)
        for strip in strips { adler = adler32_combine(adler, strip.adler, off_t(strip.length)) }
        let trailer = withUnsafeBytes(of: UInt32(truncatingIfNeeded: adler).bigEndian) { Array($0) }

        var file = Data(capacity: strips.reduce(100) { $0 + $1.data!.count + 12 })
        file.append(contentsOf: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        appendBigEndian(UInt32(width), to: &header)
        appendBigEndian(UInt32(height), to: &header)
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8 bits, truecolour, deflate, adaptive filtering, no interlace
        appendChunk("IHDR", header, to: &file)
        appendChunk("sRGB", Data([0]), to: &file)  // perceptual rendering intent
        // One IDAT chunk per strip; their CRCs were computed with the strips.
        for (index, strip) in strips.enumerated() {
            let last = index == count - 1
            appendBigEndian(UInt32(strip.data!.count - 4 + (last ? 4 : 0)), to: &file)  // the body, without "IDAT"
            file.append(strip.data!)  // "IDAT", then the strip's bytes
            var crc = strip.crc
            if last { crc = trailer.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, 4) }; file.append(contentsOf: trailer) }
            appendBigEndian(UInt32(truncatingIfNeeded: crc), to: &file)
        }
        appendChunk("IEND", Data(), to: &file)
        return file
    }

    /// One strip as an IDAT chunk's type and body (the first strip's body starts with the zlib header,
    /// the last one's trailer is added when all are done), the CRC of those bytes, and the Adler-32 and
    /// length of the strip's filtered rows.
    struct Strip {
        var data: Data?
        var crc: uLong = 0
        var adler: uLong = 0
        var length = 0
        var status: Int32 = Z_OK
    }

    /// Filters `rows` into `out`: each row keeps PNG's `Sub` (each byte minus the same channel of the pixel
    /// to its left) or `Up` (each byte minus the byte above; not for the image's first row), whichever
    /// gives bytes smaller in magnitude (libpng's heuristic), after its filter-type byte.
    private static func filter(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, rows: Range<Int>,
                               into out: UnsafeMutablePointer<UInt8>, sub: UnsafeMutablePointer<UInt8>) {
        let rowBytes = width * 3
        for (k, y) in rows.enumerated() {
            let source = pixels.baseAddress! + y * rowBytes
            let target = out + k * (1 + rowBytes)
            sub.update(from: source, count: min(3, rowBytes))
            var subCost = difference(source + 3, source, count: rowBytes - min(3, rowBytes), into: sub + 3)
            for i in 0..<min(3, rowBytes) { subCost += Int(min(source[i], 0 &- source[i])) }
            if y > 0, difference(source, source - rowBytes, count: rowBytes, into: target + 1) <= subCost {
                target[0] = 2
                continue
            }
            target[0] = 1
            (target + 1).update(from: sub, count: rowBytes)
        }
    }

    /// `out[i] = a[i] − b[i]` (mod 256) for `count` bytes; returns the sum of the differences' magnitudes
    /// as signed bytes (min(d, 256 − d)), libpng's measure of how well a filter did.
    @inline(__always)
    private static func difference(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int,
                                   into out: UnsafeMutablePointer<UInt8>) -> Int {
        typealias Bytes = SIMD16<UInt8>
        var sums = SIMD16<UInt32>()
        var i = 0
        while i + 16 <= count {
            let d = UnsafeRawPointer(a + i).loadUnaligned(as: Bytes.self) &- UnsafeRawPointer(b + i).loadUnaligned(as: Bytes.self)
            UnsafeMutableRawPointer(out + i).storeBytes(of: d, as: Bytes.self)
            sums &+= SIMD16<UInt32>(truncatingIfNeeded: pointwiseMin(d, 0 &- d))
            i += 16
        }
        var total = Int(sums.wrappedSum())
        while i < count {
            let d = a[i] &- b[i]
            out[i] = d
            total += Int(min(d, 0 &- d))
            i += 1
        }
        return total
    }

    /// Deflates `length` filtered bytes at zlib's fastest level (or stores them, when a probe shows they
    /// do not compress) into a raw deflate stream that ends on a
    /// byte boundary (sync flush) or, for the last strip, finishes the stream; `output` is the worker's
    /// buffer, grown when a strip needs more.
    private static func deflate(_ input: UnsafeMutablePointer<UInt8>, length: Int, first: Bool, last: Bool,
                                output: inout UnsafeMutableRawBufferPointer?) -> Strip {
        var z = z_stream()
        let level = compresses(input, length: min(length, probeBytes)) ? Int32(1) : 0
        var status = deflateInit2_(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { return Strip(data: nil, status: status) }
        defer { deflateEnd(&z) }
        // "IDAT", the zlib header on the first strip, then at most deflateBound's bytes (which covers a
        // finished stream; a sync flush adds an empty stored block of 5 bytes).
        let prefix: [UInt8] = Array("IDAT".utf8) + (first ? [0x78, 0x01] : [])  // deflate, 32 KiB window, fastest
        let capacity = prefix.count + Int(deflateBound(&z, uLong(length))) + 64
        if (output?.count ?? 0) < capacity {
            output?.deallocate()
            output = .allocate(byteCount: capacity, alignment: 64)
        }
        let buffer = output!
        buffer.copyBytes(from: prefix)
        z.next_in = input
        z.avail_in = uInt(length)
        z.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self) + prefix.count
        z.avail_out = uInt(capacity - prefix.count)
        status = CZlib.deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH)
        let finished = last ? status == Z_STREAM_END : (status == Z_OK && z.avail_in == 0)
        guard finished else { return Strip(data: nil, status: status) }
        let size = prefix.count + Int(z.total_out)
        let bytes = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        return Strip(data: Data(bytes: bytes, count: size), crc: crc32(0, bytes, uInt(size)),
                     adler: adler32(1, input, uInt(length)), length: length, status: status)
    }

    /// Bytes of each strip compressed first to see whether compressing it is worth the time.
    static let probeBytes = 32 << 10

    /// Whether level 1 shrinks the first `length` bytes below 90 %. Rows that do not compress (noise,
    /// or content that is already noise-like after filtering) are then stored uncompressed (level 0,
    /// a copy), where level 1 runs slowly for no gain.
    private static func compresses(_ input: UnsafeMutablePointer<UInt8>, length: Int) -> Bool {
        var z = z_stream()
        guard deflateInit2_(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return true }
        defer { deflateEnd(&z) }
        let capacity = Int(deflateBound(&z, uLong(length)))
        let output = UnsafeMutablePointer<Bytef>.allocate(capacity: capacity)
        defer { output.deallocate() }
        z.next_in = input
        z.avail_in = uInt(length)
        z.next_out = output
        z.avail_out = uInt(capacity)
        guard CZlib.deflate(&z, Z_FINISH) == Z_STREAM_END else { return true }
        return Double(z.total_out) < 0.9 * Double(length)
    }

    private static func appendBigEndian(_ value: UInt32, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    private static func appendChunk(_ type: String, _ body: Data, to file: inout Data) {
        let typeBytes = Array(type.utf8)
        appendBigEndian(UInt32(body.count), to: &file)
        file.append(contentsOf: typeBytes)
        file.append(body)
        var crc = typeBytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        body.withUnsafeBytes { raw in
            crc = crc32(crc, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count))
        }
        appendBigEndian(UInt32(truncatingIfNeeded: crc), to: &file)
    }
}
