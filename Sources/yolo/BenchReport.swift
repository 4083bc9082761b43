import Foundation
@_spi(Engine) import YOLO

/// What `yolo bench` measured, and its renderings: text table, JSON, CSV and an SVG bar chart.
struct BenchReport: Encodable {
    struct Machine: Encodable {
        var cpu: String
        /// SIMD features the CPU reports (/proc/cpuinfo).
        var simd: [String]
        var blasConfig: String
        /// What runs the convolutions' products (`GEMM.kernelDescription`).
        var gemm: String
        /// The kernel family that ran (`avx512`, `avx2`, `portable`) and why it was chosen.
        var kernel: String
        var kernelReason: String
        /// The int8 kernel the model's int8 layers run on (`avx512vnni`, `avx2`), nil when the family has none.
        var int8Kernel: String?
        /// `OPENBLAS_CORETYPE` as set in the environment, nil when unset (OpenBLAS autodetects).
        var openblasCoretype: String?

        static var current: Machine {
            let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            func field(_ name: String) -> String? {
                info.split(separator: "\n").first { $0.hasPrefix(name) }
                    .flatMap { $0.split(separator: ":", maxSplits: 1).last }
                    .map { $0.trimmingCharacters(in: .whitespaces) }
            }
            let flags = Set((field("flags") ?? "").split(separator: " ").map(String.init))
            let wanted = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"]
            // The family and model numbers tell CPU generations apart that share a name (AMD EPYC on a VM:
            // family 25 model 17 is Zen 4, family 26 is Zen 5).
            let generation = [("cpu family", "family"), ("model\t", "model")].compactMap { key, label in
                field(key).map { "\(label) \($0)" }
            }
            let name = field("model name") ?? "unknown"
            return Machine(cpu: generation.isEmpty ? name : "\(name) (\(generation.joined(separator: " ")))",
                           simd: wanted.filter(flags.contains),
                           blasConfig: BLAS.configuration, gemm: GEMM.kernelDescription,
                           kernel: KernelFamily.active.name.rawValue, kernelReason: KernelFamily.reason,
                           int8Kernel: KernelFamily.active.int8Kernel?.name.rawValue,
                           openblasCoretype: ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"])
        }
    }

    struct Layer: Encodable {
        var index: Int
        var type: String
        var output: String
        /// Median over the timed runs, milliseconds.
        var ms: Double
        /// Fastest timed run, milliseconds (least disturbed by other processes).
        var minMs: Double
        /// Share of the sum of layer medians.
        var percent: Double
        var gflops: Double
        var algorithm: String
    }

    /// Median milliseconds of the detection stages of one `Detector.detect` call.
    struct Stages: Encodable {
        var image: String
        var preprocess: Double
        var forward: Double
        var decode: Double
        var suppress: Double

        enum CodingKeys: String, CodingKey {
            case image, preprocess = "preprocess_ms", forward = "forward_ms", decode = "decode_ms", suppress = "nms_ms"
        }
    }

    struct Result: Encodable {
        var threads: Int
        var blasCore: String
        /// Every timed pass's milliseconds, in order (so runs can be pooled across invocations).
        var times: [Double]
        var layers: [Layer]?
        var stages: Stages? = nil

        /// Median, min, max and p90 of `times`.
        var summary: TimingSummary { TimingSummary(times) }

        enum CodingKeys: String, CodingKey {
            case threads, blasCore = "blas_core", runs, median = "median_ms", min = "min_ms", max = "max_ms",
                 p90 = "p90_ms", times = "times_ms", layers, stages
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(threads, forKey: .threads)
            try c.encode(blasCore, forKey: .blasCore)
            let s = summary
            try c.encode(s.runs, forKey: .runs)
            try c.encode(s.median, forKey: .median)
            try c.encode(s.min, forKey: .min)
            try c.encode(s.max, forKey: .max)
            try c.encode(s.p90, forKey: .p90)
            try c.encode(times, forKey: .times)
            try c.encodeIfPresent(layers, forKey: .layers)
            try c.encodeIfPresent(stages, forKey: .stages)
        }
    }

    var machine: Machine
    var model: String
    var size: String
    var algorithm: String
    var warmup: Int
    var results: [Result]

    // MARK: - Text

    var header: String {
        """
        model \(model) at \(size), convolution algorithm \(algorithm), warm-up \(warmup)
        CPU \(machine.cpu); CPU SIMD \(machine.simd.joined(separator: " "))
        kernel family \(machine.gemm); chosen: \(machine.kernelReason); int8 layers: \(machine.int8Kernel.map { "\($0) kernel" } ?? "in float")
        BLAS \(machine.blasConfig); core \(results.first?.blasCore ?? BLAS.coreName); \
        OPENBLAS_CORETYPE \(machine.openblasCoretype.map { "=\($0)" } ?? "unset (autodetected)")

        """
    }

    func table() -> String {
        var out = header
        out += "threads   runs   median ms   min ms   max ms   p90 ms\n"
        for r in results {
            let s = r.summary
            out += String(format: "%7d %6d %11.2f %8.2f %8.2f %8.2f\n", r.threads, s.runs, s.median, s.min, s.max, s.p90)
        }
        for r in results {
            guard let layers = r.layers else { continue }
            out += "\nper layer, \(r.threads) thread(s) (medians of \(r.times.count) timed passes):\n"
            out += "layer  type      output          median ms  min ms      %   GFLOP/s  algorithm\n"
            for l in layers {
                out += String(format: "%5d  %-9@ %-13@ %9.3f %7.3f %6.1f %9.1f  %@\n", l.index, l.type as NSString,
                              l.output as NSString, l.ms, l.minMs, l.percent, l.gflops, l.algorithm as NSString)
            }
            out += String(format: "       sum of layers %19.3f %7.3f ms\n", layers.reduce(0) { $0 + $1.ms },
                          layers.reduce(0) { $0 + $1.minMs })
            if let st = r.stages {
                out += String(format: "detect() stages on %@, medians: preprocess %.3f ms, forward %.3f ms, decode %.3f ms, NMS %.3f ms\n",
                              st.image as NSString, st.preprocess, st.forward, st.decode, st.suppress)
            }
        }
        return out
    }

    func csv() -> String {
        if results.contains(where: { $0.layers != nil }) {
            var out = "threads,layer,type,output,ms,min_ms,percent,gflops,algorithm\n"
            for r in results {
                for l in r.layers ?? [] {
                    out += "\(r.threads),\(l.index),\(l.type),\(l.output),\(l.ms),\(l.minMs),\(l.percent),\(l.gflops),\(l.algorithm)\n"
                }
            }
            return out
        }
        var out = "threads,runs,median_ms,min_ms,max_ms,p90_ms,blas_core\n"
        for r in results {
            let s = r.summary
            out += "\(r.threads),\(s.runs),\(s.median),\(s.min),\(s.max),\(s.p90),\(r.blasCore)\n"
        }
        return out
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
