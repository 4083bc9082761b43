#if canImport(Glibc)
import Glibc
#endif

/// Subnormal ("denormal") floats are flushed to zero while the engine computes.
///
/// Some x86 cores handle a subnormal operand or result in microcode, many times slower than a normal
/// one, so a model whose activations decay towards zero (a corrupted or badly trained file) could run
/// far slower than its size says. With MXCSR's flush-to-zero (results) and denormals-are-zero (operands)
/// bits set, such values count as 0, as ncnn, OpenVINO and onnxruntime arrange on their threads. Values
/// this small (below 1.2e-38) change no detection. Measured on AMD Zen 3 (family 25 model 1), whose
/// FMA units take subnormals at full speed, it changes nothing: a yolov3-tiny with weights scaled so that
/// layer 14's outputs are 76 % subnormal ran at the same speed with and without it (docs/ROBUSTNESS.md);
/// the guard is for cores that do slow down, which were not at hand.
///
/// The engine's worker threads keep the mode for their whole life; a calling thread has it only while
/// `Network.forward` runs (`withFlushedDenormals`), so an embedding program's own arithmetic is unchanged.
enum DenormalMode {
    #if arch(x86_64) && canImport(Glibc)
    /// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
    private static let flushBits: UInt32 = 0x8040

    /// Whether subnormals are flushed on the calling thread now.
    static var isFlushing: Bool {
        var environment = fenv_t()
        fegetenv(&environment)
        return environment.__mxcsr & flushBits == flushBits
    }

    /// Sets both bits on the calling thread for good (for the engine's own threads).
    static func flushOnThisThread() {
        var environment = fenv_t()
        fegetenv(&environment)
        environment.__mxcsr |= flushBits
        fesetenv(&environment)
    }

    /// Runs `body` with both bits set on the calling thread, then restores the thread's previous mode.
    static func withFlushedDenormals<R>(_ body: () throws -> R) rethrows -> R {
        var saved = fenv_t()
        fegetenv(&saved)
        guard saved.__mxcsr & flushBits != flushBits else { return try body() }
        var flushing = saved
        flushing.__mxcsr |= flushBits
        fesetenv(&flushing)
        defer { fesetenv(&saved) }
        return try body()
    }
    #else
    // Other architectures: arm64 would need FPCR.FZ; not built or measured yet, so the mode is left as it is.
    static var isFlushing: Bool { false }
    static func flushOnThisThread() {}
    static func withFlushedDenormals<R>(_ body: () throws -> R) rethrows -> R { try body() }
    #endif
}
