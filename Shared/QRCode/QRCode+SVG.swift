extension QRCode {
    /// The symbol as a standalone SVG image, `moduleSize` user units per module, with the quiet zone
    /// drawn light. Dark modules are one path of horizontal runs, so the file stays small. The
    /// page that shows it gives it its accessible name.
    public func svg(moduleSize: Int = 4) -> String {
        let side = (size + 2 * Self.quietZone) * moduleSize
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < size, isDark(row: row, column: column) { column += 1 }
                let x = (start + Self.quietZone) * moduleSize
                let y = (row + Self.quietZone) * moduleSize
                path += "M\(x) \(y)h\((column - start) * moduleSize)v\(moduleSize)h-\((column - start) * moduleSize)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side)" height="\(side)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/></svg>
            """
    }
}
