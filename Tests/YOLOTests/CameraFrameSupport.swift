import Foundation
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// A camera frame held as its logical samples (independent of any layout), packed into a
/// `PixelBuffer`'s planes with padding, and converted by a plain per-pixel loop in Double: the
/// reference the conversion tests compare the fixed-point samplers against.
struct SyntheticFrame {
    let format: PixelBuffer.Format
    let width: Int
    let height: Int
    /// Y (or R, G, B, A for the RGB formats: 4 values a pixel), row-major.
    var luma: [UInt8]
    /// Cb and Cr at chroma resolution (`chromaWidth × chromaHeight`), row-major; empty for RGB formats.
    var cb: [UInt8]
    var cr: [UInt8]

    var chromaWidth: Int { width / 2 }
    var chromaHeight: Int { [.nv12, .nv21, .i420].contains(format) ? height / 2 : height }

    /// Random samples from `seed`; `smooth` makes chroma vary slowly, as in photos.
    init(format: PixelBuffer.Format, width: Int, height: Int, seed: UInt64, smooth: Bool = false) {
        var random = SeededRandom(seed: seed)
        func byte() -> UInt8 { UInt8(truncatingIfNeeded: random.next() >> 56) }
        self.format = format
        self.width = width
        self.height = height
        if format.isYCbCr {
            luma = (0..<(width * height)).map { _ in byte() }
            let n = (width / 2) * ([.nv12, .nv21, .i420].contains(format) ? height / 2 : height)
            let base = (byte(), byte())
            cb = (0..<n).map { _ in smooth ? base.0 &+ byte() / 16 : byte() }
            cr = (0..<n).map { _ in smooth ? base.1 &+ byte() / 16 : byte() }
        } else {
            luma = (0..<(width * height * 4)).map { _ in byte() }
            cb = []
            cr = []
        }
    }

    /// The frame's planes in `format`'s layout, each row followed by `padding` junk bytes (0xEE).
    func planes(padding: Int) -> [[UInt8]] {
        func plane(rows: Int, rowBytes: Int, _ byte: (Int, Int) -> UInt8) -> [UInt8] {
            var out: [UInt8] = []
            for y in 0..<rows {
                for i in 0..<rowBytes { out.append(byte(i, y)) }
                out += [UInt8](repeating: 0xEE, count: padding)
            }
            return out
        }
        let (w, cw, ch) = (width, chromaWidth, chromaHeight)
        switch format {
        case .nv12, .nv21:
            let first = format == .nv12 ? cb : cr, second = format == .nv12 ? cr : cb
            return [plane(rows: height, rowBytes: w) { luma[$1 * w + $0] },
                    plane(rows: ch, rowBytes: w) { i, y in (i % 2 == 0 ? first : second)[y * cw + i / 2] }]
        case .i420:
            return [plane(rows: height, rowBytes: w) { luma[$1 * w + $0] },
                    plane(rows: ch, rowBytes: cw) { cb[$1 * cw + $0] }, plane(rows: ch, rowBytes: cw) { cr[$1 * cw + $0] }]
        case .yuyv, .uyvy:
            return [plane(rows: height, rowBytes: 2 * w) { i, y in
                let pair = i / 4, k = i % 4
                let order = format == .yuyv ? [0, 1, 2, 3] : [1, 0, 3, 2]  // which of Y0 Cb Y1 Cr sits at byte k
                switch order[k] {
                case 0: return luma[y * w + 2 * pair]
                case 1: return cb[y * cw + pair]
                case 2: return luma[y * w + 2 * pair + 1]
                default: return cr[y * cw + pair]
                }
            }]
        case .bgra, .rgba:
            return [plane(rows: height, rowBytes: 4 * w) { i, y in
                let (x, k) = (i / 4, i % 4)
                let channel = format == .rgba ? k : [2, 1, 0, 3][k]
                return luma[(y * w + x) * 4 + channel]
            }]
        }
    }

    /// The frame as a copied `PixelBuffer` with `padding` bytes after each row.
    func buffer(padding: Int = 0, matrix: PixelBuffer.Matrix = .bt601, range: PixelBuffer.ColorRange = .video,
                chromaLocation: PixelBuffer.ChromaLocation = .left) throws -> PixelBuffer {
        let planes = self.planes(padding: padding)
        let strides = planes.enumerated().map { index, bytes in bytes.count / PixelLayout.shapes(
            width: width, height: height, format: format)[index].rows }
        return try withBuffers(planes) { pointers in
            try PixelBuffer(copying: zip(pointers, strides).map { PixelBuffer.Plane($0, bytesPerRow: $1) }, width: width,
                            height: height, format: format, matrix: matrix, range: range, chromaLocation: chromaLocation)
        }
    }

    /// The real-valued R, G, B (clamped to 0...255, not rounded) of stored pixel (x, y): the textbook
    /// formulas, chroma placed by `chromaLocation` and interpolated linearly, edge samples repeated.
    func reference(_ x: Int, _ y: Int, matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange,
                   chromaLocation: PixelBuffer.ChromaLocation) -> [Double] {
        if !format.isYCbCr {
            return (0..<3).map { Double(luma[(y * width + x) * 4 + $0]) }
        }
        // Chroma sample i sits at luma position 2 i + offset on a subsampled axis.
        let hOffset = chromaLocation == .center ? 0.5 : 0
        let vOffset = chromaLocation == .topLeft ? 0 : 0.5
        let subsampledRows = chromaHeight != height
        func taps(_ p: Int, offset: Double, count: Int, subsampled: Bool) -> [(Int, Double)] {
            guard subsampled else { return [(p, 1)] }
            let q = (Double(p) - offset) / 2
            let i = q.rounded(.down), f = q - i
            return [(min(max(Int(i), 0), count - 1), 1 - f), (min(max(Int(i) + 1, 0), count - 1), f)]
        }
        func chroma(_ plane: [UInt8]) -> Double {
            var sum = 0.0
            for (j, wy) in taps(y, offset: vOffset, count: chromaHeight, subsampled: subsampledRows) {
                for (i, wx) in taps(x, offset: hOffset, count: chromaWidth, subsampled: true) {
                    sum += wy * wx * Double(plane[j * chromaWidth + i])
                }
            }
            return sum
        }
        let (kr, kb) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
        let kg = 1 - kr - kb
        let video = range == .video
        let l = video ? (Double(luma[y * width + x]) - 16) * 255 / 219 : Double(luma[y * width + x])
        let u = (chroma(cb) - 128) * (video ? 255.0 / 224 : 1)
        let v = (chroma(cr) - 128) * (video ? 255.0 / 224 : 1)
        let rgb = [l + 2 * (1 - kr) * v, l - 2 * kb * (1 - kb) / kg * u - 2 * kr * (1 - kr) / kg * v, l + 2 * (1 - kb) * u]
        return rgb.map { min(max($0, 0), 255) }
    }
}

/// Runs `body` with raw pointers to each array's bytes.
func withBuffers<R>(_ arrays: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
    func nest(_ index: Int, _ done: [UnsafeRawBufferPointer]) throws -> R {
        guard index < arrays.count else { return try body(done) }
        return try arrays[index].withUnsafeBytes { try nest(index + 1, done + [$0]) }
    }
    return try nest(0, [])
}
