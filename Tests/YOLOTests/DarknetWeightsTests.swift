import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct DarknetWeightsTests {
    let description = try! parse(tinyCfg())

    @Test func readsBothHeaderVersions() throws {
        let folder = TestPaths.temporaryFolder()
        for (major, minor) in [(0, 1), (0, 2), (1, 0)] as [(Int32, Int32)] {
            let (path, _) = try writeWeights(for: description, major: major, minor: minor, in: folder)
            let parameters = try DarknetWeights.load(path, for: description)
            #expect(parameters.keys.sorted() == [0, 2, 4, 10])
        }
    }

    @Test func foldsBatchNormWithEpsilonOutsideTheRoot() throws {
        let folder = TestPaths.temporaryFolder()
        let (path, floats) = try writeWeights(for: description, in: folder)
        let parameters = try DarknetWeights.load(path, for: description)
        // Layer 0: 4 filters, 3x3x3 patch, batch norm: biases, scales, means, variances, weights.
        let n = 4, patch = 27
        let biases = Array(floats[0..<n]), scales = Array(floats[n..<2 * n])
        let means = Array(floats[2 * n..<3 * n]), variances = Array(floats[3 * n..<4 * n])
        let weights = Array(floats[4 * n..<4 * n + n * patch])
        for f in 0..<n {
            // y = scale * (conv - mean) / (sqrt(var) + 1e-6) + bias, evaluated at a unit input on tap 0.
            let factor = Double(scales[f]) / (Double(variances[f]).squareRoot() + 0.000001)
            #expect(abs(Double(parameters[0]!.weights[f * patch]) - Double(weights[f * patch]) * factor) < 1e-6)
            #expect(abs(Double(parameters[0]!.biases[f]) - (Double(biases[f]) - Double(means[f]) * factor)) < 1e-6)
        }
        // Layer 4 has no batch norm: its biases come first and are used as they are.
        let offset0 = 4 * n + n * patch, layer2 = 8 * 4 + 8 * 4 * 9
        #expect(parameters[4]!.biases.array == Array(floats[offset0 + layer2 ..< offset0 + layer2 + 21]))
    }

    @Test func truncatedAndOverlongFilesSayWhatTheyHold() throws {
        let folder = TestPaths.temporaryFolder()
        let geometry = try description.geometry(width: 64, height: 64)
        let expected = DarknetWeights.floatCount(for: description, geometry: geometry)
        for extra in [-1, -100, 1, 7] {
            let (path, _) = try writeWeights(for: description, extraFloats: extra, in: folder)
            #expect(throws: YOLOError.weightCountMismatch(path: path, expected: expected, found: expected + extra)) {
                _ = try DarknetWeights.load(path, for: description)
            }
        }
        let headerOnly = folder + "/short.weights"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: headerOnly))
        #expect(throws: YOLOError.self) { _ = try DarknetWeights.load(headerOnly, for: description) }
        #expect(throws: YOLOError.fileNotFound(path: folder + "/missing.weights")) {
            _ = try DarknetWeights.load(folder + "/missing.weights", for: description)
        }
    }
}
