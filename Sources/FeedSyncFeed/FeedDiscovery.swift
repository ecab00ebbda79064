internal import CXML
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

/// Reading a tree libxml2 built: its elements depth first, without recursion (a hostile document
/// may nest deeply), their names and attributes as bounded strings.
enum XMLTree {
    struct Element {
        let node: UnsafeMutablePointer<xmlNode>

        /// The name in lower case (HTML and OPML writers differ in case).
        var name: String { node.pointee.name.map(XMLTree.lowercased) ?? "" }

        /// The attribute named so (given in lower case), letter case aside; nil when absent or
        /// longer than `FeedLimits.urlBytes`.
        subscript(_ name: String) -> String? {
            var property = node.pointee.properties
            while let current = property {
                if let candidate = current.pointee.name, XMLTree.equal(candidate, lowercased: name) {
                    let value = XMLTree.value(of: current)
                    return value.utf8.count <= FeedLimits.urlBytes ? value : nil
                }
                property = current.pointee.next
            }
            return nil
        }
    }

    /// A name libxml2 read, in lower case; without a copy to lower when it is already (as the
    /// HTML parser leaves tag and attribute names).
    static func lowercased(_ name: UnsafePointer<UInt8>) -> String {
        var index = 0
        while name[index] != 0 {
            if name[index] >= 0x41 && name[index] <= 0x5A || name[index] >= 0x80 {
                return String(cString: name).lowercased()
            }
            index += 1
        }
        return String(cString: name)
    }

    /// Whether libxml2's `name` is `lowercased` (in lower case), ASCII letter case aside.
    static func equal(_ name: UnsafePointer<UInt8>, lowercased: String) -> Bool {
        var index = 0
        for byte in lowercased.utf8 {
            let other = name[index]
            guard other != 0, other == byte || (other >= 0x41 && other <= 0x5A && other | 0x20 == byte) else {
                return false
            }
            index += 1
        }
        return name[index] == 0
    }

    /// An attribute's value: the text of its children.
    static func value(of attribute: UnsafeMutablePointer<xmlAttr>) -> String {
        var value = ""
        var child = attribute.pointee.children
        while let part = child {
            if let content = part.pointee.content { value += String(cString: content) }
            child = part.pointee.next
        }
        return value
    }

    /// Calls `enter` for each element in document order, `text` for each run of text (and CDATA)
    /// in it, and `leave` after its children. `enter` returning false skips the element's children.
    static func walk(
        _ document: UnsafeMutablePointer<xmlDoc>, enter: (Element) -> Bool,
        text: (UnsafePointer<UInt8>) -> Void = { _ in },
        leave: (Element) -> Void
    ) {
        var stack: [UnsafeMutablePointer<xmlNode>] = []
        var node = document.pointee.children
        while true {
            guard let current = node else {
                guard let parent = stack.popLast() else { break }
                leave(Element(node: parent))
                node = parent.pointee.next
                continue
            }
            guard current.pointee.type == XML_ELEMENT_NODE else {
                if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                    let content = current.pointee.content
                {
                    text(content)
                }
                node = current.pointee.next
                continue
            }
            if enter(Element(node: current)), let child = current.pointee.children {
                stack.append(current)
                node = child
            } else {
                leave(Element(node: current))
                node = current.pointee.next
            }
        }
    }
}
