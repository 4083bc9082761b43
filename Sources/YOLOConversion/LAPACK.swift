@_spi(Engine) import YOLO
import CLAPACK

/// The conversion tools' door to LAPACK (Debian's liblapacke-dev headers; the routines come from OpenBLAS,
/// which the core library links). The inference core calls none of it.
enum LAPACK {
    /// Replaces the symmetric positive-definite `a` (`n×n`, both triangles set) by the upper factor
    /// `U` of the Cholesky decomposition of its inverse, `A⁻¹ = Uᵀ U`, row-major, strict lower triangle
    /// zeroed (LAPACK dpotrf, dpotri, dpotrf). Returns false, `a` unspecified, when `a` is not
    /// positive definite.
    static func inverseCholeskyUpper(_ a: UnsafeMutablePointer<Double>, n: Int) -> Bool {
        BLAS.keepSingleThreaded()
        var size = Int32(n), info: Int32 = 0  // lapack_int (a macro for int32_t)
        var lower = CChar(UInt8(ascii: "L"))
        // Row-major symmetric = column-major symmetric. 'L' in column-major is the upper triangle row-major.
        dpotrf_(&lower, &size, a, &size, &info, 1)
        guard info == 0 else { return false }
        dpotri_(&lower, &size, a, &size, &info, 1)
        guard info == 0 else { return false }
        for i in 0..<n { for j in 0..<i { a[i * n + j] = a[j * n + i] } }  // mirror row-major upper to lower
        dpotrf_(&lower, &size, a, &size, &info, 1)
        guard info == 0 else { return false }
        for i in 0..<n { for j in 0..<i { a[i * n + j] = 0 } }
        return true
    }

}
