/// Upright RGB pixels of an image, read a row at a time at chosen columns: the resampling kernels'
/// only access to pixels, whatever holds them (RGB bytes, a camera's Y'CbCr or BGRA planes, any
/// orientation), so a camera frame is converted only where the kernels sample it.
protocol RowSource {
    /// Upright width in pixels.
    var width: Int { get }
    /// Upright height in pixels.
    var height: Int { get }
    /// Writes the R, G, B of upright pixel (`columns[i]`, `y`) to `out[3 i ..< 3 i + 3]`.
    /// - Precondition: `y` in `0..<height`, every column in `0..<width`.
    func gather(row y: Int, columns: UnsafeBufferPointer<Int>, into out: UnsafeMutablePointer<UInt8>)
}

/// Reads one stored pixel as RGB.
protocol PixelSampler {
    /// R, G, B of stored pixel (x, y).
    func rgb(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8)
    /// Writes the R, G, B of stored pixels (`x0 + dx · columns[i]`, `y`) to `out[3 i ..< 3 i + 3]`: one
    /// stored row, so a sampler can work out what depends only on the row once.
    func gatherRow(_ y: Int, x0: Int, dx: Int, columns: UnsafeBufferPointer<Int>, into out: UnsafeMutablePointer<UInt8>)
}

extension PixelSampler {
    @inline(__always)
    func gatherRow(_ y: Int, x0: Int, dx: Int, columns: UnsafeBufferPointer<Int>, into out: UnsafeMutablePointer<UInt8>) {
        var target = out
        for x in columns {
            let (r, g, b) = rgb(x0 + dx * x, y)
            target[0] = r
            target[1] = g
            target[2] = b
            target += 3
        }
    }
}

/// A stored grid of `storedWidth × storedHeight` pixels seen upright through an EXIF orientation
/// (1...8, see `ImageOrientation`); 5...8 swap width and height.
struct OrientedRows<Sampler: PixelSampler>: RowSource {
    let sampler: Sampler
    let storedWidth: Int
    let storedHeight: Int
    let orientation: Int

    var width: Int { ImageOrientation.swapsAxes(orientation) ? storedHeight : storedWidth }
    var height: Int { ImageOrientation.swapsAxes(orientation) ? storedWidth : storedHeight }

    func gather(row y: Int, columns: UnsafeBufferPointer<Int>, into out: UnsafeMutablePointer<UInt8>) {
        // Along an upright row the stored point moves along a stored row (1–4) or column (5–8):
        // stored = (x0 + dx · column, y0 + dy · column); `ImageOrientation.sourcePoint` per pixel.
        let (w, h) = (storedWidth, storedHeight)
        let (x0, dx, y0, dy): (Int, Int, Int, Int)
        switch orientation {
        case 2: (x0, dx, y0, dy) = (w - 1, -1, y, 0)
        case 3: (x0, dx, y0, dy) = (w - 1, -1, h - 1 - y, 0)
        case 4: (x0, dx, y0, dy) = (0, 1, h - 1 - y, 0)
        case 5: (x0, dx, y0, dy) = (y, 0, 0, 1)
        case 6: (x0, dx, y0, dy) = (y, 0, h - 1, -1)
        case 7: (x0, dx, y0, dy) = (w - 1 - y, 0, h - 1, -1)
        case 8: (x0, dx, y0, dy) = (w - 1 - y, 0, 0, 1)
        default: (x0, dx, y0, dy) = (0, 1, y, 0)
        }
        if dy == 0 { return sampler.gatherRow(y0, x0: x0, dx: dx, columns: columns, into: out) }
        var target = out
        for x in columns {
            let (r, g, b) = sampler.rgb(x0 + dx * x, y0 + dy * x)
            target[0] = r
            target[1] = g
            target[2] = b
            target += 3
        }
    }
}

/// Interleaved 8-bit pixels with R, G, B at fixed offsets (RGB, RGBA, BGRA), rows `bytesPerRow` apart.
struct PackedRGBSampler: PixelSampler {
    let base: UnsafePointer<UInt8>
    let bytesPerRow: Int
    let bytesPerPixel: Int
    let offsets: (r: Int, g: Int, b: Int)

    @inline(__always)
    func rgb(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let p = base + y * bytesPerRow + x * bytesPerPixel
        return (p[offsets.r], p[offsets.g], p[offsets.b])
    }
}

/// Y'CbCr planes of any of the ``PixelBuffer`` layouts (4:2:0 bi-planar or planar, 4:2:2 packed):
/// luma sample (x, y) at `luma[y · lumaStride + x · lumaStep]`, chroma sample (i, j) at
/// `cb[j · cbStride + i · chromaStep]` (and `cr`), chroma bilinearly interpolated through the taps.
struct YCbCrSampler: PixelSampler {
    let luma: UnsafePointer<UInt8>
    let lumaStride: Int
    let lumaStep: Int
    let cb: UnsafePointer<UInt8>
    let cbStride: Int
    let cr: UnsafePointer<UInt8>
    let crStride: Int
    /// One tap per stored column (indices times the chroma step) and per stored row (chroma row indices).
    let columnTaps: UnsafePointer<ChromaTap>
    let rowTaps: UnsafePointer<ChromaTap>
    let conversion: YCbCrToRGB

    @inline(__always)
    func rgb(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let h = columnTaps[x], v = rowTaps[y]
        @inline(__always) func interpolate(_ plane: UnsafePointer<UInt8>, _ stride: Int) -> Int {
            let upper = plane + v.first * stride, lower = plane + v.second * stride
            let top = h.firstWeight * Int(upper[h.first]) + h.secondWeight * Int(upper[h.second])
            let bottom = h.firstWeight * Int(lower[h.first]) + h.secondWeight * Int(lower[h.second])
            return v.firstWeight * top + v.secondWeight * bottom
        }
        return conversion.rgb(y: Int(luma[y * lumaStride + x * lumaStep]), cb16: interpolate(cb, cbStride),
                              cr16: interpolate(cr, crStride))
    }

    /// `rgb` along one stored row, the row's plane pointers and vertical chroma weights worked out once.
    func gatherRow(_ y: Int, x0: Int, dx: Int, columns: UnsafeBufferPointer<Int>, into out: UnsafeMutablePointer<UInt8>) {
        let v = rowTaps[y]
        let lumaRow = luma + y * lumaStride
        let (cb0, cb1) = (cb + v.first * cbStride, cb + v.second * cbStride)
        let (cr0, cr1) = (cr + v.first * crStride, cr + v.second * crStride)
        let (w0, w1) = (v.firstWeight, v.secondWeight)
        var target = out
        for column in columns {
            let x = x0 + dx * column
            let h = columnTaps[x]
            let cb16 = w0 * (h.firstWeight * Int(cb0[h.first]) + h.secondWeight * Int(cb0[h.second]))
                + w1 * (h.firstWeight * Int(cb1[h.first]) + h.secondWeight * Int(cb1[h.second]))
            let cr16 = w0 * (h.firstWeight * Int(cr0[h.first]) + h.secondWeight * Int(cr0[h.second]))
                + w1 * (h.firstWeight * Int(cr1[h.first]) + h.secondWeight * Int(cr1[h.second]))
            let (r, g, b) = conversion.rgb(y: Int(lumaRow[x * lumaStep]), cb16: cb16, cr16: cr16)
            target[0] = r
            target[1] = g
            target[2] = b
            target += 3
        }
    }
}

extension RowSource {
    /// Every pixel, upright, as RGB bytes (`width · height · 3`).
    func allPixels() -> [UInt8] {
        let (w, h) = (width, height)
        let columns = Array(0..<w)
        return [UInt8](unsafeUninitializedCapacity: w * h * 3) { out, count in
            columns.withUnsafeBufferPointer { xs in
                for y in 0..<h { gather(row: y, columns: xs, into: out.baseAddress! + y * w * 3) }
            }
            count = w * h * 3
        }
    }
}

/// Turns `count` gathered RGB pixels into gray in place, each `(77 R + 150 G + 29 B) >> 8` (stb_image's
/// integer luma, which darknet uses to load images for one-channel networks) in all three channels.
/// The weights sum to 256, so gray pixels stay as they are.
func replaceWithLuma(_ pixels: UnsafeMutablePointer<UInt8>, count: Int) {
    for i in stride(from: 0, to: 3 * count, by: 3) {
        let sum = 77 * Int(pixels[i]) + 150 * Int(pixels[i + 1]) + 29 * Int(pixels[i + 2])
        let y = UInt8(truncatingIfNeeded: sum >> 8)
        pixels[i] = y
        pixels[i + 1] = y
        pixels[i + 2] = y
    }
}
