internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// Subscription lists in OPML 1.0 and 2.0, as feed readers exchange them: each outline with an
/// `xmlUrl` is a feed (`text` or `title` its title, `htmlUrl` its site), and the outlines around
/// it are its folder.
public enum OPML {
    public typealias Entry = Subscription

    /// Folders deeper than this are cut to this many levels.
    static let maxDepth = 16

    /// The feeds `data` lists, in the file's order, and the outlines that look like feeds but give
    /// no URL (by line). URLs are as written: the caller checks them.
    public static func read(_ data: Data) throws(FeedError) -> (entries: [Entry], missing: [Int]) {
        let xml = try LibXML2.shared.get()
        guard data.count < Int(Int32.max) else { throw FeedError("the file is too large") }
        // Read past errors as far as libxml2 can (XML_PARSE_RECOVER); say nothing (NOERROR,
        // NOWARNING); fetch nothing, expand no entity from outside (NONET; NOENT is not set).
        let options: Int32 = 1 | 32 | 64 | 2048
        let notOPML = FeedError("it is not an OPML file (no <opml> element)")
        guard
            let document = data.withUnsafeBytes({ bytes in
                xml.readXML(
                    bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
            })
        else { throw notOPML }
        defer { xml.freeDocument(document) }
        guard let root = document.pointee.children.flatMap(firstElement), XMLTree.Element(node: root).name == "opml"
        else { throw notOPML }

        var entries: [Entry] = []
        var missing: [Int] = []
        var folders: [String?] = []  // one per open outline: its name when it is a folder
        XMLTree.walk(document) { element in
            guard element.name == "outline" else { return true }
            let line = xml.lineNumber(element.node)
            let title = (element["text"] ?? element["title"]).map(FeedLimits.boundedTitle).flatMap {
                $0.isEmpty ? nil : $0
            }
            if let url = element["xmlurl"]?.trimmingCharacters(in: .whitespacesAndNewlines), !url.isEmpty {
                let path = folders.compactMap { $0 }.prefix(maxDepth)
                entries.append(
                    Entry(
                        url: url, title: title, siteURL: element["htmlurl"].flatMap(FeedLimits.webURL),
                        folder: path.isEmpty ? nil : path.joined(separator: "/"), line: line))
                folders.append(nil)
            } else {
                if ["rss", "atom"].contains(element["type"]?.lowercased()) { missing.append(line) }
                // A folder's name: slashes would read as levels.
                folders.append(title?.replacingOccurrences(of: "/", with: "∕"))
            }
            return true
        } leave: { element in
            if element.name == "outline" { folders.removeLast() }
        }
        return (entries, missing)
    }

    private static func firstElement(_ node: UnsafeMutablePointer<xmlNode>) -> UnsafeMutablePointer<xmlNode>? {
        var current: UnsafeMutablePointer<xmlNode>? = node
        while let candidate = current, candidate.pointee.type != XML_ELEMENT_NODE { current = candidate.pointee.next }
        return current
    }

    /// An OPML 2.0 document listing `entries`, each in its folder.
    public static func write(_ entries: [Entry], title: String, now: Date = Date()) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head>
                <title>\(escaped(title))</title>
                <dateCreated>\(rfc822(now))</dateCreated>
              </head>
              <body>

            """
        var open: [String] = []
        // Feeds of one folder together, top-level feeds first, then the folders by name level by
        // level (each one's sub-folders inside it), feeds in the order given within each.
        func path(_ entry: Entry) -> [String] { entry.folder.map { $0.split(separator: "/").map(String.init) } ?? [] }
        let order = entries.enumerated().sorted { a, b in
            let (first, second) = (path(a.element), path(b.element))
            return first == second ? a.offset < b.offset : first.lexicographicallyPrecedes(second)
        }.map(\.element)
        for entry in order {
            let path = path(entry)
            var common = 0
            while common < min(open.count, path.count), open[common] == path[common] { common += 1 }
            while open.count > common {
                open.removeLast()
                out += String(repeating: "  ", count: open.count + 2) + "</outline>\n"
            }
            for level in path[common...] {
                out += String(repeating: "  ", count: open.count + 2)
                out += "<outline text=\"\(escaped(level))\" title=\"\(escaped(level))\">\n"
                open.append(level)
            }
            let name = entry.title ?? entry.url
            out += String(repeating: "  ", count: open.count + 2)
            out +=
                "<outline type=\"rss\" text=\"\(escaped(name))\" title=\"\(escaped(name))\" xmlUrl=\"\(escaped(entry.url))\""
            if let site = entry.siteURL { out += " htmlUrl=\"\(escaped(site))\"" }
            out += "/>\n"
        }
        while !open.isEmpty {
            open.removeLast()
            out += String(repeating: "  ", count: open.count + 2) + "</outline>\n"
        }
        return out + "  </body>\n</opml>\n"
    }

    /// RFC 822, as OPML 2.0 dates are written.
    static func rfc822(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// `text` for an attribute or element: markup characters escaped, characters XML 1.0 cannot
    /// hold dropped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out += "&#\(scalar.value);"
            default:
                if scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
