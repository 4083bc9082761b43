import Foundation

/// The probabilities of the eleven basic colour terms for every RGB colour (quantized to 32 levels per channel):
/// the colour-name features of the `.accurate` object tracker.
///
/// Derived, not copied: `examples` are the xkcd colour survey's named colours (CC0) labelled with the basic term
/// of their head noun (`scripts/make-color-name-examples.py` says how). For each term, a Gaussian kernel density in
/// CIELAB (D65, σ = `bandwidth` ΔE) over its examples; each colour's eleven densities, with equal priors,
/// normalized to sum to 1. Computed once per process at first use (about 0.1–0.2 s on one core).
enum ColorNameTable {
    /// The basic colour terms, in plane order.
    static let terms = ["black", "blue", "brown", "grey", "green", "orange", "pink", "purple", "red", "white", "yellow"]
    /// The kernel's standard deviation in ΔE (CIELAB units).
    static let bandwidth: Float = 14

    /// `32768 * 11` floats: entry `(r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)` holds the 11 probabilities.
    static let probabilities: [Float] = build()

    /// The table index of an RGB colour.
    @inline(__always) static func index(r: Int, g: Int, b: Int) -> Int { (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3) }

    private static func build() -> [Float] {
        let count = terms.count
        let labels = examples.map { Int($0.term) }
        let points = examples.map { lab(Float($0.rgb >> 16 & 255), Float($0.rgb >> 8 & 255), Float($0.rgb & 255)) }
        let perTerm = (0..<count).map { t in Float(max(labels.filter { $0 == t }.count, 1)) }
        let scale = -1 / (2 * bandwidth * bandwidth)
        var table = [Float](repeating: 0, count: 32768 * count)
        var density = [Float](repeating: 0, count: count)
        for bin in 0..<32768 {
            let (r, g, b) = (Float(bin >> 10 & 31) * 8 + 4, Float(bin >> 5 & 31) * 8 + 4, Float(bin & 31) * 8 + 4)
            let p = lab(r, g, b)
            for t in 0..<count { density[t] = 0 }
            // Distances relative to the nearest example keep the exponentials of far-away colours from underflowing.
            var nearest = Float.infinity
            var distances = [Float](repeating: 0, count: points.count)
            for (k, q) in points.enumerated() {
                let d = (p.0 - q.0) * (p.0 - q.0) + (p.1 - q.1) * (p.1 - q.1) + (p.2 - q.2) * (p.2 - q.2)
                distances[k] = d
                nearest = min(nearest, d)
            }
            for k in 0..<points.count { density[labels[k]] += exp((distances[k] - nearest) * scale) }
            var total: Float = 0
            for t in 0..<count { density[t] /= perTerm[t]; total += density[t] }
            for t in 0..<count { table[bin * count + t] = density[t] / total }
        }
        return table
    }

    /// CIELAB (D65) of an sRGB colour given in 0…255.
    static func lab(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        func linear(_ c: Float) -> Float { let v = c / 255; return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        let (lr, lg, lb) = (linear(r), linear(g), linear(b))
        let x = (0.4124 * lr + 0.3576 * lg + 0.1805 * lb) / 0.95047
        let y = 0.2126 * lr + 0.7152 * lg + 0.0722 * lb
        let z = (0.0193 * lr + 0.1192 * lg + 0.9505 * lb) / 1.08883
        func f(_ t: Float) -> Float { t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }
}
