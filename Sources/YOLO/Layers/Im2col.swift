import YOLOPrefetch

/// The im2col unfolding that turns a convolution into one matrix product.
enum Im2col {
    /// Writes the `[C·size·size][outH·outW]` column matrix of `input` (CHW, `shape`) to `columns`.
    ///
    /// Row `(c·size + ky)·size + kx`, column `oy·outW + ox` holds input
    /// `(c, oy·stride + ky − padding, ox·stride + kx − padding)`, or 0 outside the image.
    static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
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
    static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
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
    static func unfold(_ input: UnsafePointer<Float>, shape: Shape, size: Int, stride: Int, padding: Int,
                              firstOutputRow: Int, outputRows: Int, outputWidth: Int,
                              into columns: UnsafeMutablePointer<Float>) {
        let n = outputRows * outputWidth
        // Shifting the input up by firstOutputRow·stride rows turns the band into a whole map.
        let shift = firstOutputRow * stride
        // The input rows the band reads, per channel: from the band's first tap row to its last.
        let firstRow = max(0, shift - padding)
        let endRow = min(shape.height, (firstOutputRow + outputRows - 1) * stride + size - padding)
        for c in 0..<shape.channels {
            let channel = input + c * shape.height * shape.width + shift * shape.width
            // The next channel's rows, a line at a time, a part before each tap row of this one: each row is
            // read from L3 (the previous layer's output) in short runs the hardware prefetcher does not catch up with.
            let next = UnsafeRawPointer(input + (c + 1) * shape.height * shape.width + firstRow * shape.width)
            let lines = c + 1 < shape.channels ? max(0, (endRow - firstRow) * shape.width * 4 + 63) / 64 : 0
            for ky in 0..<size {
                for line in (ky * lines / size) ..< ((ky + 1) * lines / size) { prefetch(next + line * 64) }
                let row = columns + (c * size + ky) * size * n
                if stride == 2 && size == 3 && padding == 1 {
                    // Taps kx = 0 and kx = 2 read the same odd input columns, one output column apart.
                    unfoldRow(channel, height: shape.height - shift, width: shape.width, kx: 1, ky: ky, stride: 2,
                              padding: 1, outputHeight: outputRows, outputWidth: outputWidth, into: row + n,
                              topValid: -shift)
                    unfoldOddPair(channel, height: shape.height - shift, width: shape.width, ky: ky,
                                  outputRows: outputRows, outputWidth: outputWidth, first: row, third: row + 2 * n,
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

    /// Rows kx = 0 and kx = 2 of tap row `ky` of a 3×3, stride-2, padding-1 unfolding (`unfoldRow` for
    /// those two taps): output column ox reads input column 2·ox + 1 for kx = 2 and 2·ox − 1 for kx = 0,
    /// so each gathered value is stored twice, at ox in `third` and at ox + 1 in `first` (whose column 0
    /// is the left padding). One gather instead of two: yolov4-tiny's layer 1 unfolds 288 rows per band.
    @inline(__always)
    static func unfoldOddPair(_ channel: UnsafePointer<Float>, height: Int, width: Int, ky: Int, outputRows: Int,
                              outputWidth: Int, first: UnsafeMutablePointer<Float>, third: UnsafeMutablePointer<Float>,
                              topValid: Int) {
        // Output columns whose input column 2·ox + 1 lies inside the row.
        let endX = min(outputWidth, width / 2)
        for oy in 0..<outputRows {
            let (a, b) = (first + oy * outputWidth, third + oy * outputWidth)
            let iy = oy * 2 + ky - 1
            guard iy >= topValid && iy < height else {
                a.update(repeating: 0, count: outputWidth)
                b.update(repeating: 0, count: outputWidth)
                continue
            }
            let source = channel + iy * width + 1
            a[0] = 0
            var ox = 0
            // 8 values are the even lanes of 16 inputs from column 2·ox + 1; the loads stay inside the row
            // and the stores into `a` inside its row (ox + 1 + 8 ≤ outputWidth).
            while ox + 9 <= endX && 2 * ox + 17 <= width {
                let run = UnsafeRawPointer(source + 2 * ox).loadUnaligned(as: SIMD16<Float>.self).evenHalf
                UnsafeMutableRawPointer(b + ox).storeBytes(of: run, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(a + ox + 1).storeBytes(of: run, as: SIMD8<Float>.self)
                ox += 8
            }
            while ox < endX {
                let value = source[2 * ox]
                b[ox] = value
                if ox + 1 < outputWidth { a[ox + 1] = value }
                ox += 1
            }
            if endX < outputWidth {
                (b + endX).update(repeating: 0, count: outputWidth - endX)
                (a + endX + 1).update(repeating: 0, count: outputWidth - endX - 1)
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
                // the loads stay inside the input row. A scalar gather here was most of layers 0 and 1
                // of yolov4-tiny outside the products.
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
