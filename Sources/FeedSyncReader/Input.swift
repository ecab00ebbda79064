import Foundation

/// What the terminal sends: a key, the wheel, pasted text, or an answer to a question asked of it.
package enum Input: Equatable, Sendable {
    case key(Key)
    case paste(String)
    case reply(Reply)
}

package enum Key: Equatable, Sendable {
    /// Text typed (one character).
    case character(Character)
    /// Ctrl and a letter: its code (Ctrl-C is 3).
    case control(UInt8)
    case enter, escape, backspace, tab, backTab, delete
    case up, down, left, right, home, end, pageUp, pageDown
    case wheelUp, wheelDown
    /// A click of the first button, at a cell (from 0).
    case click(column: Int, row: Int)
}

/// The terminal's answers to what `Graphics.query` asks.
package enum Reply: Equatable, Sendable {
    /// DA1: the terminal's attributes (4: sixel).
    case attributes([Int])
    /// The kitty graphics query answered: whether it was OK.
    case kitty(ok: Bool)
    /// `CSI 16 t`'s answer: one cell in pixels.
    case cellSize(width: Int, height: Int)
    /// XTVERSION's answer: the terminal's name and version.
    case version(String)
    /// Another answer (window sizes, modes, graphics registers): read and set aside.
    case other
}

/// Turns the bytes the terminal sends into inputs: keys in their many spellings (xterm's, tmux's,
/// rxvt's), SGR mouse reports, bracketed paste, and the answers to queries, which never reach the
/// key bindings. Incomplete sequences wait for their next bytes; a lone ESC is the Escape key once
/// no byte follows (`flush`). Bounded: a sequence or paste longer than `limit` bytes is dropped.
package struct InputParser {
    private var pending: [UInt8] = []
    private var pasting: [UInt8]?
    static let limit = 1 << 16

    package init() {}

    /// Whether bytes wait for more (a lone ESC, a sequence cut in two): the caller flushes them
    /// after a short wait.
    package var isWaiting: Bool { !pending.isEmpty }

    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [Input] {
        pending.append(contentsOf: bytes)
        var inputs: [Input] = []
        var at = 0
        while at < pending.count {
            if pasting != nil {
                guard let end = Self.find([0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E], in: pending, from: at) else {
                    if pasting!.count + pending.count - at < Self.limit {
                        // Keep any tail that could start the end marker.
                        let keep = min(5, pending.count - at)
                        pasting!.append(contentsOf: pending[at..<pending.count - keep])
                        at = pending.count - keep
                    } else {
                        at = pending.count
                    }
                    break
                }
                pasting!.append(contentsOf: pending[at..<end])
                inputs.append(.paste(String(decoding: pasting!.prefix(Self.limit), as: UTF8.self)))
                pasting = nil
                at = end + 6
                continue
            }
            guard let (input, length) = Self.parse(pending, at) else { break }
            at += length
            if input == .paste("") {
                pasting = []
            } else if let input {
                inputs.append(input)
            }
        }
        pending.removeFirst(at)
        if pending.count > Self.limit { pending.removeAll() }
        return inputs
    }

    /// What waits, as typed: a lone ESC is the Escape key; a cut sequence is dropped.
    package mutating func flush() -> [Input] {
        defer { pending.removeAll() }
        return pending == [0x1B] ? [.key(.escape)] : []
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var at = start
        while at + needle.count <= bytes.count {
            if bytes[at] == needle[0], Array(bytes[at..<at + needle.count]) == needle { return at }
            at += 1
        }
        return nil
    }

    /// The input at `at` and its length; nil when more bytes are needed. An input of nil is read
    /// and set aside; `.paste("")` starts a paste.
    static func parse(_ bytes: [UInt8], _ at: Int) -> (Input?, Int)? {
        let byte = bytes[at]
        switch byte {
        case 0x1B:
            guard at + 1 < bytes.count else { return nil }
            switch bytes[at + 1] {
            case 0x5B: return csi(bytes, at)
            case 0x4F:  // SS3
                guard at + 2 < bytes.count else { return nil }
                let keys: [UInt8: Key] = [0x41: .up, 0x42: .down, 0x43: .right, 0x44: .left, 0x48: .home, 0x46: .end]
                return (keys[bytes[at + 2]].map(Input.key), 3)
            case 0x50, 0x5F, 0x5D:  // DCS, APC, OSC: up to ST (or BEL for OSC)
                return string(bytes, at)
            case 0x1B:
                return (.key(.escape), 1)
            default:
                // Alt and a key: the key.
                return parse(bytes, at + 1).map { ($0.0, $0.1 + 1) }
            }
        case 0x0D, 0x0A: return (.key(.enter), 1)
        case 0x09: return (.key(.tab), 1)
        case 0x7F, 0x08: return (.key(.backspace), 1)
        case 0x00..<0x20: return (.key(.control(byte)), 1)
        case 0x20..<0x80: return (.key(.character(Character(Unicode.Scalar(byte)))), 1)
        default:
            // UTF-8: its length from the lead byte; a stray continuation byte is dropped.
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            guard length > 1 else { return (nil, 1) }
            guard at + length <= bytes.count else { return nil }
            let text = String(decoding: bytes[at..<at + length], as: UTF8.self)
            guard let character = text.first, text.count == 1, character != "\u{FFFD}" else { return (nil, length) }
            return (.key(.character(character)), length)
        }
    }

    /// `ESC [ params intermediates final`.
    static func csi(_ bytes: [UInt8], _ at: Int) -> (Input?, Int)? {
        var end = at + 2
        while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) {
            guard end - at < 64 else { return (nil, end - at) }
            end += 1
        }
        guard end < bytes.count else { return nil }
        let length = end - at + 1
        let body = String(decoding: bytes[(at + 2)..<end], as: UTF8.self)
        let final = bytes[end]
        let isPrivate = body.hasPrefix("?")
        let isMouse = body.hasPrefix("<")
        let numbers = body.drop { $0 == "?" || $0 == "<" || $0 == ">" }.split(
            separator: ";", omittingEmptySubsequences: false
        )
        .map { Int($0.filter(\.isNumber)) ?? 0 }
        switch (final, isPrivate, isMouse) {
        case (0x4D, false, true), (0x6D, false, true):  // M press, m release
            guard numbers.count == 3, final == 0x4D else { return (nil, length) }
            let button = numbers[0]
            if button & 64 != 0 { return (.key(button & 1 == 0 ? .wheelUp : .wheelDown), length) }
            guard button & (3 | 32) == 0 else { return (nil, length) }
            return (.key(.click(column: max(0, numbers[1] - 1), row: max(0, numbers[2] - 1))), length)
        case (0x63, true, false): return (.reply(.attributes(numbers)), length)  // c
        case (0x74, false, false):  // t
            if numbers.count == 3, numbers[0] == 6 {
                return (.reply(.cellSize(width: numbers[2], height: numbers[1])), length)
            }
            return (.reply(.other), length)
        case (0x79, true, false), (0x53, true, false): return (.reply(.other), length)  // $y, S
        case (0x7E, false, false):  // ~
            let keys: [Int: Key] = [1: .home, 7: .home, 4: .end, 8: .end, 5: .pageUp, 6: .pageDown, 3: .delete]
            if numbers.first == 200 { return (.paste(""), length) }
            return (numbers.first.flatMap { keys[$0] }.map(Input.key), length)
        default:
            let keys: [UInt8: Key] = [
                0x41: .up, 0x42: .down, 0x43: .right, 0x44: .left, 0x48: .home, 0x46: .end, 0x5A: .backTab,
            ]
            return (keys[final].map(Input.key), length)
        }
    }

    /// A DCS, APC or OSC string up to its ST (`ESC \`), or an OSC's BEL.
    static func string(_ bytes: [UInt8], _ at: Int) -> (Input?, Int)? {
        var end = at + 2
        while end < bytes.count {
            if bytes[end] == 0x07, bytes[at + 1] == 0x5D { break }
            if bytes[end] == 0x1B {
                guard end + 1 < bytes.count else { return nil }
                if bytes[end + 1] == 0x5C { break }
            }
            guard end - at < limit else { return (nil, end - at) }
            end += 1
        }
        guard end < bytes.count else { return nil }
        let length = end - at + (bytes[end] == 0x07 ? 1 : 2)
        let body = String(decoding: bytes[(at + 2)..<end], as: UTF8.self)
        switch bytes[at + 1] {
        case 0x5F where body.hasPrefix("G"):  // kitty: Gi=31;OK
            return (.reply(.kitty(ok: body.hasSuffix(";OK"))), length)
        case 0x50 where body.hasPrefix(">|"):
            return (.reply(.version(String(body.dropFirst(2)))), length)
        default:
            return (.reply(.other), length)
        }
    }
}
