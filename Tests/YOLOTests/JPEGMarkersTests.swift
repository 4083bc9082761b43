import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// Our own JPEG marker and EXIF parsing: both TIFF byte orders, and malformed blocks ignored.
struct JPEGMarkersTests {
    /// A TIFF block with one IFD0 entry (tag, type, count, value), as a camera writes it.
    static func tiff(bigEndian: Bool, tag: UInt16 = 0x0112, type: UInt16 = 3, count: UInt32 = 1,
                     value: UInt16, ifdOffset: UInt32 = 8) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        return (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(ifdOffset)
            + u16(1) + u16(tag) + u16(type) + u32(count) + u16(value) + u16(0) + u32(0)
    }

    static func orientation(_ tiff: [UInt8]) -> Int? {
        tiff.withUnsafeBytes { EXIF.orientation(tiff: $0) }
    }

    @Test("Orientation from little- and big-endian EXIF", arguments: 1...8)
    func byteOrders(value: Int) {
        #expect(Self.orientation(Self.tiff(bigEndian: false, value: UInt16(value))) == value)
        #expect(Self.orientation(Self.tiff(bigEndian: true, value: UInt16(value))) == value)
    }

    @Test("Malformed EXIF gives no orientation instead of failing")
    func malformed() {
        let good = Self.tiff(bigEndian: true, value: 6)
        #expect(Self.orientation([]) == nil)
        #expect(Self.orientation(Array(good.prefix(7))) == nil)         // shorter than a header
        #expect(Self.orientation(Array(good.prefix(19))) == nil)        // value cut off
        #expect(Self.orientation(Array("XX".utf8) + good.dropFirst(2)) == nil)  // no byte order
        #expect(Self.orientation(Self.tiff(bigEndian: true, value: 6, ifdOffset: 4000)) == nil)
        #expect(Self.orientation(Self.tiff(bigEndian: false, value: 0)) == nil)
        #expect(Self.orientation(Self.tiff(bigEndian: false, value: 9)) == nil)
        #expect(Self.orientation(Self.tiff(bigEndian: false, type: 4, value: 6)) == nil)  // LONG, not SHORT
        #expect(Self.orientation(Self.tiff(bigEndian: false, tag: 0x0110, value: 6)) == nil)  // other tag
        var wrongMagic = good; wrongMagic[3] = 43
        #expect(Self.orientation(wrongMagic) == nil)
    }

    @Test("Marker scan finds EXIF orientation and the Adobe APP14 marker in fixtures")
    func scan() throws {
        func markers(_ name: String) throws -> JPEGMarkers {
            let data = try Data(contentsOf: ImageTestSupport.fixtures.appendingPathComponent(name))
            return data.withUnsafeBytes { JPEGMarkers(scanning: $0) }
        }
        let six = try markers("jpeg_orientation_6.jpg")
        #expect(six.orientation == 6 && !six.hasAdobeMarker)
        #expect(try markers("jpeg_orientation_7.jpg").orientation == 7)
        #expect(try markers("jpeg_cmyk_adobe.jpg").hasAdobeMarker)
        let gray = try markers("jpeg_gray.jpg")
        #expect(gray.orientation == 1 && !gray.hasAdobeMarker)
    }

    @Test("Marker scan survives every truncation of a JPEG header")
    func truncatedHeaders() throws {
        let data = try Data(contentsOf: ImageTestSupport.fixtures.appendingPathComponent("jpeg_orientation_6.jpg"))
        for n in 0..<min(data.count, 400) {
            let found = data.prefix(n).withUnsafeBytes { JPEGMarkers(scanning: $0) }
            #expect(found.orientation == 1 || found.orientation == 6)
        }
    }
}
