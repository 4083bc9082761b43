/// The pointers one layer works on during a forward pass. All memory belongs to a `Workspace`.
@_spi(Engine) public struct LayerIO {
    /// The layer's inputs, in the order of `Layer.inputs`; each holds that layer's output (CHW).
    public var inputs: UnsafeBufferPointer<UnsafePointer<Float>>
    /// Where the layer writes its output: `outputShape.count` floats.
    public var output: UnsafeMutablePointer<Float>
    /// Scratch memory of `scratchCount` floats, shared by all layers (contents undefined on entry),
    /// 64-byte aligned.
    public var scratch: UnsafeMutablePointer<Float>
    /// Worker threads the layer may use (`Parallel`); at least 1. OpenBLAS runs single-threaded
    /// inside each worker, so a layer that calls BLAS splits its product itself.
    public var threads: Int = 1
    /// True when the workspace skipped the layer this one can compute itself (`ConvolutionMaxPool`:
    /// the convolution before it) because nobody reads that layer's output; the layer then computes it,
    /// fused, from its other input.
    public var fused = false

    /// The first (for most layers, the only) input.
    @inlinable public var input: UnsafePointer<Float> { inputs[0] }
}

/// One layer of a network, built for fixed input shapes.
///
/// A layer holds only immutable data (its shapes and weights), so it is `Sendable` and a network
/// can run on many threads at once, each with its own `Workspace`.
@_spi(Engine) public protocol Layer: Sendable {
    /// Indices of the layers whose outputs this layer reads; `-1` is the network input.
    var inputs: [Int] { get }
    /// The shape this layer produces.
    var outputShape: Shape { get }
    /// Floats of scratch memory `forward` needs (e.g. the im2col buffer).
    var scratchCount: Int { get }
    /// How the layer computes, e.g. `im2col+gemm`, `1x1 gemm`, `direct`.
    var algorithm: String { get }
    /// Bytes the layer allocated for itself when it was built (packed or transformed weights, index
    /// tables), not counting the model's weights it shares: what its network costs beyond the model.
    var ownedBytes: Int { get }
    /// Computes the output from the inputs. Must not allocate.
    func forward(_ io: LayerIO)
}

extension Layer {
    public var scratchCount: Int { 0 }
    public var ownedBytes: Int { 0 }
}

/// `count` floats rounded up to whole 64-byte lines (16 floats), so that scratch parts laid end to end stay
/// 64-byte aligned.
func lineRounded(_ count: Int) -> Int { (count + 15) / 16 * 16 }

/// A layer that can also compute the layer before it (`fusedIndex`), fused, when the workspace skips that
/// one (`LayerIO.fused`): `ConvolutionMaxPool`, `ConvolutionPair`.
@_spi(Engine) public protocol FusingLayer: Layer {
    /// The layer this one can compute.
    var fusedIndex: Int { get }
}
