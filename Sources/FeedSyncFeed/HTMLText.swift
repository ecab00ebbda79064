// Feeds put HTML where text belongs: titles with entities and tags, descriptions whose first
// <img> is the only picture. These helpers turn such HTML into one line of plain text and find
// that picture, without a full HTML parser: feeds need only this much.

enum HTMLText {
    /// One line of plain text: tags dropped (with the contents of `script` and `style`), entities
    /// decoded, runs of whitespace made one space.
    static func plain(_ html: String) -> String {
        var text = ""
        text.reserveCapacity(html.utf8.count)
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            text += rest[..<open]
            let tag = rest[open...]
            guard let second = tag.dropFirst().first, second.isLetter || second == "/" || second == "!" || second == "?",
                  let close = tag.firstIndex(of: ">")
            else {
                // A lone "<" (as in "a < b") is text.
                text += "<"
                rest = tag.dropFirst()
                continue
            }
            let name = tag.dropFirst().prefix { $0.isLetter }.lowercased()
            rest = tag[tag.index(after: close)...]
            if name == "script" || name == "style" {
                if let end = rest.range(of: "</\(name)", options: .caseInsensitive) {
                    rest = rest[end.upperBound...].drop { $0 != ">" }.dropFirst()
                } else {
                    rest = ""
                }
            }
            // Block-level tags separate words ("<p>a</p><p>b</p>" reads "a b").
            text += " "
        }
        text += rest
        return collapsingWhitespace(decodeEntities(text))
    }

    /// `text` with runs of whitespace made one space and the ends trimmed.
    static func collapsingWhitespace(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }

    /// At most `limit` characters, cut at a word boundary with an ellipsis when it had to be cut.
    static func cut(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
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
        guard text.contains("&") else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            let body = after.prefix(12).prefix { $0 != ";" && $0 != "&" && !$0.isWhitespace }
            let end = after.index(after.startIndex, offsetBy: body.count, limitedBy: after.endIndex) ?? after.endIndex
            if end < after.endIndex, after[end] == ";", let decoded = entity(body) {
                result.append(decoded)
                rest = after[after.index(after: end)...]
            } else {
                result.append("&")
                rest = after
            }
        }
        result += rest
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
