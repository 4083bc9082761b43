import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// PNG and JPEG encoding, read back with our decoder (itself checked against OpenCV).
struct ImageEncodingTests {
    /// A 61x37 test picture: smooth gradients plus a hard-edged square (odd sizes on purpose).
    static let picture: Image = {
        let w = 61, h = 37
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let inSquare = (20..<40).contains(x) && (10..<25).contains(y)
                pixels[(y * w + x) * 3] = UInt8(x * 255 / (w - 1))
                pixels[(y * w + x) * 3 + 1] = inSquare ? 230 : UInt8(y * 255 / (h - 1))
                pixels[(y * w + x) * 3 + 2] = inSquare ? 20 : 128
            }
        }
        return Image(width: w, height: h, pixels: pixels)
    }()

    @Test("PNG round trip is exact")
    func pngRoundTrip() throws {
        let data = try Self.picture.pngData()
        #expect(data.prefix(8) == Data(PNGChunks.signature))
        let back = try Image(data: data)
        #expect(back.width == 61 && back.height == 37 && back.pixels == Self.picture.pixels)
    }

    /// The writer cuts the image into strips of about 1 MiB of rows deflated on several threads and joined
    /// into one zlib stream (`PNGWriter`). libpng, reading it back, checks every chunk's CRC and zlib the
    /// stream's Adler-32; the bytes do not depend on the thread count. Sizes cover one strip, several
    /// strips with a short last one, rows narrower than a 16-byte vector, and one row.
    @Test("PNG of many strips, any width, any thread count: exact round trip")
    func pngStrips() throws {
        var random = SeededRandom(seed: 41)
        // The last size is all noise: its strips do not compress and are stored.
        for (w, h, noisy) in [(700, 1100, 350), (1, 5, 0), (2, 3, 1), (5, 1, 2), (613, 1, 300), (1, 400_000, 0), (512, 900, 512)] {
            // Columns left of `noisy` are noise (Sub and Up both poor), the rest smooth (each row picks a filter).
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            for y in 0..<h {
                for x in 0..<w {
                    for c in 0..<3 {
                        pixels[(y * w + x) * 3 + c] = x < noisy ? UInt8(truncatingIfNeeded: random.next())
                                                              : UInt8(truncatingIfNeeded: x * (c + 1) + y)
                    }
                }
            }
            let image = Image(width: w, height: h, pixels: pixels)
            let data = try image.pngData()
            let back = try Image(data: data)
            #expect(back.width == w && back.height == h && back.decodeWarnings.isEmpty, "\(w)x\(h)")
            #expect(back.pixels == pixels, "\(w)x\(h)")
            let single = try pixels.withUnsafeBufferPointer { try PNGWriter.encode($0, width: w, height: h, threads: 1) }
            #expect(single == data, "\(w)x\(h)")
            if noisy == w { #expect(data.count > pixels.count, "stored, not compressed") }
        }
    }

    /// Quality 90, 4:4:4: the loss is JPEG quantisation. Measured on this picture: mean 1.15
    /// levels, max 20 (at the square's hard red/green edge); bounds set a little above. (With
    /// 4:2:0 subsampling it was mean 3.2, max 93: why annotated output is written 4:4:4.)
    @Test("JPEG round trip is close, and quality controls the size")
    func jpegRoundTrip() throws {
        let data = try Self.picture.jpegData()
        let back = try Image(data: data)
        #expect(back.width == 61 && back.height == 37 && back.decodeWarnings.isEmpty)
        let d = ImageTestSupport.difference(back, Self.picture)
        #expect(d.mean <= 1.5 && d.max <= 24, "\(d)")
        let small = try Self.picture.jpegData(quality: 10)
        #expect(small.count < data.count)
        let loss = ImageTestSupport.difference(try Image(data: small), Self.picture).mean
        #expect(loss > d.mean)
        #expect(throws: YOLOError.invalidArgument("JPEG quality 0 is outside 1...100")) {
            try Self.picture.jpegData(quality: 0)
        }
    }

    @Test("write(to:) picks the format from the extension and leaves no temporary files")
    func writeFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yolo-image-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["a.png", "b.JPG", "c.jpeg"] {
            let path = folder.appendingPathComponent(name).path
            try Self.picture.write(to: path)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let format = data.withUnsafeBytes { Image.FileFormat.detect($0) }
            #expect(format == (name.hasSuffix("png") ? .png : .jpeg))
        }
        let bad = folder.appendingPathComponent("d.gif").path
        #expect(throws: YOLOError.self) { try Self.picture.write(to: bad) }
        #expect(throws: YOLOError.self) { try Self.picture.write(to: folder.appendingPathComponent("missing/e.png").path) }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["a.png", "b.JPG", "c.jpeg"])
    }
}
