/// im2col on u8 activations (`Int8Convolution`): the same column matrix as `Im2col.unfold`, one byte per
/// value, cells outside the image holding `pad` (the input's zero point, so padding stands for 0.0).
extension Im2col {
    /// Writes rows `rows` (of `C·size²`) of the byte column matrix of `input` (CHW bytes, `shape`) for output rows
    /// `outputRows` (of an `outputWidth`-wide map): `[C·size·size][outputRows.count · outputWidth]`, row `r` at
    /// `columns + r · outputRows.count · outputWidth`.
    static func unfoldBytes(_ input: UnsafePointer<UInt8>, shape: Shape, size: Int, stride: Int, padding: Int, pad: UInt8,
                            outputRows: Range<Int>, outputWidth: Int, rows: Range<Int>, into columns: UnsafeMutablePointer<UInt8>) {
        let plane = outputRows.count * outputWidth
        let taps = size * size
        let (height, width) = (shape.height, shape.width)
        for r in rows {
            let (c, tap) = r.quotientAndRemainder(dividingBy: taps)
            let (ky, kx) = tap.quotientAndRemainder(dividingBy: size)
            let channel = input + c * height * width
            let row = columns + r * plane
            // Output columns whose input column ox·stride + kx − padding lies inside [0, width).
            let firstX = min(outputWidth, max(0, (padding - kx + stride - 1) / stride))
            let lastReach = width - 1 + padding - kx
            let endX = lastReach < 0 ? firstX : max(firstX, min(outputWidth, lastReach / stride + 1))
            for oy in outputRows {
                let destination = row + (oy - outputRows.lowerBound) * outputWidth
                let iy = oy * stride + ky - padding
                guard iy >= 0 && iy < height else {
                    destination.update(repeating: pad, count: outputWidth)
                    continue
                }
                let source = channel + iy * width
                if firstX > 0 { destination.update(repeating: pad, count: firstX) }
                if stride == 1 {
                    (destination + firstX).update(from: source + firstX + kx - padding, count: endX - firstX)
                } else {
                    var ix = firstX * stride + kx - padding
                    var ox = firstX
                    if stride == 2 {
                        // 16 outputs from 32 input bytes read as 16 little-endian u16: the even bytes are their low
                        // bytes, and the truncation to u8 keeps them (a mask and a pack). Reads stay in the row.
                        while ox + 16 <= endX && ix + 32 <= width {
                            let pairs = UnsafeRawPointer(source + ix).loadUnaligned(as: SIMD16<UInt16>.self)
                            UnsafeMutableRawPointer(destination + ox).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: pairs),
                                                                                 as: SIMD16<UInt8>.self)
                            ox += 16
                            ix += 32
                        }
                    }
                    for ox in ox..<endX {
                        destination[ox] = source[ix]
                        ix += stride
                    }
                }
                if endX < outputWidth { (destination + endX).update(repeating: pad, count: outputWidth - endX) }
            }
        }
    }
}
