import Testing
@_spi(Engine) @testable import YOLO

/// Camera-frame conversion against a plain per-pixel loop in Double (`SyntheticFrame.reference`).
///
/// Tolerance: every byte is within 0.5 + 0.001 of the real-valued result (clamped to 0...255), i.e. it is
/// the correctly rounded value except where that value lies within 0.001 of a rounding boundary, where
/// the 2⁻²² fixed-point coefficients may round to the other neighbour. RGBA and BGRA are exact.
@Suite struct PixelBufferConversionTests {
    static let colors: [(PixelBuffer.Matrix, PixelBuffer.ColorRange)] = [(.bt601, .video), (.bt601, .full), (.bt709, .video), (.bt709, .full)]

    @Test("Every format, matrix, range, chroma location and orientation matches the Double reference",
          arguments: PixelBuffer.Format.allCases)
    func matchesTheReference(format: PixelBuffer.Format) throws {
        var worst = 0.0, flipped = 0, samples = 0
        for (index, (matrix, range)) in Self.colors.enumerated() {
            for location in PixelBuffer.ChromaLocation.allCases {
                // Random samples, legal or not (video-range frames get values outside 16...235 too).
                let frame = SyntheticFrame(format: format, width: 10, height: 6, seed: UInt64(100 + index))
                let buffer = try frame.buffer(padding: 3, matrix: matrix, range: range, chromaLocation: location)
                for orientation in Image.Orientation.allCases {
                    let image = Image(pixelBuffer: buffer, orientation: orientation)
                    let swaps = orientation.rawValue >= 5
                    #expect((image.width, image.height) == (swaps ? (6, 10) : (10, 6)))
                    #expect(image.orientation == orientation.rawValue)
                    let pixels = image.pixels
                    // Every sample checked; one expectation per frame and orientation, naming the first sample off.
                    var off = 0, firstOff = ""
                    for y in 0..<image.height {
                        for x in 0..<image.width {
                            let (sx, sy) = ImageOrientation.sourcePoint(x, y, width: 10, height: 6, orientation: orientation.rawValue)
                            let expected = frame.reference(sx, sy, matrix: matrix, range: range, chromaLocation: location)
                            for c in 0..<3 {
                                let got = Double(pixels[(y * image.width + x) * 3 + c])
                                let error = abs(got - expected[c])
                                worst = max(worst, error)
                                if got != expected[c].rounded() { flipped += 1 }
                                samples += 1
                                if !(error <= 0.501) {
                                    if off == 0 { firstOff = "(\(x),\(y)) channel \(c): \(got) vs \(expected[c])" }
                                    off += 1
                                }
                            }
                        }
                    }
                    #expect(off == 0, "\(format) \(matrix) \(range) \(location) \(orientation): \(off) samples off, first \(firstOff)")
                }
            }
        }
        if !format.isYCbCr { #expect(worst == 0) }
        print("\(format): \(samples) samples, worst |byte − real value| \(worst), \(flipped) rounded to the other neighbour")
    }

    @Test("A 4:2:0 frame the size of a camera's matches the reference at every pixel", arguments: [PixelBuffer.Format.nv12, .i420])
    func largerFrame(format: PixelBuffer.Format) throws {
        let frame = SyntheticFrame(format: format, width: 64, height: 48, seed: 7, smooth: true)
        let buffer = try frame.buffer(padding: 16, matrix: .bt709, range: .full, chromaLocation: .center)
        let pixels = Image(pixelBuffer: buffer).pixels
        var off: [String] = []
        for y in 0..<48 {
            for x in 0..<64 {
                let expected = frame.reference(x, y, matrix: .bt709, range: .full, chromaLocation: .center)
                for c in 0..<3 where !(abs(Double(pixels[(y * 64 + x) * 3 + c]) - expected[c]) <= 0.501) {
                    off.append("(\(x),\(y)) channel \(c)")
                }
            }
        }
        #expect(off.isEmpty, "\(off.count) samples off: \(off.prefix(5))")
    }

    @Test("The pixel subscript converts one pixel as the whole-frame conversion does")
    func subscriptMatchesPixels() throws {
        let frame = SyntheticFrame(format: .yuyv, width: 8, height: 4, seed: 3)
        let image = Image(pixelBuffer: try frame.buffer(range: .full), orientation: .right)
        let fresh = Image(pixelBuffer: try frame.buffer(range: .full), orientation: .right)
        let pixels = image.pixels
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = fresh[x, y], i = (y * image.width + x) * 3
                #expect([p.r, p.g, p.b] == Array(pixels[i..<(i + 3)]))
            }
        }
    }

    @Test("A camera image is RGB once its pixels are set, and compares by its pixels")
    func mutationAndEquality() throws {
        let frame = SyntheticFrame(format: .nv12, width: 4, height: 2, seed: 9)
        let buffer = try frame.buffer()
        let image = Image(pixelBuffer: buffer)
        let rgb = Image(width: 4, height: 2, pixels: image.pixels)
        #expect(image == rgb)
        #expect(image == Image(pixelBuffer: buffer))
        var drawn = image
        drawn.fillRectangle(x: 0, y: 0, width: 1, height: 1, color: .init(r: 1, g: 2, b: 3))
        #expect(drawn[0, 0] == (1, 2, 3) && drawn.pixels[3...] == image.pixels[3...])
        #expect(image.pixels == rgb.pixels)
        #expect(image.description.contains("nv12"))
    }
}

/// The network input built from a camera frame (read from its planes inside the resampling) against the
/// input built from the same frame converted to RGB first: equal bit for bit, in every scaling and resampling, with a
/// region of interest, in every orientation, for colour and one-channel networks.
@Suite struct PixelBufferInputTests {
    @Test("makeInput reads a camera frame exactly as it reads the frame's RGB pixels",
          arguments: [PixelBuffer.Format.nv12, .i420, .uyvy, .bgra])
    func inputEqualsRGBInput(format: PixelBuffer.Format) throws {
        let frame = SyntheticFrame(format: format, width: 38, height: 26, seed: 21, smooth: true)
        let buffer = try frame.buffer(padding: 5, matrix: .bt709, range: .video)
        for orientation in Image.Orientation.allCases {
            let camera = Image(pixelBuffer: buffer, orientation: orientation)
            let rgb = Image(width: camera.width, height: camera.height, pixels: camera.pixels)
            for scaling in [DetectionOptions.Scaling.scaleFit, .scaleFill, .centerCrop] {
                for (roi, resampling) in [(Rect.unit, DetectionOptions.Resampling.darknet), (.unit, .openCV),
                                          (Rect(x: 0.1, y: 0.2, width: 0.7, height: 0.5), .darknet),
                                          (Rect(x: 0.1, y: 0.2, width: 0.7, height: 0.5), .openCV)] {
                    let crop = try Geometry.region(of: roi, width: camera.width, height: camera.height)
                    let plan = Geometry.plan(imageWidth: camera.width, imageHeight: camera.height, crop: crop, scaling: scaling,
                                             resampling: resampling, networkWidth: 32, networkHeight: 24)
                    for channels in [3, 1] {
                        var fromCamera = [Float](repeating: -1, count: channels * 32 * 24)
                        var fromRGB = [Float](repeating: -2, count: channels * 32 * 24)
                        // A fresh image each time, so the camera path cannot use the converted pixels.
                        Geometry.makeInput(Image(pixelBuffer: buffer, orientation: orientation), plan: plan, channels: channels,
                                           into: &fromCamera)
                        Geometry.makeInput(rgb, plan: plan, channels: channels, into: &fromRGB)
                        #expect(fromCamera == fromRGB, "\(format) \(orientation) \(scaling) \(resampling) \(roi) \(channels) channel(s)")
                    }
                }
            }
        }
    }
}

/// Malformed frames: each throws one `invalidArgument` naming what was wrong; none crashes.
@Suite struct PixelBufferValidationTests {
    /// The message thrown by `make`, or nil when it did not throw.
    func message(_ make: () throws -> PixelBuffer) -> String? {
        do {
            _ = try make()
            return nil
        } catch let YOLOError.invalidArgument(message) {
            return message
        } catch {
            return "unexpected \(error)"
        }
    }

    /// `byteCounts[i]` bytes for plane i with stride `strides[i]`.
    func buffer(_ format: PixelBuffer.Format, _ width: Int, _ height: Int, strides: [Int], byteCounts: [Int]) -> String? {
        let arrays = byteCounts.map { [UInt8](repeating: 128, count: $0) }
        return message {
            try withBuffers(arrays) { pointers in
                try PixelBuffer(copying: zip(pointers, strides).map { PixelBuffer.Plane($0, bytesPerRow: $1) },
                                width: width, height: height, format: format)
            }
        }
    }

    @Test("Sizes: zero, negative, odd for 4:2:0 and 4:2:2, too large to multiply")
    func sizes() {
        #expect(buffer(.nv12, 0, 4, strides: [4, 4], byteCounts: [16, 8])?.contains("size 0x4 is empty") == true)
        #expect(buffer(.bgra, 4, -2, strides: [16], byteCounts: [64])?.contains("size 4x-2 is empty") == true)
        #expect(buffer(.nv12, 5, 4, strides: [5, 5], byteCounts: [20, 10])?.contains("nv12 (4:2:0) needs an even width and height, got 5x4") == true)
        #expect(buffer(.i420, 4, 3, strides: [4, 2, 2], byteCounts: [12, 2, 2])?.contains("i420 (4:2:0) needs an even width and height") == true)
        #expect(buffer(.yuyv, 3, 3, strides: [6], byteCounts: [18])?.contains("yuyv (4:2:2) needs an even width, got 3") == true)
        #expect(buffer(.bgra, Int.max / 2, 4, strides: [16], byteCounts: [64])?.contains("is too large") == true)
        #expect(buffer(.rgba, 1 << 31, 1 << 31, strides: [16], byteCounts: [64])?.contains("is too large") == true)
    }

    @Test("Planes: wrong count, stride shorter than a row, buffer too small, overflowing stride")
    func planes() {
        #expect(buffer(.nv12, 4, 4, strides: [4], byteCounts: [16])?.contains("nv12 takes 2 plane(s) (Y, CbCr), got 1") == true)
        #expect(buffer(.nv12, 4, 4, strides: [4, 3], byteCounts: [16, 8])?
            .contains("nv12 plane 1 (CbCr): bytesPerRow 3 is less than its 4 bytes a row") == true)
        #expect(buffer(.uyvy, 4, 2, strides: [6], byteCounts: [16])?.contains("bytesPerRow 6 is less than its 8") == true)
        #expect(buffer(.i420, 4, 4, strides: [4, 2, 2], byteCounts: [16, 4, 3])?
            .contains("i420 plane 2 (Cr): 3 bytes, 2 rows of 2 bytes with bytesPerRow 2 need 4") == true)
        // The last row's padding may be missing: 2 rows of 16 bytes with stride 20 need 36, not 40.
        #expect(buffer(.bgra, 4, 2, strides: [20], byteCounts: [36]) == nil)
        #expect(buffer(.bgra, 4, 2, strides: [20], byteCounts: [35])?.contains("35 bytes") == true)
        #expect(buffer(.bgra, 4, 3, strides: [Int.max / 2], byteCounts: [64])?.contains("more than Int.max") == true)
        #expect(buffer(.bgra, 4, 2, strides: [-16], byteCounts: [64])?.contains("bytesPerRow -16") == true)
    }

    @Test("One contiguous buffer: too short, odd I420 stride, non-positive stride")
    func contiguous() {
        func single(_ format: PixelBuffer.Format, _ count: Int, bytesPerRow: Int, _ w: Int = 4, _ h: Int = 4) -> String? {
            message { try PixelBuffer(copying: [UInt8](repeating: 0, count: count), width: w, height: h, bytesPerRow: bytesPerRow,
                                      format: format) }
        }
        #expect(single(.nv12, 24, bytesPerRow: 4) == nil)
        #expect(single(.nv12, 23, bytesPerRow: 4)?.contains("23 bytes are too few for nv12") == true)
        #expect(single(.i420, 48, bytesPerRow: 5)?.contains("even bytesPerRow") == true)
        #expect(single(.yuyv, 32, bytesPerRow: 0)?.contains("must be positive") == true)
        #expect(single(.i420, 24, bytesPerRow: 4, 4, 0)?.contains("must be positive") == true)
        #expect(single(.bgra, 64, bytesPerRow: Int.max / 2)?.contains("too few") == true)
    }

    @Test("Orientation values outside EXIF's 1...8 throw")
    func orientation() throws {
        #expect(throws: YOLOError.self) { try Image.Orientation(exif: 0) }
        #expect(throws: YOLOError.self) { try Image.Orientation(exif: 9) }
        #expect(try Image.Orientation(exif: 6) == .right)
    }

    @Test("A wrapped frame's deallocator runs once, after the last image made from it is gone")
    func deallocatorRunsOnce() throws {
        let count = Locked(0)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 2 * 4, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 200)
        nonisolated(unsafe) let memory = bytes
        var image: Image? = nil
        do {
            let buffer = try PixelBuffer(unsafeNoCopy: [PixelBuffer.Plane(UnsafeRawBufferPointer(bytes), bytesPerRow: 16)],
                                         width: 4, height: 2, format: .bgra, deallocator: {
                                             count.withLock { $0 += 1 }
                                             memory.deallocate()
                                         })
            image = Image(pixelBuffer: buffer, orientation: .left)
        }
        #expect(count.withLock { $0 } == 0)
        let pixel = try #require(image)[0, 0]
        #expect(pixel == (200, 200, 200))
        image = nil
        #expect(count.withLock { $0 } == 1)
    }
}
