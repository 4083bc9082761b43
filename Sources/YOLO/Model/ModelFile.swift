import Foundation

/// The SwiftYOLO model file (`.yolo`): one self-describing, memory-mappable file holding the
/// network description, the labels and every convolution's folded weights, as float32 or as LUT
/// codes. The byte layout and versioning rules are in docs/MODEL_FORMAT.md.
///
/// Layout: a 64-byte header, the metadata (description, labels, one tensor record per convolution,
/// a note), then the blobs, each starting on a 64-byte boundary, the file padded to a multiple of 64.
public enum ModelFile {
    /// The first 8 bytes: `0x89 'Y' 'O' 'L' 'O' '\r' '\n' 0x1A` (a non-ASCII first byte and a
    /// CR LF pair catch text-mode transfers, as in PNG).
    @_spi(Engine) public static let magic: [UInt8] = [0x89, 0x59, 0x4F, 0x4C, 0x4F, 0x0D, 0x0A, 0x1A]
    /// Readers accept files of this major version and any minor version.
    @_spi(Engine) public static let majorVersion: UInt16 = 1
    /// Minor versions add only fields that older readers may skip (appended after the note) and enum
    /// codes that older readers reject cleanly (1.3: storage 2, deflated LUT codes; 1.4: storage 3, linear int8;
    /// 1.5: layer kind 7, the anchor-free head, and the letterbox fill value after the suppression).
    @_spi(Engine) public static let minorVersion: UInt16 = 6
    /// Bytes in the header.
    @_spi(Engine) public static let headerSize = 64
    /// Alignment of every blob and of the file length.
    @_spi(Engine) public static let alignment = 64
    /// Byte offset of the checksum field in the header.
    static let checksumOffset = 24

    /// File name extension.
    public static let fileExtension = "yolo"

    /// How a tensor's weights are stored.
    enum Storage: UInt8 {
        /// float32 weights, used in place from the mapping.
        case float32 = 0
        /// LUT codes, table and scales; the codes used in place from the mapping.
        case lut = 1
        /// (1.3) As `lut`, but the codes blob is a zlib stream of the same code bytes, inflated at load.
        case lutDeflated = 2
        /// (1.4) Linear int8: s8 weights, per-channel scales and the activations' quantization
        /// (`Int8ConvolutionParameters`), used in place from the mapping.
        case int8 = 3
    }

    // MARK: Checksum

    /// The file checksum: FNV-1a (64-bit) run over the file as little-endian 64-bit words in four
    /// interleaved lanes (word `i` goes to lane `i mod 4`; lane `l` starts from the FNV offset basis
    /// xor `l`), the four lane states then folded by one more FNV-1a pass. The header's checksum
    /// word counts as zero. Each step `h = (h ^ word) · prime` is a bijection of `h`, so any change
    /// confined to one word always changes the result; four lanes let the CPU overlap the multiplies
    /// (well under 1 ms for a 9 MB file). `bytes.count` must be a multiple of 8.
    @_spi(Engine) public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        precondition(bytes.count % 8 == 0, "ModelFile.checksum: length \(bytes.count) is not a multiple of 8")
        let prime: UInt64 = 0x0000_0100_0000_01B3
        let basis: UInt64 = 0xCBF2_9CE4_8422_2325
        var lanes = (basis, basis ^ 1, basis ^ 2, basis ^ 3)
        let words = bytes.count / 8
        let skip = checksumOffset / 8
        guard let base = bytes.baseAddress else { return basis }
        @inline(__always) func word(_ i: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
        }
        var i = 0
        while i + 4 <= words {
            lanes.0 = (lanes.0 ^ word(i)) &* prime
            lanes.1 = (lanes.1 ^ word(i + 1)) &* prime
            lanes.2 = (lanes.2 ^ word(i + 2)) &* prime
            lanes.3 = (lanes.3 ^ (i + 3 == skip ? 0 : word(i + 3))) &* prime
            i += 4
        }
        // The header's checksum word is word 3, always inside the first full group of a valid file.
        if i < words { lanes.0 = (lanes.0 ^ (i == skip ? 0 : word(i))) &* prime }
        if i + 1 < words { lanes.1 = (lanes.1 ^ (i + 1 == skip ? 0 : word(i + 1))) &* prime }
        if i + 2 < words { lanes.2 = (lanes.2 ^ (i + 2 == skip ? 0 : word(i + 2))) &* prime }
        var h = basis
        for lane in [lanes.0, lanes.1, lanes.2, lanes.3] { h = (h ^ lane) &* prime }
        return h
    }
}

/// How a loaded model keeps LUT-quantized weights in memory.
public enum WeightResidency: Sendable {
    /// Expand codes to float32 once at load: the model holds plain float convolutions (fastest).
    case expanded
    /// Keep only the codes; each layer expands its weights into workspace scratch, a block of
    /// output channels at a time, just before its matrix product (smallest resident memory).
    case codes
}
