import FeedSyncModel
import Foundation

/// URLs as feeds write them: relative, padded with whitespace, sometimes with spaces inside.
package enum DocumentURL {
    /// `reference` made absolute against `base`, with what a browser percent-encodes before it
    /// asks for a URL encoded so (`escaped`); `nil` when it is empty.
    package static func resolve(_ reference: String?, against base: String?) -> String? {
        guard let reference = reference?.trimmed, !reference.isEmpty else { return nil }
        let escaped = escaped(reference)
        // Already absolute: the common case, and no reason to let URL re-encode it.
        if escaped.hasPrefix("http://") || escaped.hasPrefix("https://") { return escaped }
        guard let base, let baseURL = URL(string: base) else { return escaped }
        return URL(string: escaped, relativeTo: baseURL)?.absoluteString ?? escaped
    }

    /// `url` with the bytes after its host that a URL may not hold as they are — spaces and
    /// other controls, `"`, `<`, `>`, `` ` ``, `{`, `}`, `|`, `^`, `\` and every byte of a
    /// non-ASCII character — percent-encoded, as a browser does before asking for it; a `%`
    /// already there is kept. The host is left as written.
    package static func escaped(_ url: String) -> String {
        var url = url
        guard url.withUTF8({ $0.contains(where: needsEscape) }) else { return url }
        let bytes = Array(url.utf8)
        // The authority of `scheme://host/…` is not touched: from the first "/", "?" or "#" after it.
        var start = 0
        if let scheme = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[(scheme + 1)...].starts(with: "//".utf8) {
            let host = scheme + 3
            start =
                bytes[host...].firstIndex {
                    $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                } ?? bytes.count
        }
        var out = Array(bytes[..<start])
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes[start...] {
            if needsEscape(byte) {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...0x20, 0x7F...0xFF, UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "|"), UInt8(ascii: "^"), UInt8(ascii: "\\"):
            true
        default: false
        }
    }
}
