import FeedSyncStore

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
        var out: [UInt8] = [0x22]
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in Redact.passwords(in: text).unicodeScalars {
            // Printable ASCII but the quote and the backslash, nearly all of most text, as it is.
            if (0x20..<0x7F).contains(scalar.value), scalar != "\"", scalar != "\\" {
                out.append(UInt8(scalar.value))
                continue
            }
            switch scalar {
            case "\"": out += #"\""#.utf8
            case "\\": out += #"\\"#.utf8
            case "\n": out += #"\n"#.utf8
            case "\r": out += #"\r"#.utf8
            case "\t": out += #"\t"#.utf8
            default:
                if SafeText.isUnsafe(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
                } else {
                    out += scalar.utf8
                }
            }
        }
        out.append(0x22)
        return String(decoding: out, as: UTF8.self)
    }

    public static func string(_ text: String?) -> String { text.map { string($0) } ?? "null" }
    public static func number(_ value: Int?) -> String { value.map(String.init) ?? "null" }
}

/// Credentials in URLs never reach output: a feed URL may carry them (`https://user:pass@host/`),
/// and it is printed by `status`, in error messages and in logs.
public enum Redact {
    /// `text` with the password of every URL in it replaced by `***`.
    public static func passwords(in text: String) -> String {
        // No `@`, no user information: most text, every title, is returned without a copy.
        guard text.utf8.contains(UInt8(ascii: "@")) else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        var copied = 0
        while index + 3 <= bytes.count {
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] == UInt8(ascii: "/")
            else {
                index += 1
                continue
            }
            // The authority runs to the first of / ? #; but a password may hold those unescaped
            // (`https://bob:p#ss@host/`), so the user information ends at the last `@` before
            // white space. Some text after a port may be hidden with it: better than a password shown.
            let start = index + 3
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
        guard copied > 0 else { return text }
        out += bytes[copied...]
        return String(decoding: out, as: UTF8.self)
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
/// the item's number, whether it is unread and its feed's name.
public enum ItemJSON {
    public static func fields(_ item: StoredItem, path: String?, position: Int?) -> String {
        """
        "id": \(JSON.string(item.key)), "title": \(JSON.string(item.title)), \
        "link": \(JSON.string(item.link)), "pic_url": \(JSON.string(item.pictureURL)), \
        "image": {"status": \(JSON.string(item.imageStatus.rawValue)), "path": \(JSON.string(path))}, \
        "published": \(JSON.string(item.published)), "position": \(JSON.number(position)), \
        "number": \(item.number), "unread": \(!item.read), "starred": \(item.starred), "feed": \(JSON.string(item.feedName))
        """
    }
}
