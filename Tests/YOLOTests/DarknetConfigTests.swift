import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Expects `body` to throw a config error at `line` whose message contains `fragment`.
func expectConfigError(line: Int, containing fragment: String, _ body: () throws -> Void,
                       sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("expected an error at line \(line)", sourceLocation: sourceLocation)
    } catch let YOLOError.invalidConfig(path, errorLine, message) {
        #expect(path == "test.cfg", sourceLocation: sourceLocation)
        #expect(errorLine == line, "\(message)", sourceLocation: sourceLocation)
        #expect(message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct DarknetConfigTests {
    /// The scaling a cfg implies: `[net] letter_box` when set, else AlexeyAB's stretch when the cfg uses a key
    /// only AlexeyAB's darknet reads, else pjreddie's letterbox.
    @Test func preferredScalingFollowsLetterBoxAndTheDarknetFork() throws {
        let plain = tinyCfg()
        func net(_ line: String, _ text: String = plain) -> String { text.replacingOccurrences(of: "channels=3", with: "channels=3\n" + line) }
        let scaled = plain.replacingOccurrences(of: "classes=2\nnum=6\njitter", with: "classes=2\nnum=6\nscale_x_y=1.05\njitter")
        let nms = plain.replacingOccurrences(of: "random=1", with: "random=1\nnms_kind=greedynms")
        #expect(scaled != plain && nms != plain)
        #expect(try parse(plain).preferredScaling == .scaleFit)
        #expect(try parse(scaled).preferredScaling == .scaleFill)
        #expect(try parse(nms).preferredScaling == .scaleFill)
        #expect(try parse(net("letter_box=0")).preferredScaling == .scaleFill)
        #expect(try parse(net("letter_box=1", scaled)).preferredScaling == .scaleFit)
        expectConfigError(line: 8, containing: "'letter_box' must be an integer") { _ = try parse(net("letter_box=yes")) }
    }

    @Test func parsesLayersWithDarknetDefaults() throws {
        let d = try parse(tinyCfg())
        #expect(d.inputShape == Shape(channels: 3, height: 64, width: 64))
        #expect(d.layers.count == 12)
        guard case .convolution(let c) = d.layers[0], case .maxPool(let p) = d.layers[1],
              case .route(let r) = d.layers[8], case .shortcut(let s) = d.layers[9], case .yolo(let y) = d.layers[5] else {
            Issue.record("unexpected layer kinds"); return
        }
        #expect(c == ConvolutionSpec(filters: 4, size: 3, stride: 1, padding: 1, batchNormalize: true, activation: .leaky, line: 11))
        #expect(p.padding == 1)  // default size - 1
        #expect(r.layers == [7, 2])  // relative -1 from index 8, absolute 2
        #expect(s.from == 8)
        #expect(y.mask == [3, 4, 5] && y.classes == 2 && y.anchors.count == 12)
        // pad=1 on a 1x1 convolution means no padding.
        guard case .convolution(let head) = d.layers[4] else {
            Issue.record("layer 4 is not a convolution: \(d.layers[4])"); return
        }
        #expect(head.padding == 0)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: TestPaths.cfg), "\(Skip.noWeights)"))
    func yolov3TinyCfg() throws {
        let d = try ModelDescription(cfgPath: TestPaths.cfg)
        #expect(d.layers.count == 24)
        #expect(d.heads.map(\.index) == [16, 23])
        let table = LayerTable(description: d, geometry: try d.geometry(width: 416, height: 416))
        #expect(String(format: "%.3f", table.totalFlops / 1e9) == "5.571")
        #expect(String(format: "%.3f", table.convolutionFlops / 1e9) == "5.565")
    }

    @Test func nonSquareAndCustomClassCount() throws {
        let d = try parse(tinyCfg(classes: 7, width: 96, height: 32))
        let g = try d.geometry(width: 96, height: 32)
        #expect(g[5].outputShape == Shape(channels: 36, height: 8, width: 24))
        #expect(g[11].outputShape == Shape(channels: 36, height: 16, width: 48))
        #expect(d.classCount == 7)
    }

    @Test func unknownSectionNamesItsLine() {
        expectConfigError(line: 4, containing: "unsupported section [lstm]") {
            _ = try parse("[net]\nwidth=32\nheight=32\n[lstm]\noutput=4\n")
        }
    }

    @Test func unknownKeyAndBadValues() {
        expectConfigError(line: 3, containing: "unknown key 'fliters'") {
            _ = try parse("[net]\n[convolutional]\nfliters=3\n")
        }
        expectConfigError(line: 3, containing: "'size' must be an integer") {
            _ = try parse("[net]\n[convolutional]\nsize=three\n")
        }
        expectConfigError(line: 3, containing: "unsupported activation 'hard_mish'") {
            _ = try parse("[net]\n[convolutional]\nactivation=hard_mish\n")
        }
        expectConfigError(line: 3, containing: "unsupported option groups=2") {
            _ = try parse("[net]\n[convolutional]\ngroups=2\n")
        }
        expectConfigError(line: 3, containing: "expected key=value") {
            _ = try parse("[net]\n[convolutional]\nfilters\n")
        }
        expectConfigError(line: 1, containing: "first section must be [net]") {
            _ = try parse("[convolutional]\nfilters=3\n")
        }
    }

    @Test func routeToMissingLayer() {
        expectConfigError(line: 4, containing: "refers to layer 5, which does not exist") {
            _ = try parse("[net]\n[convolutional]\n[route]\nlayers=5\n")
        }
        expectConfigError(line: 4, containing: "refers to layer -3") {
            _ = try parse("[net]\n[convolutional]\n[route]\nlayers=-3\n")
        }
    }

    @Test func headChannelMismatchIsAnError() {
        let text = tinyCfg().replacingOccurrences(of: "filters=21\nsize=1\nstride=1\npad=1\nactivation=linear\n\n[yolo]\nmask = 3,4,5",
                                                  with: "filters=20\nsize=1\nstride=1\npad=1\nactivation=linear\n\n[yolo]\nmask = 3,4,5")
        #expect(text != tinyCfg())
        expectConfigError(line: 42, containing: "expects 21 input channels") { _ = try parse(text) }
    }

    @Test func routeOfDifferentSizesIsAnError() {
        expectConfigError(line: 8, containing: "cannot concatenate") {
            _ = try parse("[net]\nwidth=32\nheight=32\n[convolutional]\n[maxpool]\nsize=2\nstride=2\n[route]\nlayers=-1,0\n")
        }
    }

    @Test func shortcutOfDifferentShapesIsAnError() {
        expectConfigError(line: 8, containing: "cannot add layer 0") {
            _ = try parse("[net]\nwidth=32\nheight=32\n[convolutional]\nfilters=2\n[convolutional]\nfilters=3\n[shortcut]\nfrom=-2\n")
        }
    }
}
