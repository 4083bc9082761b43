/// The entry points and data layouts of one int8 GEMM micro-kernel (`u8 × s8 → s32`): AVX512-VNNI's
/// `vpdpbusd` (YOLOKernelsVNNI) or AVX2's `vpmaddwd` on operands widened to 16 bits (YOLOKernelsAVX2).
/// Like `TileKernel`, the entry points are C function pointers with C-representable arguments, the only
/// way the ISA code runs.
///
/// **The product.** `C[r, j] = epilogue(Σ_k A[r, k] · B[k, j])`: A is the weights (s8), B the unfolded
/// activations (u8), the sums exact in s32 (|Σ| < 2³¹ for K < 66,000), then the epilogue in registers
/// (`Int8Epilogue`): zero-point compensation, scale, bias, activation, and either a u8 store
/// (requantized) or a float store.
///
/// **Layouts.** K is padded to a multiple of 4 (`paddedK`); the padding weights are 0, so B's padding
/// rows may hold anything. Elements are `elementBytes` wide (1: s8/u8; 2: s16, the bytes widened) and
/// grouped by `group` consecutive k (4 for `vpdpbusd`'s quads, 2 for `vpmaddwd`'s pairs):
/// - A, per panel of `tileRows` rows (the last one zero-padded): `[K/group][tileRows][group]` elements,
///   so one row's group is one 32-bit broadcast;
/// - B, per block of `tileColumns` columns (zero-padded): `[K/group][tileColumns][group]` elements, so one
///   column's group is one 32-bit lane.
public struct Int8Kernel: Sendable {
    /// A column of tiles: for the panels of A `aStride` bytes apart (rows `0 ..< rows` of C; the last
    /// panel may be partial) against one packed block of B, `C = epilogue(A · B)` for all `tileColumns`
    /// columns of the block, C's rows `ldc` elements apart (u8 or float, as the epilogue says):
    /// `(steps, a, aStride, b, c, ldc, rows, epilogue)`, `steps` = `paddedK / group`, `epilogue` an
    /// `Int8Epilogue` whose per-row arrays start at row 0.
    public typealias Sweep = @convention(c) (
        Int, UnsafeRawPointer, Int, UnsafeRawPointer, UnsafeMutableRawPointer, Int, Int, UnsafeRawPointer) -> Void
    /// Packs `columns` (≤ `tileColumns`) columns of B's `k` rows (u8, rows `ld` bytes apart) into one block
    /// at `target` (`blockBytes(k)` bytes, padding zero): `(k, source, ld, columns, target)`.
    public typealias PackB = @convention(c) (Int, UnsafePointer<UInt8>, Int, Int, UnsafeMutableRawPointer) -> Void
    /// Quantizes `count` floats to u8 codes, `Int8Epilogue.code(x · reciprocal, zeroPoint)` each (a float input
    /// entering an int8 layer): `(count, source, reciprocal, zeroPoint, target)`.
    public typealias Quantize = @convention(c) (Int, UnsafePointer<Float>, Float, Float, UnsafeMutablePointer<UInt8>) -> Void
    /// Int8 Winograd F(2×2, 3×3)'s output transform and epilogue (kernels that store sums), for one filter: from the
    /// filter's 16 rows of a chunk's products `M_ξ` (`Int8WinogradLayout`) for tiles `first ..< end` (the chunk's, from
    /// its first tile on), each output `(Aᵀ M A) / 4` (the exact sum), then the epilogue (`Int8Epilogue`, rows at
    /// filter 0) into the filter's plane of the output (u8 or float): `(products, layout, first, end, filter, epilogue,
    /// output)`.
    public typealias WinogradOutput = @convention(c) (
        UnsafePointer<Int32>, UnsafeRawPointer, Int, Int, Int, UnsafeRawPointer, UnsafeMutableRawPointer) -> Void
    /// Int8 Winograd F(2×2, 3×3)'s input transform, for the kernels with its output transform: `V = Bᵀ d B` (s16, exact)
    /// of the tiles `first ..< end` (a chunk's, from a block's first tile on) of channels `2·pair` and `2·pair + 1` (0 past
    /// the last channel) of the padded u8 planes (`Int8WinogradInputLayout`), the two channels' values of a tile in one
    /// 32-bit lane, into the chunk's `blocks` packed blocks of B per ξ (block `b` of `ξ` at `(ξ·blocks + b)·steps`
    /// lanes of 16, the pair's at lane row `pair`): `(planes, layout, pair, first, end, blocks, target)`.
    public typealias WinogradInput = @convention(c) (
        UnsafePointer<UInt8>, UnsafeRawPointer, Int, Int, Int, Int, UnsafeMutableRawPointer) -> Void
    /// Int8 Winograd F(4×4, 3×3)'s output transform and epilogue: as `WinogradOutput`, with 36 rows of products per filter
    /// (ξ = 6i + j), 4×4 outputs per tile, each `(Â M Âᵀ) · 9⁻¹ >> 6` modulo 2³² (the exact sum; `Int8WinogradGeometry`).
    public typealias Winograd4Output = WinogradOutput
    /// Int8 Winograd F(4×4, 3×3)'s input transform: as `WinogradInput`, with 6 × 6 input codes per tile (tile `t`'s from
    /// row `4·(t / tilesX)`, column `4·(t % tilesX)`) and 36 values of V (|V| ≤ 20,400, s16).
    public typealias Winograd4Input = WinogradInput

    /// The direct product of a 3×3 convolution (`Int8Convolution`'s direct path): as `Sweep`, but step `s`
    /// of every tile reads its `tileColumns` columns of quads at `b + offsets[s]` bytes, a plane of the
    /// quad-packed input (`PackQuads`) shifted by the step's tap, instead of a packed block:
    /// `(steps, a, aStride, b, offsets, c, ldc, rows, epilogue)`.
    public typealias DirectSweep = @convention(c) (
        Int, UnsafeRawPointer, Int, UnsafeRawPointer, UnsafePointer<Int32>, UnsafeMutableRawPointer, Int, Int, UnsafeRawPointer) -> Void
    /// Packs channels `4·firstQuad ..< 4·endQuad` of a CHW u8 map into planes of quads (each element the 4
    /// channels' bytes of one pixel): per quad `q` and phase `(a, b)` of the stride (1: the map; 2: the pixels
    /// `(2Y + a, 2X + b)`), plane `q·stride² + a·stride + b`, `planeStride` quads at `target + 4·plane·planeStride`,
    /// pixel `(Y, X)` of the phase at quad `(Y + 1)·pitch + X + 1` (`pitch` > the phase's width: the pad quads
    /// between rows serve as the right pad of one and the left pad of the next), `pad` everywhere else and in the
    /// lanes of channels past the map's; the planes `firstPlane ..< endPlane` only (a thread's share: an RGB input has
    /// one quad, but four planes at stride 2): `(source, channels, height, width, pad, stride, pitch, firstPlane,
    /// endPlane, planeStride, target)`.
    public typealias PackQuads = @convention(c) (
        UnsafePointer<UInt8>, Int, Int, Int, UInt8, Int, Int, Int, Int, Int, UnsafeMutableRawPointer) -> Void

    /// Rows × columns of C one tile computes.
    public let tileRows: Int
    public let tileColumns: Int
    /// Consecutive k values in one 32-bit group (4: u8 quads; 2: s16 pairs).
    public let group: Int
    /// Bytes of one element of the packed A and B (1, or 2 when widened to s16).
    public let elementBytes: Int
    public let sweep: Sweep
    public let packB: PackB
    public let quantize: Quantize
    /// The direct path's entry points (kernels with 1-byte quads only), nil when the kernel has none.
    public let directSweep: DirectSweep?
    public let packQuads: PackQuads?
    /// The int8 Winograd F(2×2, 3×3) path's output transform, nil for a kernel without that path. A kernel with it
    /// has `sweep` honour `Int8Epilogue.sums` (`storesSums`) for the path's products, whose operands are the
    /// transforms widened to s16 (kernels of 2-byte elements only).
    public let winogradOutput: WinogradOutput?
    /// The same path's input transform (nil exactly when `winogradOutput` is).
    public let winogradInput: WinogradInput?
    /// The F(4×4, 3×3) transforms, nil for a kernel with F(2×2, 3×3) only (both or neither; only with `winogradOutput`).
    public let winograd4Input: Winograd4Input?
    public let winograd4Output: Winograd4Output?

    /// True when `sweep` honours `Int8Epilogue.sums` (stores the exact s32 sums): the kernels with the Winograd path.
    @inlinable public var storesSums: Bool { winogradOutput != nil }

    public init(tileRows: Int, tileColumns: Int, group: Int, elementBytes: Int, sweep: Sweep, packB: PackB, quantize: Quantize,
                directSweep: DirectSweep? = nil, packQuads: PackQuads? = nil, winogradInput: WinogradInput? = nil,
                winogradOutput: WinogradOutput? = nil, winograd4Input: Winograd4Input? = nil, winograd4Output: Winograd4Output? = nil) {
        precondition(winogradOutput == nil || elementBytes == 2, "Int8Kernel: s32 sums of s16 operands only")
        precondition((winogradInput == nil) == (winogradOutput == nil), "Int8Kernel: the Winograd path needs both transforms")
        precondition((winograd4Input == nil) == (winograd4Output == nil) && (winograd4Output == nil || winogradOutput != nil),
                     "Int8Kernel: F(4x4, 3x3) needs both transforms, beside F(2x2, 3x3)'s")
        self.winogradInput = winogradInput
        self.winogradOutput = winogradOutput
        self.winograd4Input = winograd4Input
        self.winograd4Output = winograd4Output
        precondition((directSweep == nil) == (packQuads == nil) && (directSweep == nil || group == 4 && elementBytes == 1),
                     "Int8Kernel: the direct path needs both entry points and 1-byte quads")
        self.directSweep = directSweep
        self.packQuads = packQuads
        precondition(group * elementBytes == 4, "Int8Kernel: a group is one 32-bit lane")
        (self.tileRows, self.tileColumns, self.group, self.elementBytes) = (tileRows, tileColumns, group, elementBytes)
        self.sweep = sweep
        self.packB = packB
        self.quantize = quantize
    }

    /// K rounded up to a multiple of 4.
    @inlinable public static func paddedK(_ k: Int) -> Int { (k + 3) / 4 * 4 }

    /// Bytes of one packed block of B for `k` rows.
    @inlinable public func blockBytes(_ k: Int) -> Int { Int8Kernel.paddedK(k) * tileColumns * elementBytes }

    /// Bytes of one packed panel of A for `k` columns.
    @inlinable public func panelBytes(_ k: Int) -> Int { Int8Kernel.paddedK(k) * tileRows * elementBytes }
}

/// Where a chunk of int8 Winograd F(m×m, 3×3)'s products lie (`Int8Kernel.WinogradOutput`): filter `f`'s row of tiles
/// of `M_ξ` (ξ = (m + 2)·i + j) at `ξ · productStride + f · filterStride` s32 sums (tile `t` of the chunk at `t`; a row of
/// 8 tiles may be read from any tile on), for an output of `height × width` per filter, `tilesX` tiles a row
/// (tile `t`'s top-left output at `(m·(t / tilesX), m·(t % tilesX))`).
@frozen
public struct Int8WinogradLayout {
    public var productStride: Int, filterStride: Int, tilesX: Int, height: Int, width: Int

    @inlinable
    public init(productStride: Int, filterStride: Int, tilesX: Int, height: Int, width: Int) {
        (self.productStride, self.filterStride, self.tilesX, self.height, self.width) = (productStride, filterStride, tilesX, height, width)
    }
}

/// The padded input planes of int8 Winograd F(m×m, 3×3) (`Int8Kernel.WinogradInput`): channel `c`'s plane at
/// `c · planeBytes`, rows `paddedWidth` bytes apart, tile `t`'s (m + 2)² inputs from row `m·(t / tilesX)`, column
/// `m·(t % tilesX)` (a group of 16 tiles of 2 from any tile on reads 34 columns of a row, one of 8 tiles of 4, 36);
/// `channels` channels, `steps` lane rows (pairs of channels) per packed block.
@frozen
public struct Int8WinogradInputLayout {
    public var channels: Int, planeBytes: Int, paddedWidth: Int, tilesX: Int, steps: Int

    @inlinable
    public init(channels: Int, planeBytes: Int, paddedWidth: Int, tilesX: Int, steps: Int) {
        (self.channels, self.planeBytes, self.paddedWidth, self.tilesX, self.steps) = (channels, planeBytes, paddedWidth, tilesX, steps)
    }
}

/// What an int8 tile does with each exact sum `acc` of row `r` (the same IEEE operations in every kernel
/// and in `value`, so every kernel gives the same bits):
///
///     f = activation(Float(acc + compensation[r]) · multipliers[r] + biases[r])   (`Int8Epilogue.activate`)
///     u8 output:    q = roundToNearestEven(min(max(g + zeroPoint, 0), 255)),
///                   g = f for a piecewise-linear activation, f · outputReciprocal for the others
///     float output: f
///
/// (each operation rounded on its own: no fused multiply-add). For a layer with input `x ≈ sᵢ(q − zᵢ)`, weights
/// `w ≈ s_w[r]·w_q` and output `y ≈ sₒ(q − zₒ)`: `compensation[r] = −zᵢ·Σₖ w_q[r, k]` and `zeroPoint = zₒ`;
/// for a u8 output with a piecewise-linear activation, which commutes with the division by `sₒ > 0`,
/// `multipliers[r] = s_w[r]·sᵢ/sₒ` and `biases[r] = b[r]/sₒ` (the division costs nothing at the store);
/// otherwise `multipliers[r] = s_w[r]·sᵢ`, `biases[r] = b[r]`, and a u8 output divides after the activation
/// (`outputReciprocal = 1/sₒ`): logistic, swish and mish take real values, not codes.
@frozen
public struct Int8Epilogue {
    public var compensation: UnsafePointer<Int32>
    public var multipliers: UnsafePointer<Float>
    public var biases: UnsafePointer<Float>
    /// `Activation.code`.
    public var activation: Int
    /// The u8 output's zero point (unused for float output).
    public var zeroPoint: Float
    /// True: C holds u8; false: float.
    public var bytes: Bool
    /// `1/sₒ`: what a u8 output after a transcendental activation (logistic, swish, mish) is multiplied by
    /// before its zero point is added (unused otherwise).
    public var outputReciprocal: Float
    /// True: C holds the exact sums `Σ A·B` as s32, nothing else applied (kernels with `Int8Kernel.storesSums`).
    public var sums: Bool

    @inlinable
    public init(compensation: UnsafePointer<Int32>, multipliers: UnsafePointer<Float>, biases: UnsafePointer<Float>,
                activation: Int, zeroPoint: Float, bytes: Bool, outputReciprocal: Float = 1, sums: Bool = false) {
        (self.compensation, self.multipliers, self.biases) = (compensation, multipliers, biases)
        (self.activation, self.zeroPoint, self.bytes) = (activation, zeroPoint, bytes)
        self.outputReciprocal = outputReciprocal
        self.sums = sums
    }

    /// True when a u8 output is divided by its scale after the activation (`outputReciprocal`): the activation
    /// is not piecewise-linear.
    @inlinable public var scalesAfterActivation: Bool { bytes && !Activation(code: activation).isPiecewiseLinear }

    /// Bytes of one element of C.
    @inlinable public var outputBytes: Int { bytes && !sums ? 1 : 4 }

    /// The epilogue of the rows from `row` on.
    @inlinable
    public func rows(from row: Int) -> Int8Epilogue {
        Int8Epilogue(compensation: compensation + row, multipliers: multipliers + row, biases: biases + row,
                     activation: activation, zeroPoint: zeroPoint, bytes: bytes, outputReciprocal: outputReciprocal, sums: sums)
    }

    /// The activated value `f` of sum `acc` of row `row` (the float output; the reference the kernels match).
    @inlinable
    public func real(_ acc: Int32, row: Int) -> Float {
        let x = Float(acc &+ compensation[row])
        let scaled = x * multipliers[row]
        return Int8Epilogue.activate(activation, scaled + biases[row])
    }

    /// The activation of the int8 stores: `Activation`'s, but logistic and swish on the fused-multiply-add
    /// exponential (`FusedExponential`), which the kernels compute inline at the store.
    @inlinable
    public static func activate(_ code: Int, _ x: Float) -> Float {
        switch Activation(code: code) {
        case .logistic: return FusedExponential.logistic(x)
        case .swish: return FusedExponential.swish(x)
        case let activation: return activation(x)
        }
    }

    /// The u8 code of sum `acc` of row `row` (`bytes` output).
    @inlinable
    public func code(_ acc: Int32, row: Int) -> UInt8 {
        let f = real(acc, row: row)
        return Int8Epilogue.code(scalesAfterActivation ? f * outputReciprocal : f, zeroPoint: zeroPoint)
    }

    /// `roundToNearestEven(min(max(f + zeroPoint, 0), 255))` (NaN: 0). Rounded by adding and subtracting
    /// 1.5 · 2²³, which leaves the nearest integer (ties to even) of any value in 0...255 under the default
    /// rounding mode, in two baseline instructions (`rounded(.toNearestOrEven)` is a library call on x86-64
    /// without SSE4.1).
    @inlinable
    public static func code(_ f: Float, zeroPoint: Float) -> UInt8 {
        let shifted = f + zeroPoint
        let clamped: Float = shifted > 0 ? (shifted < 255 ? shifted : 255) : 0
        let magic: Float = 12_582_912
        return UInt8((clamped + magic) - magic)
    }
}
