/// How one tensor (a layer's output) is stored in the workspace.
@_spi(Engine) public enum TensorFormat: Sendable, Equatable {
    /// float32, CHW.
    case float
    /// u8 codes, CHW, with this quantization (between int8 layers).
    case bytes(ActivationQuantization)

    /// Bytes per element.
    public var elementBytes: Int {
        if case .bytes = self { return 1 }
        return 4
    }

    /// `float` or `u8`.
    public var name: String { elementBytes == 1 ? "u8" : "float" }
}

/// The quantization of an int8 convolution's activations, as the planner needs it.
@_spi(Engine) public struct Int8Quantization: Sendable, Equatable {
    /// How its input is quantized.
    public var input: ActivationQuantization
    /// How its output is quantized when its readers take u8; nil: float output only.
    public var output: ActivationQuantization?

    public init(input: ActivationQuantization, output: ActivationQuantization?) {
        (self.input, self.output) = (input, output)
    }
}

extension NetworkPlan {
    /// Each layer's output format: activations stay u8 between int8 layers, and become float where a layer
    /// needs floats.
    ///
    /// An int8 convolution with an output quantization writes u8; a max-pool, a route (of one source, or of
    /// sources in one u8 format) and an upsample by scale 1 keep the format of their input; everything else
    /// writes float. Then, while some layer reads u8 it cannot take (a float convolution, a head, a shortcut,
    /// a route of mixed formats, an int8 convolution expecting another quantization), the int8 convolutions
    /// that produced those bytes write float instead (their epilogue stores floats: no extra pass), and an
    /// int8 convolution reading floats quantizes them itself. Only demotions happen, so it ends.
    static func tensorFormats(description: ModelDescription, geometry: [LayerGeometry], plans: [ConvolutionPlan?],
                              int8: [Int: Int8Quantization]) -> [TensorFormat] {
        let layers = description.layers
        var writesBytes = layers.indices.map { index in
            plans[index].map { $0.precision != .fp32 } == true && int8[index]?.output != nil
        }
        func derive() -> [TensorFormat] {
            var formats = [TensorFormat](repeating: .float, count: layers.count)
            func format(_ source: Int) -> TensorFormat { source < 0 ? .float : formats[source] }
            for (index, spec) in layers.enumerated() {
                let inputs = geometry[index].inputs
                switch spec {
                case .convolution:
                    if writesBytes[index], let q = int8[index]?.output { formats[index] = .bytes(q) }
                case .maxPool:
                    formats[index] = format(inputs[0])
                case .upsample(let s):
                    formats[index] = s.scale == 1 ? format(inputs[0]) : .float
                case .route:
                    let sources = inputs.map(format)
                    formats[index] = sources.allSatisfy { $0 == sources[0] } ? sources[0] : .float
                case .shortcut, .yolo, .attention:
                    break
                }
            }
            return formats
        }
        /// The int8 convolutions whose bytes reach `source` write float.
        func demote(_ source: Int) {
            guard source >= 0 else { return }
            if case .convolution = layers[source] {
                writesBytes[source] = false
            } else {
                for input in geometry[source].inputs { demote(input) }
            }
        }
        var formats = derive()
        while true {
            var demoted = false
            for (index, spec) in layers.enumerated() {
                for source in geometry[index].inputs where source >= 0 {
                    guard case .bytes(let q) = formats[source] else { continue }
                    let takesBytes: Bool
                    switch spec {
                    case .convolution: takesBytes = plans[index]?.precision != .fp32 && int8[index]?.input == q
                    case .maxPool: takesBytes = true
                    case .upsample(let s): takesBytes = s.scale == 1
                    case .route: takesBytes = formats[index] != .float
                    case .shortcut, .yolo, .attention: takesBytes = false
                    }
                    if !takesBytes {
                        demote(source)
                        demoted = true
                    }
                }
            }
            guard demoted else { return formats }
            formats = derive()
        }
    }
}
