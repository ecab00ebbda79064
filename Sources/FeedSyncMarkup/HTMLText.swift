// FeedSyncMarkup: what reading feeds and reading web pages share, below both (FeedSyncFeed,
// FeedSyncPage): the libxml2 shim (LibXML2.swift, loaded on first use; XMLTree.swift, walking a
// tree it built), HTML text (this file: plain text, summaries, cuts, entities from
// HTMLEntities.swift, Windows1252.swift's repairs), HTML's names (HTMLNames), dates
// (FeedDate), JSON (JSONValue, JSONParser), URLs (DocumentURL), the search index's text
// (SearchText), the content pictures' scan (ArticlePictures) and the limits on what a document
// may make (FeedLimits). Its API is package-wide: the modules of feedsync read with it, nothing
// outside them does. Only this module and the two above it load libxml2.

import FeedSyncModel
import Foundation

package enum HTMLText {
    // The text helpers walk UTF-8 bytes: every byte they look for (tags, entities, ASCII
    // whitespace) is ASCII, and a byte-wise pass is an order of magnitude faster than iterating
    // Characters over the kilobytes of HTML a long feed carries per item.

    /// The characters a summary keeps (titles made from text keep 80).
    package static let summaryLength = 280

    /// One line of plain text: tags dropped (with the contents of `script` and `style`), entities
    /// decoded, runs of whitespace made one space — in one pass over the bytes.
    ///
    /// With `limit`, only enough text for `cut(_:to: limit)` is made: `limit + 1` characters (so
    /// the cut still sees there was more), which is most of the work saved on a long description
    /// that becomes a 280-character summary.
    package static func plain(_ html: String, limit: Int? = nil) -> String {
        plain(Array(html.utf8), limit: limit)
    }

    package static func plain(_ html: [UInt8], limit: Int? = nil) -> String {
        String(decoding: plainText(html, limit: limit).bytes, as: UTF8.self)
    }

    /// `cut(plain(html, limit: limit), to: limit)`: a summary. Plain ASCII text (nearly every
    /// feed's) is cut as bytes, never made a String before it is cut.
    package static func summary(_ html: [UInt8], limit: Int) -> String {
        let text = plainText(html, limit: limit)
        guard text.ascii else { return cut(String(decoding: text.bytes, as: UTF8.self), to: limit) }
        guard text.bytes.count > limit else { return String(decoding: text.bytes, as: UTF8.self) }
        let space = text.bytes[..<limit].lastIndex(of: UInt8(ascii: " ")).flatMap { $0 == 0 ? nil : $0 } ?? limit
        return String(decoding: text.bytes[..<space], as: UTF8.self) + "…"
    }

    /// A printable ASCII character other than "<" and "&": text as it is.
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x80 && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "&")
    }

    private static func plainText(_ bytes: [UInt8], limit: Int?) -> PlainText {
        var text = PlainText(capacity: min(bytes.count, limit.map { 4 * ($0 + 1) } ?? .max))
        var index = 0
        while index < bytes.count, !text.holds(limit) {
            let byte = bytes[index]
            // Most of a text is words: printable ASCII other than "<" and "&", one space between
            // them. Such a run is the text as it is, copied at once, no further than it needs.
            if Self.isPlain(byte) {
                let stop = index + min(bytes.count - index, text.room(limit))
                let end = bytes.withUnsafeBufferPointer { input in
                    var end = index + 1
                    while end < stop {
                        if Self.isPlain(input[end]) {
                            end += 1
                        } else if input[end] == 0x20, end + 1 < stop, Self.isPlain(input[end + 1]) {
                            end += 2
                        } else {
                            break
                        }
                    }
                    return end
                }
                text.append(bytes[index..<end])
                index = end
                continue
            }
            if byte == 0x20 {
                text.space()
                index += 1
                continue
            }
            if byte == UInt8(ascii: "<"), index + 1 < bytes.count, Self.opensTag(bytes[index + 1]),
                let close = bytes[index...].firstIndex(of: UInt8(ascii: ">"))
            {
                let name = bytes[(index + 1)...].prefix { Self.isASCIILetter($0) }.map { $0 | 0x20 }
                index = close + 1
                if name == Array("script".utf8) || name == Array("style".utf8) {
                    let end = Self.find([UInt8(ascii: "<"), UInt8(ascii: "/")] + name, in: bytes, from: index)
                    index = end.flatMap { bytes[$0...].firstIndex(of: UInt8(ascii: ">")) }.map { $0 + 1 } ?? bytes.count
                }
                // Block-level tags separate words ("<p>a</p><p>b</p>" reads "a b").
                text.space()
            } else if byte == UInt8(ascii: "&"), let (decoded, end) = Self.entity(in: bytes, at: index) {
                index = end
                if Self.whitespaceWidth(decoded, at: 0) != nil {
                    text.space()
                } else {
                    for byte in decoded { text.append(byte) }
                }
            } else if let width = Self.whitespaceWidth(bytes, at: index) {
                index += width
                text.space()
            } else {
                // Anything else, a lone "<" (as in "a < b") or "&" included, is text.
                text.append(byte)
                index += 1
            }
        }
        return text
    }

    /// The text `plain` makes: runs of whitespace become one space, never at either end.
    private struct PlainText {
        package var bytes: [UInt8] = []
        package var pendingSpace = false
        package var ascii = true

        package init(capacity: Int) { bytes.reserveCapacity(capacity) }

        package mutating func space() { pendingSpace = !bytes.isEmpty }

        package mutating func append(_ byte: UInt8) {
            if pendingSpace { bytes.append(UInt8(ascii: " ")) }
            pendingSpace = false
            bytes.append(byte)
            ascii = ascii && byte < 0x80
        }

        /// Printable ASCII (`isPlain`) and single spaces between it, appended at once.
        package mutating func append(_ run: ArraySlice<UInt8>) {
            if pendingSpace { bytes.append(UInt8(ascii: " ")) }
            pendingSpace = false
            bytes.append(contentsOf: run)
        }

        /// How many more bytes `holds(limit)` may want: at least one.
        package func room(_ limit: Int?) -> Int {
            guard let limit else { return .max }
            return max(1, (ascii ? limit + 1 : 4 * (limit + 1)) - bytes.count)
        }

        /// Whether there is enough for `cut(_:to: limit)`: `limit + 1` characters. An ASCII byte
        /// is one character (CR is never kept); others take at most four bytes, bar rare clusters
        /// that then end the text a little early.
        package func holds(_ limit: Int?) -> Bool {
            guard let limit else { return false }
            return ascii ? bytes.count > limit : bytes.count >= 4 * (limit + 1)
        }
    }

    /// Text as readers show a title: plain text, but publishers escape characters in it
    /// (`&#8216;`, `&amp;`) as in HTML; those are decoded, runs of whitespace made one space, and
    /// tags not touched (a JSON Feed title, a page's metadata).
    package static func decodedText(_ text: String) -> String {
        collapsingWhitespace(decodeEntities(text))
    }

    /// `text` with runs of whitespace made one space and the ends trimmed.
    package static func collapsingWhitespace(_ text: String) -> String {
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
    package static func whitespaceWidth<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> Int?
    where Bytes.Index == Int {
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

    package static func isASCIILetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    package static func opensTag(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?")
    }

    /// Where `needle` (lowercase ASCII, starting with a byte that is no letter, like `<`) starts
    /// in `bytes` at or after `start`, ignoring ASCII case.
    package static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while let candidate = bytes[index...].firstIndex(of: needle[0]) {
            guard candidate + needle.count <= bytes.count else { return nil }
            if needle.indices.dropFirst().allSatisfy({
                bytes[candidate + $0] | (isASCIILetter(bytes[candidate + $0]) ? 0x20 : 0) == needle[$0]
            }) {
                return candidate
            }
            index = candidate + 1
        }
        return nil
    }

    /// At most `limit` characters, cut at a word boundary with an ellipsis when it had to be cut.
    package static func cut(_ text: String, to limit: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > limit else { return text }
        if utf8.prefix(limit + 1).allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\r") }) {
            // ASCII without CR (the text of nearly every feed): each byte is one character, and
            // the last space is found without walking Characters backwards.
            let head = utf8.prefix(limit)
            let end =
                head.lastIndex(of: UInt8(ascii: " ")).flatMap { $0 == utf8.startIndex ? nil : $0 } ?? head.endIndex
            return String(text[..<end]) + "…"
        }
        guard let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end < text.endIndex
        else { return text }
        let head = text[..<end]
        let boundary = head.lastIndex(of: " ").map { head[..<$0] } ?? head
        return String(boundary.isEmpty ? head : boundary) + "…"
    }

    /// At most `limit` bytes of `html`: when longer, cut before the last `<` that starts within
    /// the limit (never inside a tag), else at the last whole character.
    package static func cutHTML(_ html: String, toBytes limit: Int) -> String {
        let utf8 = html.utf8
        guard utf8.count > limit else { return html }
        let head = utf8.prefix(limit)
        var end = head.lastIndex(of: UInt8(ascii: "<")) ?? head.endIndex
        if end == head.startIndex { end = head.endIndex }
        // Back to the start of a character: a continuation byte is 10xxxxxx.
        while end > head.startIndex, end < utf8.endIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(html[..<end])
    }

    /// HTML for plain `text`: escaped, its blank-line-separated paragraphs in `<p>`s (a line break
    /// inside one a `<br>`, "\r\n" taken as "\n", each trimmed of Unicode blanks). On the bytes:
    /// Foundation's string searches bridge each text to NSString, a third of a JSON Feed pull's CPU.
    package static func html(fromText text: String) -> String {
        var text = text
        if text.utf8.contains(0x0D) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count)
            for byte in text.utf8 {
                if byte == 0x0A, bytes.last == 0x0D { bytes.removeLast() }
                bytes.append(byte)
            }
            text = String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        text.withUTF8 { bytes in
            var start = 0
            var index = 0
            while index <= bytes.count {  // paragraphs end at each "\n\n", left to right, and at the end
                if index < bytes.count, bytes[index] != 0x0A || index + 1 == bytes.count || bytes[index + 1] != 0x0A {
                    index += 1
                    continue
                }
                let paragraph = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    .trimmed
                if !paragraph.isEmpty {
                    if !out.isEmpty { out.append(0x0A) }
                    out += "<p>".utf8
                    appendEscaped(paragraph.utf8, to: &out, lineBreaks: true)
                    out += "</p>".utf8
                }
                index += 2
                start = index
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with `&`, `<`, `>` and `"` escaped for HTML. Byte by byte: a quote followed by a
    /// combining mark is one Swift `Character` that is not `"`, and would pass unescaped; a text
    /// with none of the four (most) comes back as it is.
    package static func escaped(_ text: String) -> String {
        var text = text
        let escaped = text.withUTF8 { bytes -> String? in
            guard bytes.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 }) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            appendEscaped(bytes, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        return escaped ?? text
    }

    /// Appends `bytes` to `out` with `&`, `<`, `>` and `"` escaped, and with `lineBreaks` each
    /// "\n" as `<br>`.
    package static func appendEscaped(_ bytes: some Sequence<UInt8>, to out: inout [UInt8], lineBreaks: Bool = false) {
        for byte in bytes {
            switch byte {
            case 0x26: out += "&amp;".utf8
            case 0x3C: out += "&lt;".utf8
            case 0x3E: out += "&gt;".utf8
            case 0x22: out += "&quot;".utf8
            case 0x0A where lineBreaks: out += "<br>".utf8
            default: out.append(byte)
            }
        }
    }

    /// The `src` of the first `<img>` in `html`, entities decoded.
    package static func firstImageSource(_ html: String) -> String? {
        firstImageSource(Array(html.utf8))
    }

    package static func firstImageSource(_ bytes: [UInt8]) -> String? {
        var index = 0
        while let start = Self.find(Array("<img".utf8), in: bytes, from: index) {
            index = start + 4
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
            if let source = attribute(Array("src".utf8), in: bytes[index..<close]) {
                return decodeEntities(String(decoding: source, as: UTF8.self))
            }
            index = close
        }
        return nil
    }

    /// The value of attribute `name` (lowercase) in the inside of a tag (`a="1" b='2' c=3`), read
    /// attribute by attribute so a name inside another's quoted value is not taken for one.
    package static func attribute(_ name: [UInt8], in tag: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        var rest = tag
        while true {
            rest = rest.drop { isSpace($0) || $0 == UInt8(ascii: "/") }
            guard !rest.isEmpty else { return nil }
            let key = rest.prefix { !isSpace($0) && $0 != UInt8(ascii: "=") }
            rest = rest[key.endIndex...].drop(while: isSpace)
            guard rest.first == UInt8(ascii: "=") else { continue }  // an attribute without a value
            rest = rest.dropFirst().drop(while: isSpace)
            let value: ArraySlice<UInt8>
            if let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                value = rest.dropFirst().prefix { $0 != quote }
                rest = rest[min(value.endIndex + 1, rest.endIndex)...]
            } else {
                value = rest.prefix { !isSpace($0) }
                rest = rest[value.endIndex...]
            }
            if key.count == name.count, zip(key, name).allSatisfy({ ($0 | (isASCIILetter($0) ? 0x20 : 0)) == $1 }) {
                return value.isEmpty ? nil : value
            }
        }
    }

    /// Decodes `&amp;`, `&#8217;`, `&#x2019;` and every HTML5 named reference; anything else is
    /// left as written. References to 128–159 are windows-1252's characters, as browsers read them.
    package static func decodeEntities(_ text: String) -> String {
        guard text.containsUTF8(UInt8(ascii: "&")) else { return text }
        return String(decoding: decodingEntities(Array(text.utf8)), as: UTF8.self)
    }

    private static func decodingEntities(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "&")) else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), let (decoded, end) = entity(in: bytes, at: index) {
                result += decoded
                index = end
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// The UTF-8 of the entity starting with the `&` at `index`, and the index after its `;`;
    /// nil when none is there.
    package static func entity(in bytes: [UInt8], at index: Int) -> ([UInt8], Int)? {
        let start = index + 1
        let body = bytes[start...].prefix(40).prefix {
            $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "&") && $0 != 0x20 && !(0x09...0x0D).contains($0)
        }
        let end = start + body.count
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"),
            let decoded = entity(Substring(decoding: body, as: UTF8.self))
        else { return nil }
        return (decoded, end + 1)
    }

    private static func entity(_ body: Substring) -> [UInt8]? {
        if body.first == "#" {
            let digits = body.dropFirst()
            let value =
                digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let value else { return nil }
            return Array(String(HTMLEntities.character(value)).utf8)
        }
        return HTMLEntities.table[String(body)]
    }
}

extension HTMLEntities {
    /// Each name's text, as UTF-8; made from `source` on first use.
    package static let table: [String: [UInt8]] = {
        var table: [String: [UInt8]] = [:]
        table.reserveCapacity(2200)
        for line in source.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard let name = parts.first else { continue }
            var text = String.UnicodeScalarView()
            for hex in parts.dropFirst() {
                if let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) { text.append(scalar) }
            }
            table[String(name)] = Array(String(text).utf8)
        }
        return table
    }()

    /// The character a numeric reference stands for, as browsers read it: 128–159 are
    /// windows-1252's (`&#146;` is ’), and 0, a surrogate or a value past Unicode is U+FFFD.
    package static func character(_ value: UInt32) -> Unicode.Scalar {
        if (0x80...0x9F).contains(value) { return Windows1252.scalar(UInt8(value)) }
        return Unicode.Scalar(value).flatMap { $0.value == 0 ? nil : $0 } ?? "\u{FFFD}"
    }

    /// `text` (UTF-8) with its C1 control characters U+0080–U+009F read as windows-1252's, as
    /// browsers do: they come from `&#146;`-style references, or from windows-1252 bytes declared
    /// as ISO-8859-1.
    package static func replacingC1(_ text: [UInt8]) -> [UInt8] {
        // memchr for 0xC2: every field's text passes here, and nearly none holds one.
        let found = text.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var search = 0
            while search < buffer.count, let hit = memchr(base + search, 0xC2, buffer.count - search) {
                let candidate = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if candidate + 1 < buffer.count, buffer[candidate + 1] & 0xE0 == 0x80 { return candidate }
                search = candidate + 1
            }
            return nil
        }
        guard let first = found else { return text }
        var out = Array(text[..<first])
        out.reserveCapacity(text.count + 8)
        var index = first
        while index < text.count {
            if text[index] == 0xC2, index + 1 < text.count, text[index + 1] & 0xE0 == 0x80 {
                Windows1252.utf8(text[index + 1], into: &out)
                index += 2
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return out
    }
}

extension String {
    /// Without leading and trailing whitespace (Unicode's, newlines included). Feed fields are
    /// nearly always trimmed already, and then this costs two byte checks; otherwise the ends'
    /// scalars are dropped in place, with no bridge to NSString.
    package var trimmed: String {
        guard let first = utf8.first, let last = utf8.last else { return self }
        if (0x21..<0x80).contains(first), (0x21..<0x80).contains(last) { return self }
        let blank = CharacterSet.whitespacesAndNewlines
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, blank.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, blank.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

// Byte searches over the kilobytes of every item's text: through the contiguous bytes (memchr,
// or a plain loop the compiler vectorises), where `utf8.contains` steps through String's view
// one byte at a time.
extension String {
    /// Whether the text's UTF-8 holds `byte`.
    package func containsUTF8(_ byte: UInt8) -> Bool {
        var text = self
        return text.withUTF8 { $0.containsByte(byte) }
    }

    /// Whether the text's UTF-8 holds `part`'s, byte for byte. `contains` with a string, which
    /// `import Foundation` resolves to Foundation's, goes through NSString: a twentieth of an
    /// article's extraction, where the extractor asks it of every picture and style.
    package func containsUTF8(_ part: String) -> Bool {
        var (text, part) = (self, part)
        return text.withUTF8 { bytes in
            part.withUTF8 { wanted in
                guard let first = wanted.first else { return true }
                guard wanted.count <= bytes.count else { return false }
                let last = bytes.count - wanted.count
                var start = 0
                while let found = bytes[start...last].firstIndex(of: first) {
                    if bytes[found..<found + wanted.count].elementsEqual(wanted) { return true }
                    start = found + 1
                    if start > last { break }
                }
                return false
            }
        }
    }

    /// Whether the text's UTF-8 holds a byte of `least` or more.
    package func containsUTF8(atLeast least: UInt8) -> Bool {
        var text = self
        return text.withUTF8 { bytes in
            // Eight bytes at a time while they are ASCII, as most text is: a byte of `least` or
            // more (above 0x7F) has its top bit set. A loop with an exit at every byte is not.
            var start = 0
            if least >= 0x80, let base = bytes.baseAddress {
                let raw = UnsafeRawPointer(base)
                while start + 8 <= bytes.count,
                    raw.loadUnaligned(fromByteOffset: start, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    start += 8
                }
            }
            for byte in bytes[start...] where byte >= least { return true }
            return false
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    package func containsByte(_ byte: UInt8) -> Bool {
        guard let base = baseAddress else { return false }
        return memchr(base, Int32(byte), count) != nil
    }
}

extension String {
    package var nilIfEmpty: String? { isEmpty ? nil : self }
}
