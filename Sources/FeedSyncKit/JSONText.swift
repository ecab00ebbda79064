import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation

// Text that leaves feedsync for a terminal, a program or the reading page: JSON written by hand in
// the documented shapes, credentials in URLs hidden, characters unsafe on a terminal known.

/// Which characters are unsafe where text from a feed is shown.
public enum SafeText {
    /// Characters that must never reach a terminal as they are: C0 and C1 controls (escape
    /// sequences start with one), DEL, and the bidi overrides and isolates that reorder text.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x2028, 0x2029: true
        default: false
        }
    }
}

/// Writing JSON by hand, so the output is exactly the documented shape, key order included.
public enum JSON {
    /// A JSON string literal. Every character that is unsafe on a terminal is written as `\uXXXX`,
    /// so the output can be printed raw as well as parsed.
    public static func string(_ text: String) -> String {
        var text = Redact.passwords(in: text)
        // A string's UTF-8 bytes, in runs: walking its Unicode scalars one by one was most of an
        // article's `--json` (BENCHMARKS.md).
        return text.withUTF8 { bytes in
            var out: [UInt8] = [0x22]
            out.reserveCapacity(bytes.count + 16)
            var index = 0
            while index < bytes.count {
                // Printable ASCII but the quote and the backslash, nearly all of most text, as it is.
                var end = index
                while end < bytes.count, bytes[end] >= 0x20, bytes[end] < 0x7F, bytes[end] != 0x22, bytes[end] != 0x5C {
                    end += 1
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                guard end < bytes.count else { break }
                index = end
                let byte = bytes[index]
                let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                var value = UInt32(length == 1 ? byte : byte & (0xFF >> (length + 1)))
                for next in bytes[index + 1..<index + length] { value = value << 6 | UInt32(next & 0x3F) }
                switch byte {
                case 0x22, 0x5C: out += [0x5C, byte]
                case 0x0A: out += [0x5C, UInt8(ascii: "n")]
                case 0x0D: out += [0x5C, UInt8(ascii: "r")]
                case 0x09: out += [0x5C, UInt8(ascii: "t")]
                default:
                    // Every unsafe scalar is below U+10000: four hex digits.
                    if SafeText.isUnsafe(Unicode.Scalar(value)!) {
                        let hex = String(value, radix: 16)
                        out += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
                    } else {
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + length]))
                    }
                }
                index += length
            }
            out.append(0x22)
            return String(decoding: out, as: UTF8.self)
        }
    }

    public static func string(_ text: String?) -> String { text.map { string($0) } ?? "null" }
    public static func number(_ value: Int?) -> String { value.map(String.init) ?? "null" }
    public static func number(_ value: Int64?) -> String { value.map(String.init) ?? "null" }
}

/// Credentials in URLs never reach output: a feed URL may carry them (`https://user:pass@host/`),
/// and it is printed by `status`, in error messages and in logs.
public enum Redact {
    /// `text` with the password of every URL in it replaced by `***`.
    public static func passwords(in text: String) -> String {
        var text = text
        let redacted = text.withUTF8 { bytes -> String? in
            // No `@`, no user information: most text, every title, is returned without a copy.
            guard let base = bytes.baseAddress, memchr(base, Int32(UInt8(ascii: "@")), bytes.count) != nil else {
                return nil
            }
            var out: [UInt8] = []
            var index = 0
            var copied = 0
            // Each `://` found from the colons memchr finds: a byte at a time in Swift, the search
            // was most of a long text's.
            while index < bytes.count, let found = memchr(base + index, Int32(UInt8(ascii: ":")), bytes.count - index) {
                let scheme = UnsafeRawPointer(base).distance(to: found)
                guard scheme + 3 <= bytes.count, bytes[scheme + 1] == UInt8(ascii: "/"),
                    bytes[scheme + 2] == UInt8(ascii: "/")
                else {
                    index = scheme + 1
                    continue
                }
                // The authority runs to the first of / ? #; but a password may hold those unescaped
                // (`https://bob:p#ss@host/`), so the user information ends at the last `@` before
                // white space. Some text after a port may be hidden with it: better than a password shown.
                let start = scheme + 3
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
            guard copied > 0 else { return nil }
            out += bytes[copied...]
            return String(decoding: out, as: UTF8.self)
        }
        return redacted ?? text
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

/// An item's fields in `list --json` (and `show --json`): the first seven as they always were, then
/// the item's number, whether it is unread, its feed's name, its files, author and categories.
public enum ItemJSON {
    public static func fields(_ item: StoredItem, path: String?, position: Int?) -> String {
        """
        "id": \(JSON.string(item.key)), "title": \(JSON.string(item.title)), \
        "link": \(JSON.string(item.link)), "pic_url": \(JSON.string(item.pictureURL)), \
        "image": {"status": \(JSON.string(item.imageStatus.rawValue)), "path": \(JSON.string(path))}, \
        "published": \(JSON.string(item.published)), "position": \(JSON.number(position)), \
        "number": \(item.number), "unread": \(!item.read), "starred": \(item.starred), "feed": \(JSON.string(item.feedName)), \
        "enclosures": [\(item.enclosures.map(enclosure).joined(separator: ", "))], \
        "author": \(JSON.string(item.author)), "categories": [\(item.categories.map { JSON.string($0) }.joined(separator: ", "))]
        """
    }

    /// An enclosure's fields: `url`, `type`, `length` (bytes) and `duration` (seconds), null where unknown.
    static func enclosure(_ file: FeedEnclosure) -> String {
        "{\"url\": \(JSON.string(file.url)), \"type\": \(JSON.string(file.type)), "
            + "\"length\": \(JSON.number(file.length)), \"duration\": \(JSON.number(file.duration))}"
    }
}

extension ItemDetail {
    /// The feed's own summary, where an article from the item's page is shown and says something
    /// else (the summary's start is nowhere in the article's text): `show` and the reading page
    /// put it before the article.
    public var summaryBesideArticle: String? {
        guard contentSource == "page", let summary, !summary.isEmpty else { return nil }
        let text = ReadableText.render(content ?? "", base: nil).paragraphs.joined(separator: " ")
        return text.contains(summary.prefix(60)) ? nil : summary
    }
}
