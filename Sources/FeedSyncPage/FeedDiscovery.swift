internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// The feeds a web page names for autodiscovery: `<link rel="alternate" type="application/rss+xml"
/// href="…">` (or Atom, or JSON Feed), read with libxml2's HTML parser, which reads broken HTML as
/// a browser would.
public enum FeedDiscovery {
    /// The link types that name a feed.
    static let types: Set<String> = ["application/rss+xml", "application/atom+xml", "application/feed+json"]

    /// At most this many links are taken from one page.
    static let maxLinks = 20

    /// The absolute http(s) URLs of the feeds `html` links to, in the page's order without
    /// repeats, relative ones resolved against the page's `<base href>` or else `pageURL`.
    public static func feeds(inHTML html: Data, pageURL: String) throws(FeedError) -> [String] {
        let xml = try LibXML2.shared.get()
        guard !html.isEmpty, html.count < Int(Int32.max) else { return [] }
        // Recover from errors as browsers do (HTML_PARSE_RECOVER), print nothing (NOERROR,
        // NOWARNING), never fetch anything the page names (NONET): HTMLparser.h's values, a header
        // CXML does not take in.
        let options: Int32 = 1 | 32 | 64 | 2048
        guard
            let document = html.withUnsafeBytes({ bytes in
                xml.readHTML(
                    bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
            })
        else { return [] }
        defer { xml.freeDocument(document) }

        var base = URL(string: pageURL)
        var found: [String] = []
        XMLTree.walk(document) { element in
            let name = element.name
            if name == "base", let href = element["href"], let url = URL(string: href, relativeTo: base) {
                base = url.absoluteURL
            } else if name == "link", found.count < maxLinks,
                let rel = element["rel"]?.lowercased(),
                rel.split(whereSeparator: \.isWhitespace).contains("alternate"),
                let type = element["type"]?.lowercased().split(separator: ";").first?
                    .trimmingCharacters(in: .whitespaces),
                types.contains(type),
                let href = element["href"]?.trimmingCharacters(in: .whitespacesAndNewlines),
                let url = URL(string: href, relativeTo: base)?.absoluteString,
                url.hasPrefix("http://") || url.hasPrefix("https://"), !found.contains(url)
            {
                found.append(url)
            }
            return true
        } leave: { _ in
        }
        return found
    }
}
