import YOLOPrefetch

/// The im2col unfolding that turns a convolution into one matrix product.
@_spi(Engine) public enum Im2col {
    /// Writes the `[C·size·size][outH·outW]` column matrix of `input` (CHW, `shape`) to `columns`.
    ///
    /// Row `(c·size + ky)·size + kx`, column `oy·outW + ox` holds input
    /// `(c, oy·stride + ky − padding, ox·stride + kx − padding)`, or 0 outside the image.
    public static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
                              outputHeight: Int, outputWidth: Int, into columns: UnsafeMutablePointer<Float>) {
        let (height, width) = (shape.height, shape.width)
        let plane = outputHeight * outputWidth
        for c in 0..<shape.channels {
            let channel = input + c * height * width
            for ky in 0..<size {
                for kx in 0..<size {
                    let row = columns + ((c * size + ky) * size + kx) * plane
                    unfoldRow(channel, height: height, width: width, kx: kx, ky: ky, stride: stride,
                              padding: padding, outputHeight: outputHeight, outputWidth: outputWidth, into: row)
                }
            }
        }
    }

    /// Writes only rows `rows` (of `C·size·size`) of the column matrix; lets workers share the unfolding.
    public static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
                              outputHeight: Int, outputWidth: Int, rows: Range<Int>,
                              into columns: UnsafeMutablePointer<Float>) {
        let plane = outputHeight * outputWidth
        let taps = size * size
        for r in rows {
            let (c, tap) = r.quotientAndRemainder(dividingBy: taps)
            unfoldRow(input + c * shape.height * shape.width, height: shape.height, width: shape.width,
                      kx: tap % size, ky: tap / size, stride: stride, padding: padding,
                      outputHeight: outputHeight, outputWidth: outputWidth, into: columns + r * plane)
        }
    }

    /// Writes the column matrix of output rows `firstOutputRow ..< firstOutputRow + outputRows` only:
    /// a `[C·size·size][outputRows·outputWidth]` band, for unfolding a large map piece by piece.
    ///
    /// `input` may hold only some rows of each channel (`ConvolutionPair`'s window): row `rowOrigin` of the map
    /// first, channels `planeStride` floats apart (default: the whole map, `shape.height · shape.width`). Only
    /// the rows the band's taps reach are read; rows outside the map count as padding, as always.
    public static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
                              firstOutputRow: Int, outputRows: Int, outputWidth: Int,
                              into columns: UnsafeMutablePointer<Float>, planeStride: Int? = nil, rowOrigin: Int = 0) {
        let planeStride = planeStride ?? shape.height * shape.width
        let n = outputRows * outputWidth
        // Shifting the input up by firstOutputRow·stride rows turns the band into a whole map.
        let shift = firstOutputRow * stride
        // The input rows the band reads, per channel: from the band's first tap row to its last.
        let firstRow = max(0, shift - padding)
        let endRow = min(shape.height, (firstOutputRow + outputRows - 1) * stride + size - padding)
        for c in 0..<shape.channels {
            let channel = input + c * planeStride + (shift - rowOrigin) * shape.width
            // The next channel's rows, a line at a time, a part before each tap row of this one: each row is
            // read from L3 (the previous layer's output) in short runs the hardware prefetcher does not catch up with.
            let next = UnsafeRawPointer(input + (c + 1) * planeStride + (firstRow - rowOrigin) * shape.width)
            let lines = c + 1 < shape.channels ? max(0, (endRow - firstRow) * shape.width * 4 + 63) / 64 : 0
            for ky in 0..<size {
                for line in (ky * lines / size) ..< ((ky + 1) * lines / size) { prefetch(next + line * 64) }
                let row = columns + (c * size + ky) * size * n
                if stride == 2 && size == 3 && padding == 1 {
                    unfoldStride2Taps(channel, height: shape.height - shift, width: shape.width, ky: ky,
                                      outputRows: outputRows, outputWidth: outputWidth, into: row, rowStride: n,
                                      topValid: -shift)
                    continue
                }
                for kx in 0..<size {
                    unfoldRow(channel, height: shape.height - shift, width: shape.width, kx: kx, ky: ky,
                              stride: stride, padding: padding, outputHeight: outputRows, outputWidth: outputWidth,
                              into: row + kx * n, topValid: -shift)
                }
            }
        }
    }

    /// The three rows kx = 0, 1, 2 of tap row `ky` of a 3×3, stride-2, padding-1 unfolding (`unfoldRow`
    /// for those taps; row kx at `rows + kx · rowStride`). Output column ox reads input columns 2·ox − 1,
    /// 2·ox and 2·ox + 1, so one load of 16 inputs from 2·ox gives 8 outputs of all three: its even lanes
    /// are kx = 1's, its odd lanes kx = 2's at ox and kx = 0's at ox + 1 (whose column 0 is the left
    /// padding). Each tap gathered on its own would take three loads of every input and a scalar tail on
    /// two of the three rows.
    @inline(__always)
    static func unfoldStride2Taps(_ channel: UnsafePointer<Float>, height: Int, width: Int, ky: Int, outputRows: Int,
                                  outputWidth: Int, into rows: UnsafeMutablePointer<Float>, rowStride: Int,
                                  topValid: Int) {
        for oy in 0..<outputRows {
            let first = rows + oy * outputWidth
            let (second, third) = (first + rowStride, first + 2 * rowStride)
            let iy = oy * 2 + ky - 1
            guard iy >= topValid && iy < height else {
                first.update(repeating: 0, count: outputWidth)
                second.update(repeating: 0, count: outputWidth)
                third.update(repeating: 0, count: outputWidth)
                continue
            }
            let source = channel + iy * width
            first[0] = 0
            var ox = 0
            while ox + 8 <= outputWidth && 2 * ox + 16 <= width {
                let run = UnsafeRawPointer(source + 2 * ox).loadUnaligned(as: SIMD16<Float>.self)
                let odd = run.oddHalf
                UnsafeMutableRawPointer(second + ox).storeBytes(of: run.evenHalf, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(third + ox).storeBytes(of: odd, as: SIMD8<Float>.self)
                if ox + 9 <= outputWidth {
                    UnsafeMutableRawPointer(first + ox + 1).storeBytes(of: odd, as: SIMD8<Float>.self)
                } else {
                    for lane in 0 ..< outputWidth - ox - 1 { first[ox + 1 + lane] = odd[lane] }
                }
                ox += 8
            }
            while ox < outputWidth {
                second[ox] = 2 * ox < width ? source[2 * ox] : 0
                let value = 2 * ox + 1 < width ? source[2 * ox + 1] : 0
                third[ox] = value
                if ox + 1 < outputWidth { first[ox + 1] = value }
                ox += 1
            }
        }
    }

    /// One row of the column matrix: every output position's tap (ky, kx) of one channel.
    /// Input rows below `topValid` count as padding (used when `channel` points into a band).
    @inline(__always)
    static func unfoldRow(_ channel: UnsafePointer<Float>, height: Int, width: Int, kx: Int, ky: Int, stride: Int,
                          padding: Int, outputHeight: Int, outputWidth: Int, into row: UnsafeMutablePointer<Float>,
                          topValid: Int = 0) {
        // Output columns whose input column ox·stride + kx − padding lies inside [0, width).
        let firstX = min(outputWidth, max(0, (padding - kx + stride - 1) / stride))
        let lastReach = width - 1 + padding - kx
        let endX = lastReach < 0 ? firstX : max(firstX, min(outputWidth, lastReach / stride + 1))
        for oy in 0..<outputHeight {
            let destination = row + oy * outputWidth
            let iy = oy * stride + ky - padding
            guard iy >= topValid && iy < height else {
                destination.update(repeating: 0, count: outputWidth)
                continue
            }
            let source = channel + iy * width
            if firstX > 0 { destination.update(repeating: 0, count: firstX) }
            if stride == 1 {
                (destination + firstX).update(from: source + firstX + kx - padding, count: endX - firstX)
            } else if stride == 2 {
                // 8 outputs are the even lanes of 16 consecutive inputs (two shuffles per 8 on SSE);
                // the loads stay inside the input row. A scalar gather here would cost more than the
                // rest of the unfolding.
                var ox = firstX
                var ix = firstX * 2 + kx - padding
                while ox + 8 <= endX && ix + 16 <= width {
                    let run = UnsafeRawPointer(source + ix).loadUnaligned(as: SIMD16<Float>.self)
                    UnsafeMutableRawPointer(destination + ox).storeBytes(of: run.evenHalf, as: SIMD8<Float>.self)
                    ox += 8
                    ix += 16
                }
                while ox < endX {
                    destination[ox] = source[ix]
                    ox += 1
                    ix += 2
                }
            } else {
                var ix = firstX * stride + kx - padding
                for ox in firstX..<endX {
                    destination[ox] = source[ix]
                    ix += stride
                }
            }
            if endX < outputWidth { (destination + endX).update(repeating: 0, count: outputWidth - endX) }
        }
    }
}
