// fuzz-weights: darknet .weights bytes → DarknetWeights.load against a small fixed description (TINY_CFG
// below, 214 floats, so valid seeds are 876 bytes), then Model(cfg:weights:) on the same pair, and a forward
// pass of what loads (Fuzz.runIfSmall). DarknetWeights reads only paths, so each input is written to a
// per-process scratch file in /dev/shm first.
//
// YOLO entry points used (public or @_spi(Engine), hence `@_spi(Engine) import YOLO`): DarknetConfig.init(text:path:),
// ModelDescription.init(config:), DarknetWeights.load(_:for:), Model.init(cfg:weights:names:),
// Model.init(description:convolutions:labels:), plus those listed in FuzzSupport.swift (runIfSmall).
// (A Data-based DarknetWeights entry point would remove the scratch file.)
import Foundation
import FuzzSupport
@_spi(Engine) import YOLO

/// The description the weights are read against: a batch-normalized 3x3 convolution (4 filters on 3
/// channels: 4·4 + 4·3·9 = 124 floats), a max-pool, a plain 1x1 convolution (18 filters on 4 channels:
/// 18 + 18·4 = 90 floats) and a YOLO head with 1 class. Header 20 bytes (version 0.2) + 214 floats.
let tinyCfg = """
[net]
width=16
height=16
channels=3

[convolutional]
batch_normalize=1
filters=4
size=3
stride=1
pad=1
activation=leaky

[maxpool]
size=2
stride=2

[convolutional]
filters=18
size=1
stride=1
activation=linear

[yolo]
mask=0,1,2
anchors=10,14,23,27,37,58
classes=1
num=3

"""

let tinyDescription: ModelDescription = {
    do { return try ModelDescription(config: DarknetConfig(text: tinyCfg, path: "tiny.cfg")) } catch {
        fatalError("fuzz-weights: the embedded cfg does not parse: \(error)")
    }
}()
let cfgPath: String = {
    let path = Fuzz.scratchPath("tiny.cfg")
    Fuzz.write(Data(tinyCfg.utf8), to: path)
    return path
}()
let weightsPath = Fuzz.scratchPath("input.weights")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Fuzz.write(Fuzz.data(data, size), to: weightsPath)
    guard let parameters = try? DarknetWeights.load(weightsPath, for: tinyDescription) else { return 0 }
    for (index, p) in parameters {
        precondition(p.weights.buffer.allSatisfy(\.isFinite) && p.biases.buffer.allSatisfy(\.isFinite),
                     "fuzz-weights: layer \(index) loaded non-finite parameters")
    }
    guard let model = try? Model(cfg: cfgPath, weights: weightsPath) else {
        fatalError("fuzz-weights: DarknetWeights.load accepted the file but Model(cfg:weights:) refused it")
    }
    Fuzz.runIfSmall(model)
    return 0
}
