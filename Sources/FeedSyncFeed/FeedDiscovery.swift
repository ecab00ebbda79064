internal import CXML
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
        // Depth first, without recursion: a hostile page may nest deeply.
        var stack: [UnsafeMutablePointer<xmlNode>] = []
        var node = document.pointee.children
        while true {
            guard let current = node else {
                guard let parent = stack.popLast() else { break }
                node = parent.pointee.next
                continue
            }
            guard current.pointee.type == XML_ELEMENT_NODE else {
                node = current.pointee.next
                continue
            }
            let name = text(current.pointee.name)?.lowercased()
            if name == "base", let href = attribute("href", of: current), let url = URL(string: href, relativeTo: base)
            {
                base = url.absoluteURL
            } else if name == "link", found.count < maxLinks,
                let rel = attribute("rel", of: current)?.lowercased(),
                rel.split(whereSeparator: \.isWhitespace).contains("alternate"),
                let type = attribute("type", of: current)?.lowercased().trimmingCharacters(in: .whitespaces),
                types.contains(type.split(separator: ";").first.map(String.init) ?? type),
                let href = attribute("href", of: current)?.trimmingCharacters(in: .whitespacesAndNewlines),
                let url = URL(string: href, relativeTo: base)?.absoluteString,
                url.hasPrefix("http://") || url.hasPrefix("https://"), !found.contains(url)
            {
                found.append(url)
            }
            if let child = current.pointee.children {
                stack.append(current)
                node = child
            } else {
                node = current.pointee.next
            }
        }
        return found
    }

    /// The value of the attribute `name` of `element`, bounded like every string from a server.
    private static func attribute(_ name: String, of element: UnsafeMutablePointer<xmlNode>) -> String? {
        var property = element.pointee.properties
        while let current = property {
            if text(current.pointee.name)?.lowercased() == name {
                var value = ""
                var child = current.pointee.children
                while let part = child {
                    value += text(part.pointee.content) ?? ""
                    child = part.pointee.next
                }
                return value.utf8.count <= FeedLimits.urlBytes ? value : nil
            }
            property = current.pointee.next
        }
        return nil
    }

    private static func text(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
