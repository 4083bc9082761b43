import CAVCodec
import CAVDevice
import CAVFormat
import CAVUtil
import CSwScale

/// swscale between FFmpeg frames and packed RGB24, with the source's colour range and matrix honoured
/// (full-range "JPEG" YUV from cameras, BT.709 for HD video) so colours match what a player shows.
final class PixelConverter {
    private var context: OpaquePointer?
    /// The last converted frame's RGB pixels (reused from frame to frame).
    private var pixels = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    deinit {
        sws_freeContext(context)
        pixels.deallocate()
    }

    /// The RGB pixels of `frame` (`width` × `height`, same size as the frame), valid until the next call;
    /// nil when swscale cannot convert its pixel format.
    func rgb(of frame: UnsafeMutablePointer<AVFrame>) -> UnsafeRawBufferPointer? {
        let (w, h) = (Int(frame.pointee.width), Int(frame.pointee.height))
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        context = sws_getCachedContext(context, Int32(w), Int32(h), format, Int32(w), Int32(h), AV_PIX_FMT_RGB24,
                                       SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil)
        guard let context else { return nil }
        setColorDetails(context, space: frame.pointee.colorspace, fullRange: frame.pointee.color_range == AVCOL_RANGE_JPEG
                        || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(format),
                        sourceIsYUV: true)
        let count = w * h * 3
        if pixels.count != count {
            pixels.deallocate()
            pixels = .allocate(byteCount: count, alignment: 64)
        }
        // Zeroed first, as the freshly allocated array of the in-process converter was.
        pixels.initializeMemory(as: UInt8.self, repeating: 0)
        var destination: [UnsafeMutablePointer<UInt8>?] = [pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
        var stride: [Int32] = [Int32(w * 3), 0, 0, 0]
        let rows = withPlanes(of: frame) { planes, strides in
            sws_scale(context, planes, strides, 0, Int32(h), &destination, &stride)
        }
        guard rows == Int32(h) else { return nil }
        return UnsafeRawBufferPointer(pixels)
    }

    /// Fills `frame` (allocated, writable, its size and pixel format set) from packed RGB `pixels` of
    /// `width × height`, resampled to the frame's size when they differ; false when swscale cannot.
    func fill(_ frame: UnsafeMutablePointer<AVFrame>, from pixels: UnsafeRawBufferPointer, width: Int, height: Int) -> Bool {
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        context = sws_getCachedContext(context, Int32(width), Int32(height), AV_PIX_FMT_RGB24,
                                       frame.pointee.width, frame.pointee.height, format,
                                       SWS_BILINEAR | SWS_ACCURATE_RND, nil, nil, nil)
        guard let context else { return false }
        setColorDetails(context, space: frame.pointee.colorspace, fullRange: false, sourceIsYUV: false)
        var source: [UnsafePointer<UInt8>?] = [pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
        var stride: [Int32] = [Int32(width * 3), 0, 0, 0]
        let rows = withUnsafeMutablePointer(to: &frame.pointee.data) { data in
            data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { planes in
                withUnsafePointer(to: &frame.pointee.linesize) { sizes in
                    sizes.withMemoryRebound(to: Int32.self, capacity: 8) { strides in
                        sws_scale(context, &source, &stride, 0, Int32(height), planes, strides)
                    }
                }
            }
        }
        return rows > 0
    }

    /// The frame's plane pointers and strides as the C arrays swscale takes.
    private func withPlanes<R>(of frame: UnsafeMutablePointer<AVFrame>,
                               _ body: (UnsafePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
        withUnsafePointer(to: &frame.pointee.data) { data in
            data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                withUnsafePointer(to: &frame.pointee.linesize) { sizes in
                    sizes.withMemoryRebound(to: Int32.self, capacity: 8) { body(planes, $0) }
                }
            }
        }
    }

    /// The YUV side's matrix (BT.601 unless the stream says otherwise) and range.
    private func setColorDetails(_ context: OpaquePointer, space: AVColorSpace, fullRange: Bool, sourceIsYUV: Bool) {
        let matrix = space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RGB ? SWS_CS_DEFAULT : Int32(space.rawValue)
        let coefficients = sws_getCoefficients(matrix)
        let yuvRange: Int32 = fullRange ? 1 : 0
        // Arguments: source table, source range, destination table, destination range, brightness,
        // contrast, saturation in 16.16 fixed point (unchanged: 0, 1, 1). RGB is full range.
        _ = sws_setColorspaceDetails(context, coefficients, sourceIsYUV ? yuvRange : 1, coefficients,
                                     sourceIsYUV ? 1 : yuvRange, 0, 1 << 16, 1 << 16)
    }
}
