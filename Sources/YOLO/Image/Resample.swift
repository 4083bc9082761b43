/// Resampling a region of an image for a network input. Both kernels are separable bilinear and read
/// pixels only through a `RowSource`, and only the source rows and columns their taps touch, so a
/// camera frame is converted where it is sampled and never as a whole.
///
/// - `darknet`: darknet's `resize_image`, corner-aligned (`scale = (in − 1)/(out − 1)`), horizontal
///   pass first, all arithmetic in float32 on `v / 255`. The last output column copies the last input
///   column and the last output row gets only the `(1 − dy)` term — darknet's quirks, kept so that
///   `.scaleFit` is pixel-for-pixel what `darknet detect` feeds the network.
/// - `openCVLinear`: OpenCV's `cv::resize(..., INTER_LINEAR)` on 8-bit pixels, bit for bit (see
///   `Image.resizedOpenCVLinear`): centre-aligned, 11-bit fixed-point weights, result rounded to 8 bits,
///   then divided by 255 — what `cv2.dnn.blobFromImage` feeds a network.
enum ResampleKernel: Sendable {
    case darknet
    case openCVLinear
}

/// Where resampled values go: `channels` planes of `planeWidth × planeHeight` floats, the resampled
/// image's top-left corner at (`x`, `y`) of each plane.
struct PlanarTarget {
    let base: UnsafeMutablePointer<Float>
    let planeWidth: Int
    let planeHeight: Int
    let x: Int
    let y: Int
    let channels: Int

    /// The first value of resampled row `r` in plane `k`.
    func row(_ k: Int, _ r: Int) -> UnsafeMutablePointer<Float> { base + (k * planeHeight + y + r) * planeWidth + x }
}

enum Resample {
    /// `v / 255` for every byte value, as float32 (the same division the kernels would do per pixel).
    static let unitFloats: [Float] = (0..<256).map { Float($0) / 255 }

    /// darknet's `resize_image` of `region` of `source` to `outW × outH`, written to `target`.
    /// `gray`: each pixel turned to its luma first (`replaceWithLuma`), as for a one-channel network.
    static func darknet(_ source: any RowSource, region: PixelRegion, width outW: Int, height outH: Int, gray: Bool,
                        into target: PlanarTarget) {
        precondition(outW > 0 && outH > 0, "Resample.darknet: empty target")
        let (w, h, channels) = (region.width, region.height, target.channels)
        // A one-pixel target has no scale (darknet divides by zero there); it takes the first row / last column.
        let wScale = outW > 1 ? Float(w - 1) / Float(outW - 1) : 0
        let hScale = outH > 1 ? Float(h - 1) / Float(outH - 1) : 0
        // Horizontal taps: columns ix (first outW entries) and ix + 1 (next outW), weight dx. The last
        // output column copies the last input column: both taps there, dx = 0, gives it exactly.
        var columns = [Int](repeating: 0, count: 2 * outW)
        var dxs = [Float](repeating: 0, count: outW)
        for c in 0..<outW {
            if c == outW - 1 || w == 1 {
                (columns[c], columns[outW + c]) = (region.x + w - 1, region.x + w - 1)
            } else {
                let sx = Float(c) * wScale
                let ix = Int(sx)
                dxs[c] = sx - Float(ix)
                (columns[c], columns[outW + c]) = (region.x + ix, region.x + min(ix + 1, w - 1))
            }
        }
        let taps = TapPixels(source, columns: columns, gray: gray)
        let rows = RowPair<Float>(length: channels * outW)
        unitFloats.withUnsafeBufferPointer { unit in
            dxs.withUnsafeBufferPointer { dxs in
                // The horizontal pass of source row `sr`, planar: channel k at [k · outW ..< (k + 1) · outW].
                func horizontal(_ sr: Int, _ part: UnsafeMutablePointer<Float>) {
                    let bytes = taps.read(row: region.y + sr)
                    for k in 0..<channels {
                        for c in 0..<outW {
                            let dx = dxs[c]
                            part[k * outW + c] = (1 - dx) * unit[Int(bytes[3 * c + k])] + dx * unit[Int(bytes[3 * (outW + c) + k])]
                        }
                    }
                }
                for r in 0..<outH {
                    let sy = Float(r) * hScale
                    let iy = Int(sy)
                    let dy = sy - Float(iy)
                    let upper = rows.row(iy, computing: horizontal)
                    let onlyUpper = r == outH - 1 || h == 1
                    let lower = onlyUpper ? upper : rows.row(min(iy + 1, h - 1), computing: horizontal)
                    for k in 0..<channels {
                        let out = target.row(k, r)
                        for c in 0..<outW {
                            out[c] = (1 - dy) * upper[k * outW + c]
                            if !onlyUpper { out[c] += dy * lower[k * outW + c] }
                        }
                    }
                }
            }
        }
    }

    /// OpenCV's `INTER_LINEAR` resize of `region` of `source` to `outW × outH` 8-bit RGB; `emit` gets each
    /// output row (`3 · outW` bytes) in order. `gray` as in `darknet`.
    static func openCVLinear(_ source: any RowSource, region: PixelRegion, width outW: Int, height outH: Int, gray: Bool,
                             emit: (_ row: Int, _ rgb: UnsafePointer<UInt8>) -> Void) {
        precondition(outW > 0 && outH > 0, "Resample.openCVLinear: empty target")
        let xs = Image.openCVTaps(input: region.width, output: outW, clampBothEnds: true)
        let ys = Image.openCVTaps(input: region.height, output: outH, clampBothEnds: false)
        var columns = [Int](repeating: 0, count: 2 * outW)
        for (x, tap) in xs.enumerated() {
            (columns[x], columns[outW + x]) = (region.x + tap.index, region.x + min(tap.index + 1, region.width - 1))
        }
        let taps = TapPixels(source, columns: columns, gray: gray)
        var result = [UInt8](repeating: 0, count: 3 * outW)
        let rows = RowPair<Int32>(length: 3 * outW)
        // The horizontal pass of source row `sr` as integer sums (weights sum to 2048), interleaved RGB.
        func horizontal(_ sr: Int, _ sums: UnsafeMutablePointer<Int32>) {
            let bytes = taps.read(row: region.y + sr)
            for x in 0..<outW {
                let tap = xs[x]
                for c in 0..<3 {
                    sums[3 * x + c] = Int32(bytes[3 * x + c]) * tap.w0 + Int32(bytes[3 * (outW + x) + c]) * tap.w1
                }
            }
        }
        result.withUnsafeMutableBufferPointer { out in
            for y in 0..<outH {
                let tap = ys[y]
                let s0 = rows.row(min(max(tap.index, 0), region.height - 1), computing: horizontal)
                let s1 = rows.row(min(max(tap.index + 1, 0), region.height - 1), computing: horizontal)
                let (b0, b1) = (tap.w0, tap.w1)
                for i in 0..<(3 * outW) {
                    let v = ((b0 * (s0[i] >> 4)) >> 16) + ((b1 * (s1[i] >> 4)) >> 16) + 2
                    out[i] = UInt8(clamping: v >> 2)
                }
                emit(y, out.baseAddress!)
            }
        }
    }
}

/// The source pixels a horizontal pass reads from one row: the RGB at each output column's two tap
/// columns (every first tap, then every second tap), turned to luma first for a one-channel network.
private final class TapPixels {
    private let source: any RowSource
    private let columns: [Int]
    private let gray: Bool
    private let bytes: UnsafeMutablePointer<UInt8>

    init(_ source: any RowSource, columns: [Int], gray: Bool) {
        self.source = source
        self.columns = columns
        self.gray = gray
        bytes = .allocate(capacity: 3 * columns.count)
    }

    deinit { bytes.deallocate() }

    /// The tap pixels of upright row `y`, `3 · columns.count` bytes, valid until the next call.
    func read(row y: Int) -> UnsafePointer<UInt8> {
        columns.withUnsafeBufferPointer { source.gather(row: y, columns: $0, into: bytes) }
        if gray { replaceWithLuma(bytes, count: columns.count) }
        return UnsafePointer(bytes)
    }
}

/// The last two horizontally resampled source rows a vertical pass asked for. The passes ask for rows
/// in non-decreasing order, two at a time, so two slots hold every row that is asked for again.
private final class RowPair<Value> {
    private var indices = (-1, -1)
    private let slots: (UnsafeMutablePointer<Value>, UnsafeMutablePointer<Value>)

    init(length: Int) {
        slots = (.allocate(capacity: length), .allocate(capacity: length))
    }

    deinit {
        slots.0.deallocate()
        slots.1.deallocate()
    }

    /// Row `index`, made by `compute` when neither slot holds it (replacing the lower-numbered row).
    func row(_ index: Int, computing compute: (Int, UnsafeMutablePointer<Value>) -> Void) -> UnsafeMutablePointer<Value> {
        if indices.0 == index { return slots.0 }
        if indices.1 == index { return slots.1 }
        if indices.0 <= indices.1 {
            compute(index, slots.0)
            indices.0 = index
            return slots.0
        }
        compute(index, slots.1)
        indices.1 = index
        return slots.1
    }
}
