// Feeds put HTML where text belongs: titles with entities and tags, descriptions whose first
// <img> is the only picture. These helpers turn such HTML into one line of plain text and find
// that picture, without a full HTML parser: feeds need only this much.

import Foundation

enum HTMLText {
    // The text helpers walk UTF-8 bytes: every byte they look for (tags, entities, ASCII
    // whitespace) is ASCII, and a byte-wise pass is an order of magnitude faster than iterating
    // Characters over the kilobytes of HTML a long feed carries per item.

    /// One line of plain text: tags dropped (with the contents of `script` and `style`), entities
    /// decoded, runs of whitespace made one space.
    static func plain(_ html: String) -> String {
        let bytes = Array(html.utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<"), index + 1 < bytes.count, Self.opensTag(bytes[index + 1]),
                  let close = bytes[index...].firstIndex(of: UInt8(ascii: ">"))
            else {
                // Anything else, a lone "<" (as in "a < b") included, is text.
                text.append(byte)
                index += 1
                continue
            }
            let name = bytes[(index + 1)...].prefix { Self.isASCIILetter($0) }.map { $0 | 0x20 }
            index = close + 1
            if name == Array("script".utf8) || name == Array("style".utf8) {
                let end = Self.find([UInt8(ascii: "<"), UInt8(ascii: "/")] + name, in: bytes, from: index)
                index = end.flatMap { bytes[$0...].firstIndex(of: UInt8(ascii: ">")) }.map { $0 + 1 } ?? bytes.count
            }
            // Block-level tags separate words ("<p>a</p><p>b</p>" reads "a b").
            text.append(UInt8(ascii: " "))
        }
        return String(decoding: collapsingWhitespace(decodingEntities(text)), as: UTF8.self)
    }

    /// `text` with runs of whitespace made one space and the ends trimmed.
    static func collapsingWhitespace(_ text: String) -> String {
        String(decoding: collapsingWhitespace(Array(text.utf8)), as: UTF8.self)
    }

    private static func collapsingWhitespace(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var pendingSpace = false
        var index = 0
        while index < bytes.count {
            if let width = Self.whitespaceWidth(bytes, at: index) {
                pendingSpace = !result.isEmpty
                index += width
            } else {
                if pendingSpace { result.append(UInt8(ascii: " ")) }
                pendingSpace = false
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// The UTF-8 length of the whitespace character (Unicode's White_Space) at `index`, or nil.
    private static func whitespaceWidth(_ bytes: [UInt8], at index: Int) -> Int? {
        let byte = bytes[index]
        if byte < 0x80 { return byte == 0x20 || (0x09...0x0D).contains(byte) ? 1 : nil }
        func next(_ offset: Int) -> UInt8 { index + offset < bytes.count ? bytes[index + offset] : 0 }
        switch byte {
        case 0xC2: return next(1) == 0x85 || next(1) == 0xA0 ? 2 : nil  // NEL, no-break space
        case 0xE1: return next(1) == 0x9A && next(2) == 0x80 ? 3 : nil  // ogham space
        case 0xE2:
            let (second, third) = (next(1), next(2))
            if second == 0x80 { return (0x80...0x8A).contains(third) || [0xA8, 0xA9, 0xAF].contains(third) ? 3 : nil }
            return second == 0x81 && third == 0x9F ? 3 : nil  // medium mathematical space
        case 0xE3: return next(1) == 0x80 && next(2) == 0x80 ? 3 : nil  // ideographic space
        default: return nil
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private static func opensTag(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?")
    }

    /// Where `needle` (lowercase ASCII) starts in `bytes` at or after `start`, ignoring ASCII case.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if needle.indices.allSatisfy({ (bytes[index + $0] | (isASCIILetter(bytes[index + $0]) ? 0x20 : 0)) == needle[$0] }) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// At most `limit` characters, cut at a word boundary with an ellipsis when it had to be cut.
    static func cut(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit,
              let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end < text.endIndex
        else { return text }
        let head = text.prefix(limit)
        let boundary = head.lastIndex(of: " ").map { head[..<$0] } ?? head
        return String(boundary.isEmpty ? head : boundary) + "…"
    }

    /// The `src` of the first `<img>` in `html`, entities decoded.
    static func firstImageSource(_ html: String) -> String? {
        var rest = Substring(html)
        while let start = rest.range(of: "<img", options: .caseInsensitive) {
            rest = rest[start.upperBound...]
            guard let close = rest.firstIndex(of: ">") else { return nil }
            if let source = attribute("src", in: rest[..<close]) { return decodeEntities(source) }
            rest = rest[close...]
        }
        return nil
    }

    /// The value of attribute `name` in the inside of a tag (`a="1" b='2' c=3`).
    private static func attribute(_ name: String, in tag: Substring) -> String? {
        var rest = tag
        while let found = rest.range(of: name, options: .caseInsensitive) {
            let before = rest[..<found.lowerBound].last
            var after = rest[found.upperBound...].drop { $0 == " " }
            rest = rest[found.upperBound...]
            guard before == nil || before!.isWhitespace || before == "\"" || before == "'", after.first == "=" else {
                continue
            }
            after = after.dropFirst().drop { $0 == " " }
            if let quote = after.first, quote == "\"" || quote == "'" {
                let value = after.dropFirst().prefix { $0 != quote }
                return value.isEmpty ? nil : String(value)
            }
            let value = after.prefix { !$0.isWhitespace && $0 != ">" }
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    /// Decodes `&amp;`, `&#8217;`, `&#x2019;` and the named entities feeds use; anything else is
    /// left as written.
    static func decodeEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        return String(decoding: decodingEntities(Array(text.utf8)), as: UTF8.self)
    }

    private static func decodingEntities(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "&")) else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == UInt8(ascii: "&") else {
                result.append(byte)
                continue
            }
            let body = bytes[index...].prefix(12).prefix {
                $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "&") && $0 != 0x20 && !(0x09...0x0D).contains($0)
            }
            let end = index + body.count
            if end < bytes.count, bytes[end] == UInt8(ascii: ";"),
               let decoded = entity(Substring(decoding: body, as: UTF8.self)) {
                result.append(contentsOf: String(decoded).utf8)
                index = end + 1
            } else {
                result.append(byte)
            }
        }
        return result
    }

    private static func entity(_ body: Substring) -> Character? {
        if body.first == "#" {
            let digits = body.dropFirst()
            let value = digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
            return Character(scalar)
        }
        return named[String(body)]
    }

    private static let named: [String: Character] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ",
        "hellip": "…", "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "sbquo": "‚",
        "ldquo": "“", "rdquo": "”", "bdquo": "„", "laquo": "«", "raquo": "»", "bull": "•",
        "middot": "·", "copy": "©", "reg": "®", "trade": "™", "deg": "°", "euro": "€", "pound": "£",
        "yen": "¥", "cent": "¢", "sect": "§", "para": "¶", "times": "×", "divide": "÷", "plusmn": "±",
        "frac12": "½", "frac14": "¼", "frac34": "¾", "iexcl": "¡", "iquest": "¿", "shy": "\u{AD}",
        "agrave": "à", "aacute": "á", "acirc": "â", "auml": "ä", "aring": "å", "ccedil": "ç",
        "egrave": "è", "eacute": "é", "ecirc": "ê", "euml": "ë", "iacute": "í", "iuml": "ï",
        "ntilde": "ñ", "oacute": "ó", "ocirc": "ô", "ouml": "ö", "oslash": "ø", "uacute": "ú",
        "ugrave": "ù", "uuml": "ü", "szlig": "ß", "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "Eacute": "É",
    ]
}

extension String {
    /// Without leading and trailing whitespace (Unicode's, newlines included). Feed fields are
    /// nearly always trimmed already, and then this costs two byte checks, not Foundation's scan.
    var trimmed: String {
        guard let first = utf8.first, let last = utf8.last else { return self }
        if (0x21..<0x80).contains(first), (0x21..<0x80).contains(last) { return self }
        return trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
