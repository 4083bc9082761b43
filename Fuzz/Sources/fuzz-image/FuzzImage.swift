// fuzz-image: JPEG / PNG bytes (EXIF orientation included) → Image.init(data:name:options:), with the default
// options (what `yolo detect` uses) and with orientation off, a small pixel limit and a
// minimum size (JPEG DCT scaling).
//
// YOLO entry points used (all public, so a plain `import YOLO`): Image.init(data:name:options:),
// ImageDecodingOptions.init(applyOrientation:maxPixels:...), Image.width / .height / .pixels.
import FuzzSupport
import YOLO

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.data(data, size)
    if let image = try? Image(data: bytes, name: "fuzz.img") {
        precondition(image.pixels.count == image.width * image.height * 3,
                     "fuzz-image: \(image.width)x\(image.height) image holds \(image.pixels.count) bytes")
    }
    var options = ImageDecodingOptions()
    options.applyOrientation = false
    options.maxPixels = 1 << 16
    options.minimumSize = (width: 16, height: 16)  // JPEG: decode at a reduced DCT scale
    _ = try? Image(data: bytes, name: "fuzz.img", options: options)
    return 0
}
