import Foundation
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Paths, expected-value tables and small helpers shared by the image tests.
enum ImageTestSupport {
    /// The committed image fixtures.
    static let fixtures = URL(fileURLWithPath: TestPaths.fixtures + "/Image")
    /// The workplace's edge-case images, `TestPaths.shared`/data/edge.
    static let edge = URL(fileURLWithPath: TestPaths.shared + "/data/edge")
    static var hasEdge: Bool { FileManager.default.fileExists(atPath: edge.appendingPathComponent("manifest.json").path) }
    static let noEdge = "needs ../shared/data/edge (or $SWIFTYOLO_SHARED/data/edge)"

    /// One file's expected decode, made by scripts/make-image-fixtures.py from OpenCV's imread.
    struct Expected: Decodable {
        var error: Bool?
        var width: Int?
        var height: Int?
        var sha256: String?
        var blockMeans: [Double]?
        /// Every R, G, B sample (small PNGs only).
        var rgb: [Int]?
        /// Every pixel's alpha in 16-bit units (small PNGs with alpha only).
        var alpha16: [Int]?
    }

    static func table(_ name: String) throws -> [String: Expected] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return try JSONDecoder().decode([String: Expected].self, from: data)
    }

    /// Mean R, G, B over a 4x4 grid of blocks, in the same order and block bounds as the script.
    static func blockMeans(_ image: Image) -> [Double] {
        var out: [Double] = []
        let w = image.width, h = image.height
        for by in 0..<4 {
            for bx in 0..<4 {
                let y0 = by * h / 4, y1 = max((by + 1) * h / 4, y0 + 1)
                let x0 = bx * w / 4, x1 = max((bx + 1) * w / 4, x0 + 1)
                var sum = [0.0, 0.0, 0.0]
                for y in y0..<y1 { for x in x0..<x1 { for c in 0..<3 { sum[c] += Double(image.pixels[(y * w + x) * 3 + c]) } } }
                let n = Double((y1 - y0) * (x1 - x0))
                out += sum.map { $0 / n }
            }
        }
        return out
    }

    /// (max, mean) absolute difference of two same-size images' bytes.
    static func difference(_ a: Image, _ b: Image) -> (max: Int, mean: Double) {
        precondition(a.width == b.width && a.height == b.height, "difference: sizes differ")
        var maxDiff = 0, total = 0
        for i in 0..<a.pixels.count {
            let d = abs(Int(a.pixels[i]) - Int(b.pixels[i]))
            maxDiff = max(maxDiff, d); total += d
        }
        return (maxDiff, Double(total) / Double(a.pixels.count))
    }
}
