/// The pixels of an ``Image`` made from a ``PixelBuffer``: the buffer (which keeps its memory alive),
/// the orientation that turns it upright, the chroma interpolation taps of its size, and the whole-frame
/// RGB conversion once something has asked for ``Image/pixels``.
final class CameraPixels: @unchecked Sendable {
    let buffer: PixelBuffer
    /// EXIF orientation, 1...8.
    let orientation: Int
    private let conversion: YCbCrToRGB
    private let columnTaps: [ChromaTap]
    private let rowTaps: [ChromaTap]
    private let converted = Locked<[UInt8]?>(nil)

    init(buffer: PixelBuffer, orientation: Int) {
        precondition((1...8).contains(orientation), "CameraPixels: orientation \(orientation)")
        self.buffer = buffer
        self.orientation = orientation
        conversion = YCbCrToRGB(matrix: buffer.matrix, range: buffer.range)
        let (horizontal, vertical) = buffer.chromaLocation.offsetQuarters
        switch buffer.format {
        case .nv12, .nv21, .i420:
            let step = buffer.format == .i420 ? 1 : 2
            columnTaps = ChromaTap.axis(count: buffer.width, subsampled: true, offsetQuarters: horizontal, step: step)
            rowTaps = ChromaTap.axis(count: buffer.height, subsampled: true, offsetQuarters: vertical, step: 1)
        case .yuyv, .uyvy:
            columnTaps = ChromaTap.axis(count: buffer.width, subsampled: true, offsetQuarters: horizontal, step: 4)
            rowTaps = ChromaTap.axis(count: buffer.height, subsampled: false, offsetQuarters: 0, step: 1)
        case .bgra, .rgba:
            (columnTaps, rowTaps) = ([], [])
        }
    }

    /// Upright width in pixels.
    var width: Int { ImageOrientation.swapsAxes(orientation) ? buffer.height : buffer.width }
    /// Upright height in pixels.
    var height: Int { ImageOrientation.swapsAxes(orientation) ? buffer.width : buffer.height }

    /// Runs `body` with the upright pixels as a `RowSource` reading the planes directly.
    func withRows<Result>(_ body: (any RowSource) throws -> Result) rethrows -> Result {
        let planes = buffer.storage.planes
        let (w, h) = (buffer.width, buffer.height)
        func oriented<S: PixelSampler>(_ sampler: S) -> OrientedRows<S> {
            OrientedRows(sampler: sampler, storedWidth: w, storedHeight: h, orientation: orientation)
        }
        return try withExtendedLifetime(buffer.storage) {
            let p0 = planes[0].base.assumingMemoryBound(to: UInt8.self)
            switch buffer.format {
            case .bgra, .rgba:
                let offsets = buffer.format == .bgra ? (2, 1, 0) : (0, 1, 2)
                return try body(oriented(PackedRGBSampler(base: p0, bytesPerRow: planes[0].bytesPerRow, bytesPerPixel: 4,
                                                          offsets: offsets)))
            default:
                return try columnTaps.withUnsafeBufferPointer { columns in
                    try rowTaps.withUnsafeBufferPointer { rows in
                        try body(oriented(ycbcrSampler(planes, columns: columns.baseAddress!, rows: rows.baseAddress!)))
                    }
                }
            }
        }
    }

    /// The sampler for this buffer's Y'CbCr layout.
    private func ycbcrSampler(_ planes: [PixelMemory.Plane], columns: UnsafePointer<ChromaTap>,
                              rows: UnsafePointer<ChromaTap>) -> YCbCrSampler {
        func bytes(_ plane: Int, _ offset: Int = 0) -> UnsafePointer<UInt8> {
            planes[plane].base.assumingMemoryBound(to: UInt8.self) + offset
        }
        let stride0 = planes[0].bytesPerRow
        // (luma, luma step, cb, cb stride, cr, cr stride)
        let layout: (UnsafePointer<UInt8>, Int, UnsafePointer<UInt8>, Int, UnsafePointer<UInt8>, Int)
        switch buffer.format {
        case .nv12: layout = (bytes(0), 1, bytes(1), planes[1].bytesPerRow, bytes(1, 1), planes[1].bytesPerRow)
        case .nv21: layout = (bytes(0), 1, bytes(1, 1), planes[1].bytesPerRow, bytes(1), planes[1].bytesPerRow)
        case .i420: layout = (bytes(0), 1, bytes(1), planes[1].bytesPerRow, bytes(2), planes[2].bytesPerRow)
        case .yuyv: layout = (bytes(0), 2, bytes(0, 1), stride0, bytes(0, 3), stride0)
        case .uyvy: layout = (bytes(0, 1), 2, bytes(0), stride0, bytes(0, 2), stride0)
        case .bgra, .rgba: preconditionFailure("ycbcrSampler: \(buffer.format) is RGB")
        }
        return YCbCrSampler(luma: layout.0, lumaStride: stride0, lumaStep: layout.1, cb: layout.2, cbStride: layout.3,
                            cr: layout.4, crStride: layout.5, columnTaps: columns, rowTaps: rows, conversion: conversion)
    }

    /// The whole upright frame as RGB bytes, converted on the first call and kept.
    var rgb: [UInt8] {
        converted.withLock { cache in
            if let cache { return cache }
            let pixels = withRows { $0.allPixels() }
            cache = pixels
            return pixels
        }
    }

    /// The RGB of upright pixel (x, y), converted alone.
    func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        var rgb: (UInt8, UInt8, UInt8) = (0, 0, 0)
        withRows { rows in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3) { out in
                withUnsafePointer(to: x) { column in
                    rows.gather(row: y, columns: UnsafeBufferPointer(start: column, count: 1), into: out.baseAddress!)
                }
                rgb = (out[0], out[1], out[2])
            }
        }
        return rgb
    }
}
