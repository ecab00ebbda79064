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
    static let longestReference = 40

    var converter: Converter?
    var decided = false
    let contentType: String?
    var state = State.text
    /// Bytes held back at the end of a chunk: a reference or a markup opening cut in two.
    var carry: [UInt8] = []
    /// The start of a UTF-8 character the last part cut off.
    var unfinished: [UInt8] = []
    /// Entity names the document's DTD declares: those references are the document's own.
    var declared: Set<String> = []

    /// Something but white space was passed on: an XML declaration from now on is out of place.
    var started = false

    enum State: Equatable {
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
    mutating func feed(_ chunk: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
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
    mutating func repair(_ bytes: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
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
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
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
    static func isUnfinishedSequence(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) -> Bool {
        guard let lead = bytes.first, bytes.count < 4 else { return false }
        return sequenceLength(lead: lead) > bytes.count && bytes.dropFirst().allSatisfy { $0 & 0xC0 == 0x80 }
    }

    /// The bytes of the UTF-8 character `lead` starts; 0 when it starts none.
    static func sequenceLength(lead: UInt8) -> Int {
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
    static let joint = 64

    /// What `repaired` made of a part: a prefix of it unchanged, or other bytes.
    enum Repair {
        case unchanged(count: Int)
        case changed([UInt8])
    }
}
