/// A light walk over a PNG's chunk list: the IHDR fields needed before decoding, and a copy of the
/// stream without the colour-management chunks (gAMA, sRGB, iCCP, cHRM).
///
/// Damage is not reported here (libpng reports it with a better message); the walk just stops.
struct PNGChunks {
    /// The IHDR fields.
    struct Header { var width: Int; var height: Int; var bitDepth: Int; var colorType: Int; var interlaced: Bool }

    private let bytes: UnsafeRawBufferPointer
    /// The IHDR, when the stream starts with a well-formed one.
    private(set) var header: Header?
    /// Byte ranges of the chunks to drop.
    private var dropped: [Range<Int>] = []

    /// The 8-byte signature every PNG starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        guard bytes.count >= 8, zip(bytes, Self.signature).allSatisfy({ $0 == $1 }) else { return }
        var at = 8
        while at + 12 <= bytes.count {
            let length = Int(be32(at))
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let end = at + 12 + length
            guard length < 0x8000_0000, end <= bytes.count else { return }
            if at == 8 {
                guard type == "IHDR", length == 13 else { return }
                header = Header(width: Int(be32(at + 8)), height: Int(be32(at + 12)),
                                bitDepth: Int(bytes[at + 16]), colorType: Int(bytes[at + 17]),
                                interlaced: bytes[at + 20] != 0)
            }
            if ["gAMA", "sRGB", "iCCP", "cHRM"].contains(type) { dropped.append(at..<end) }
            if type == "IEND" { return }
            at = end
        }
    }

    /// Whether the stream has colour-management chunks to remove.
    var hasColorManagement: Bool { !dropped.isEmpty }

    /// The stream with the colour-management chunks removed.
    func withoutColorManagement() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var at = 0
        for range in dropped {
            out.append(contentsOf: bytes[at..<range.lowerBound])
            at = range.upperBound
        }
        out.append(contentsOf: bytes[at...])
        return out
    }

    private func be32(_ i: Int) -> UInt32 {
        UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
    }
}
