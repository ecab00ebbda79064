import FeedSyncModel
import Foundation

/// What HTML's element and attribute names are, for every reader of HTML: the feeds' fields
/// written as HTML and the article's tree.
package enum HTMLNames {
    /// The elements with no end tag.
    package static let voidTags: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]

    /// Letters, digits, `-` and `_`: an attribute name written as it is.
    package static func isPlainName(_ name: String) -> Bool {
        name.utf8.allSatisfy { HTMLText.isASCIILetter($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F }
    }
}
