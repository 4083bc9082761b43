/// What SwiftYOLO reads from a JPEG's marker segments itself, before handing the file to TurboJPEG:
/// the EXIF orientation (APP1 "Exif") and whether an Adobe APP14 segment is present (which means
/// CMYK/YCCK samples are stored inverted, as Adobe writes them).
///
/// Parsing never fails: a malformed segment is ignored and scanning stops at the first sign of
/// damage, so a broken EXIF block cannot keep an otherwise good JPEG from decoding.
struct JPEGMarkers: Equatable {
    /// EXIF orientation 1...8 from IFD0 tag 0x0112; 1 when absent or invalid.
    var orientation: Int = 1
    /// An Adobe APP14 segment was found.
    var hasAdobeMarker = false
    /// The frame is progressive (SOF2, SOF6, SOF10 or SOF14): libjpeg keeps all its DCT coefficients.
    var isProgressive = false

    // MARK: Scanning

    /// Scans the segments from SOI up to the first start-of-scan (SOS) marker.
    init(scanning bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var at = 2
        var foundEXIF = false
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return }  // not at a marker: damaged, stop
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // fill byte before a marker
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return }  // start of scan / end of image
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2, at + 2 + length <= bytes.count else { return }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(at + 4)..<(at + 2 + length)])
            if marker == 0xE1, !foundEXIF, Self.hasPrefix(payload, "Exif\0\0") {
                foundEXIF = true
                let tiff = UnsafeRawBufferPointer(rebasing: payload[6...])
                orientation = EXIF.orientation(tiff: tiff) ?? 1
            } else if marker == 0xEE, Self.hasPrefix(payload, "Adobe") {
                hasAdobeMarker = true
            } else if [0xC2, 0xC6, 0xCA, 0xCE].contains(marker) {
                isProgressive = true
            }
            at += 2 + length
        }
    }

    private static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: String) -> Bool {
        let p = Array(prefix.utf8)
        return bytes.count >= p.count && zip(bytes, p).allSatisfy { $0 == $1 }
    }
}

/// Reading the one EXIF tag the engine needs from a TIFF-structured EXIF block.
enum EXIF {
    /// The orientation tag (0x0112) of IFD0 in `tiff` (the bytes after "Exif\0\0"), or `nil` when
    /// the block is malformed or the tag is absent or outside 1...8. Both byte orders.
    static func orientation(tiff: UnsafeRawBufferPointer) -> Int? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false  // "II": Intel, little-endian
        case (0x4D, 0x4D): bigEndian = true   // "MM": Motorola, big-endian
        default: return nil
        }
        func u16(_ i: Int) -> Int? {
            guard i >= 0, i + 2 <= tiff.count else { return nil }
            let a = Int(tiff[i]), b = Int(tiff[i + 1])
            return bigEndian ? a << 8 | b : b << 8 | a
        }
        func u32(_ i: Int) -> Int? {
            guard let hi = u16(bigEndian ? i : i + 2), let lo = u16(bigEndian ? i + 2 : i) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at), let type = u16(at + 2), let n = u32(at + 4) else { return nil }
            guard tag == 0x0112 else { continue }
            // SHORT (type 3), one value, stored left-justified in the 4-byte value field.
            guard type == 3, n >= 1, let value = u16(at + 8), (1...8).contains(value) else { return nil }
            return value
        }
        return nil
    }
}
