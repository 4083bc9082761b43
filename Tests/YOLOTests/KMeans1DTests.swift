import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct KMeans1DTests {
    /// Weighted squared error of `values` against their nearest centroid.
    func error(_ values: [Float], _ centroids: [Float]) -> Double {
        values.reduce(0.0) { sum, v in
            let d = centroids.map { abs(Double($0) - Double(v)) }.min()!
            return sum + d * d
        }
    }

    @Test func neverWorseThanEvenlySpacedCentroids() {
        var random = SeededRandom(seed: 11)
        // Peaked (sum of uniforms cubed) and uniform data in [−1, 1].
        let peaked = (0..<20_000).map { _ in Float(pow(Double(random.float()), 3)) }
        let uniform = random.floats(20_000)
        let kmeans = KMeans1D()
        for values in [peaked, uniform] {
            for k in [4, 16] {
                let histogram = kmeans.histogram(count: values.count, value: { values[$0] }, weight: { _ in 1 })
                let centroids = kmeans.fit(histogram, k: k)
                #expect(centroids == centroids.sorted())
                #expect(centroids.count == k)
                let linear = LUTQuantizer.linearTable(k)
                #expect(error(values, centroids) <= error(values, linear), "k \(k)")
            }
        }
    }

    @Test func fewDistinctValuesAreKeptExactly() {
        let values: [Float] = [-0.5, 0.25, 0.25, 0.75]
        let kmeans = KMeans1D()
        let centroids = kmeans.fit(kmeans.histogram(count: 4, value: { values[$0] }, weight: { _ in 1 }), k: 4)
        #expect(centroids.count == 4)
        for v in values { #expect(centroids.contains { abs($0 - v) < 1e-6 }) }
    }

    @Test func deterministic() {
        var random = SeededRandom(seed: 5)
        let values = random.floats(5_000)
        let kmeans = KMeans1D()
        let fit = { kmeans.fit(kmeans.histogram(count: values.count, value: { values[$0] }, weight: { _ in 1 }), k: 64) }
        #expect(fit() == fit())
    }
}
