import FeedSyncMarkup
import FeedSyncModel
import Foundation

// What is mended in a document before libxml2 reads it, as browsers would read it: references
// (entities HTML knows, stray ampersands), characters XML forbids.

extension XMLInput {
    /// `bytes` (UTF-8) with references and characters repaired; what cannot be judged before the
    /// next chunk is held back in `carry`. Nothing is copied until something has to change: a
    /// well-formed chunk (nearly every chunk) is handed on as it came.
    mutating func repaired(_ bytes: UnsafeBufferPointer<UInt8>, last: Bool) -> Repair {
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
    static let markup: [(StaticString, State)] = [
        ("<![CDATA[", .cdata), ("<!--", .comment), ("<?", .instruction), ("<!DOCTYPE", .doctype(depth: 0, quote: nil)),
    ]

    /// Whether a `<` followed by `byte` opens an element or an end tag (not a comment, CDATA,
    /// declaration or processing instruction, and not a `<` that is text).
    static func opensTag(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"), UInt8(ascii: "/"), 0x80...0xFF:
            true
        default: false
        }
    }

    enum Reference {
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
    func reference(in bytes: UnsafeBufferPointer<UInt8>, at index: Int, last: Bool) -> Reference {
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
    static func stopping(at stops: [UInt8]) -> [Bool] {
        var table = [Bool](repeating: false, count: 256)
        for byte in 0..<0x20 where byte != 0x09 && byte != 0x0A && byte != 0x0D { table[byte] = true }
        for stop in stops { table[Int(stop)] = true }
        return table
    }

    static let textStops = stopping(at: [UInt8(ascii: "&"), UInt8(ascii: "<")])
    static let cdataStops = stopping(at: [UInt8(ascii: "]")])
    static let commentStops = stopping(at: [UInt8(ascii: "-")])
    static let instructionStops = stopping(at: [UInt8(ascii: "?")])
    static let everyByte = [Bool](repeating: true, count: 256)

    /// Whether a `<` followed by `byte` can open a tag, an end tag, a comment, a CDATA section or
    /// a declaration.
    static func startsMarkup(_ byte: UInt8) -> Bool {
        opensTag(byte) || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?")
    }

    /// The length of the reference at `index` when XML reads it as it is: one of its five names,
    /// or `&#` and digits (or `&#x` and hex digits) naming a character XML allows; else nil.
    static func wellFormedReference(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
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

    static func isReferenceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "#"):
            true
        default: false
        }
    }
}
