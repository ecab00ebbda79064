import FeedSyncModel

// What the full-text index holds for an item, and what a search becomes: SQLite's unicode61
// tokenizer splits words at spaces and punctuation, which Chinese and Japanese do not write, so
// their characters are spaced out on both sides and a phrase of them finds any run of characters.

/// An item's text for the search index, and a reader's search as an FTS5 query.
public enum SearchText {
    /// The body indexed per item, at most this many characters of plain text: the start of a long
    /// article finds it, and a 256 KB body does not cost a pull an index of 256 KB.
    public static let bodyCharacters = 32 * 1024

    /// The text indexed for `title`.
    public static func title(_ title: String) -> String {
        spaced(title)
    }

    /// The text indexed for an item's body: its content as plain text, else its summary.
    public static func body(content: String?, summary: String?) -> String {
        body(plainContent: content.flatMap { $0.isEmpty ? nil : plainContent(Array($0.utf8)) }, summary: summary)
    }

    /// `body` from the content's `plainContent`, made already.
    package static func body(plainContent: String?, summary: String?) -> String {
        spaced(plainContent ?? summary ?? "")
    }

    /// Content (HTML) as the plain text `body` indexes: the readers cut their summaries from the
    /// same text, so HTML becomes text once per item.
    package static func plainContent(_ html: [UInt8]) -> String {
        HTMLText.summary(html, limit: bodyCharacters)
    }

    /// An FTS5 query that matches items holding every word of `text`, each as a word or the start
    /// of one (`swi` finds "Swift"); `nil` when `text` holds no letter or digit. Each word is a
    /// quoted phrase, so nothing in `text` is FTS5 syntax.
    public static func query(_ text: String) -> String? {
        let words = text.split(whereSeparator: \.isWhitespace).compactMap { word -> String? in
            guard
                word.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil })
            else { return nil }
            return "\"" + spaced(String(word)).replacingOccurrences(of: "\"", with: "\"\"") + "\"*"
        }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }

    /// `text` with a space on each side of every character of a script written without spaces.
    package static func spaced(_ text: String) -> String {
        // Every such character is at U+3000 or above, whose UTF-8 starts with 0xE3 or more: text
        // without such a byte (Latin, Cyrillic, Greek, Arabic…) is looked at as bytes only.
        guard text.containsUTF8(atLeast: 0xE3), text.unicodeScalars.contains(where: isUnspaced) else {
            return text
        }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isUnspaced(scalar) {
                out.append(" ")
                out.append(scalar)
                out.append(" ")
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `spaced`'s inverse: the text a rule's pattern reads (`content`), as it was written.
    public static func unspaced(_ text: String) -> String {
        guard text.containsUTF8(atLeast: 0xE3), text.unicodeScalars.contains(where: isUnspaced) else {
            return text
        }
        var out = String.UnicodeScalarView()
        var skipSpace = false
        for scalar in text.unicodeScalars {
            if isUnspaced(scalar) {
                if out.last == " " { out.removeLast() }
                out.append(scalar)
                skipSpace = true
            } else if skipSpace, scalar == " " {
                skipSpace = false
            } else {
                skipSpace = false
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Han ideographs, hiragana, katakana (and their half-width forms), and CJK punctuation.
    package static func isUnspaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3000...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,
            0xFF66...0xFF9F, 0x20000...0x3FFFF:
            true
        default: false
        }
    }
}
