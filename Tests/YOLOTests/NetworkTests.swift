import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct NetworkTests {
    // The whole network against OpenCV DNN's raw heads, for every convolution algorithm:
    // `headsMatchOpenCV` in YOLOIntegrationTests' Convolution+WinogradTests.swift.

    @Test func runsAtAnyInputSizeWithCustomClasses() throws {
        let description = try parse(tinyCfg(classes: 3, width: 64, height: 64))
        let folder = TestPaths.temporaryFolder()
        let (path, _) = try writeWeights(for: description, in: folder)
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        for (w, h) in [(64, 64), (96, 32), (32, 160)] {
            let network = try Network(model: model, width: w, height: h)
            var random = SeededRandom(seed: 3)
            let input = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
            let heads = try network.forward(input)
            #expect(heads.map(\.shape) == [Shape(channels: 24, height: h / 4, width: w / 4),
                                           Shape(channels: 24, height: h / 2, width: w / 2)])
            #expect(heads.allSatisfy { $0.values.allSatisfy(\.isFinite) })
        }
    }

    @Test func reusedWorkspaceGivesIdenticalResults() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let workspace = Workspace(for: network)
        var random = SeededRandom(seed: 5)
        let a = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        let b = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        let first = try network.forward(a, workspace: workspace)
        _ = try network.forward(b, workspace: workspace)
        #expect(try network.forward(a, workspace: workspace) == first)
        #expect(try network.forward(a) == first)
    }

    @Test func inputWithWrongChannelsIsAnError() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        #expect(throws: YOLOError.self) { _ = try network.forward(Tensor(zeros: Shape(channels: 1, height: 64, width: 64))) }
    }

    @Test func numPyRoundTrip() throws {
        var random = SeededRandom(seed: 9)
        let tensor = Tensor(shape: Shape(channels: 3, height: 5, width: 7), values: random.floats(105))
        let path = TestPaths.temporaryFolder() + "/t.npy"
        try tensor.writeNumPy(path)
        #expect(try Tensor.readNumPy(path) == tensor)
        let bad = TestPaths.temporaryFolder() + "/bad.npy"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(throws: YOLOError.invalidFile(path: bad, message: "not a NumPy .npy file (bad magic)")) { _ = try Tensor.readNumPy(bad) }
    }
}

@Suite struct WorkspacePlanTests {
    /// Keeping only the heads lets outputs share memory; the heads come out the same.
    @Test func compactWorkspaceGivesTheSameHeads() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let full = Workspace(for: network)
        let compact = Workspace(for: network, keeping: Set(network.headIndices))
        #expect(compact.arenaCount < full.arenaCount)
        var random = SeededRandom(seed: 21)
        let input = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        #expect(try network.forward(input, workspace: compact) == network.forward(input, workspace: full))
    }

    /// Routes share memory (`Workspace.routeAliases`) on the small network of darknet's features (route
    /// groups, SPP's views and four-way concatenation, a route over a distant layer): every view sits on its
    /// source's channels, every source placed in a concatenation sits on its part, and no two outputs that
    /// are alive at the same time overlap unless one lies inside the other by such an alias.
    @Test func routeAliasesPlaceSourcesOnTheirParts() throws {
        let folder = TestPaths.fixtures + "/darknet-features/"
        let network = try Network(model: try Model(cfg: folder + "features.cfg", weights: folder + "features.weights"))
        try Self.checkAliases(network, minimumAliases: 6, minimumRoutes: 6)
    }

    /// Ultralytics' C2f blocks split a convolution's output in two and concatenate both halves with the bottlenecks'
    /// outputs: the convolution is computed into the concatenation's first parts (`Workspace.wholeSplit`), so the
    /// route copies nothing, and the checks above hold (the random-weight YOLOv8 graph of the ONNX tests, whose heads
    /// those tests compare with onnxruntime's).
    @Test func splitSourcesComputeIntoTheirConcatenation() throws {
        let network = try Network(model: try Model(onnx: TestPaths.fixtures + "/onnx/yolov8-tiny-random.onnx"))
        let layers = network.layers
        let aliases = Workspace.routeAliases(layers, skipped: [Bool](repeating: false, count: layers.count))
        var splits = 0
        for (index, layer) in layers.enumerated() {
            guard let route = layer as? Route, route.groups == 1 else { continue }
            var prefix = 0
            for (k, shape) in route.inputShapes.enumerated() {
                if let source = Workspace.wholeSplit(route, at: k, layers) {
                    #expect(aliases[source]?.parent == index && aliases[source]?.offset == prefix, "route \(index), split of \(source)")
                    splits += 1
                }
                prefix += shape.count
            }
        }
        #expect(splits >= 4, "C2f splits found: \(splits)")
        try Self.checkAliases(network, minimumAliases: splits, minimumRoutes: splits)
    }

    /// `wholeSplit` on hand-made routes: both groups in order place their source; the network input (-1) among the
    /// parts, groups out of order or of another source place nothing, and nothing traps.
    @Test func wholeSplitNeedsEveryGroupInOrder() {
        let map = Shape(channels: 4, height: 2, width: 2), half = Shape(channels: 2, height: 2, width: 2)
        func layers(_ concatenation: [Int]) -> [any Layer] {
            [Shortcut(previous: -1, from: -1, shape: map, activation: .linear),
             Route(inputs: [0], inputShapes: [map], groups: 2, groupIndex: 0),
             Route(inputs: [0], inputShapes: [map], groups: 2, groupIndex: 1),
             Shortcut(previous: -1, from: -1, shape: map, activation: .linear),
             Route(inputs: [3], inputShapes: [map], groups: 2, groupIndex: 1),
             Route(inputs: concatenation, inputShapes: concatenation.map { $0 < 0 ? map : half })]
        }
        for (concatenation, placed) in [([1, 2, -1], [0]), ([-1, 1, 2], [0]), ([1, -1], []), ([2, 1], []), ([1, 4], []),
                                        ([1], [])] {
            let network = layers(concatenation)
            let route = network[5] as! Route
            let found = concatenation.indices.compactMap { Workspace.wholeSplit(route, at: $0, network) }
            #expect(found == placed, "\(concatenation)")
            let aliases = Workspace.routeAliases(network, skipped: [Bool](repeating: false, count: network.count))
            #expect((aliases[0]?.parent == 5) == !placed.isEmpty, "\(concatenation)")
        }
    }

    static func checkAliases(_ network: Network, minimumAliases: Int, minimumRoutes: Int) throws {
        let layers = network.layers
        let skipped = [Bool](repeating: false, count: layers.count)
        let aliases = Workspace.routeAliases(layers, skipped: skipped)
        #expect(aliases.compactMap { $0 }.count >= minimumAliases, "views and in-place sources: \(aliases)")
        for keeping in [nil, Set(network.headIndices)] {
            let (offsets, total) = Workspace.place(layers, keeping: keeping, skipped: skipped)
            var routesChecked = 0
            for (index, layer) in layers.enumerated() {
                guard let route = layer as? Route else { continue }
                var prefix = 0
                for (k, source) in route.inputs.enumerated() {
                    let part = route.inputShapes[k].count / route.groups
                    if aliases[source] != nil && aliases[source]!.parent == index || aliases[index]?.parent == source {
                        #expect(offsets[source] + route.groupIndex * part == offsets[index] + prefix, "route \(index), source \(source)")
                        routesChecked += 1
                    }
                    if route.groups == 1, let split = Workspace.wholeSplit(route, at: k, layers), aliases[split]?.parent == index {
                        #expect(offsets[split] == offsets[index] + prefix, "route \(index), split of \(split)")
                        routesChecked += 1
                    }
                    prefix += part
                }
            }
            #expect(routesChecked >= minimumRoutes)
            // Every output inside the arena; outputs alive together overlap only along alias chains.
            var lastUse = Array(layers.indices)
            for (index, layer) in layers.enumerated() {
                for source in layer.inputs where source >= 0 { lastUse[source] = max(lastUse[source], index) }
            }
            for index in keeping ?? [] { lastUse[index] = layers.count }
            if keeping == nil { lastUse = lastUse.map { _ in layers.count } }
            func related(_ a: Int, _ b: Int) -> Bool {
                func chain(_ x: Int) -> Set<Int> {
                    var seen: Set<Int> = [x]
                    var current = x
                    while let alias = aliases[current] { current = alias.parent; seen.insert(current) }
                    return seen
                }
                return !chain(a).isDisjoint(with: chain(b))
            }
            for a in layers.indices {
                let sizeA = layers[a].outputShape.count
                #expect(offsets[a] >= 0 && offsets[a] + sizeA <= total)
                for b in layers.indices where b > a && b <= lastUse[a] && !related(a, b) {
                    let sizeB = layers[b].outputShape.count
                    let disjoint = offsets[a] + sizeA <= offsets[b] || offsets[b] + sizeB <= offsets[a]
                    #expect(disjoint, "layers \(a) and \(b) overlap while both are alive")
                }
            }
        }
    }
}
