import Foundation
@_spi(Engine) import YOLO

/// A hand-written SVG bar chart of per-layer medians: one row per layer, one bar per thread count.
extension BenchReport {
    func svg() -> String {
        let measured = results.filter { $0.layers != nil }
        let layerCount = measured.first?.layers?.count ?? 0
        let colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2"]
        let barHeight = 10.0, gap = 6.0, left = 250.0, chartWidth = 560.0, top = 70.0
        let rowHeight = Double(measured.count) * barHeight + gap
        let height = top + Double(layerCount) * rowHeight + 40
        let maxMs = measured.flatMap { $0.layers ?? [] }.map(\.ms).max() ?? 1
        func escape(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        }
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(left + chartWidth + 120))" height="\(Int(height))" \
            font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14">\(escape("yolo bench: per-layer median ms, \(size), \(algorithm)"))</text>
            <text x="10" y="38">\(escape("\(machine.cpu); BLAS core \(measured.first?.blasCore ?? "")"))</text>

            """
        for (k, r) in measured.enumerated() {
            let x = 10 + Double(k) * 150
            out += "<rect x=\"\(x)\" y=\"48\" width=\"10\" height=\"10\" fill=\"\(colors[k % colors.count])\"/>"
            out += "<text x=\"\(x + 14)\" y=\"57\">\(r.threads) thread(s): \(String(format: "%.2f", r.summary.median)) ms</text>\n"
        }
        for i in 0..<layerCount {
            let y = top + Double(i) * rowHeight
            let l = measured[0].layers![i]
            out += "<text x=\"10\" y=\"\(y + barHeight)\">\(escape("\(l.index) \(l.type) \(l.output) \(l.algorithm)"))</text>\n"
            for (k, r) in measured.enumerated() {
                let ms = r.layers![i].ms
                let w = max(0.5, ms / maxMs * chartWidth)
                let by = y + Double(k) * barHeight
                out += "<rect x=\"\(left)\" y=\"\(by)\" width=\"\(String(format: "%.1f", w))\" height=\"\(barHeight - 1)\" "
                out += "fill=\"\(colors[k % colors.count])\"><title>\(String(format: "%.3f", ms)) ms</title></rect>"
                out += "<text x=\"\(String(format: "%.1f", left + w + 4))\" y=\"\(by + barHeight - 1)\" font-size=\"9\">"
                out += "\(String(format: "%.2f", ms))</text>\n"
            }
        }
        out += "</svg>\n"
        return out
    }
}
