import Foundation
import Testing
@testable import YOLO
import YOLOTestSupport

/// KissFFT through `RealFFT2D` and `ComplexFFT1D` against a plain DFT written from the definition.
@Suite struct FFTTests {
    @Test(arguments: [(8, 6), (24, 13), (50, 44), (2, 2)])
    func realPlaneMatchesTheDefinition(width: Int, height: Int) {
        var random = SeededRandom(seed: UInt64(width * 100 + height))
        let plane = random.floats(width * height)
        let fft = RealFFT2D(width: width, height: height)
        var spectrum = [Float](repeating: 0, count: 2 * fft.spectrumCount)
        fft.forward(plane, &spectrum)
        let columns = width / 2 + 1
        var worst = 0.0
        for v in 0..<height {
            for u in 0..<columns {
                var (re, im) = (0.0, 0.0)
                for y in 0..<height {
                    for x in 0..<width {
                        let angle = -2 * Double.pi * (Double(u * x) / Double(width) + Double(v * y) / Double(height))
                        re += Double(plane[y * width + x]) * cos(angle)
                        im += Double(plane[y * width + x]) * sin(angle)
                    }
                }
                let k = v * columns + u
                worst = max(worst, abs(re - Double(spectrum[2 * k])), abs(im - Double(spectrum[2 * k + 1])))
            }
        }
        #expect(worst < 1e-3 * Double(width * height).squareRoot(), "largest difference \(worst)")
        var back = [Float](repeating: 0, count: width * height)
        fft.inverse(spectrum, &back)
        #expect(zip(back, plane).allSatisfy { abs($0 - $1) < 1e-4 })
    }

    @Test(arguments: [33, 17, 8, 1])
    func complexLineMatchesTheDefinition(count: Int) {
        var random = SeededRandom(seed: UInt64(count))
        let signal = random.floats(2 * count)
        let fft = ComplexFFT1D(count: count)
        var out = [Float](repeating: 0, count: 2 * count)
        fft.forward(signal, &out)
        for k in 0..<count {
            var (re, im) = (0.0, 0.0)
            for n in 0..<count {
                let angle = -2 * Double.pi * Double(k * n) / Double(count)
                let (a, b) = (Double(signal[2 * n]), Double(signal[2 * n + 1]))
                re += a * cos(angle) - b * sin(angle)
                im += a * sin(angle) + b * cos(angle)
            }
            #expect(abs(re - Double(out[2 * k])) < 1e-4 && abs(im - Double(out[2 * k + 1])) < 1e-4, "bin \(k)")
        }
        var back = [Float](repeating: 0, count: 2 * count)
        fft.inverse(out, &back)
        #expect(zip(back, signal).allSatisfy { abs($0 - $1) < 1e-5 })
    }
}
