import FeedSyncModel
import Foundation

// A JSON reader that builds JSONValue straight from the bytes (RFC 8259). Foundation's JSONDecoder
// reaches JSONValue only through Codable, trying each type in turn and building coding paths for
// every failed guess: profiling a 100 000-item pull put most of its time there. This reader is one
// pass with no guessing; strings without escapes are copied once.
extension JSONValue {
    package static func parse(_ data: Data) throws(FeedError) -> JSONValue {
        let parsed = data.withUnsafeBytes { raw -> Result<JSONValue, JSONSyntaxError> in
            var reader = JSONReader(bytes: raw.bindMemory(to: UInt8.self))
            return Result { try reader.document() }.mapError { $0 as! JSONSyntaxError }
        }
        switch parsed {
        case .success(let value): return value
        case .failure(let failure): throw failure.feedError(startingWith: data.prefix(40))
        }
    }
}

extension JSONValue {
    /// Reads a document without holding its list of items (the root array, or the root object's
    /// `items` array), so memory does not grow with the list. When the list is reached, `reader`
    /// is given the root read so far, the list left empty, and `complete` false: a function it
    /// returns gets the list's elements one at a time as they are read. When it returns nil (the
    /// root so far cannot tell how to read them) the elements are read and dropped, and once the
    /// document is read `reader` is asked again with the whole root and `complete` true, and the
    /// list read a second time for the function it returns then, if any. Returns the root, with
    /// the list empty. `bytes` must be a mapping of a file: the pages read are given back to the
    /// kernel as the reader moves on, and read again from the file for a second pass.
    package static func parse(
        mappedFile bytes: UnsafeBufferPointer<UInt8>,
        listReader reader: (_ root: JSONValue, _ complete: Bool) throws -> ((JSONValue) throws -> Void)?
    ) throws -> JSONValue {
        do {
            var first = JSONReader(bytes: bytes, mapped: true)
            var streamed = false
            let (root, list) = try first.outline { soFar in
                guard let element = try reader(soFar, false) else { return { _ in } }
                streamed = true
                return element
            }
            if let list, !streamed, let element = try reader(root, true) {
                var second = JSONReader(bytes: bytes, mapped: true, at: list.start)
                try second.elements(depth: list.depth, element)
            }
            return root
        } catch let failure as JSONSyntaxError {
            throw failure.feedError(startingWith: bytes.prefix(40))
        }
    }
}

package struct JSONSyntaxError: Error {
    package var reason: String
    package var offset: Int

    package func feedError(startingWith start: some Collection<UInt8>) -> FeedError {
        let preview = String(decoding: start, as: UTF8.self)
        return FeedError(
            "the document is not valid JSON (\(reason) at byte \(offset); "
                + "it starts with \(String(reflecting: preview)))"
        )
    }
}

private struct JSONReader {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    /// Members of the object read last: room made for the next one (a feed's objects repeat one
    /// shape), at most 16, so a small object after a large one takes little more than its own.
    package var lastObjectSize = 0
    /// Nesting deeper than this is refused rather than allowed to exhaust the stack.
    package static let maxDepth = 512
    /// `bytes` map a file: the pages behind the reader are given back as a list is read.
    package let mapped: Bool
    /// Where the pages not given back yet start.
    package var kept = 0

    package init(bytes: UnsafeBufferPointer<UInt8>, mapped: Bool = false, at start: Int = 0) {
        self.bytes = bytes
        self.mapped = mapped
        index = start
        kept = start
        // A byte order mark is tolerated, as servers send one.
        if start == 0, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    package mutating func document() throws(JSONSyntaxError) -> JSONValue {
        let value = try self.value(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the document") }
        return value
    }

    /// The root, its list of items (the root array's elements, or those of the root object's
    /// `items` array) handed to the function `list` returns, one at a time, instead of kept: the
    /// root returned has the list empty, and `list` is given the root as read until the list.
    /// Also where the list starts, and the depth to read it at. A second `items` member is
    /// refused: read whole, the last would count, but the first may have been handed over.
    package mutating func outline(
        _ list: (JSONValue) throws -> (JSONValue) throws -> Void
    ) throws -> (root: JSONValue, list: (start: Int, depth: Int)?) {
        skipWhitespace()
        var found: (start: Int, depth: Int)? = nil
        let root: JSONValue
        if index < bytes.count, bytes[index] == UInt8(ascii: "[") {
            found = (index, 0)
            try elements(depth: 0, list(.array([])))
            root = .array([])
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
            var object = JSONObject()
            try members { reader, name in
                reader.skipWhitespace()
                if name == "items", found != nil {
                    throw FeedError(
                        "the document has a second \"items\" member (at byte \(reader.index)): "
                            + "which one counts is unclear"
                    )
                } else if name == "items", reader.index < reader.bytes.count,
                    reader.bytes[reader.index] == UInt8(ascii: "[")
                {
                    found = (reader.index, 1)
                    object.members.append(JSONObject.Member(name: name, value: .array([])))
                    try reader.elements(depth: 1, list(.object(object)))
                } else {
                    object.members.append(JSONObject.Member(name: name, value: try reader.value(depth: 1)))
                }
            }
            root = .object(object)
        } else {
            root = try value(depth: 0)
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the document") }
        return (root, found)
    }

    /// The elements of the array at `index`, each handed to `element` as it is read; in a
    /// mapped file, the pages behind are given back every few megabytes.
    package mutating func elements(depth: Int, _ element: (JSONValue) throws -> Void) throws {
        guard !open(UInt8(ascii: "]")) else { return }
        repeat {
            try element(try value(depth: depth + 1))
            if mapped, index - kept >= 8 << 20 {
                let page = Int(getpagesize())
                let end = index / page * page
                let start = kept / page * page
                madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start), end - start, MADV_DONTNEED)
                kept = end
            }
        } while try another(before: UInt8(ascii: "]"))
    }

    package func fail(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(reason: reason, offset: index) }

    package mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    package mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth) levels") }
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character")
        }
    }

    package mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0
        else { throw fail("unexpected character") }
        index += count
    }

    package mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        var object = JSONObject()
        guard !open(UInt8(ascii: "}")) else { return .object(object) }
        // One allocation instead of growing 1, 2, 4, 8: a tenth of a paged-JSON page's decoding.
        object.members.reserveCapacity(min(lastObjectSize, 16))
        while true {
            let name = try memberName()
            object.members.append(JSONObject.Member(name: name, value: try value(depth: depth + 1)))
            if try !another(before: UInt8(ascii: "}")) {
                lastObjectSize = object.members.count
                return .object(object)
            }
        }
    }

    /// The members of the object at `index`, each read by `member` from after its ':'.
    package mutating func members(_ member: (inout JSONReader, String) throws -> Void) throws {
        guard !open(UInt8(ascii: "}")) else { return }
        repeat {
            let name = try memberName()
            try member(&self, name)
        } while try another(before: UInt8(ascii: "}"))
    }

    /// A member's name and its ':'.
    package mutating func memberName() throws(JSONSyntaxError) -> String {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
        let name = try string()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
        index += 1
        return name
    }

    package mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        var elements: [JSONValue] = []
        guard !open(UInt8(ascii: "]")) else { return .array(elements) }
        repeat {
            elements.append(try value(depth: depth + 1))
        } while try another(before: UInt8(ascii: "]"))
        return .array(elements)
    }

    /// Reads the '{' or '[' at `index`; true when `close` follows at once (and is read too).
    /// This and `another` are inlined so `close` is a constant where they are used: called, they
    /// made parsing 3 % slower (callgrind).
    @inline(__always) package mutating func open(_ close: UInt8) -> Bool {
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] == close else { return false }
        index += 1
        return true
    }

    /// After a member or an element: true when another follows (its ',' read), false when
    /// `close` ends the object or array (and is read).
    @inline(__always) package mutating func another(before close: UInt8) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            return true
        case close:
            index += 1
            return false
        default: throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// A string starting at the opening quote; invalid UTF-8 is repaired (U+FFFD), as elsewhere.
    package mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        // The common case: no escapes, one copy.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw fail("a control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("an unterminated string") }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
        }
        var decoded = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw fail("an unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw fail("an unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), index + 6 <= bytes.count,
                        bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    {
                        let mark = index
                        index += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            index = mark
                        }
                    }
                    // A lone surrogate is not a character: it becomes U+FFFD.
                    decoded.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                default:
                    throw fail("an unknown escape")
                }
            case 0..<0x20:
                throw fail("a control character in a string")
            default:
                decoded.append(byte)
            }
        }
    }

    package mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A number in JSON's grammar (no leading zeros, no bare dot, no NaN).
    package mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let whole = index
        guard digits() > 0 else { throw fail("a bad number") }
        if bytes[whole] == UInt8(ascii: "0"), index - whole > 1 { throw fail("a number with a leading zero") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw fail("a bad number") }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw fail("a bad number") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text) else { throw fail("a bad number") }
        return value
    }
}
