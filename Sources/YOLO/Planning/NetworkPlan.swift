/// Every layer's plan for one network size: the convolutions' `ConvolutionPlan`s (fusions included) and how
/// many threads each layer is worth. Made by `ConvolutionPlanner` rules from the model's description alone,
/// so `yolo info --plan` shows it without building anything.
@_spi(Engine) public struct NetworkPlan: Sendable, Equatable {
    /// Per layer: its plan when it is a convolution, else nil.
    public var convolutions: [ConvolutionPlan?]
    /// Per layer: the most threads worth giving it (`ConvolutionPlanner.threadCap`).
    public var threadCaps: [Int]
    /// The most threads a pass uses.
    public var threads: Int
    /// Per layer: how its output is stored (float, or u8 between int8 layers; `tensorFormats`).
    public var outputs: [TensorFormat]

    /// The plan of `description` at the sizes in `geometry`.
    ///
    /// - Parameters:
    ///   - lutCodes: the convolutions whose weights stay as LUT codes (`WeightResidency.codes`).
    ///   - int8: the convolutions whose weights are int8, with their activations' quantization; they run in
    ///     int8 on `int8Kernel`, or in float when it is nil (a family without int8 kernels).
    ///   - algorithm: `.auto`, or one algorithm for every convolution it applies to (no fusion then).
    public init(description: ModelDescription, geometry: [LayerGeometry], lutCodes: Set<Int> = [],
                int8: [Int: Int8Quantization] = [:], int8Kernel: Int8KernelFamily? = nil,
                algorithm: ConvolutionAlgorithm = .auto, threads: Int, family: KernelFamily = .active) {
        let threads = max(1, threads)
        self.threads = threads
        var plans = [ConvolutionPlan?](repeating: nil, count: description.layers.count)
        var layers = [ConvolutionPlanner.Layer?](repeating: nil, count: description.layers.count)
        for (index, spec) in description.layers.enumerated() {
            guard case .convolution(let s) = spec else { continue }
            let layer = ConvolutionPlanner.Layer(input: geometry[index].inputShapes[0], filters: s.filters, size: s.size,
                                                 stride: s.stride, padding: s.padding, groups: s.groups, activation: s.activation)
            layers[index] = layer
            plans[index] = ConvolutionPlanner.plan(layer, algorithm: algorithm, lutCodes: lutCodes.contains(index),
                                                   int8: int8[index] != nil ? int8Kernel : nil, threads: threads, family: family)
        }
        if algorithm == .auto {
            Self.planFusions(&plans, layers: layers, description: description, geometry: geometry, family: family)
        }
        let flops = LayerTable(description: description, geometry: geometry).rows.map(\.flops)
        threadCaps = zip(flops, geometry).map { ConvolutionPlanner.threadCap(flops: $0, outputs: $1.outputShape.count, threads: threads) }
        // A whole-map product is cut for the threads its layer gets.
        for index in plans.indices {
            guard let plan = plans[index], case .gemm = plan.algorithm, let layer = layers[index] else { continue }
            let lutRows: Int?
            if case .lutCodes(let rows) = plan.weights { lutRows = rows } else { lutRows = nil }
            plans[index]?.algorithm = .gemm(split: ConvolutionPlanner.gemmSplit(
                layer, threads: threadCaps[index], family: family, int8: plan.precision == .fp32 ? nil : int8Kernel,
                lutBlockRows: lutRows))
        }
        convolutions = plans
        outputs = Self.tensorFormats(description: description, geometry: geometry, plans: plans, int8: int8)
    }

    /// Marks each float convolution that the layer after it computes: a max-pool (`ConvolutionMaxPool`) or a
    /// convolution (`ConvolutionPair`), when nothing else reads its output, it is not a head, and the layer
    /// after it does not itself compute the one before it.
    private static func planFusions(_ plans: inout [ConvolutionPlan?], layers: [ConvolutionPlanner.Layer?],
                                    description: ModelDescription, geometry: [LayerGeometry], family: KernelFamily) {
        let heads = Set(description.heads.map(\.index))
        for index in description.layers.indices.dropFirst() {
            let first = index - 1
            guard let plan = plans[first], let layer = layers[first], plan.weights == .float, plan.precision == .fp32,
                  plan.algorithm != .grouped, !heads.contains(first),
                  first == 0 || plans[first - 1]?.fusion == nil,
                  !geometry.indices.contains(where: { $0 != index && geometry[$0].inputs.contains(first) }),
                  geometry[index].inputs == [first] else { continue }
            switch description.layers[index] {
            case .maxPool(let pool):
                guard case .convolution(let s) = description.layers[first],
                      ConvolutionPlanner.fusesWithMaxPool(layer, activation: s.activation, pool: pool, family: family) else { continue }
                plans[first]?.fusion = .maxPool(bandRows: ConvolutionPlanner.directBandRows(layer))
            case .convolution:
                guard let next = plans[index], let nextLayer = layers[index],
                      ConvolutionPlanner.fusesIntoNext(plan, next, secondLayer: nextLayer, firstOutputHeight: layer.output.height,
                                                       family: family)
                else { continue }
                plans[first]?.fusion = .nextConvolution
            default:
                continue
            }
        }
    }

    /// One line per layer: index, type, output, threads worth giving it, and the convolution's plan.
    public func render(description: ModelDescription, geometry: [LayerGeometry]) -> String {
        var lines = ["layer  type           output          threads  plan"]
        for (index, spec) in description.layers.enumerated() {
            let type: String
            switch spec {
            case .convolution(let s): type = "conv \(s.size)x\(s.size)/\(s.stride)" + (s.isGrouped ? " g" : "")
            case .attention(let s): type = "attention \(s.heads)h"
            case .maxPool(let s): type = "max \(s.size)x\(s.size)/\(s.stride)"
            case .upsample: type = "upsample"
            case .route: type = "route"
            case .shortcut: type = "shortcut"
            case .yolo(let s): type = s.isAnchorFree ? "detect" : "yolo"
            }
            let output = "\(geometry[index].outputShape.width)x\(geometry[index].outputShape.height)x\(geometry[index].outputShape.channels)"
            var line = String(index).leftPadded(5) + "  " + type.padding(toLength: 13, withPad: " ", startingAt: 0) + "  "
                + output.padding(toLength: 14, withPad: " ", startingAt: 0) + "  " + String(threadCaps[index]).leftPadded(7)
            if let plan = convolutions[index] {
                line += "  " + plan.description
                if plan.precision != .fp32 {
                    let input = geometry[index].inputs[0]
                    line += "; \(input >= 0 ? outputs[input].name : "float") in, \(outputs[index].name) out"
                }
            } else if case .bytes = outputs[index] {
                line += "  on u8"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string right-aligned in `width` characters (longer strings stay whole).
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
