import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// RSS 2.0 (and 1.0) and Atom, read as a stream of SAX events by Foundation's `XMLParser` over
/// libxml2: memory holds the item being read, never the document's tree.
///
/// Elements are matched by namespace and local name, so prefixes do not matter and one pass
/// reads both formats (an RSS item may carry Atom links, an Atom entry Media RSS pictures).
final class XMLFeed: NSObject, XMLParserDelegate {
    /// Reads a whole document held in memory.
    static func decode(_ data: Data, base: String) throws(FeedError) -> (FeedFormat, FeedPage) {
        try decode(XMLParser(data: data), base: base)
    }

    /// Reads a document from a stream (a file), in chunks. `onItems` receives the items in order,
    /// `batch` at a time; the page returned then carries no items.
    static func decode(
        stream: InputStream, base: String, batch: Int, onItems: @escaping ([FeedItem]) throws -> Void
    ) throws -> (FeedFormat, FeedPage) {
        let reader = XMLFeed(base: base, batch: batch, onItems: onItems)
        let result = reader.parse(XMLParser(stream: stream))
        if let failure = reader.callbackError { throw failure }
        return try result.get()
    }

    private static func decode(_ parser: XMLParser, base: String) throws(FeedError) -> (FeedFormat, FeedPage) {
        try XMLFeed(base: base, batch: .max, onItems: nil).parse(parser).get()
    }

    private func parse(_ parser: XMLParser) -> Result<(FeedFormat, FeedPage), FeedError> {
        parser.delegate = self
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        flush(parser)
        if let error { return .failure(error) }
        guard parsed || callbackError != nil else {
            return .failure(FeedError("the XML is not well-formed at line \(parser.lineNumber), column \(parser.columnNumber)"))
        }
        guard let format = format else { return .failure(FeedError("the XML document is empty")) }
        let next = next ?? previousArchive
        return .success((format, FeedPage(items: items, hasMore: next != nil, skipped: skipped, next: next)))
    }

    // MARK: State

    private let batch: Int
    private let onItems: (([FeedItem]) throws -> Void)?
    private(set) var format: FeedFormat?
    private(set) var error: FeedError?
    /// What `onItems` threw; parsing stopped there.
    private(set) var callbackError: (any Error)?
    private(set) var items: [FeedItem] = []
    private(set) var skipped = 0
    /// RFC 5005: `next` (paged feeds) and `prev-archive` (archived feeds) lead to older entries.
    private(set) var next: String?
    private(set) var previousArchive: String?

    /// The base URL in effect at each open element (`xml:base` changes it in Atom).
    private var bases: [String]
    private var entry: Entry?
    private var entryDepth = 0
    private var capture: Capture?

    private init(base: String, batch: Int, onItems: (([FeedItem]) throws -> Void)?) {
        bases = [base]
        self.batch = batch
        self.onItems = onItems
    }

    /// Text fields of an entry, captured whole (nested markup's text included).
    enum Field: Int, CaseIterable {
        case title, link, guid, id, description, encoded, summary, content, pubDate, dcDate, published, updated
    }

    private struct Capture {
        var field: Field
        var depth: Int
        var text = ""
        var type: String?
        var base: String
    }

    /// A field's text, its Atom `type` and the base URL in effect where it was.
    private struct Captured {
        var text: String
        var type: String?
        var base: String
    }

    private struct Entry {
        /// By `Field.rawValue`: a dozen slots, no hashing per field.
        var fields = [Captured?](repeating: nil, count: Field.allCases.count)
        subscript(field: Field) -> Captured? {
            get { fields[field.rawValue] }
            set { fields[field.rawValue] = newValue }
        }
        var guidIsPermaLink = true
        var alternate: String?
        var enclosure: String?
        var mediaContent: String?
        var mediaThumbnail: String?
        var itunesImage: String?
        /// The first `<img>` inside XHTML content.
        var xhtmlImage: String?
    }

    private enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let rss1 = "http://purl.org/rss/1.0/"
        static let content = "http://purl.org/rss/1.0/modules/content/"
        static let dc = "http://purl.org/dc/elements/1.1/"
        static let media = "http://search.yahoo.com/mrss/"
        static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
        static let xhtml = "http://www.w3.org/1999/xhtml"
    }

    // MARK: Events

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let namespace = namespaceURI ?? ""
        let parentBase = bases.last!
        let base = DocumentURL.resolve(attributes["xml:base"] ?? attributes["base"], against: parentBase) ?? parentBase
        bases.append(base)
        let depth = bases.count - 1
        func url(_ attribute: String) -> String? { DocumentURL.resolve(attributes[attribute], against: base) }

        guard format != nil else {
            switch (namespace, name) {
            case ("", "rss"), ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "RDF"): format = .rss
            case (Namespace.atom, "feed"): format = .atom
            default:
                error = FeedError("the XML is neither RSS nor Atom (its root element is <\(qualifiedName ?? name)>)")
                parser.abortParsing()
            }
            return
        }
        let plain = namespace.isEmpty || namespace == Namespace.rss1

        if capture != nil {
            if namespace == Namespace.xhtml, name == "img", entry?.xhtmlImage == nil { entry?.xhtmlImage = url("src") }
            return
        }
        guard entry != nil else {
            if plain && name == "item" || namespace == Namespace.atom && name == "entry" {
                entry = Entry()
                entryDepth = depth
            } else if namespace == Namespace.atom, name == "link" {
                switch attributes["rel"]?.lowercased() {
                case "next": next = next ?? url("href")
                case "prev-archive": previousArchive = previousArchive ?? url("href")
                default: break
                }
            }
            return
        }

        // Taken out while changed, so it is changed in place, not copied.
        var current = entry!
        entry = nil
        defer { entry = current }
        func begin(_ field: Field) {
            guard current[field] == nil else { return }
            capture = Capture(field: field, depth: depth, type: attributes["type"]?.lowercased(), base: base)
        }
        let type = attributes["type"]?.lowercased()
        let isImageType = type?.hasPrefix("image/") == true
        switch (plain ? "" : namespace, name) {
        case ("", "title"), (Namespace.atom, "title"): begin(.title)
        case ("", "link"): begin(.link)
        case ("", "guid"):
            current.guidIsPermaLink = attributes["isPermaLink"]?.lowercased() != "false"
            begin(.guid)
        case ("", "description"): begin(.description)
        case ("", "pubDate"): begin(.pubDate)
        case ("", "enclosure"):
            if isImageType || type == nil && Self.looksLikeImage(attributes["url"]) {
                current.enclosure = current.enclosure ?? url("url")
            }
        case (Namespace.atom, "id"): begin(.id)
        case (Namespace.atom, "summary"): begin(.summary)
        case (Namespace.atom, "content"): if attributes["src"] == nil { begin(.content) }
        case (Namespace.atom, "published"): begin(.published)
        case (Namespace.atom, "updated"): begin(.updated)
        case (Namespace.atom, "link"):
            let rel = attributes["rel"]?.lowercased() ?? "alternate"
            if rel == "alternate", current.alternate == nil, type == nil || type!.contains("html") {
                current.alternate = url("href")
            } else if rel == "enclosure", isImageType {
                current.enclosure = current.enclosure ?? url("href")
            }
        case (Namespace.content, "encoded"): begin(.encoded)
        case (Namespace.dc, "date"): begin(.dcDate)
        case (Namespace.media, "content"):
            if attributes["medium"]?.lowercased() == "image" || isImageType {
                current.mediaContent = current.mediaContent ?? url("url")
            }
        case (Namespace.media, "thumbnail"): current.mediaThumbnail = current.mediaThumbnail ?? url("url")
        case (Namespace.itunes, "image"): current.itunesImage = current.itunesImage ?? url("href")
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        capture?.text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        if capture != nil { capture!.text += String(decoding: block, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let depth = bases.count - 1
        bases.removeLast()
        if let done = capture, done.depth == depth {
            capture = nil
            entry?[done.field] = Captured(text: done.text, type: done.type, base: done.base)
        } else if capture == nil, depth == entryDepth, let finished = entry {
            entry = nil
            if let item = item(from: finished) {
                items.append(item)
                if items.count >= batch { flush(parser) }
            } else {
                skipped += 1
            }
        }
    }

    /// libxml2 runs in recovery mode under XMLParser and may read on past an error; the first
    /// error still makes the document unusable.
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if error == nil {
            error = FeedError("the XML is not well-formed at line \(parser.lineNumber), column \(parser.columnNumber)")
        }
    }

    /// Hands the items read so far to `onItems`, when streaming.
    func flush(_ parser: XMLParser) {
        guard let onItems, !items.isEmpty, error == nil, callbackError == nil else { return }
        do {
            try onItems(items)
        } catch {
            callbackError = error
            parser.abortParsing()
        }
        items.removeAll(keepingCapacity: true)
    }

    // MARK: Entry to item

    private func item(from entry: Entry) -> FeedItem? {
        /// A text field as plain text, by its Atom `type` (RSS text is treated as HTML, as it is in practice).
        func plain(_ field: Field, limit: Int? = nil) -> String? {
            guard let text = entry[field]?.text else { return nil }
            let type = entry[field]?.type
            let result = type == "text" || type == "xhtml" || type == "text/plain"
                ? HTMLText.collapsingWhitespace(text) : HTMLText.plain(text, limit: limit)
            return result.isEmpty ? nil : result
        }
        func html(_ field: Field) -> String? {
            guard let captured = entry[field], captured.type != "text" else { return nil }
            let text = captured.text
            return text
        }

        let guid = entry[.guid]?.text.trimmed.nilIfEmpty
        var link = entry.alternate ?? DocumentURL.resolve(entry[.link]?.text, against: entry[.link]?.base)
        if link == nil, let guid, entry.guidIsPermaLink, guid.hasPrefix("http://") || guid.hasPrefix("https://") {
            link = guid
        }
        let limit = HTMLText.summaryLength
        let body = plain(.summary, limit: limit) ?? plain(.description, limit: limit) ?? plain(.content, limit: limit)
            ?? plain(.encoded, limit: limit)
        let title = plain(.title) ?? body.map { HTMLText.cut($0, to: 80) } ?? ""

        var picture = entry.enclosure ?? entry.mediaContent ?? entry.mediaThumbnail ?? entry.itunesImage
            ?? entry.xhtmlImage
        if picture == nil {
            for field in [Field.encoded, .content, .description, .summary] {
                if let html = html(field), let source = HTMLText.firstImageSource(html) {
                    picture = DocumentURL.resolve(source, against: entry[field]?.base)
                    break
                }
            }
        }
        let date = [Field.published, .pubDate, .dcDate, .updated].lazy.compactMap { entry[$0]?.text }
            .compactMap(FeedDate.normalise).first
        let id = entry[.id]?.text.trimmed.nilIfEmpty
        guard let key = id ?? guid ?? link ?? ItemKey.hash(title: title, pictureURL: picture) else { return nil }
        return FeedItem(
            key: key, title: title, link: link, pictureURL: picture, published: date,
            summary: body.map { HTMLText.cut($0, to: limit) })
    }

    private static func looksLikeImage(_ url: String?) -> Bool {
        guard let path = url?.lowercased().split(separator: "?").first else { return false }
        return [".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"].contains { path.hasSuffix($0) }
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
