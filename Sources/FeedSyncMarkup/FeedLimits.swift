import FeedSyncModel
import Foundation

/// What one document may make: every figure and string from a feed is checked against these where
/// it is read, so nothing a stranger writes can overflow arithmetic or grow memory without bound.
public enum FeedLimits {
    /// Whether `text` is a number as servers write them in headers and documents: one or more
    /// ASCII digits, nothing else (no sign, space or other script's digits).
    public static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Item counts a server may report (`total`, `X-WP-Total`); the store accepts the same.
    public static let totals = 0...1_000_000_000
    /// Page counts a server may report (`X-WP-TotalPages`).
    public static let pages = 0...1_000_000_000
    /// A title longer than this many characters is cut.
    public static let titleCharacters = 1000
    /// An item's categories past this many are dropped.
    public static let categories = 32
    /// An item whose id is longer than this many bytes is skipped (and counted).
    public static let keyBytes = 2048
    /// An item whose link is longer than this many bytes is skipped (and counted); a picture URL
    /// that long (a `data:` URI from the content's first `<img>`, say) is dropped, the item kept.
    public static let urlBytes = 8192
    /// Enclosures kept of one item; the rest are left out.
    public static let enclosures = 8
    /// Text captured for one field of an XML item; the rest is cut.
    public static let fieldBytes = 1 << 20
    /// An item's stored content: longer HTML is cut at the last tag that starts before the limit.
    public static let contentBytes = 256 << 10
    /// Character data one XML document may expand to beyond its own length (entities); past it
    /// the document is refused.
    public static let expansionBytes = 16 << 20

    /// `title` within `titleCharacters`: a longer one is cut at a word, with an ellipsis; text
    /// encoded twice is repaired (`Mojibake`).
    package static func boundedTitle(_ title: String) -> String {
        let title = Mojibake.repaired(title)
        guard title.utf8.count > titleCharacters, title.count > titleCharacters else { return title }
        return HTMLText.cut(title, to: titleCharacters - 1)  // and the ellipsis
    }

    /// `url` when it is an http or https URL within `urlBytes`, else nil.
    package static func webURL(_ url: String?) -> String? {
        guard let url, url.utf8.count <= urlBytes, url.hasPrefix("http://") || url.hasPrefix("https://") else {
            return nil
        }
        return url
    }

}
