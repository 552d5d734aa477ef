import Foundation

/// Charts drawn on the server as SVG, inline in the page: no script, no chart library, and
/// nothing fetched. Each has a `<title>` and `<desc>` (the SVG is one image to a screen reader;
/// the page puts the same numbers in a table beside it), each mark a `<title>` with its numbers
/// (shown on hover), and `data-series`, `data-label` and `data-value` attributes, so what a chart
/// shows can be read back from it. Colours are classes (`s0`…`s7`, the Okabe-Ito palette, which
/// stays distinct to colour-blind eyes) set in `console.css`.
struct SVGChart {
    /// A named row of counts, one per label.
    struct Series {
        var name: String
        var values: [Int]
    }

    static let width = 720.0
    static let palette = 8

    private var markup = MarkupWriter(capacity: 8 * 1024)
    private let height: Double
    private let left: Double
    private let top = 16.0
    private let bottom: Double

    private init(height: Double, left: Double, legendRows: Int) {
        self.height = height + Double(legendRows) * 20
        self.left = left
        self.bottom = 40 + Double(legendRows) * 20
    }

    private var plotWidth: Double { Self.width - left - 16 }
    private var plotHeight: Double { height - top - bottom }

    // MARK: The charts

    /// Running totals over the labels (days), a line per series; a dot where a total changes. A
    /// total holds through a day and steps up at the next day's mark: enrollments are counted by
    /// day, so a line drawn between the marks would show people joining at hours they did not.
    static func cumulativeLines(id: String, title: String, description: String, labels: [String], series: [Series]) -> SafeHTML {
        var chart = SVGChart(height: 280, left: 48, legendRows: legendRows(series))
        let totals = series.map { item in item.values.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + $1) } }
        let maximum = niceMaximum(totals.compactMap(\.last).max() ?? 0)
        chart.start(id: id, kind: "cumulative-lines", title: title, description: description)
        chart.valueAxis(maximum: maximum)
        chart.labelAxis(labels)
        let step = labels.count > 1 ? chart.plotWidth / Double(labels.count - 1) : 0
        for (index, item) in series.enumerated() {
            let values = totals[index]
            chart.markup.open("g", [("class", "series s\(index % palette)"), ("data-series", item.name), ("data-total", String(values.last ?? 0))])
            let points = values.enumerated().flatMap { position, value in
                let x = format(chart.left + Double(position) * step)
                let level = "\(x),\(format(chart.y(value, maximum)))"
                guard position > 0, values[position - 1] != value else { return [level] }
                return ["\(x),\(format(chart.y(values[position - 1], maximum)))", level]
            }
            chart.markup.open("polyline", [("points", points.joined(separator: " ")), ("class", "line")], selfClosing: true)
            for (position, value) in values.enumerated() where value != (position > 0 ? values[position - 1] : 0) {
                chart.markup.open("circle", [
                    ("cx", format(chart.left + Double(position) * step)), ("cy", format(chart.y(value, maximum))), ("r", "3"),
                    ("data-label", labels[position]), ("data-value", String(value)),
                ])
                chart.markup.element("title", text: "\(item.name), \(labels[position]): \(value) in all")
                chart.markup.close("circle")
            }
            chart.markup.close("g")
        }
        chart.legend(series)
        return chart.finish()
    }

    /// A column per label (day), the series stacked in it.
    static func stackedColumns(id: String, title: String, description: String, labels: [String], series: [Series]) -> SafeHTML {
        var chart = SVGChart(height: 280, left: 48, legendRows: legendRows(series))
        let maximum = niceMaximum(stackHeights(series, count: labels.count).max() ?? 0)
        chart.start(id: id, kind: "stacked-columns", title: title, description: description)
        chart.valueAxis(maximum: maximum)
        chart.labelAxis(labels, centred: true)
        let band = labels.isEmpty ? 0 : chart.plotWidth / Double(labels.count)
        let (left, y) = (chart.left, chart.y)
        chart.stacked(series, labels: labels, title: { "\($0), \($1): \($2)" }) { position, below, above in
            (left + Double(position) * band + band * 0.15, y(above, maximum), max(band * 0.7, 1), y(below, maximum) - y(above, maximum))
        }
        chart.legend(series)
        return chart.finish()
    }

    /// A bar per label (an activity), the series stacked along it.
    static func stackedRows(id: String, title: String, description: String, labels: [String], series: [Series]) -> SafeHTML {
        let rowHeight = 28.0
        var chart = SVGChart(height: 16 + 40 + Double(max(labels.count, 1)) * rowHeight, left: 160, legendRows: legendRows(series))
        let maximum = niceMaximum(stackHeights(series, count: labels.count).max() ?? 0)
        chart.start(id: id, kind: "stacked-rows", title: title, description: description)
        for (position, label) in labels.enumerated() {
            let y = chart.top + Double(position) * rowHeight
            chart.markup.open("text", [("x", format(chart.left - 8)), ("y", format(y + rowHeight / 2 + 4)), ("class", "label"), ("text-anchor", "end")])
            chart.markup.text(label.count > 22 ? String(label.prefix(21)) + "…" : label)
            chart.markup.close("text")
        }
        chart.scaleAxis(maximum: maximum, below: chart.top + Double(labels.count) * rowHeight)
        let (left, top, width) = (chart.left, chart.top, chart.plotWidth)
        chart.stacked(series, labels: labels, title: { "\($1), \($0): \($2)" }) { position, below, above in
            (left + width * Double(below) / Double(maximum), top + Double(position) * rowHeight + 4,
             width * Double(above - below) / Double(maximum), rowHeight - 8)
        }
        chart.legend(series)
        return chart.finish()
    }

    // MARK: Parts

    /// Each label's stack: the series' values there, added up.
    private static func stackHeights(_ series: [Series], count: Int) -> [Int] {
        (0..<count).map { position in series.reduce(0) { $0 + ($1.values.indices.contains(position) ? $1.values[position] : 0) } }
    }

    /// A mark per series and label with a value, each stacked on those of the series before it:
    /// `place` turns the label's position and the stack's height below and above the mark into
    /// its rectangle; `title` words its tooltip from the series' name, the label and the value.
    private mutating func stacked(
        _ series: [Series], labels: [String], title: (String, String, Int) -> String,
        place: (_ position: Int, _ below: Int, _ above: Int) -> (x: Double, y: Double, width: Double, height: Double)
    ) {
        var base = [Int](repeating: 0, count: labels.count)
        for (index, item) in series.enumerated() {
            markup.open("g", [("class", "series s\(index % Self.palette)"), ("data-series", item.name)])
            for (position, value) in item.values.enumerated() where value > 0 && position < labels.count {
                let box = place(position, base[position], base[position] + value)
                markup.open("rect", [
                    ("x", format(box.x)), ("y", format(box.y)), ("width", format(box.width)), ("height", format(box.height)),
                    ("data-label", labels[position]), ("data-value", String(value)),
                ])
                markup.element("title", text: title(item.name, labels[position], value))
                markup.close("rect")
                base[position] += value
            }
            markup.close("g")
        }
    }

    private mutating func start(id: String, kind: String, title: String, description: String) {
        markup.open("svg", [
            ("xmlns", "http://www.w3.org/2000/svg"), ("viewBox", "0 0 \(format(Self.width)) \(format(height))"), ("class", "chart"),
            ("role", "img"), ("aria-labelledby", "\(id)-title \(id)-desc"), ("id", id), ("data-chart", kind),
        ])
        markup.element("title", [("id", "\(id)-title")], text: title)
        markup.element("desc", [("id", "\(id)-desc")], text: description)
    }

    private mutating func finish() -> SafeHTML {
        markup.close("svg")
        return markup.html
    }

    /// Where `value` lies on a value axis running from 0 to `maximum`.
    private func y(_ value: Int, _ maximum: Int) -> Double {
        top + plotHeight - plotHeight * Double(value) / Double(max(maximum, 1))
    }

    /// Round steps from 0 to `maximum`, four or so of them.
    static func ticks(_ maximum: Int) -> [Int] {
        let step = niceMaximum(max(1, maximum / 4))
        return Array(stride(from: 0, through: maximum, by: step))
    }

    /// The value axis at the left: gridlines and their numbers at round steps.
    private mutating func valueAxis(maximum: Int) {
        for tick in Self.ticks(maximum) {
            let y = self.y(tick, maximum)
            markup.open("line", [("x1", format(left)), ("x2", format(left + plotWidth)), ("y1", format(y)), ("y2", format(y)), ("class", "grid")], selfClosing: true)
            markup.open("text", [("x", format(left - 6)), ("y", format(y + 4)), ("class", "tick"), ("text-anchor", "end")])
            markup.text(String(tick))
            markup.close("text")
        }
    }

    /// The value axis of a bar chart, along the bottom.
    private mutating func scaleAxis(maximum: Int, below: Double) {
        for tick in Self.ticks(maximum) {
            let x = left + plotWidth * Double(tick) / Double(max(maximum, 1))
            markup.open("line", [("x1", format(x)), ("x2", format(x)), ("y1", format(top)), ("y2", format(below)), ("class", "grid")], selfClosing: true)
            markup.open("text", [("x", format(x)), ("y", format(below + 16)), ("class", "tick"), ("text-anchor", "middle")])
            markup.text(String(tick))
            markup.close("text")
        }
    }

    /// Up to six labels along the bottom, evenly spread, the first and last always.
    private mutating func labelAxis(_ labels: [String], centred: Bool = false) {
        guard !labels.isEmpty else { return }
        let shown = labels.count <= 6 ? Array(labels.indices) : (0..<6).map { $0 * (labels.count - 1) / 5 }
        let band = centred ? plotWidth / Double(labels.count) : (labels.count > 1 ? plotWidth / Double(labels.count - 1) : 0)
        for position in Set(shown).sorted() {
            let x = left + Double(position) * band + (centred ? band / 2 : 0)
            // The first and last labels run inwards, so neither is cut off at the edge.
            let anchor = labels.count == 1 ? "middle" : position == 0 ? "start" : position == labels.count - 1 ? "end" : "middle"
            markup.open("text", [("x", format(x)), ("y", format(top + plotHeight + 18)), ("class", "tick"), ("text-anchor", anchor)])
            markup.text(labels[position])
            markup.close("text")
        }
    }

    /// Each series' colour and name, four to a row.
    private mutating func legend(_ series: [Series]) {
        for (index, item) in series.enumerated() {
            let x = left + Double(index % 4) * (plotWidth / 4)
            let y = height - Double(Self.legendRows(series) - index / 4) * 20 + 4
            markup.open("g", [("class", "legend s\(index % Self.palette)")])
            markup.open("rect", [("x", format(x)), ("y", format(y)), ("width", "12"), ("height", "12")], selfClosing: true)
            markup.open("text", [("x", format(x + 18)), ("y", format(y + 11))])
            markup.text(item.name.count > 28 ? String(item.name.prefix(27)) + "…" : item.name)
            markup.close("text")
            markup.close("g")
        }
    }

    private static func legendRows(_ series: [Series]) -> Int { (series.count + 3) / 4 }

    /// The smallest of 1, 2 or 5 times a power of ten at or above `value` (at least 1), so the
    /// axis reads in round numbers.
    static func niceMaximum(_ value: Int) -> Int {
        guard value > 1 else { return 1 }
        var power = 1
        while power * 10 < value { power *= 10 }
        for factor in [1, 2, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }

}

/// A coordinate to a tenth of a point.
private func format(_ value: Double) -> String { String(format: "%.1f", value) }
