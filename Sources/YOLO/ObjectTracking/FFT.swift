import CKissFFT
import Foundation

/// Forward and inverse 2-D FFTs of real planes of one size, through KissFFT (Debian's `libkissfft-dev`,
/// BSD-3-Clause): the only file that imports `CKissFFT`.
///
/// A plane is `height` rows of `width` floats, row-major. Its spectrum is the half KissFFT keeps for real input:
/// `height` rows of `width / 2 + 1` complex values (the non-negative horizontal frequencies; the others follow from
/// Hermitian symmetry), interleaved re, im, so `2 * spectrumCount` floats. Element-wise products, sums and
/// quotients of such spectra are the half spectra of the corresponding circular correlations.
///
/// Not thread-safe: a KissFFT plan holds scratch memory. Each tracker owns its plans.
final class RealFFT2D {
    /// Plane width (even) and height.
    let width: Int, height: Int
    /// Complex values in a spectrum: `height * (width / 2 + 1)`.
    let spectrumCount: Int
    private let forwardPlan: kiss_fftndr_cfg
    private let inversePlan: kiss_fftndr_cfg

    /// Plans for `width × height` planes. - Precondition: `width` even, both at least 2.
    init(width: Int, height: Int) {
        precondition(width >= 2 && height >= 2 && width % 2 == 0, "RealFFT2D: \(width)x\(height) (width must be even)")
        self.width = width
        self.height = height
        spectrumCount = height * (width / 2 + 1)
        var dims: [Int32] = [Int32(height), Int32(width)]
        forwardPlan = kiss_fftndr_alloc(&dims, 2, 0, nil, nil)
        inversePlan = kiss_fftndr_alloc(&dims, 2, 1, nil, nil)
    }

    deinit {
        free(UnsafeMutableRawPointer(forwardPlan))
        free(UnsafeMutableRawPointer(inversePlan))
    }

    /// The half spectrum of `plane` (`width * height` floats) into `spectrum` (`2 * spectrumCount` floats).
    func forward(_ plane: UnsafePointer<Float>, _ spectrum: UnsafeMutablePointer<Float>) {
        spectrum.withMemoryRebound(to: kiss_fft_cpx.self, capacity: spectrumCount) { kiss_fftndr(forwardPlan, plane, $0) }
    }

    /// The plane of a half spectrum, scaled by `1 / (width * height)` (the true inverse of `forward`).
    func inverse(_ spectrum: UnsafePointer<Float>, _ plane: UnsafeMutablePointer<Float>) {
        spectrum.withMemoryRebound(to: kiss_fft_cpx.self, capacity: spectrumCount) { kiss_fftndri(inversePlan, $0, plane) }
        let scale = 1 / Float(width * height)
        for i in 0..<(width * height) { plane[i] *= scale }
    }
}

/// Forward and inverse 1-D complex FFTs of one length (KissFFT), for the scale filter.
///
/// Values are interleaved re, im (`2 * count` floats). Not thread-safe (see `RealFFT2D`).
final class ComplexFFT1D {
    /// Transform length.
    let count: Int
    private let forwardPlan: kiss_fft_cfg
    private let inversePlan: kiss_fft_cfg

    /// Plans for length `count` (any length ≥ 1).
    init(count: Int) {
        precondition(count >= 1, "ComplexFFT1D: length \(count)")
        self.count = count
        forwardPlan = kiss_fft_alloc(Int32(count), 0, nil, nil)
        inversePlan = kiss_fft_alloc(Int32(count), 1, nil, nil)
    }

    deinit {
        free(UnsafeMutableRawPointer(forwardPlan))
        free(UnsafeMutableRawPointer(inversePlan))
    }

    /// The DFT of `input` into `output` (distinct buffers, `2 * count` floats each).
    func forward(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        run(forwardPlan, input, output, scale: 1)
    }

    /// The inverse DFT, scaled by `1 / count`.
    func inverse(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        run(inversePlan, input, output, scale: 1 / Float(count))
    }

    private func run(_ plan: kiss_fft_cfg, _ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, scale: Float) {
        input.withMemoryRebound(to: kiss_fft_cpx.self, capacity: count) { source in
            output.withMemoryRebound(to: kiss_fft_cpx.self, capacity: count) { kiss_fft(plan, source, $0) }
        }
        if scale != 1 { for i in 0..<(2 * count) { output[i] *= scale } }
    }
}
