import FeedSyncFrontend
import Foundation

/// A colour: 24-bit, as `blocks` pictures and the reader's marks use it.
package struct Colour: Equatable, Hashable, Sendable {
    package var red, green, blue: UInt8
    package init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) { (self.red, self.green, self.blue) = (red, green, blue) }
}

package struct Style: Equatable, Hashable, Sendable {
    package var bold = false
    package var dim = false
    package var reverse = false
    package var foreground: Colour?
    package var background: Colour?
    package init(
        bold: Bool = false, dim: Bool = false, reverse: Bool = false, foreground: Colour? = nil,
        background: Colour? = nil
    ) {
        (self.bold, self.dim, self.reverse, self.foreground, self.background) = (
            bold, dim, reverse, foreground, background
        )
    }
    package static let plain = Style()
}

/// One cell: a character (a grapheme cluster, safe to print) and its style. A wide character's
/// second cell is a continuation (`text` empty).
package struct Cell: Equatable, Sendable {
    package var text: String
    package var style: Style
    package static let blank = Cell(text: " ", style: .plain)
}

/// The screen as text: rows of cells, drawn into and compared with the last frame sent.
package struct Grid: Equatable, Sendable {
    package let width: Int
    package let height: Int
    package private(set) var cells: [Cell]

    package init(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    package subscript(row: Int, column: Int) -> Cell {
        get { cells[row * width + column] }
        set { cells[row * width + column] = newValue }
    }

    /// Writes `text` (already safe: no control character) from `column` of `row`, at most
    /// `limit` cells (the row's end by default), a wide character that does not fit left out;
    /// returns the column after it. `text` may carry the bold our own `TextLayout` writes.
    @discardableResult
    package mutating func put(_ text: String, row: Int, column: Int, style: Style = .plain, limit: Int? = nil) -> Int {
        guard row >= 0, row < height, column < width else { return column }
        let end = min(width, column + (limit ?? width))
        var at = max(0, column)
        var style = style
        var rest = Substring(text)
        while let character = rest.first, at < end {
            rest = rest.dropFirst()
            if character == "\u{1B}" {
                // Only ours: `ESC [ 1 m` and `ESC [ 22 m` (everything untrusted was made safe).
                let code = rest.prefix { $0 != "m" }
                rest = rest.dropFirst(code.count + 1)
                style.bold = code == "[1"
                continue
            }
            let cells = Terminal.cells(character)
            guard cells > 0 else { continue }
            if at + cells > end { break }
            self[row, at] = Cell(text: String(character), style: style)
            if cells == 2 { self[row, at + 1] = Cell(text: "", style: style) }
            at += cells
        }
        return at
    }

    /// Fills `count` cells of `row` from `column` with spaces in `style`.
    package mutating func fill(row: Int, column: Int, count: Int, style: Style = .plain) {
        guard row >= 0, row < height else { return }
        for at in max(0, column)..<min(width, column + count) { self[row, at] = Cell(text: " ", style: style) }
    }
}

/// Writes a frame: only the cells that differ from the last frame written, each changed stretch
/// of a row positioned by its own cursor move (so a character a terminal measures otherwise than
/// we do cannot shift the rest of the row), styles as SGR, all of it one synchronized update
/// (mode 2026: a terminal that knows it shows no half frame; others ignore it).
package struct Renderer {
    private var last: Grid?

    package init() {}

    /// Forget what the terminal shows (after a resize, a return from a stop or the browser).
    package mutating func invalidate() { last = nil }

    /// The bytes that turn the last frame into `grid`, `graphics` (pictures' sequences, placed
    /// by their own cursor moves) after the text. `protected` cells (under a picture the
    /// terminal draws over text) are left alone; `dirty` ones are written though unchanged (a
    /// picture there is gone). Empty when nothing changed.
    package mutating func frame(
        _ grid: Grid, graphics: [UInt8] = [], protected: Set<Int> = [], dirty: Set<Int> = []
    ) -> [UInt8] {
        var out: [UInt8] = []
        let previous = last?.width == grid.width && last?.height == grid.height ? last : nil
        if previous == nil { out += Array("\u{1B}[0m\u{1B}[2J".utf8) }
        func changed(_ index: Int) -> Bool {
            previous.map { $0.cells[index] != grid.cells[index] } ?? true || dirty.contains(index)
        }
        // Every frame ends in SGR 0: each starts plain.
        var current = Style.plain
        for row in 0..<grid.height {
            var column = 0
            while column < grid.width {
                let index = row * grid.width + column
                guard changed(index), !protected.contains(index) else {
                    column += 1
                    continue
                }
                // A stretch of changed cells, from a character's first cell.
                var start = column
                while start > 0, grid[row, start].text.isEmpty { start -= 1 }
                var end = column
                var quiet = 0
                while end < grid.width, quiet < 4 {
                    let at = row * grid.width + end
                    if protected.contains(at) { break }
                    if changed(at) { quiet = 0 } else { quiet += 1 }
                    end += 1
                }
                end -= quiet
                out += Array("\u{1B}[\(row + 1);\(start + 1)H".utf8)
                for at in start..<end {
                    let cell = grid[row, at]
                    if cell.text.isEmpty { continue }
                    if cell.style != current {
                        out += Self.sgr(cell.style)
                        current = cell.style
                    }
                    out += Array(cell.text.utf8)
                }
                column = max(end, column + 1)
            }
        }
        if current != .plain { out += Array("\u{1B}[0m".utf8) }
        out += graphics
        last = grid
        guard !out.isEmpty else { return [] }
        return Array("\u{1B}[?2026h".utf8) + out + Array("\u{1B}[?2026l".utf8)
    }

    static func sgr(_ style: Style) -> [UInt8] {
        var codes = ["0"]
        if style.bold { codes.append("1") }
        if style.dim { codes.append("2") }
        if style.reverse { codes.append("7") }
        if let colour = style.foreground { codes.append("38;2;\(colour.red);\(colour.green);\(colour.blue)") }
        if let colour = style.background { codes.append("48;2;\(colour.red);\(colour.green);\(colour.blue)") }
        return Array("\u{1B}[\(codes.joined(separator: ";"))m".utf8)
    }
}
