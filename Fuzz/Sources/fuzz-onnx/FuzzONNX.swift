// fuzz-onnx: ONNX protobuf bytes → ONNXModel(bytes:path:) (our own wire-format reader), ONNXConverter.model (the
// YOLOv8 graph mapping), then a model file encode/decode round trip and a forward pass of what converts
// (Fuzz.runIfSmall).
//
// YOLO / YOLOConversion entry points used (public or @_spi(Engine)): ONNXModel.init(bytes:path:),
// ONNXConverter.model(_:path:names:), ModelFile.encode(_:note:compressCodes:), Model.init(modelFileData:path:residency:),
// plus those listed in FuzzSupport.swift (runIfSmall).
import Foundation
import FuzzSupport
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOConversion

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = [UInt8](Fuzz.data(data, size))
    guard let onnx = try? ONNXModel(bytes: bytes, path: "fuzz.onnx"),
          let model = try? ONNXConverter.model(onnx, path: "fuzz.onnx") else { return 0 }
    // What converts must write and read back (the converter and the model-file reader apply the same checks).
    let file = ModelFile.encode(model)
    do { _ = try Model(modelFileData: file, path: "fuzz.yolo") } catch {
        fatalError("fuzz-onnx: a converted model does not load back: \(error)")
    }
    Fuzz.runIfSmall(model)
    return 0
}
