import COpenBLAS

/// The engine's only door to OpenBLAS: single-precision matrix products and thread control.
public enum BLAS {
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

    /// OpenBLAS's worker-thread count. Process-wide: the one piece of shared mutable state.
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
