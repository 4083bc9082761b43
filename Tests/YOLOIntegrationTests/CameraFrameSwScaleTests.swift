import CSwScale
import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// FFmpeg's swscale as the independent reference for camera frames: it makes each format's planes
/// from a photo's RGB, and converts them back to RGB for comparison.
final class SwScaleFrame: @unchecked Sendable {
    let format: PixelBuffer.Format?
    let width: Int
    let height: Int
    /// Each plane's bytes (64-byte aligned rows, `strides` apart) and rows.
    let planes: [UnsafeMutablePointer<UInt8>]
    let strides: [Int]
    let rows: [Int]

    /// The planes of a `width × height` frame in `format`, rows padded to a multiple of 64 bytes plus
    /// 64 (so every stride is wider than its row), uninitialized.
    /// `format` nil: three full-size planes (`YUV444P`).
    init(format: PixelBuffer.Format?, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
        let shapes: [(rowBytes: Int, rows: Int)]
        switch format {
        case nil: shapes = [(width, height), (width, height), (width, height)]
        case .nv12, .nv21: shapes = [(width, height), (width, height / 2)]
        case .i420: shapes = [(width, height), (width / 2, height / 2), (width / 2, height / 2)]
        case .yuyv, .uyvy: shapes = [(2 * width, height)]
        case .bgra, .rgba: shapes = [(4 * width, height)]
        }
        strides = shapes.map { ($0.rowBytes + 63) / 64 * 64 + 64 }
        rows = shapes.map(\.rows)
        planes = zip(strides, rows).map { stride, rows in
            let p = UnsafeMutableRawPointer.allocate(byteCount: stride * rows, alignment: 64)
            p.initializeMemory(as: UInt8.self, repeating: 0xEE, count: stride * rows)
            return p.assumingMemoryBound(to: UInt8.self)
        }
    }

    deinit { planes.forEach { $0.deallocate() } }

    /// swscale's name for `format`.
    static func avFormat(_ format: PixelBuffer.Format?) -> AVPixelFormat {
        switch format {
        case nil: AV_PIX_FMT_YUV444P
        case .nv12: AV_PIX_FMT_NV12
        case .nv21: AV_PIX_FMT_NV21
        case .i420: AV_PIX_FMT_YUV420P
        case .yuyv: AV_PIX_FMT_YUYV422
        case .uyvy: AV_PIX_FMT_UYVY422
        case .bgra: AV_PIX_FMT_BGRA
        case .rgba: AV_PIX_FMT_RGBA
        }
    }

    /// A context from `source` to `target` (same size) with the Y'CbCr side's matrix and range set;
    /// bilinear chroma, accurate rounding and full horizontal chroma interpolation, as YOLOVideo uses.
    static func context(_ source: AVPixelFormat, _ target: AVPixelFormat, width: Int, height: Int,
                        matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange, sourceIsYCbCr: Bool) -> OpaquePointer {
        let context = sws_getContext(Int32(width), Int32(height), source, Int32(width), Int32(height), target,
                                     SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_BITEXACT, nil, nil, nil)!
        let coefficients = sws_getCoefficients(matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601)
        let yuvRange: Int32 = range == .full ? 1 : 0
        _ = sws_setColorspaceDetails(context, coefficients, sourceIsYCbCr ? yuvRange : 1, coefficients,
                                     sourceIsYCbCr ? 1 : yuvRange, 0, 1 << 16, 1 << 16)
        return context
    }

    /// `rgb` (`width × height` RGB24) converted by swscale to `format`.
    static func from(rgb: [UInt8], width: Int, height: Int, format: PixelBuffer.Format, matrix: PixelBuffer.Matrix,
                     range: PixelBuffer.ColorRange) -> SwScaleFrame {
        let frame = SwScaleFrame(format: format, width: width, height: height)
        let context = Self.context(AV_PIX_FMT_RGB24, avFormat(format), width: width, height: height, matrix: matrix,
                                   range: range, sourceIsYCbCr: false)
        defer { sws_freeContext(context) }
        let converted = rgb.withUnsafeBufferPointer { input -> Int32 in
            var source: [UnsafePointer<UInt8>?] = [input.baseAddress, nil, nil, nil]
            var sourceStride: [Int32] = [Int32(width * 3), 0, 0, 0]
            var target: [UnsafeMutablePointer<UInt8>?] = frame.planes.map { $0 } + [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4 - frame.planes.count)
            var targetStride: [Int32] = frame.strides.map { Int32($0) } + [Int32](repeating: 0, count: 4 - frame.strides.count)
            return sws_scale(context, &source, &sourceStride, 0, Int32(height), &target, &targetStride)
        }
        precondition(converted == Int32(height), "swscale RGB24 → \(format) failed")
        return frame
    }

    /// This frame converted by swscale to RGB24.
    func rgb(matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange) -> [UInt8] {
        let context = Self.context(Self.avFormat(format), AV_PIX_FMT_RGB24, width: width, height: height, matrix: matrix,
                                   range: range, sourceIsYCbCr: format?.isYCbCr ?? true)
        defer { sws_freeContext(context) }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let converted = pixels.withUnsafeMutableBufferPointer { out -> Int32 in
            var source: [UnsafePointer<UInt8>?] = planes.map { UnsafePointer($0) } + [UnsafePointer<UInt8>?](repeating: nil, count: 4 - planes.count)
            var sourceStride: [Int32] = strides.map { Int32($0) } + [Int32](repeating: 0, count: 4 - strides.count)
            var target: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
            var targetStride: [Int32] = [Int32(width * 3), 0, 0, 0]
            return sws_scale(context, &source, &sourceStride, 0, Int32(height), &target, &targetStride)
        }
        precondition(converted == Int32(height), "swscale \(format.map { "\($0)" } ?? "yuv444p") → RGB24 failed")
        return pixels
    }

    /// This frame converted by swscale to RGB24 in two steps for 4:2:0 formats: chroma upsampled to
    /// 4:4:4 (`YUV444P`, bilinear, centred sites), then 4:4:4 to RGB24. swscale's direct 4:2:0 → RGB path
    /// places chroma row j at luma row 2j + 1 (a half-row shift from the centred site its own 4:2:0 →
    /// 4:4:4 path uses: chroma rows 60, 100, 60 come out as luma rows 60, 60, 80, 100, 80, 60 instead of
    /// 60, 70, 90, 90, 70, 70), so the direct path is not a reference for any real siting.
    func rgbThrough444(matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange) -> [UInt8] {
        guard [.nv12, .nv21, .i420].contains(format) else { return rgb(matrix: matrix, range: range) }
        let full = SwScaleFrame(format: nil, width: width, height: height)
        let context = sws_getContext(Int32(width), Int32(height), Self.avFormat(format), Int32(width), Int32(height),
                                     AV_PIX_FMT_YUV444P, SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_BITEXACT,
                                     nil, nil, nil)!
        defer { sws_freeContext(context) }
        let coefficients = sws_getCoefficients(matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601)
        let yuvRange: Int32 = range == .full ? 1 : 0
        _ = sws_setColorspaceDetails(context, coefficients, yuvRange, coefficients, yuvRange, 0, 1 << 16, 1 << 16)
        var source: [UnsafePointer<UInt8>?] = planes.map { UnsafePointer($0) } + [UnsafePointer<UInt8>?](repeating: nil, count: 4 - planes.count)
        var sourceStride: [Int32] = strides.map { Int32($0) } + [Int32](repeating: 0, count: 4 - strides.count)
        var target: [UnsafeMutablePointer<UInt8>?] = full.planes + [nil]
        var targetStride: [Int32] = full.strides.map { Int32($0) } + [0]
        precondition(sws_scale(context, &source, &sourceStride, 0, Int32(height), &target, &targetStride) == Int32(height))
        return full.rgb(matrix: matrix, range: range)
    }

    /// The planes as a `PixelBuffer` that refers to this frame's memory (kept alive by the buffer).
    func pixelBuffer(matrix: PixelBuffer.Matrix, range: PixelBuffer.ColorRange,
                     chromaLocation: PixelBuffer.ChromaLocation) throws -> PixelBuffer {
        let planes = zip(zip(self.planes, strides), rows).map { plane, rows in
            PixelBuffer.Plane(UnsafeRawBufferPointer(start: plane.0, count: plane.1 * rows), bytesPerRow: plane.1)
        }
        return try PixelBuffer(unsafeNoCopy: planes, width: width, height: height, format: format!, matrix: matrix,
                               range: range, chromaLocation: chromaLocation, deallocator: { [self] in _ = self })
    }
}

/// Camera frames against FFmpeg's swscale: 10 photos (the 4 in Samples/ and 6 from ../shared) converted
/// by swscale to every `PixelBuffer` format, each frame with one of the four matrix/range pairs and one
/// of the eight orientations; our conversion compared with swscale's conversion back to RGB, and our
/// detections on the frame with those on swscale's RGB (oriented the same way).
///
/// swscale's default chroma siting (with no `src_h_chr_pos` set) is the centre of each 2×2 (or 2×1) luma
/// block, ``PixelBuffer/ChromaLocation/center``, so the buffers say so. For 4:2:0 the reference RGB is
/// swscale's conversion through 4:4:4 (`rgbThrough444`: its direct 4:2:0 → RGB path shifts chroma by half
/// a chroma row). Measured: boxes within 0.46 px (4:2:0), 0.09 px (4:2:2), 0 (BGRA, RGBA) of swscale's.
@Suite(.serialized) struct CameraFrameSwScaleTests {
    static let sharedPhotos = ["darknet_dog.jpg", "darknet_horses.jpg", "darknet_kite.jpg", "darknet_giraffe.jpg",
                               "opencv_basketball1.png", "matplotlib_grace_hopper.jpg"]
    static let colors: [(PixelBuffer.Matrix, PixelBuffer.ColorRange)] = [(.bt601, .video), (.bt709, .full), (.bt601, .full), (.bt709, .video)]

    /// The photos, cropped to even sizes (4:2:0 needs them), with their names.
    static func photos() throws -> [(String, Image)] {
        var paths = ["astronaut", "camera", "chelsea", "coffee"].map { TestPaths.root + "/Samples/\($0).png" }
        if TestPaths.hasShared { paths += sharedPhotos.map { TestPaths.shared + "/data/photos/" + $0 } }
        return try paths.map { path in
            let image = try Image(contentsOf: path)
            let (w, h) = (image.width & ~1, image.height & ~1)
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            for y in 0..<h {
                for i in 0..<(w * 3) { pixels[y * w * 3 + i] = image.pixels[y * image.width * 3 + i] }
            }
            return (URL(fileURLWithPath: path).lastPathComponent, Image(width: w, height: h, pixels: pixels))
        }
    }

    /// Our conversion against swscale's, on every channel of every pixel.
    ///
    /// YUYV, UYVY: within 1 level. Both compute the same formulas with the same bilinear horizontal
    /// chroma interpolation at the same (centred) sites and differ only in rounding: swscale works in
    /// fixed point with coarser coefficients and rounds intermediate sums; ours is within 0.5 + 0.001 of
    /// the real value (PixelBufferConversionTests). This also pins the matrix, range and byte order.
    /// NV12, NV21, I420 (reference: swscale through 4:4:4, see `rgbThrough444`): within 2 levels, the
    /// extra level because swscale rounds the upsampled chroma to 8 bits before converting (ours keeps
    /// it in sixteenths), and one level of Cb is 1.8 levels of B. Measured: max 2, mean 0.19–0.33.
    /// BGRA, RGBA: exact.
    @Test("Our Y'CbCr and BGRA/RGBA conversion matches swscale's on photos", arguments: PixelBuffer.Format.allCases)
    func conversionMatchesSwScale(format: PixelBuffer.Format) throws {
        for (index, (name, photo)) in try Self.photos().enumerated() {
            let (matrix, range) = Self.colors[index % Self.colors.count]
            let frame = SwScaleFrame.from(rgb: photo.pixels, width: photo.width, height: photo.height, format: format,
                                          matrix: matrix, range: range)
            let reference = frame.rgbThrough444(matrix: matrix, range: range)
            let ours = Image(pixelBuffer: try frame.pixelBuffer(matrix: matrix, range: range, chromaLocation: .center)).pixels
            #expect(ours.count == reference.count)
            var worst = 0, overOne = 0, sum = 0
            for (a, b) in zip(ours, reference) {
                let d = abs(Int(a) - Int(b))
                worst = max(worst, d)
                sum += d
                if d > 1 { overOne += 1 }
            }
            let mean = Double(sum) / Double(ours.count)
            print("camera frames: \(format) \(matrix) \(range) \(name): |ours − swscale| max \(worst), mean "
                  + String(format: "%.3f, %d values off by more than 1", mean, overOne))
            let bound = switch format {
            case .bgra, .rgba: 0
            case .yuyv, .uyvy: 1
            case .nv12, .nv21, .i420: 2
            }
            #expect(worst <= bound, "\(format) \(matrix) \(range) \(name)")
        }
    }

    /// Detections from each frame against those from swscale's RGB of it: the same classes, boxes within
    /// 0.5 pixel of the (oriented) image, confidences within 0.02. The inputs differ by the conversion
    /// differences above (at most 2 levels), which moved boxes by up to 0.46 px here.
    @Test("Detections on camera frames equal those on swscale's RGB, in the oriented image's coordinates",
          .enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"), arguments: PixelBuffer.Format.allCases)
    func detectionsMatchSwScaleRGB(format: PixelBuffer.Format) throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        var worst = 0.0, count = 0
        let photos = try Self.photos()
        if photos.count < 10 { print("camera frames: ../shared absent, \(photos.count) photos instead of 10") }
        for (index, (name, photo)) in photos.enumerated() {
            let (matrix, range) = Self.colors[index % Self.colors.count]
            let orientation = Image.Orientation.allCases[index % 8]
            let frame = SwScaleFrame.from(rgb: photo.pixels, width: photo.width, height: photo.height, format: format,
                                          matrix: matrix, range: range)
            let rgb = frame.rgbThrough444(matrix: matrix, range: range)
            let turned = ImageOrientation.upright(rgb, width: photo.width, height: photo.height, channels: 3,
                                                  orientation: orientation.rawValue)
            let reference = Image(width: turned.width, height: turned.height, pixels: turned.pixels)
            let image = Image(pixelBuffer: try frame.pixelBuffer(matrix: matrix, range: range, chromaLocation: .center),
                              orientation: orientation)
            #expect((image.width, image.height) == (reference.width, reference.height))
            let expected = try detector.detect(reference)
            let got = try detector.detect(image)
            let what = "\(format) \(matrix) \(range) \(orientation) \(name)"
            #expect(got.count == expected.count, "\(what): \(got.count) detections, swscale's RGB \(expected.count)")
            var unmatched = got
            for want in expected {
                let wantBox = want.pixelRect(width: image.width, height: image.height)
                let candidates = unmatched.enumerated().filter { $0.element.classIndex == want.classIndex }
                guard let best = candidates.max(by: { $0.element.box.iou(want.box) < $1.element.box.iou(want.box) }) else {
                    Issue.record("\(what): no \(want.label) at \(wantBox)")
                    continue
                }
                unmatched.remove(at: best.offset)
                let box = best.element.pixelRect(width: image.width, height: image.height)
                let error = [box.minX - wantBox.minX, box.minY - wantBox.minY, box.maxX - wantBox.maxX, box.maxY - wantBox.maxY]
                    .map(abs).max()!
                worst = max(worst, error)
                count += 1
                #expect(error <= 0.5, "\(what): \(want.label) box \(box) vs \(wantBox)")
                #expect(abs(best.element.confidence - want.confidence) <= 0.02, "\(what): \(want.label) confidence")
            }
        }
        print("camera frames: \(format): \(count) detections matched, worst box edge difference \(worst) px")
    }
}
