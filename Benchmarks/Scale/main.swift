// Scale: forward-pass latency per thread count, for thread-scaling and multi-process throughput runs on
// many-core machines (scripts/device-kit.sh packs it with its libraries; .dev/device-scale.sh runs it).
//
//   Scale MODEL.yolo [--threads 1,2,4] [--runs 30] [--warmup 5] [--tag yolo] [--detect IMAGE] [--layers]
//
// One JSON line per thread count: {"engine":"yolo","tag":...,"threads":T,"median_ms":...,"min_ms":...,
// "max_ms":...,"runs":N,"family":...,"regions_per_pass":...}, timing Network.forward on a fixed pseudo-random input with a
// heads-only workspace (as Detector runs it).
// --detect IMAGE: first prints the detections of IMAGE ("DET label conf x0 y0 x1 y1"), for a parity check.
// --layers: per thread count also one line {"engine":"yolo-layers",...,"ms":[per-layer median ms]} from
// Network.forwardTimed (separate passes after the untimed ones); the layer type names are printed once
// before them ({"engine":"yolo-layer-names","types":[...]}; "+fused" marks a layer the next one computes).
import Foundation
@_spi(Engine) import YOLO

// MARK: - Threads
// The one place that sets up threading for a pass: a pool of `threads` threads (its polling time from
// YOLO_SPIN_US when set, for comparing settings), shared by nothing else.
func makeWorkspace(network: Network, threads: Int) -> Workspace {
    var threading = Threading(threads: threads)
    if let text = ProcessInfo.processInfo.environment["YOLO_SPIN_US"], let spin = Int(text) { threading.spin = .microseconds(spin) }
    return Workspace(for: network, pool: WorkerPool(threading), keeping: Set(network.headIndices))
}

// MARK: - Command line

struct Options {
    var model = ""
    var threads = [1]
    var runs = 30
    var warmup = 5
    var tag = "yolo"
    var detect: String?
    var layers = false
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Scale: \(message)\nusage: Scale MODEL.yolo [--threads 1,2,4] [--runs 30] [--warmup 5] [--tag T] [--detect IMAGE] [--layers]\n".utf8))
    exit(2)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ flag: String) -> String {
        guard let v = rest.popFirst() else { fail("\(flag) needs a value") }
        return v
    }
    func count(_ flag: String, minimum: Int) -> Int {
        let text = value(flag)
        guard let n = Int(text), n >= minimum else { fail("\(flag) must be an integer >= \(minimum), got '\(text)'") }
        return n
    }
    var positional: [String] = []
    while let arg = rest.popFirst() {
        switch arg {
        case "--threads":
            let text = value(arg)
            let list = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !list.isEmpty, list.allSatisfy({ ($0 ?? 0) >= 1 }) else { fail("--threads must be positive integers, got '\(text)'") }
            options.threads = list.map { $0! }
        case "--runs": options.runs = count(arg, minimum: 1)
        case "--warmup": options.warmup = count(arg, minimum: 0)
        case "--tag": options.tag = value(arg)
        case "--detect": options.detect = value(arg)
        case "--layers": options.layers = true
        default:
            if arg.hasPrefix("--") { fail("unknown option \(arg)") }
            positional.append(arg)
        }
    }
    guard positional.count == 1 else { fail("need exactly one model file") }
    options.model = positional[0]
    return options
}

// MARK: - Output

/// A JSON string literal (tags and labels are plain text, but quote them properly anyway).
func quoted(_ s: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
    return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}

func fixed(_ x: Double) -> String { String(format: "%.3f", x) }

func median(_ samples: [Double]) -> Double {
    let s = samples.sorted(), n = s.count
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}

/// The timing input: `count` values in [0, 1) from a fixed linear congruential sequence.
func fixedInput(count: Int) -> [Float] {
    var state: UInt32 = 12345
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 24)
    }
}

func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }

// MARK: - Main

func main() throws {
    let options = parse(Array(CommandLine.arguments.dropFirst()))
    let model = try Model(contentsOf: options.model)
    if let path = options.detect {
        let image = try Image(contentsOf: path)
        let detector = try Detector(model: model)
        for d in try detector.detect(image) {
            let r = d.pixelRect(width: image.width, height: image.height)
            print(String(format: "DET %@ %.4f %.1f %.1f %.1f %.1f", d.label, d.confidence, r.minX, r.minY, r.maxX, r.maxY))
        }
    }
    let network = try Network(model: model, threads: options.threads.max() ?? 1)
    let input = fixedInput(count: network.inputShape.count)
    let family = KernelFamily.active.name.rawValue
    let tag = quoted(options.tag)
    var namesPrinted = false
    for threads in options.threads {
        let workspace = makeWorkspace(network: network, threads: threads)
        var totals: [Double] = []
        var regions = 0
        var perLayer: [[Double]] = Array(repeating: [], count: network.layers.count)
        input.withUnsafeBufferPointer { buffer in
            let pointer = buffer.baseAddress!
            for _ in 0..<options.warmup { network.forward(pointer, workspace: workspace) }
            let regionsBefore = workspace.pool.regions
            for _ in 0..<options.runs {
                let start = DispatchTime.now().uptimeNanoseconds
                network.forward(pointer, workspace: workspace)
                totals.append(milliseconds(since: start))
            }
            regions = workspace.pool.regions - regionsBefore
            guard options.layers else { return }
            let seconds = UnsafeMutableBufferPointer<Double>.allocate(capacity: network.layers.count)
            defer { seconds.deallocate() }
            for _ in 0..<options.runs {
                network.forwardTimed(pointer, workspace: workspace, seconds: seconds)
                for i in seconds.indices { perLayer[i].append(seconds[i] * 1e3) }
            }
        }
        print("{\"engine\":\"yolo\",\"tag\":\(tag),\"threads\":\(threads),\"median_ms\":\(fixed(median(totals))),"
              + "\"min_ms\":\(fixed(totals.min()!)),\"max_ms\":\(fixed(totals.max()!)),\"runs\":\(options.runs),"
              + "\"family\":\(quoted(family)),\"regions_per_pass\":\(fixed(Double(regions) / Double(options.runs)))}")
        if options.layers {
            if !namesPrinted {
                let types = network.layers.indices.map { i in
                    quoted(String(describing: type(of: network.layers[i])) + (workspace.skips(i) ? "+fused" : ""))
                }
                print("{\"engine\":\"yolo-layer-names\",\"tag\":\(tag),\"types\":[\(types.joined(separator: ","))]}")
                namesPrinted = true
            }
            let medians = perLayer.map(median)
            print("{\"engine\":\"yolo-layers\",\"tag\":\(tag),\"threads\":\(threads),\"runs\":\(options.runs),"
                  + "\"sum_ms\":\(fixed(medians.reduce(0, +))),\"ms\":[\(medians.map(fixed).joined(separator: ","))]}")
        }
        fflush(nil)  // all streams: each line reaches a pipe or file as soon as it is printed
    }
}

do { try main() } catch {
    FileHandle.standardError.write(Data("Scale: \(error)\n".utf8))
    exit(1)
}
