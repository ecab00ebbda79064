import Foundation

/// Making untrusted text (titles and URLs from the network) safe to print.
enum Terminal {
    /// Whether standard output is a terminal.
    static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Columns of the terminal; `COLUMNS` or 80 when output is not a terminal.
    static var width: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        return 80
    }

    /// Characters that must never reach a terminal as they are: C0 and C1 controls (escape
    /// sequences start with one), DEL, and the bidi overrides and isolates that reorder text.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x2028, 0x2029: true
        default: false
        }
    }

    /// Line breaks and tabs become spaces; any other unsafe character becomes U+FFFD, visibly.
    /// A password in a URL (`http://user:secret@host/`) is replaced by `***`.
    static func safe(_ text: String) -> String {
        let redacted = Redact.passwords(in: text)
        // Nearly every title and URL is safe as it is: returned without being rebuilt.
        guard redacted.unicodeScalars.contains(where: isUnsafe) else { return redacted }
        var scalars = String.UnicodeScalarView()
        for scalar in redacted.unicodeScalars {
            if !isUnsafe(scalar) {
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
    static func cells(_ character: Character) -> Int {
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
    static func truncate(_ text: String, toCells width: Int) -> String {
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

    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + cells($1) }
    }

    /// `text` (already safe) in lines of at most `width` cells, broken at spaces; a word longer
    /// than a line is broken where the line ends.
    static func wrap(_ text: String, width: Int) -> [String] {
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

/// Writing JSON by hand, so the output is exactly the documented shape, key order included.
enum JSON {
    /// A JSON string literal. Every character that is unsafe on a terminal is written as `\uXXXX`,
    /// so the output can be printed raw as well as parsed.
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in Redact.passwords(in: text).unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if Terminal.isUnsafe(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func string(_ text: String?) -> String { text.map { string($0) } ?? "null" }
    static func number(_ value: Int?) -> String { value.map(String.init) ?? "null" }
}

/// Credentials in URLs never reach output: a feed URL may carry them (`https://user:pass@host/`),
/// and it is printed by `status`, in error messages and in logs.
enum Redact {
    /// `text` with the password of every URL in it replaced by `***`.
    static func passwords(in text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        var copied = 0
        while index + 3 <= bytes.count {
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] == UInt8(ascii: "/")
            else {
                index += 1
                continue
            }
            // The authority runs to the first of / ? #; but a password may hold those unescaped
            // (`https://bob:p#ss@host/`), so the user information ends at the last `@` before
            // white space. Some text after a port may be hidden with it: better than a password shown.
            let start = index + 3
            var end = start
            while end < bytes.count, !Self.endsAuthority(bytes[end]) { end += 1 }
            var word = end
            while word < bytes.count, bytes[word] > 0x20, bytes[word] != 0x7F { word += 1 }
            index = end
            let at =
                bytes[start..<end].lastIndex(of: UInt8(ascii: "@"))
                ?? bytes[start..<word].lastIndex(of: UInt8(ascii: "@"))
            guard let at, let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")) else { continue }
            index = max(index, at)
            out += bytes[copied...colon]
            out += Array("***".utf8)
            copied = at
        }
        guard copied > 0 else { return text }
        out += bytes[copied...]
        return String(decoding: out, as: UTF8.self)
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "'"),
            UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"):
            true
        default: byte <= 0x20 || byte == 0x7F
        }
    }
}
