#if YOLO_AVX512
/// The own GEMM micro-kernel and its driver, compiled only with `-D YOLO_AVX512` (the build must also
/// target a CPU with AVX-512, e.g. `-target-cpu znver4`: without it the 16-lane fused multiply-adds
/// would become library calls).
///
/// One kernel call computes a 6 × 64 tile of C in 24 registers of 16 floats: per step of the inner
/// dimension it loads 64 floats of one row of B, broadcasts the 6 values of one column of A's panel
/// and issues 24 fused multiply-adds. Nothing is accumulated into C: the tile is stored once, with
/// bias and activation applied in registers.

// MARK: - Driver

extension GEMM {
    typealias Vector = SIMD16<Float>

    /// One product's operands, shared by the loops over A's panels and B's column blocks.
    struct Operands {
        let k: Int
        let b: UnsafePointer<Float>
        let ldb: Int
        let n: Int
        let c: UnsafeMutablePointer<Float>
        let ldc: Int
        let bias: UnsafePointer<Float>?
        let activation: Activation
        let padded: Bool
        let scratch: UnsafeMutablePointer<Float>?

        /// Runs the kernel over `panels` × all column blocks; `weightsOf(panel)` is that panel's A.
        /// Rows at or past `rowEnd` are not stored.
        @inline(__always)
        func run(panels: Range<Int>, rowEnd: Int, panelsOuter: Bool, weightsOf: (Int) -> UnsafePointer<Float>) {
            let blocks = (n + panelColumns - 1) / panelColumns
            let full = padded ? blocks : n / panelColumns
            let edge = scratch.map { UnsafePointer($0) }
            let tile = scratch.map { $0 + k * panelColumns + k * panelRows }
            if full < blocks {
                // The last, partial column block of B, zero-padded to a whole block.
                let target = scratch!
                let start = full * panelColumns, width = n - start
                for kk in 0..<k {
                    let row = target + kk * panelColumns
                    row.update(from: b + kk * ldb + start, count: width)
                    (row + width).update(repeating: 0, count: panelColumns - width)
                }
            }
            let mode: Int
            switch (bias == nil, activation) {
            case (true, _): mode = 0
            case (false, .leaky): mode = 2
            case (false, .relu): mode = 3
            case (false, .linear), (false, .logistic): mode = 1
            }
            func one(_ panel: Int, _ block: Int, _ weights: UnsafePointer<Float>) {
                let first = panel * panelRows
                let valid = min(panelRows, rowEnd - first)
                let biases = bias.map { $0 + first }
                let column = block * panelColumns
                if block < full {
                    GEMM.kernel6x64(k, weights, b + column, ldb, c + first * ldc + column, ldc, valid, biases, mode)
                    if activation == .logistic {
                        for r in 0..<valid {
                            Activation.logistic.applyBiased(c + (first + r) * ldc + column,
                                                            count: min(panelColumns, n - column), bias: 0)
                        }
                    }
                } else {
                    let tile = tile!
                    GEMM.kernel6x64(k, weights, edge!, panelColumns, tile, panelColumns, valid, biases, mode)
                    let width = n - column
                    for r in 0..<valid {
                        let target = c + (first + r) * ldc + column
                        target.update(from: tile + r * panelColumns, count: width)
                        if activation == .logistic { Activation.logistic.applyBiased(target, count: width, bias: 0) }
                    }
                }
            }
            if panelsOuter {
                for panel in panels {
                    let weights = weightsOf(panel)
                    for block in 0..<blocks { one(panel, block, weights) }
                }
            } else {
                for block in 0..<blocks {
                    for panel in panels { one(panel, block, weightsOf(panel)) }
                }
            }
        }
    }

    // MARK: - Kernel

    /// Bias and activation of one stored vector: mode 0 none, 1 bias, 2 bias + leaky, 3 bias + relu.
    @inline(__always)
    static func finish(_ v: Vector, _ bias: Float, _ mode: Int) -> Vector {
        if mode == 0 { return v }
        let x = v + Vector(repeating: bias)
        switch mode {
        case 2: return x.replacing(with: x * 0.1, where: .!(x .> 0))   // darknet: x > 0 ? x : 0.1·x
        case 3: return x.replacing(with: 0, where: .!(x .> 0))
        default: return x
        }
    }

    /// `C[0..<rows, 0..<64] = A · B (+ bias, activation per `mode`)`: A is one panel (`k × 6`,
    /// column-major), B `k × 64` with rows `ldb` floats apart, C rows `ldc` floats apart.
    @inline(never)
    static func kernel6x64(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                           _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int,
                           _ bias: UnsafePointer<Float>?, _ mode: Int) {
        var c00 = Vector(), c01 = Vector(), c02 = Vector(), c03 = Vector()
        var c10 = Vector(), c11 = Vector(), c12 = Vector(), c13 = Vector()
        var c20 = Vector(), c21 = Vector(), c22 = Vector(), c23 = Vector()
        var c30 = Vector(), c31 = Vector(), c32 = Vector(), c33 = Vector()
        var c40 = Vector(), c41 = Vector(), c42 = Vector(), c43 = Vector()
        var c50 = Vector(), c51 = Vector(), c52 = Vector(), c53 = Vector()
        var ap = a
        var bp = UnsafeRawPointer(b)
        let step = ldb * MemoryLayout<Float>.stride
        for _ in 0..<k {
            let b0 = bp.loadUnaligned(as: Vector.self)
            let b1 = bp.loadUnaligned(fromByteOffset: 64, as: Vector.self)
            let b2 = bp.loadUnaligned(fromByteOffset: 128, as: Vector.self)
            let b3 = bp.loadUnaligned(fromByteOffset: 192, as: Vector.self)
            var s = Vector(repeating: ap[0])
            c00.addProduct(s, b0); c01.addProduct(s, b1); c02.addProduct(s, b2); c03.addProduct(s, b3)
            s = Vector(repeating: ap[1])
            c10.addProduct(s, b0); c11.addProduct(s, b1); c12.addProduct(s, b2); c13.addProduct(s, b3)
            s = Vector(repeating: ap[2])
            c20.addProduct(s, b0); c21.addProduct(s, b1); c22.addProduct(s, b2); c23.addProduct(s, b3)
            s = Vector(repeating: ap[3])
            c30.addProduct(s, b0); c31.addProduct(s, b1); c32.addProduct(s, b2); c33.addProduct(s, b3)
            s = Vector(repeating: ap[4])
            c40.addProduct(s, b0); c41.addProduct(s, b1); c42.addProduct(s, b2); c43.addProduct(s, b3)
            s = Vector(repeating: ap[5])
            c50.addProduct(s, b0); c51.addProduct(s, b1); c52.addProduct(s, b2); c53.addProduct(s, b3)
            ap += panelRows
            bp += step
        }
        @inline(__always)
        func store(_ r: Int, _ v0: Vector, _ v1: Vector, _ v2: Vector, _ v3: Vector) {
            let beta = bias.map { $0[r] } ?? 0
            let p = UnsafeMutableRawPointer(c + r * ldc)
            p.storeBytes(of: finish(v0, beta, mode), as: Vector.self)
            p.storeBytes(of: finish(v1, beta, mode), toByteOffset: 64, as: Vector.self)
            p.storeBytes(of: finish(v2, beta, mode), toByteOffset: 128, as: Vector.self)
            p.storeBytes(of: finish(v3, beta, mode), toByteOffset: 192, as: Vector.self)
        }
        store(0, c00, c01, c02, c03)
        if rows > 1 { store(1, c10, c11, c12, c13) }
        if rows > 2 { store(2, c20, c21, c22, c23) }
        if rows > 3 { store(3, c30, c31, c32, c33) }
        if rows > 4 { store(4, c40, c41, c42, c43) }
        if rows > 5 { store(5, c50, c51, c52, c53) }
    }
}
#endif
