import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// What libxml2 is given of a feed document: UTF-8, with what browsers forgive made well-formed.
/// Feeds are written by hand, by ancient CMSes and by broken templates; a browser or feedparser
/// reads them, and so must we, without ever storing garbage. The document arrives in chunks and
/// leaves in chunks, so a long one is never held whole.
///
/// - **Encoding** (RFC 7303's order): a byte-order mark, else the HTTP `charset`, else the XML
///   declaration's `encoding`, else UTF-8 when the first chunk is valid UTF-8 and windows-1252
///   when it is not. A label is read as browsers read it (`browserEncodings`: ISO-8859-1 and
///   US-ASCII as windows-1252, TIS-620 as windows-874, GB2312 as GB18030, …); a name iconv does
///   not know counts as no name. In a document read as UTF-8, a byte that is no UTF-8 is read as
///   windows-1252, the UTF-8 around it kept. Anything but UTF-8 is converted with iconv, and
///   libxml2 is told to ignore the declaration.
/// - **References**: HTML's named references (`&nbsp;`, `&eacute;`, the whole HTML5 table)
///   become numeric ones unless the document declares the name itself; an unknown name, a bare
///   `&` and a `<` that opens no tag become literal text. A numeric reference to a control
///   character or a surrogate is dropped; one to no character at all (`&#0;`, past U+10FFFF) is
///   U+FFFD.
/// - **Characters**: the control characters XML does not allow (all of C0 but tab, line feed and
///   carriage return) are dropped.
/// CDATA sections, comments, processing instructions and the DTD are left as they are.
struct XMLInput {
    /// The longest reference rewritten (`&CounterClockwiseContourIntegral;` is 33 bytes).
    private static let longestReference = 40

    private var converter: Converter?
    private var decided = false
    private let contentType: String?
    private var state = State.text
    /// Bytes held back at the end of a chunk: a reference or a markup opening cut in two.
    private var carry: [UInt8] = []
    /// The start of a UTF-8 character the last part cut off.
    private var unfinished: [UInt8] = []
    /// Entity names the document's DTD declares: those references are the document's own.
    private var declared: Set<String> = []

    /// Something but white space was passed on: an XML declaration from now on is out of place.
    private var started = false

    private enum State: Equatable {
        case text, cdata, comment, instruction
        /// An XML declaration out of place (after a comment, say), dropped: its encoding was read already.
        case declaration
        /// Inside `<!DOCTYPE`: bracket depth, and the quote being read, if any.
        case doctype(depth: Int, quote: UInt8?)
    }

    init(contentType: String?) {
        self.contentType = contentType
    }

    /// Hands `body` the next part of the document as libxml2 should read it (`last`: no more
    /// follows): the chunk itself when it is UTF-8 and needs no repair, as nearly every one does.
    mutating func next(_ chunk: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
        var chunk = chunk
        if !decided {
            decided = true
            converter = Self.converter(for: [UInt8](chunk), contentType: contentType)  // the first chunk judges UTF-8
            if converter == nil, chunk.starts(with: [0xEF, 0xBB, 0xBF]) {
                chunk = UnsafeRawBufferPointer(rebasing: chunk[3...])
            }
        }
        guard converter == nil else { return feed(chunk, last: last, body) }
        // Read as UTF-8: each byte that is none is read as windows-1252 (`Caf\xE9` is "Café"),
        // the UTF-8 around it kept; a character cut off at the end of a part waits for the next.
        var bytes = chunk.assumingMemoryBound(to: UInt8.self)
        if !unfinished.isEmpty {
            let taken = min(Self.sequenceLength(lead: unfinished[0]) - unfinished.count, bytes.count)
            let piece = unfinished + bytes[..<taken]
            unfinished = []
            if piece.withUnsafeBufferPointer({ Self.sequenceLength($0, at: 0) }) == piece.count {
                piece.withUnsafeBytes { feed($0, last: last && taken == bytes.count, body) }
                bytes = UnsafeBufferPointer(rebasing: bytes[taken...])
            } else if !last, taken == bytes.count,
                piece.withUnsafeBufferPointer({ Self.isUnfinishedSequence($0[...]) })
            {
                unfinished = piece  // still cut off: a part of one or two bytes
                return
            } else {
                // No character: each of the bytes held is one of windows-1252's.
                var fixed: [UInt8] = []
                for byte in piece.prefix(piece.count - taken) { Windows1252.utf8(byte, into: &fixed) }
                fixed.withUnsafeBytes { feed($0, last: last && bytes.isEmpty, body) }
            }
            if bytes.isEmpty { return }
        }
        let valid = Self.validUTF8Prefix(bytes)
        guard valid < bytes.count else { return feed(UnsafeRawBufferPointer(bytes), last: last, body) }
        if !last, Self.isUnfinishedSequence(bytes[valid...]) {
            feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[..<valid]), last: false, body)
            unfinished = Array(bytes[valid...])
            return
        }
        let (fixed, rest) = Self.windows1252ForInvalidUTF8(bytes, last: last)
        unfinished = rest
        fixed.withUnsafeBytes { feed($0, last: last, body) }
    }

    /// Hands `body` `chunk` (UTF-8 from here on) as libxml2 should read it.
    private mutating func feed(_ chunk: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
        var chunk = chunk
        if converter == nil, !carry.isEmpty, chunk.count > Self.joint {
            // What was held back, with the chunk's first bytes; then the rest of the chunk where
            // it lies, not copied after them.
            (carry + chunk.prefix(Self.joint)).withUnsafeBytes { repair($0, last: false, body) }
            guard carry.count <= Self.joint else {
                carry += chunk.dropFirst(Self.joint)  // held back longer than the joint (rare): read as one
                let bytes = carry
                carry = []
                bytes.withUnsafeBytes { repair($0, last: last, body) }
                return
            }
            chunk = UnsafeRawBufferPointer(rebasing: chunk[(Self.joint - carry.count)...])
            carry = []
        }
        if converter == nil, carry.isEmpty {
            repair(chunk, last: last, body)
            return
        }
        // What was carried is UTF-8 already; only the new chunk is converted.
        (carry + (converter.map { $0.convert([UInt8](chunk), last: last) } ?? [UInt8](chunk)))
            .withUnsafeBytes { repair($0, last: last, body) }
    }

    /// Repairs `bytes` and hands `body` the result: a prefix of `bytes` itself when nothing
    /// changed, else the changed copy.
    private mutating func repair(_ bytes: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) -> Void)
    {
        switch repaired(bytes.assumingMemoryBound(to: UInt8.self), last: last) {
        case .unchanged(let count): body(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        case .changed(let changed): changed.withUnsafeBytes(body)
        }
    }

    /// How many bytes from the start of `bytes` are whole UTF-8 characters.
    static func validUTF8Prefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var index = 0
        let count = bytes.count
        while index < count {
            if bytes[index] < 0x80 {
                index += 1
                continue
            }
            guard let length = sequenceLength(bytes, at: index), index + length <= count else { return index }
            index += length
        }
        return count
    }

    /// The length of the UTF-8 character at `index`, or nil when the bytes there are none (or
    /// are cut off by the end).
    private static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let byte = bytes[index]
        let length = sequenceLength(lead: byte)
        guard length > 0, index + length <= bytes.count else { return nil }
        for offset in 1..<max(length, 1) where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        if length > 2 {
            // Overlong forms, surrogates and values past U+10FFFF are no UTF-8.
            let second = bytes[index + 1]
            if byte == 0xE0, second < 0xA0 || byte == 0xED, second >= 0xA0 { return nil }
            if byte == 0xF0, second < 0x90 || byte == 0xF4, second >= 0x90 { return nil }
        }
        return length
    }

    /// Whether `bytes` (one to three) start a UTF-8 character the next part may finish.
    private static func isUnfinishedSequence(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) -> Bool {
        guard let lead = bytes.first, bytes.count < 4 else { return false }
        return sequenceLength(lead: lead) > bytes.count && bytes.dropFirst().allSatisfy { $0 & 0xC0 == 0x80 }
    }

    /// The bytes of the UTF-8 character `lead` starts; 0 when it starts none.
    private static func sequenceLength(lead: UInt8) -> Int {
        lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >> 4 == 0xE ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
    }

    /// `bytes` with each byte that is no UTF-8 written as the windows-1252 character it is (a
    /// byte windows-1252 leaves unassigned: the C1 control of its number, as browsers decode
    /// it); unless `last`, a character cut off at the end is returned apart, for the next part.
    static func windows1252ForInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>, last: Bool) -> ([UInt8], [UInt8]) {
        var fixed: [UInt8] = []
        fixed.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            let run = index + validUTF8Prefix(UnsafeBufferPointer(rebasing: bytes[index...]))
            fixed += bytes[index..<run]
            index = run
            guard index < bytes.count else { break }
            if !last, isUnfinishedSequence(bytes[index...]) { return (fixed, Array(bytes[index...])) }
            Windows1252.utf8(bytes[index], into: &fixed)
            index += 1
        }
        return (fixed, [])
    }

    /// Bytes of a chunk read together with what the last one held back.
    private static let joint = 64

    /// What `repaired` made of a part: a prefix of it unchanged, or other bytes.
    enum Repair {
        case unchanged(count: Int)
        case changed([UInt8])
    }

    // MARK: Encoding

    /// The converter to UTF-8 for a document that starts with `start`, or nil for UTF-8.
    static func converter(for start: [UInt8], contentType: String?) -> Converter? {
        let name = encodingName(start, contentType: contentType)
        guard let name, !["utf-8", "utf8"].contains(name) else {
            // Undeclared: UTF-8 if it is (a sequence cut at the chunk's end does not count against it).
            if name == nil, !isUTF8(start) { return Converter(from: "WINDOWS-1252") }
            return nil
        }
        if let converter = Converter(from: browserEncodings[name] ?? name.uppercased()) { return converter }
        // A name iconv does not know: as if undeclared.
        return isUTF8(start) ? nil : Converter(from: "WINDOWS-1252")
    }

    /// What browsers decode a label as (the WHATWG Encoding Standard), where that is not the
    /// encoding of its own name, as iconv calls it: a Thai feed that says TIS-620 writes
    /// windows-874's curly quotes, a "GB2312" one GBK's characters, and so on.
    static let browserEncodings: [String: String] = {
        let groups: [(String, [String])] = [
            (
                "WINDOWS-1252",
                [
                    "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
                    "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii",
                    "x-cp1252",
                ]
            ),
            ("WINDOWS-874", ["dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620"]),
            (
                "WINDOWS-1254",
                [
                    "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9",
                    "iso_8859-9:1989", "l5", "latin5", "x-cp1254",
                ]
            ),
            (
                "GB18030",
                [
                    "chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58",
                    "x-gbk",
                ]
            ),
            ("BIG5-HKSCS", ["big5", "cn-big5", "csbig5", "x-x-big5"]),
            (
                "CP949",
                [
                    "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989",
                    "ksc5601", "ksc_5601", "windows-949",
                ]
            ),
            ("WINDOWS-31J", ["csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "x-sjis"]),
        ]
        return Dictionary(uniqueKeysWithValues: groups.flatMap { name, labels in labels.map { ($0, name) } })
    }()

    /// The encoding the document names: by its byte-order mark (or UTF-16/32's telltale first
    /// bytes), the HTTP charset, or its XML declaration, lower-cased; nil when nothing names one.
    static func encodingName(_ start: [UInt8], contentType: String?) -> String? {
        let boms: [([UInt8], String)] = [
            ([0xEF, 0xBB, 0xBF], "utf-8"), ([0x00, 0x00, 0xFE, 0xFF], "utf-32be"),
            ([0xFF, 0xFE, 0x00, 0x00], "utf-32le"),
            ([0xFE, 0xFF], "utf-16be"), ([0xFF, 0xFE], "utf-16le"),
            ([0x00, 0x00, 0x00, 0x3C], "utf-32be"), ([0x3C, 0x00, 0x00, 0x00], "utf-32le"),
            ([0x00, 0x3C, 0x00, 0x3F], "utf-16be"), ([0x3C, 0x00, 0x3F, 0x00], "utf-16le"),
        ]
        for (bom, name) in boms where start.starts(with: bom) { return name }
        if let contentType, let charset = parameter("charset", in: contentType) { return charset }
        // The declaration, in an ASCII-compatible encoding: `<?xml version="1.0" encoding="…"?>`.
        let head = String(decoding: start.prefix(512), as: UTF8.self)
        guard let open = head.range(of: "<?xml"),
            let close = head.range(of: "?>", range: open.upperBound..<head.endIndex)
        else { return nil }
        return parameter("encoding", in: String(head[open.upperBound..<close.lowerBound]))
    }

    /// `name=value` or `name="value"` in `text`, lower-cased and unquoted.
    private static func parameter(_ name: String, in text: String) -> String? {
        let lower = text.lowercased()
        guard let found = lower.range(of: name) else { return nil }
        var rest = lower[found.upperBound...].drop { $0 == " " || $0 == "\t" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
        let quote = rest.first == "\"" || rest.first == "'" ? rest.first : nil
        if quote != nil { rest = rest.dropFirst() }
        let value = rest.prefix { $0 != quote && $0 != ";" && $0 != " " && $0 != "?" && !(quote == nil && $0 == ">") }
        return value.isEmpty ? nil : String(value)
    }

    /// Whether `bytes` is UTF-8, but for a sequence cut at its very end: where its whole
    /// characters end (`validUTF8Prefix`), the end comes before the length the next lead byte
    /// announces.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            let valid = validUTF8Prefix(buffer)
            guard valid < buffer.count else { return true }
            let lead = buffer[valid]
            let length =
                lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 && lead < 0xF5 ? 4 : 0
            return length > 0 && valid + length > buffer.count
        }
    }

    /// iconv from one encoding to UTF-8, across chunks: a sequence cut at a chunk's end waits for
    /// the next; a byte that is no character is U+FFFD. Windows-1252 is read by its table instead,
    /// as browsers read it: iconv has no character for its five unassigned bytes, which browsers
    /// read as the C1 controls of their numbers.
    final class Converter {
        private let descriptor: iconv_t?
        private var pending: [UInt8] = []
        /// Bytes of a code unit: a sequence that is no character is skipped a unit at a time, so
        /// UTF-16 and UTF-32 stay aligned after it.
        private let unit: Int

        init?(from encoding: String) {
            if ["WINDOWS-1252", "CP1252"].contains(encoding) {
                descriptor = nil
                unit = 1
                return
            }
            let descriptor = iconv_open("UTF-8", encoding)
            guard let descriptor, Int(bitPattern: descriptor) != -1 else { return nil }
            self.descriptor = descriptor
            unit = encoding.contains("32") ? 4 : encoding.contains("16") ? 2 : 1
        }

        deinit {
            if let descriptor { iconv_close(descriptor) }
        }

        func convert(_ bytes: [UInt8], last: Bool) -> [UInt8] {
            guard let descriptor else {
                var output: [UInt8] = []
                output.reserveCapacity(bytes.count + bytes.count / 8)
                for byte in bytes {
                    Windows1252.utf8(byte, into: &output)
                }
                return output
            }
            var input = pending + bytes
            pending = []
            var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
            var produced = 0
            var consumed = 0
            while consumed < input.count {
                var inLeft = input.count - consumed
                var outLeft = output.count - produced
                let result = input.withUnsafeMutableBufferPointer { inBuffer in
                    output.withUnsafeMutableBufferPointer { outBuffer in
                        var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(
                            inBuffer.baseAddress! + consumed
                        )
                        .assumingMemoryBound(to: CChar.self)
                        var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(
                            outBuffer.baseAddress! + produced
                        )
                        .assumingMemoryBound(to: CChar.self)
                        return iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    }
                }
                let failure = result == -1 ? errno : 0
                consumed = input.count - inLeft
                produced = output.count - outLeft
                if failure == EINVAL, !last {
                    pending = Array(input[consumed...])  // cut in two: the rest comes with the next chunk
                    break
                } else if failure == EILSEQ || failure == EINVAL {
                    output.replaceSubrange(produced..<min(output.count, produced + 3), with: [0xEF, 0xBF, 0xBD])
                    produced += 3
                    consumed = min(input.count, consumed + unit)
                } else if failure == E2BIG {
                    output += [UInt8](repeating: 0, count: input.count * 2 + 16)
                } else {
                    break
                }
            }
            input.removeAll()
            return Array(output[..<produced])
        }
    }

    // MARK: Repairs

    /// `bytes` (UTF-8) with references and characters repaired; what cannot be judged before the
    /// next chunk is held back in `carry`. Nothing is copied until something has to change: a
    /// well-formed chunk (nearly every chunk) is handed on as it came.
    private mutating func repaired(_ bytes: UnsafeBufferPointer<UInt8>, last: Bool) -> Repair {
        carry = []
        var out: [UInt8]? = nil
        /// Bytes from `passed` on are not in `out` yet: copied only when something before them changes.
        var passed = 0
        var index = 0
        let count = bytes.count
        /// Replaces `bytes[range]` with `replacement`.
        func change(_ range: Range<Int>, to replacement: [UInt8]) {
            if out == nil {
                out = []
                out!.reserveCapacity(count + 64)
            }
            out! += bytes[passed..<range.lowerBound]
            out! += replacement
            passed = range.upperBound
        }
        func starts(_ text: StaticString, at position: Int) -> Bool? {
            let length = text.utf8CodeUnitCount
            if position + length > count { return last ? false : nil }
            for offset in 0..<length where bytes[position + offset] != text.utf8Start[offset] { return false }
            return true
        }
        var end = count  // where the bytes handed on end: before `carry`
        scan: while index < count {
            // Runs of bytes that need no look are found by a table: this pass sees every byte of
            // every XML document.
            let stops =
                switch state {
                case .text: Self.textStops
                case .cdata: Self.cdataStops
                case .comment: Self.commentStops
                case .instruction, .declaration: Self.instructionStops
                case .doctype: Self.everyByte
                }
            let inText = state == .text
            let runStart = index
            stops.withUnsafeBufferPointer { stops in
                while index < count {
                    let byte = bytes[index]
                    if !stops[Int(byte)] {
                        index += 1
                    } else if inText, byte == UInt8(ascii: "&"), let length = Self.wellFormedReference(bytes, at: index)
                    {
                        index += length  // `&amp;`, `&#8217;`: as XML reads them, and the most frequent
                    } else if inText, byte == UInt8(ascii: "<"), index + 1 < count, Self.opensTag(bytes[index + 1]) {
                        index += 2  // `<item`, `</item`: an ordinary tag, the most frequent of all
                    } else {
                        break
                    }
                }
            }
            if state == .declaration, index > runStart { change(runStart..<index, to: []) }
            guard index < count else { break }

            let byte = bytes[index]
            if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D {
                change(index..<(index + 1), to: [])  // a control character XML does not allow
                index += 1
                continue
            }
            switch state {
            case .text where byte == UInt8(ascii: "&"):
                switch reference(in: bytes, at: index, last: last) {
                case .incomplete:
                    end = index
                    break scan
                case .bare:
                    change(index..<(index + 1), to: Array("&amp;".utf8))
                    index += 1
                case .kept(let after):
                    index = after
                case .rewritten(let replacement, let after):
                    change(index..<after, to: replacement)
                    index = after
                }
                continue scan
            case .text where byte == UInt8(ascii: "<"):
                // A `<` that starts no tag (`a < b`) is text, as a browser shows it.
                guard index + 1 < count else {
                    if last {
                        change(index..<(index + 1), to: Array("&lt;".utf8))
                        index += 1
                        continue scan
                    }
                    end = index
                    break scan
                }
                if !Self.startsMarkup(bytes[index + 1]) {
                    change(index..<(index + 1), to: Array("&lt;".utf8))
                    index += 1
                    continue scan
                }
                // The XML declaration: white space before it is dropped (libxml2 refuses it), and
                // one out of place is dropped whole.
                switch starts("<?xml", at: index) {
                case nil:
                    end = index
                    break scan
                case true? where index + 5 < count && bytes[index + 5] <= 0x20:
                    let before = out.map { $0.contains { $0 > 0x20 } } ?? false
                    if started || before || bytes[passed..<index].contains(where: { $0 > 0x20 }) {
                        state = .declaration
                        change(index..<(index + 5), to: [])
                        index += 5
                        continue scan
                    }
                    if index > passed { change(passed..<index, to: []) }
                default:
                    break
                }
                for (opening, next) in Self.markup {
                    switch starts(opening, at: index) {
                    case nil:
                        end = index
                        break scan
                    case true?:
                        state = next
                        index += opening.utf8CodeUnitCount
                        continue scan
                    case false?:
                        continue
                    }
                }
            case .cdata, .comment, .instruction, .declaration:
                let closing: StaticString =
                    switch state {
                    case .cdata: "]]>"
                    case .comment: "-->"
                    default: "?>"
                    }
                if byte == closing.utf8Start[0] {
                    switch starts(closing, at: index) {
                    case nil:
                        end = index
                        break scan
                    case true?:
                        let length = closing.utf8CodeUnitCount
                        if state == .declaration { change(index..<(index + length), to: []) }
                        state = .text
                        index += length
                        continue scan
                    case false?:
                        break
                    }
                }
            case .doctype(let depth, let quote):
                if let quote {
                    if byte == quote { state = .doctype(depth: depth, quote: nil) }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    state = .doctype(depth: depth, quote: byte)
                } else if byte == UInt8(ascii: "[") {
                    state = .doctype(depth: depth + 1, quote: nil)
                } else if byte == UInt8(ascii: "]") {
                    state = .doctype(depth: max(0, depth - 1), quote: nil)
                } else if byte == UInt8(ascii: ">"), depth == 0 {
                    state = .text
                } else if byte == UInt8(ascii: "<") {
                    // A comment in the DTD may hold a quote: stepped over whole.
                    if starts("<!--", at: index) == true {
                        var close = index + 4
                        while close + 2 < count,
                            !(bytes[close] == UInt8(ascii: "-") && bytes[close + 1] == UInt8(ascii: "-")
                                && bytes[close + 2] == UInt8(ascii: ">"))
                        { close += 1 }
                        if close + 2 >= count, !last {
                            end = index
                            break scan
                        }
                        index = min(count, close + 3)
                        continue scan
                    }
                    switch starts("<!ENTITY", at: index) {
                    case nil:
                        end = index
                        break scan
                    case true?:
                        // The name after it (a parameter entity's `%` is no general entity).
                        var at = index + 8
                        while at < count, bytes[at] <= 0x20 { at += 1 }
                        let name = bytes[at...].prefix {
                            $0 > 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "'")
                        }
                        if at + name.count >= count, !last {  // the name may go on in the next chunk
                            end = index
                            break scan
                        }
                        if !name.isEmpty, name.first != UInt8(ascii: "%") {
                            declared.insert(String(decoding: name, as: UTF8.self))
                        }
                    case false?:
                        break
                    }
                }
            default:
                break
            }
            if state == .declaration { change(index..<(index + 1), to: []) }
            index += 1
        }
        if end < count { carry = Array(bytes[end...]) }
        if !started { started = (out ?? []).contains { $0 > 0x20 } || bytes[passed..<end].contains { $0 > 0x20 } }
        guard var changed = out else { return .unchanged(count: end) }
        changed += bytes[passed..<end]
        return .changed(changed)
    }

    /// The openings of markup that is not an element, and the state each starts.
    private static let markup: [(StaticString, State)] = [
        ("<![CDATA[", .cdata), ("<!--", .comment), ("<?", .instruction), ("<!DOCTYPE", .doctype(depth: 0, quote: nil)),
    ]

    /// Whether a `<` followed by `byte` opens an element or an end tag (not a comment, CDATA,
    /// declaration or processing instruction, and not a `<` that is text).
    private static func opensTag(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"), UInt8(ascii: "/"), 0x80...0xFF:
            true
        default: false
        }
    }

    private enum Reference {
        /// Cut at the chunk's end: judged with the next one.
        case incomplete
        /// A `&` that starts no reference: literal text.
        case bare
        /// A reference XML reads as it is, up to `end`.
        case kept(end: Int)
        case rewritten([UInt8], end: Int)
    }

    /// The `&` at `index` made well-formed: a numeric reference kept (or dropped when its character
    /// is not allowed), an XML or declared name kept, an HTML name made numeric, any other name
    /// escaped, so it shows as written.
    private func reference(in bytes: UnsafeBufferPointer<UInt8>, at index: Int, last: Bool) -> Reference {
        let start = index + 1
        var end = start
        while end < bytes.count, end - start <= Self.longestReference, Self.isReferenceByte(bytes[end]) { end += 1 }
        if end == bytes.count { return last ? .bare : .incomplete }
        guard bytes[end] == UInt8(ascii: ";"), end > start else { return .bare }
        let body = bytes[start..<end]
        let after = end + 1
        // XML's own five and the numeric references it reads as they are (the run scan passes
        // them by, but one at a chunk's end comes here).
        if let length = Self.wellFormedReference(bytes, at: index) { return .kept(end: index + length) }
        if body.first == UInt8(ascii: "#") {
            let digits = body.dropFirst()
            let hex = digits.first == UInt8(ascii: "x") || digits.first == UInt8(ascii: "X")
            let text = String(decoding: hex ? digits.dropFirst() : digits, as: UTF8.self)
            guard !text.isEmpty else { return .bare }  // `&#;`: no reference
            // Digits past any character (`&#99999999999;`) stand for none: U+FFFD, as browsers show.
            let value = UInt32(text, radix: hex ? 16 : 10) ?? 0x110000
            switch value {
            case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF:
                return .rewritten(Array("&#x\(String(value, radix: 16));".utf8), end: after)  // `&#X41;` is no XML
            case 0, 0x110000...: return .rewritten(Array("&#xFFFD;".utf8), end: after)
            default: return .rewritten([], end: after)  // a control character or a surrogate: dropped
            }
        }
        let name = String(decoding: body, as: UTF8.self)
        if declared.contains(name) { return .kept(end: after) }
        guard let text = HTMLEntities.table[name] else {
            return .rewritten(Array("&amp;".utf8) + Array(bytes[start..<after]), end: after)  // shown as written
        }
        var numeric: [UInt8] = []
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            numeric += Array("&#x\(String(scalar.value, radix: 16));".utf8)
        }
        return .rewritten(numeric, end: after)
    }

    /// Bytes that end a run in each state: those that may start or end markup there, and the
    /// control characters XML does not allow.
    private static func stopping(at stops: [UInt8]) -> [Bool] {
        var table = [Bool](repeating: false, count: 256)
        for byte in 0..<0x20 where byte != 0x09 && byte != 0x0A && byte != 0x0D { table[byte] = true }
        for stop in stops { table[Int(stop)] = true }
        return table
    }

    private static let textStops = stopping(at: [UInt8(ascii: "&"), UInt8(ascii: "<")])
    private static let cdataStops = stopping(at: [UInt8(ascii: "]")])
    private static let commentStops = stopping(at: [UInt8(ascii: "-")])
    private static let instructionStops = stopping(at: [UInt8(ascii: "?")])
    private static let everyByte = [Bool](repeating: true, count: 256)

    /// Whether a `<` followed by `byte` can open a tag, an end tag, a comment, a CDATA section or
    /// a declaration.
    private static func startsMarkup(_ byte: UInt8) -> Bool {
        opensTag(byte) || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?")
    }

    /// The length of the reference at `index` when XML reads it as it is: one of its five names,
    /// or `&#` and digits (or `&#x` and hex digits) naming a character XML allows; else nil.
    private static func wellFormedReference(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let count = buffer.count
        guard index + 3 < count else { return nil }
        let first = buffer[index + 1]
        if first == UInt8(ascii: "#") {
            var at = index + 2
            let hex = buffer[at] == UInt8(ascii: "x")
            if hex { at += 1 }
            var value: UInt32 = 0
            let digitsStart = at
            while at < count, at - digitsStart < 7 {
                let byte = buffer[at]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
                case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: digit = UInt32(byte - 0x61 + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: digit = UInt32(byte - 0x41 + 10)
                default: digit = 99
                }
                if digit == 99 { break }
                value = value * (hex ? 16 : 10) + digit
                at += 1
            }
            guard at > digitsStart, at < count, buffer[at] == UInt8(ascii: ";") else { return nil }
            switch value {
            case 0x09, 0x0A, 0x0D, 0x20...0x7F, 0xA0...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF:
                return at + 1 - index
            default: return nil  // controls, C1 (read as windows-1252 later, but left to the slow path), surrogates
            }
        }
        for name: StaticString in ["amp;", "lt;", "gt;", "quot;", "apos;"] {
            let length = name.utf8CodeUnitCount
            guard index + 1 + length <= count, buffer[index + 1] == name.utf8Start[0] else { continue }
            var offset = 1
            while offset < length, buffer[index + 1 + offset] == name.utf8Start[offset] { offset += 1 }
            if offset == length { return length + 1 }
        }
        return nil
    }

    private static func isReferenceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "#"):
            true
        default: false
        }
    }
}
