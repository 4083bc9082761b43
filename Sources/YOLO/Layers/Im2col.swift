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
            if c + 1 < shape.channels && endRow > firstRow {
                // The next channel's rows, a line at a time, while this one is unfolded: each row is read from
                // L3 (the previous layer's output) in short runs the hardware prefetcher does not catch up with.
                let next = UnsafeRawPointer(input + (c + 1) * shape.height * shape.width + firstRow * shape.width)
                for offset in Swift.stride(from: 0, to: (endRow - firstRow) * shape.width * 4, by: 64) {
                    prefetch(next + offset)
                }
            }
            for ky in 0..<size {
                for kx in 0..<size {
                    unfoldRow(channel, height: shape.height - shift, width: shape.width, kx: kx, ky: ky,
                              stride: stride, padding: padding, outputHeight: outputRows, outputWidth: outputWidth,
                              into: columns + ((c * size + ky) * size + kx) * n, topValid: -shift)
                }
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
