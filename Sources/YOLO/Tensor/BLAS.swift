import COpenBLAS
#if canImport(Glibc)
import Glibc
#endif

/// The engine's only door to OpenBLAS: single-precision matrix products and thread control (LAPACK, which
/// only the conversion tools use, is reached from `YOLOConversion`).
@_spi(Engine) public enum BLAS {
    /// `C[m×n] = A[m×k] · B[k×n] + beta · C`, all row-major with the given leading dimensions.
    /// With `transposedA`, `a` holds Aᵀ (`k×m`, leading dimension `lda`).
    @inlinable
    public static func sgemm(
        m: Int, n: Int, k: Int,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int,
        c: UnsafeMutablePointer<Float>, ldc: Int,
        beta: Float = 0, transposedA: Bool = false
    ) {
        cblas_sgemm(
            CblasRowMajor, transposedA ? CblasTrans : CblasNoTrans, CblasNoTrans,
            blasint(m), blasint(n), blasint(k), 1,
            a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc))
    }

    /// The upper triangle of `C[n×n] = A · Aᵀ + beta · C`, `A` row-major `n×k` (leading dimension `lda`);
    /// the strict lower triangle of `c` is left as it was.
    public static func gramUpper(n: Int, k: Int, a: UnsafePointer<Float>, lda: Int,
                                 c: UnsafeMutablePointer<Float>, ldc: Int, beta: Float = 0) {
        cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, blasint(n), blasint(k), 1, a, blasint(lda),
                    beta, c, blasint(ldc))
    }

    /// Ends OpenBLAS's worker threads, which it starts when the library loads and which spin
    /// (`sched_yield`) for about 70 ms before they sleep: in a short process such as a one-image
    /// `yolo detect` they take a core from the engine's own workers. OpenBLAS starts them again by
    /// itself if a later call asks for several threads. Uses OpenBLAS's exported
    /// `blas_thread_shutdown_` when the loaded library has it; does nothing otherwise.
    ///
    /// Only for a process that owns OpenBLAS (the `yolo` tool calls it first thing): a call made while
    /// another thread runs a multi-threaded OpenBLAS product can leave that product waiting forever for a
    /// worker it stopped, so the library itself (`Detector`, `Network`) never calls it.
    public static func stopWorkerThreads() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "blas_thread_shutdown_") else { return }
        typealias Shutdown = @convention(c) () -> Int32
        _ = unsafeBitCast(symbol, to: Shutdown.self)()
    }

    /// Sets OpenBLAS to one thread unless it is already (process-wide). For the portable family, whose
    /// products call `sgemm` inside the engine's own parallel parts: with more, each part would start
    /// OpenBLAS's threads on top of ours. The conversion tools (the Gram matrices, GPTQ's products, the
    /// Cholesky factors) call it before their BLAS and LAPACK calls: on several threads OpenBLAS's partial sums
    /// round with how it splits a call, which depends on what else in the process calls OpenBLAS at the time,
    /// so one conversion could give other bytes than the next. One thread is what the `yolo` tool sets for
    /// every command, so a conversion in a program equals `yolo convert`'s.
    public static func keepSingleThreaded() {
        if threads != 1 { threads = 1 }
    }

    /// OpenBLAS's worker-thread count. Process-wide.
    public static var threads: Int {
        get { Int(openblas_get_num_threads()) }
        set { openblas_set_num_threads(Int32(max(1, newValue))) }
    }

    /// The compute kernel OpenBLAS chose (e.g. `Haswell`, `SkylakeX`, `Zen`); follows `OPENBLAS_CORETYPE`.
    public static var coreName: String {
        guard let name = openblas_get_corename() else { return "unknown" }
        return String(cString: name)
    }

    /// OpenBLAS's build description (version, threading model, ...).
    public static var configuration: String {
        guard let text = openblas_get_config() else { return "unknown" }
        return String(cString: text)
    }
}
