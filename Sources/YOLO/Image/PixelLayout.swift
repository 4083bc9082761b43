/// The plane shapes a ``PixelBuffer`` format needs, and the checks of a caller's planes against them.
struct PixelLayout {
    /// One plane's extent: bytes of pixel data in a row, and rows.
    struct Shape: Equatable {
        var rowBytes: Int
        var rows: Int
    }

    /// The shape of each plane, in order.
    let shapes: [Shape]

    /// The plane shapes of a `width × height` frame in `format` (size assumed checked).
    static func shapes(width: Int, height: Int, format: PixelBuffer.Format) -> [Shape] {
        switch format {
        case .nv12, .nv21: [Shape(rowBytes: width, rows: height), Shape(rowBytes: width, rows: height / 2)]
        case .i420: [Shape(rowBytes: width, rows: height), Shape(rowBytes: width / 2, rows: height / 2),
                     Shape(rowBytes: width / 2, rows: height / 2)]
        case .yuyv, .uyvy: [Shape(rowBytes: 2 * width, rows: height)]
        case .bgra, .rgba: [Shape(rowBytes: 4 * width, rows: height)]
        }
    }

    /// Checks `planes` against what a `width × height` frame in `format` needs.
    /// - Throws: `YOLOError.invalidArgument` with the first problem found.
    init(planes: [PixelBuffer.Plane], width: Int, height: Int, format: PixelBuffer.Format) throws {
        let name = format.rawValue
        guard width > 0, height > 0 else {
            throw Self.error("size \(width)x\(height) is empty or negative")
        }
        // 4 bytes a pixel for the widest format, and 3 for the RGB the image may be converted to.
        guard width <= Int.max / 4 / height else { throw Self.error("size \(width)x\(height) is too large") }
        switch format {
        case .nv12, .nv21, .i420:
            guard width % 2 == 0, height % 2 == 0 else {
                throw Self.error("\(name) (4:2:0) needs an even width and height, got \(width)x\(height)")
            }
        case .yuyv, .uyvy:
            guard width % 2 == 0 else { throw Self.error("\(name) (4:2:2) needs an even width, got \(width)") }
        case .bgra, .rgba:
            break
        }
        guard planes.count == format.planeCount else {
            throw Self.error("\(name) takes \(format.planeCount) plane(s) (\(Self.planeNames(format).joined(separator: ", "))), got \(planes.count)")
        }
        let shapes = Self.shapes(width: width, height: height, format: format)
        for (index, (plane, shape)) in zip(planes, shapes).enumerated() {
            let what = "\(name) plane \(index) (\(Self.planeNames(format)[index]))"
            guard plane.bytesPerRow >= shape.rowBytes else {
                throw Self.error("\(what): bytesPerRow \(plane.bytesPerRow) is less than its \(shape.rowBytes) bytes a row")
            }
            let (body, o1) = plane.bytesPerRow.multipliedReportingOverflow(by: shape.rows - 1)
            let (needed, o2) = body.addingReportingOverflow(shape.rowBytes)
            guard !o1, !o2, plane.bytes.count >= needed, plane.bytes.baseAddress != nil else {
                throw Self.error("\(what): \(plane.bytes.count) bytes, \(shape.rows) rows of \(shape.rowBytes) bytes "
                                 + "with bytesPerRow \(plane.bytesPerRow) need \(o1 || o2 ? "more than Int.max" : "\(needed)")")
            }
        }
        self.shapes = shapes
    }

    /// The planes of a buffer that holds them one after the other (see `PixelBuffer(copying:width:height:bytesPerRow:...)`).
    static func contiguousPlanes(_ bytes: UnsafeRawBufferPointer, height: Int, bytesPerRow: Int,
                                 format: PixelBuffer.Format) throws -> [PixelBuffer.Plane] {
        guard height > 0, bytesPerRow > 0 else {
            throw error("height \(height) and bytesPerRow \(bytesPerRow) must be positive")
        }
        let strides: [Int]
        let rows: [Int]
        switch format {
        case .nv12, .nv21: (strides, rows) = ([bytesPerRow, bytesPerRow], [height, height / 2])
        case .i420:
            guard bytesPerRow % 2 == 0 else {
                throw error("i420 in one buffer needs an even bytesPerRow (the chroma planes take half), got \(bytesPerRow)")
            }
            (strides, rows) = ([bytesPerRow, bytesPerRow / 2, bytesPerRow / 2], [height, height / 2, height / 2])
        case .yuyv, .uyvy, .bgra, .rgba: (strides, rows) = ([bytesPerRow], [height])
        }
        var planes: [PixelBuffer.Plane] = []
        var start = 0
        for (stride, count) in zip(strides, rows) {
            let (size, overflow) = stride.multipliedReportingOverflow(by: count)
            guard !overflow, size <= bytes.count - start else {
                throw error("\(bytes.count) bytes are too few for \(format.rawValue) planes of \(rows) rows with strides \(strides)")
            }
            planes.append(PixelBuffer.Plane(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + size)]), bytesPerRow: stride))
            start += size
        }
        return planes
    }

    /// The names of `format`'s planes, for messages.
    static func planeNames(_ format: PixelBuffer.Format) -> [String] {
        switch format {
        case .nv12: ["Y", "CbCr"]
        case .nv21: ["Y", "CrCb"]
        case .i420: ["Y", "Cb", "Cr"]
        case .yuyv: ["YUYV"]
        case .uyvy: ["UYVY"]
        case .bgra: ["BGRA"]
        case .rgba: ["RGBA"]
        }
    }

    private static func error(_ message: String) -> YOLOError {
        .invalidArgument("pixel buffer: \(message)")
    }
}

/// The memory behind a ``PixelBuffer``'s planes: a copy this object owns, or the caller's memory and
/// the deallocator to run when the last reference goes. Shared by every copy of the buffer and every
/// image made from it, so its lifetime is theirs.
final class PixelMemory: @unchecked Sendable {
    /// A plane's first byte and row stride.
    struct Plane {
        let base: UnsafeRawPointer
        let bytesPerRow: Int
    }

    let planes: [Plane]
    private let owned: UnsafeMutableRawPointer?
    private let deallocator: (@Sendable () -> Void)?

    /// Copies the pixel rows of `planes` (not their padding) into one allocation.
    init(copying planes: [PixelBuffer.Plane], layout: PixelLayout) {
        let total = layout.shapes.reduce(0) { $0 + $1.rowBytes * $1.rows }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
        var copies: [Plane] = []
        var offset = 0
        for (plane, shape) in zip(planes, layout.shapes) {
            let target = memory + offset
            for row in 0..<shape.rows {
                (target + row * shape.rowBytes).copyMemory(from: plane.bytes.baseAddress! + row * plane.bytesPerRow,
                                                           byteCount: shape.rowBytes)
            }
            copies.append(Plane(base: UnsafeRawPointer(target), bytesPerRow: shape.rowBytes))
            offset += shape.rowBytes * shape.rows
        }
        self.planes = copies
        self.owned = memory
        self.deallocator = nil
    }

    /// Refers to the caller's `planes` (checked by `layout`); `deallocator` runs in `deinit`.
    init(wrapping planes: [PixelBuffer.Plane], layout: PixelLayout, deallocator: (@Sendable () -> Void)?) {
        self.planes = planes.map { Plane(base: $0.bytes.baseAddress!, bytesPerRow: $0.bytesPerRow) }
        self.owned = nil
        self.deallocator = deallocator
    }

    deinit {
        owned?.deallocate()
        deallocator?()
    }
}
