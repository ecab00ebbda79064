import FeedSyncKit
import Foundation

/// Making untrusted text (titles and URLs from the network) safe to print.
package enum Terminal {
    /// Whether standard output is a terminal.
    package static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Whether the command can ask its user a question: its input and output are a terminal.
    package static var canAsk: Bool { isatty(STDIN_FILENO) == 1 && isInteractive }

    /// Asks `question` (written as it is) and reads one line: whether it was yes (`y`, `yes`).
    package static func ask(_ question: String) -> Bool {
        Output.attempt(question)
        guard let answer = readLine(strippingNewline: true) else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// Rows of the terminal; `LINES` or 24 when output is not a terminal.
    package static var height: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        if let lines = getenv("LINES").flatMap({ Int(String(cString: $0)) }), lines > 0 { return lines }
        return 24
    }

    /// Columns of the terminal; `COLUMNS` or 80 when output is not a terminal.
    package static var width: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 {
            return columns
        }
        return 80
    }

    /// Line breaks and tabs become spaces; any other unsafe character becomes U+FFFD, visibly.
    /// A password in a URL (`http://user:secret@host/`) is replaced by `***`.
    package static func safe(_ text: String) -> String {
        let redacted = Redact.passwords(in: text)
        // Nearly every title and URL is safe as it is: returned without being rebuilt, printable
        // ASCII without looking at its scalars one by one.
        guard printableASCIIWidth(redacted) == nil, redacted.unicodeScalars.contains(where: SafeText.isUnsafe) else {
            return redacted
        }
        var scalars = String.UnicodeScalarView()
        for scalar in redacted.unicodeScalars {
            if !SafeText.isUnsafe(scalar) {
                scalars.append(scalar)
            } else if scalar == "\n" || scalar == "\r" || scalar == "\t" || scalar.value == 0x2028
                || scalar.value == 0x2029
            {
                scalars.append(" ")
            } else {
                scalars.append("\u{FFFD}")
            }
        }
        return String(scalars)
    }

    /// Cells a character takes: 2 for East Asian wide and emoji, 0 for combining marks.
    package static func cells(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        switch first.value {
        case 0x0300...0x036F, 0x200B...0x200D: return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF,
            0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// Cuts `text` to at most `width` cells, ending in `…` when cut.
    package static func truncate(_ text: String, toCells width: Int) -> String {
        if let cells = printableASCIIWidth(text), cells <= width { return text }
        var used = 0
        var result = ""
        for character in text {
            let cells = cells(character)
            if used + cells > width {
                while used + 1 > width, let last = result.popLast() { used -= self.cells(last) }
                return result + "…"
            }
            used += cells
            result.append(character)
        }
        return result
    }

    package static func displayWidth(_ text: String) -> Int {
        printableASCIIWidth(text) ?? text.reduce(0) { $0 + cells($1) }
    }

    /// The cells of text that is all printable ASCII, one a byte (most titles, every URL and
    /// number); nil for any other, whose characters are measured one by one.
    private static func printableASCIIWidth(_ text: String) -> Int? {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { (0x20..<0x7F).contains($0) } ? bytes.count : nil
        } ?? nil
    }

    /// A line of a message (already safe) in lines of at most `width` cells, each after the first
    /// indented under where its text starts: under the value of an aligned `label:   value`
    /// line (status's), else two cells in from the line's own indent.
    package static func wrapHanging(_ line: String, width: Int) -> [String] {
        guard displayWidth(line) > width else { return [line] }
        let characters = Array(line)
        let lead = characters.prefix { $0 == " " }.count
        var indent = lead + 2
        if let colon = characters[lead...].firstIndex(of: ":"), colon + 2 < characters.count,
            characters[colon + 1] == " ", characters[colon + 2] == " "
        {
            indent = characters[(colon + 1)...].firstIndex { $0 != " " } ?? indent
        }
        indent = min(indent, max(0, width / 2))
        // The first line keeps its own spacing (an aligned value's): as much as fits, broken at
        // its last space.
        var used = 0
        var cut = characters.count
        var lastSpace: Int?
        for (index, character) in characters.enumerated() {
            let taken = Self.cells(character)
            if used + taken > width {
                cut = index
                break
            }
            if character == " ", index > lead { lastSpace = index }
            used += taken
        }
        let end = cut < characters.count && characters[cut] == " " ? cut : lastSpace ?? cut
        let head = String(characters[..<end].reversed().drop { $0 == " " }.reversed())
        let rest = String(characters[end...]).trimmingCharacters(in: .whitespaces)
        guard !rest.isEmpty else { return [head] }
        let pad = String(repeating: " ", count: indent)
        return [head] + wrap(rest, width: max(1, width - indent)).map { pad + $0 }
    }

    /// `text` (already safe) in lines of at most `width` cells, broken at spaces; a word longer
    /// than a line is broken where the line ends.
    package static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        var used = 0
        for word in text.split(separator: " ") {
            let cells = displayWidth(String(word))
            if used > 0, used + 1 + cells > width {
                lines.append(line)
                (line, used) = ("", 0)
            }
            if used > 0 {
                line += " "
                used += 1
            }
            for character in word {
                if used + self.cells(character) > width, used > 0 {
                    lines.append(line)
                    (line, used) = ("", 0)
                }
                line.append(character)
                used += self.cells(character)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
