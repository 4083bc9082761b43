import Foundation
@_spi(Engine) @testable import YOLO

/// Helpers shared by the layer tests: deterministic data, plain reference loops, one-layer runs.
enum LayerTestSupport {
    /// `count` values in [-1, 1) from a fixed linear congruential sequence.
    static func values(_ count: Int, seed: UInt32) -> [Float] {
        var state = seed &* 2_654_435_761 &+ 1
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(state >> 8) / Float(1 << 23) - 1
        }
    }

    /// The arguments of one `directConvolution`, as the key of its memo.
    private struct ConvolutionKey: Hashable {
        let input: [Float], weights: [Float], biases: [Float]
        let channels: Int, height: Int, width: Int, filters: Int, size: Int, stride: Int, padding: Int
        let activation: Activation
    }

    /// Results of `directConvolution` already computed in this run: tests that compare several algorithms,
    /// thread counts or kernels with the same convolution share one reference instead of recomputing it.
    private static let convolutions = Locked<[ConvolutionKey: (output: [Float], scale: [Double])]>([:])

    /// Plain direct convolution in Double: returns the output and, per output, Σ|w·x| + |b| (the
    /// scale that float rounding errors are proportional to). Computed once per distinct set of arguments.
    static func directConvolution(_ input: [Float], shape: Shape, weights: [Float], biases: [Float], filters: Int,
                                  size: Int, stride: Int, padding: Int, activation: Activation)
        -> (output: [Float], scale: [Double]) {
        let key = ConvolutionKey(input: input, weights: weights, biases: biases, channels: shape.channels, height: shape.height,
                                 width: shape.width, filters: filters, size: size, stride: stride, padding: padding,
                                 activation: activation)
        if let known = convolutions.withLock({ $0[key] }) { return known }
        let result = plainConvolution(input, shape: shape, weights: weights, biases: biases, filters: filters, size: size,
                                      stride: stride, padding: padding, activation: activation)
        convolutions.withLock { $0[key] = result }
        return result
    }

    /// `directConvolution`'s loop.
    private static func plainConvolution(_ input: [Float], shape: Shape, weights: [Float], biases: [Float], filters: Int,
                                         size: Int, stride: Int, padding: Int, activation: Activation)
        -> (output: [Float], scale: [Double]) {
        let out = Convolution.outputShape(input: shape, filters: filters, size: size, stride: stride, padding: padding)
        var output = [Float](repeating: 0, count: out.count)
        var scale = [Double](repeating: 0, count: out.count)
        for f in 0..<filters {
            for oy in 0..<out.height {
                for ox in 0..<out.width {
                    var sum = Double(biases[f])
                    var magnitude = abs(Double(biases[f]))
                    for c in 0..<shape.channels {
                        for ky in 0..<size {
                            for kx in 0..<size {
                                let y = oy * stride + ky - padding, x = ox * stride + kx - padding
                                guard y >= 0, y < shape.height, x >= 0, x < shape.width else { continue }
                                let term = Double(weights[((f * shape.channels + c) * size + ky) * size + kx])
                                    * Double(input[(c * shape.height + y) * shape.width + x])
                                sum += term
                                magnitude += abs(term)
                            }
                        }
                    }
                    let index = (f * out.height + oy) * out.width + ox
                    output[index] = activation(Float(sum))
                    scale[index] = magnitude
                }
            }
        }
        return (output, scale)
    }

    /// Runs one single-input layer on `input` with `threads` workers; returns its output.
    static func run(_ layer: any Layer, input: [Float], threads: Int) -> [Float] {
        var output = [Float](repeating: .nan, count: layer.outputShape.count)
        // 64-byte aligned, as Workspace provides it.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(layer.scratchCount, 1) * 4, alignment: 64)
        defer { raw.deallocate() }
        let scratch = raw.bindMemory(to: Float.self, capacity: max(layer.scratchCount, 1))
        scratch.initialize(repeating: .nan, count: max(layer.scratchCount, 1))
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                var pointer: UnsafePointer<Float> = source.baseAddress!
                withUnsafePointer(to: &pointer) { table in
                    layer.forward(LayerIO(inputs: UnsafeBufferPointer(start: table, count: 1),
                                          output: destination.baseAddress!, scratch: scratch, threads: threads))
                }
            }
        }
        return output
    }

    /// Runs one single-input layer on u8 codes (a max-pool or upsample between int8 layers) with `threads` workers;
    /// returns its output codes (0xAB where it wrote nothing).
    static func runBytes(_ layer: any Layer, input: [UInt8], threads: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0xAB, count: layer.outputShape.count)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: max(layer.scratchCount, 16))
        defer { scratch.deallocate() }
        input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                var pointer = source.baseAddress!.assumingMemoryBound(to: Float.self)
                withUnsafePointer(to: &pointer) { table in
                    layer.forward(LayerIO(inputs: UnsafeBufferPointer(start: table, count: 1),
                                          output: destination.baseAddress!.assumingMemoryBound(to: Float.self), scratch: scratch,
                                          threads: threads))
                }
            }
        }
        return output
    }

    /// Runs a `FusingLayer` as a workspace that skipped the layer before it would (`LayerIO.fused`; input 0,
    /// that layer's output, is never read, input 1 is `input`); stale scratch is NaN so it cannot leak in.
    static func runFused(_ layer: any FusingLayer, input: [Float], threads: Int) -> [Float] {
        var output = [Float](repeating: .nan, count: layer.outputShape.count)
        let count = max(layer.scratchCount, 1)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * 4, alignment: 64)
        defer { raw.deallocate() }
        let scratch = raw.bindMemory(to: Float.self, capacity: count)
        scratch.initialize(repeating: .nan, count: count)
        let unused = [Float](repeating: .nan, count: 1)
        input.withUnsafeBufferPointer { source in
            unused.withUnsafeBufferPointer { skipped in
                output.withUnsafeMutableBufferPointer { destination in
                    let table = [skipped.baseAddress!, source.baseAddress!]
                    table.withUnsafeBufferPointer { inputs in
                        layer.forward(LayerIO(inputs: inputs, output: destination.baseAddress!, scratch: scratch,
                                              threads: threads, fused: true))
                    }
                }
            }
        }
        return output
    }
}

/// Runs one layer on `inputs` with a fresh workspace-like set of buffers and returns its output.
func runLayer(_ layer: any Layer, inputs: [[Float]], threads: Int = 1) -> [Float] {
    var output = [Float](repeating: .nan, count: layer.outputShape.count)
    var scratch = [Float](repeating: .nan, count: max(layer.scratchCount, 1))
    let buffers = inputs.map { values -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: max(values.count, 1))
        p.initialize(from: values, count: values.count)
        return p
    }
    defer { buffers.forEach { $0.deallocate() } }
    let pointers = buffers.map { UnsafePointer($0) }
    pointers.withUnsafeBufferPointer { inputPointers in
        output.withUnsafeMutableBufferPointer { out in
            scratch.withUnsafeMutableBufferPointer { s in
                layer.forward(LayerIO(inputs: inputPointers, output: out.baseAddress!, scratch: s.baseAddress!, threads: threads))
            }
        }
    }
    return output
}
