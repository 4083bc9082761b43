// fuzz-model: SwiftYOLO model file (.yolo) bytes → Model(modelFileData:path:residency:) with both residencies,
// then geometry and a forward pass of what loads (Fuzz.runIfSmall).
//
// Every input is tried twice: as given (so the header, size and checksum checks are fuzzed), and with the
// header "repaired" — padded to a multiple of 64, declared file size set, checksum recomputed — so mutations
// of the metadata and blobs get past the checksum and reach the description and tensor readers.
//
// YOLO entry points used (public or @_spi(Engine), hence `@_spi(Engine) import YOLO`): Model.init(modelFileData:path:residency:),
// WeightResidency (.expanded, .codes), ModelFile.magic, ModelFile.headerSize, ModelFile.alignment,
// ModelFile.checksum(_:), Model.description, ModelDescription.geometry(width:height:), plus those listed in
// FuzzSupport.swift (runIfSmall). The repair also hard-codes the header layout of docs/MODEL_FORMAT.md:
// file size u64 at byte 16, checksum u64 at byte 24 (ModelFile.checksumOffset, internal).
import Foundation
import FuzzSupport
@_spi(Engine) import YOLO

func load(_ bytes: Data) {
    guard let model = try? Model(modelFileData: bytes, path: "fuzz.yolo", residency: .expanded) else { return }
    _ = try? model.description.geometry(width: model.description.inputShape.width, height: model.description.inputShape.height)
    Fuzz.runIfSmall(model)
    if let codes = try? Model(modelFileData: bytes, path: "fuzz.yolo", residency: .codes) {
        Fuzz.runIfSmall(codes)
    }
}

/// `bytes` with a consistent file size and checksum, or nil when it does not start like a model file.
func repaired(_ bytes: Data) -> Data? {
    guard bytes.count >= ModelFile.headerSize, bytes.prefix(ModelFile.magic.count).elementsEqual(ModelFile.magic)
    else { return nil }
    var file = [UInt8](bytes)
    file += [UInt8](repeating: 0, count: (ModelFile.alignment - file.count % ModelFile.alignment) % ModelFile.alignment)
    func store(_ value: UInt64, at offset: Int) {
        for k in 0..<8 { file[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
    }
    store(UInt64(file.count), at: 16)
    store(file.withUnsafeBytes { ModelFile.checksum($0) }, at: 24)
    return Data(file)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.data(data, size)
    load(bytes)
    if let fixed = repaired(bytes), fixed != bytes { load(fixed) }
    return 0
}
