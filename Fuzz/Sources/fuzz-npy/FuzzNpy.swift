// fuzz-npy: NumPy .npy bytes → Tensor.parseNumPy, and a re-encode/re-parse round trip of what it accepts.
//
// YOLO entry points used (public or @_spi(Engine), hence `@_spi(Engine) import YOLO`): Tensor.parseNumPy(_:path:), Tensor.numPyData(),
// Tensor.shape, Tensor.values.
import FuzzSupport
@_spi(Engine) import YOLO

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let tensor = try? Tensor.parseNumPy(Fuzz.data(data, size), path: "fuzz.npy") else { return 0 }
    // What the reader accepts, the writer must write and the reader read back unchanged.
    let again: Tensor
    do { again = try Tensor.parseNumPy(tensor.numPyData(), path: "roundtrip.npy") } catch {
        fatalError("fuzz-npy: re-encoded tensor \(tensor.shape) does not parse: \(error)")
    }
    precondition(again.shape == tensor.shape, "fuzz-npy: round trip changed the shape \(tensor.shape) → \(again.shape)")
    precondition(again.values.withUnsafeBytes { a in tensor.values.withUnsafeBytes { b in a.elementsEqual(b) } },
                 "fuzz-npy: round trip changed the values")
    return 0
}
