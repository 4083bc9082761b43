import Foundation
import YOLO

/// Synthetic clips for the object trackers: a textured square on a smooth background.
package enum TrackingClips {
    /// A 320×240 frame: a smooth background, and a 48×48 noise-textured square at (`x`, 96) (cut at the right edge).
    package static func square(at x: Int) -> Image {
        let (w, h) = (320, 240)
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for px in 0..<w {
                let v = 100 + 40 * sin(Double(px) / 23) * cos(Double(y) / 17)
                for c in 0..<3 { pixels[(y * w + px) * 3 + c] = UInt8(v) &+ UInt8(c * 10) }
            }
        }
        var random = SeededRandom(seed: 42)
        for y in 0..<48 {
            for dx in 0..<48 {
                let v = UInt8(random.next() % 256), b = UInt8(random.next() % 256)
                guard x + dx < w, x + dx >= 0 else { continue }
                let p = ((96 + y) * w + x + dx) * 3
                (pixels[p], pixels[p + 1], pixels[p + 2]) = (v, 255 - v, b)
            }
        }
        return Image(width: w, height: h, pixels: pixels)
    }
}
