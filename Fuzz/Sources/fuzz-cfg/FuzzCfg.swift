// fuzz-cfg: darknet .cfg text → DarknetConfig → ModelDescription → validation and geometry (at the cfg's
// own size and at the smallest legal size), weight-count and workspace arithmetic, then — for a small
// network — a forward pass with zero weights (Fuzz.runIfSmall), since a cfg the parser accepts must also run.
//
// YOLO entry points used (public or @_spi(Engine), hence `@_spi(Engine) import YOLO`): DarknetConfig.init(text:path:),
// ModelDescription.init(config:), ModelDescription.validate(limits:), ModelDescription.geometry(width:height:),
// ModelDescription.sizeDivisor, ModelDescription.heads, ModelDescription.classCount,
// ModelDescription.inputShape, DarknetWeights.floatCount(for:geometry:),
// Network.estimatedWorkspaceBytes(description:geometry:), Network.checkMemory(_:width:height:budget:),
// plus those listed in FuzzSupport.swift (zeroWeightModel, runIfSmall).
import FuzzSupport
@_spi(Engine) import YOLO

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = Fuzz.text(data, size)
    guard let config = try? DarknetConfig(text: text, path: "fuzz.cfg"),
          let description = try? ModelDescription(config: config) else { return 0 }
    _ = try? description.validate()
    _ = description.classCount
    _ = description.heads.map { $0.spec.anchorPairs }
    let divisor = description.sizeDivisor
    let sizes = [(description.inputShape.width, description.inputShape.height), (divisor, divisor)]
    for (width, height) in sizes {
        guard let geometry = try? description.geometry(width: width, height: height) else { continue }
        _ = DarknetWeights.floatCount(for: description, geometry: geometry)
        _ = Network.estimatedWorkspaceBytes(description: description, geometry: geometry)
    }
    _ = try? Network.checkMemory(description, width: description.inputShape.width,
                                 height: description.inputShape.height, budget: 1 << 30)
    if let model = Fuzz.zeroWeightModel(description) { Fuzz.runIfSmall(model) }
    return 0
}
