internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// RSS (0.90 to 2.0) and Atom (1.0, 0.3), read as a stream of SAX2 events from libxml2's push
/// parser: memory holds the item being read, never the document's tree.
///
/// Elements are matched by namespace and local name, so prefixes do not matter and one pass
/// reads both formats (an RSS item may carry Atom links, an Atom entry Media RSS pictures).
///
/// Hostile and broken documents: no external entity or DTD is ever loaded (no network, no files),
/// entities declared inside the document expand within `FeedLimits`, and libxml2 reads on past
/// damage in recovery mode; the first fatal error is kept (`malformed`) to say where it was.
final class XMLFeed {
    /// Reads a whole document held in memory.
    static func decode(_ data: Data, base: String, contentType: String?) throws(FeedError) -> (FeedFormat, FeedPage) {
        try XMLFeed(base: base, contentType: contentType, batch: .max, onItems: nil).parse { push in
            data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + chunkSize)
                    guard push(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) else { return }
                    offset = end
                }
            }
        }.get()
    }

    /// Reads a document from a file, in chunks. `onItems` receives the items in order, `batch`
    /// at a time; the page returned then carries no items.
    static func decode(
        file path: String, base: String, contentType: String?, batch: Int,
        onItems: @escaping ([FeedItem]) throws -> Void
    ) throws -> (FeedFormat, FeedPage) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FeedError("cannot read the downloaded document at \(path)") }
        defer { close(descriptor) }
        var readError: Int32 = 0
        let reader = XMLFeed(base: base, contentType: contentType, batch: batch, onItems: onItems)
        let result = reader.parse { push in
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count < 0 { readError = errno }
                guard count > 0, buffer.withUnsafeBytes({ push(UnsafeRawBufferPointer(rebasing: $0[..<count])) }) else {
                    return
                }
            }
        }
        if readError != 0 {
            throw FeedError("cannot read the downloaded document at \(path): \(String(cString: strerror(readError)))")
        }
        if let failure = reader.callbackError { throw failure }
        return try result.get()
    }

    /// Bytes handed to libxml2 at a time.
    private static let chunkSize = 256 << 10

    /// Runs libxml2 over the chunks `feed` pushes; `push` answers `false` once parsing stopped.
    private func parse(
        _ feed: (_ push: (UnsafeRawBufferPointer) -> Bool) -> Void
    ) -> Result<(FeedFormat, FeedPage), FeedError> {
        let xml: LibXML2
        switch LibXML2.shared {
        case .success(let loaded): xml = loaded
        case .failure(let error): return .failure(error)
        }
        var handler = xmlSAXHandler()
        // libxml2's own SAX2 handlers keep the DTD's entity declarations; element, text and error
        // events come here, and nothing else builds a tree.
        _ = xml.saxVersion(&handler, 2)
        handler.startElementNs = { user, name, prefix, uri, _, _, attributeCount, _, attributes in
            XMLFeed.from(user).didStart(
                name!, prefix, uri, Attributes(values: attributes, count: Int(attributeCount)))
        }
        handler.endElementNs = { user, name, prefix, uri in XMLFeed.from(user).didEnd(name, prefix, uri) }
        handler.characters = { user, bytes, count in XMLFeed.from(user).found(bytes, Int(count)) }
        handler.cdataBlock = handler.characters
        handler.ignorableWhitespace = handler.characters
        handler.serror = { user, error in XMLFeed.from(user).failed(error) }
        handler.reference = nil
        handler.comment = nil
        handler.processingInstruction = nil
        handler.resolveEntity = nil
        handler.externalSubset = nil
        handler.error = nil
        handler.warning = nil
        handler.fatalError = nil

        // Events carry the context itself (libxml2's own handlers need it), and it carries this
        // reader in the field libxml2 leaves to its user.
        guard let context = xml.createPushParser(&handler, nil, nil, 0, nil) else {
            return .failure(FeedError("the XML parser could not start (out of memory)"))
        }
        context.pointee._private = Unmanaged.passUnretained(self).toOpaque()
        self.context = context
        defer {
            if let document = context.pointee.myDoc { xml.freeDocument(document) }
            context.pointee.myDoc = nil
            xml.freeParser(context)
            self.context = nil
        }
        // The document reaches libxml2 as UTF-8 (XMLInput), so its declared encoding is ignored.
        // Recovery: a document that is not well-formed is read on past the damage where it can be.
        _ = xml.useOptions(
            context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_IGNORE_ENC.rawValue | XML_PARSE_RECOVER.rawValue))
        var input = XMLInput(contentType: contentType)
        var stopped = false
        func parse(_ bytes: UnsafeRawBufferPointer, last: Bool) -> Bool {
            // In recovery the status is the last error and parsing goes on; libxml2 disables SAX
            // when it cannot.
            _ = xml.parseChunk(
                context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), last ? 1 : 0)
            return error != nil || callbackError != nil || context.pointee.disableSAX != 0
        }
        feed { chunk in
            pushed += chunk.count
            input.next(chunk, last: false) { if !stopped { stopped = parse($0, last: false) } }
            return !stopped
        }
        if !stopped {
            input.next(UnsafeRawBufferPointer(start: nil, count: 0), last: true) { _ = parse($0, last: true) }
        }
        flush()
        if let error { return .failure(error) }
        if made == 0, let malformed, entriesSeen > 0 || format == nil {
            return .failure(FeedError("the XML is not well-formed at \(malformed), and no item could be read"))
        }
        if callbackError != nil { return .failure(FeedError("stopped")) }
        guard let format = format else { return .failure(FeedError("the XML document is empty")) }
        // Nothing stored in silence: entries that were there and made no item make the document unusable.
        if made == 0, unusable + unrecognized > 0 {
            return .failure(
                FeedError(
                    unrecognized > 0
                        ? "its \(unrecognized) <item> or <entry> elements are in a namespace "
                            + "no RSS or Atom dialect uses"
                        : "none of its \(unusable) entries could be kept (an id or a link over its limit)"))
        }
        let next = next ?? previousArchive
        var page = FeedPage(items: items, hasMore: next != nil, skipped: skipped, next: next)
        page.malformed = malformed
        page.title = feedTitle
        page.siteURL = FeedLimits.webURL(siteURL)
        page.schedule = schedule
        // The syndication module: the period (daily by default) divided by the frequency (1 by default).
        if updatePeriod != nil || updateFrequency != nil {
            page.schedule.updateSeconds = max(1, (updatePeriod ?? 86_400) / (updateFrequency ?? 1))
        }
        return .success((format, page))
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> XMLFeed {
        let reader = context!.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private!
        return Unmanaged<XMLFeed>.fromOpaque(reader).takeUnretainedValue()
    }

    /// Ends parsing early: the document is not a feed, or `onItems` failed.
    private func stop() {
        if let context, case .success(let xml) = LibXML2.shared { xml.stopParser(context) }
    }

    /// A start tag's attributes as libxml2 hands them over: five pointers each (local name,
    /// prefix, namespace, value, end of value). Valid only during the event.
    struct Attributes {
        let values: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
        let count: Int

        /// The value of the attribute with this local name, whatever its prefix.
        subscript(name: StaticString) -> String? {
            guard let values else { return nil }
            for index in stride(from: 0, to: count * 5, by: 5) {
                guard let local = values[index], Self.equal(local, name),
                    let start = values[index + 3], let end = values[index + 4]
                else { continue }
                return Self.value(start, end)
            }
            return nil
        }

        /// The names and values of the unprefixed attributes whose names are plain (HTML's).
        var plainUnprefixed: [(name: String, value: String)] {
            guard let values else { return [] }
            return stride(from: 0, to: count * 5, by: 5).compactMap { index in
                guard let local = values[index], values[index + 1] == nil, let start = values[index + 3],
                    let end = values[index + 4]
                else { return nil }
                let name = String(cString: local)
                return HTMLNames.isPlainName(name) ? (name, Self.value(start, end)) : nil
            }
        }

        /// libxml2 hands `&amp;` in an attribute over as `&#38;` (it keeps `&` escaped when it does
        /// not substitute entities): decoded here, exactly once.
        private static func value(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> String {
            let bytes = UnsafeBufferPointer(start: start, count: end - start)
            let value = String(decoding: bytes, as: UTF8.self)
            return bytes.contains(UInt8(ascii: "&")) ? value.replacingOccurrences(of: "&#38;", with: "&") : value
        }

        private static func equal(_ cString: UnsafePointer<UInt8>, _ name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            for index in 0..<count where cString[index] != name.utf8Start[index] { return false }
            return cString[count] == 0
        }
    }

    // MARK: State

    private let batch: Int
    /// The HTTP `Content-Type`, whose charset names the document's encoding.
    private let contentType: String?
    /// Bytes of the document handed to libxml2, and bytes of character data it handed back: the
    /// latter outgrowing the former is entity expansion, which is bounded (`FeedLimits`).
    private var pushed = 0
    private var expanded = 0
    private let onItems: (([FeedItem]) throws -> Void)?
    private var context: xmlParserCtxtPtr?
    private(set) var format: FeedFormat?
    private(set) var error: FeedError?
    /// Where the document is not well-formed, and why: its first fatal error.
    private(set) var malformed: String?
    /// What `onItems` threw; parsing stopped there.
    private(set) var callbackError: (any Error)?
    private(set) var items: [FeedItem] = []
    /// For each of `items`: whether its key is its link, and its enclosure of any type.
    private var linkKeyed: [Bool] = []
    private var mediaFiles: [(file: String, audioOrVideo: Bool)?] = []
    private(set) var skipped = 0
    /// RFC 5005: `next` (paged feeds) and `prev-archive` (archived feeds) lead to older entries.
    private(set) var next: String?
    private(set) var previousArchive: String?

    /// The base URL in effect at each open element (`xml:base` changes it in Atom).
    private var bases: [String]
    private var entry: Entry?
    private var entryDepth = 0
    /// The depth of the entry's Atom `source` while inside it.
    private var sourceDepth: Int?
    /// The root's namespace when it is `<rss>` in one (some feeds put RSS 2.0 in a default namespace),
    /// or `<feed>` in one of Atom's drafts'.
    private var rssNamespace: String?
    private var atomNamespace: String?
    /// Entries met: a malformed document that has none is an empty feed, not an unreadable one.
    private var entriesSeen = 0
    /// Items made; entries that made none although they carried something (a key or a link over
    /// its limit); and `item` or `entry` elements of a namespace no dialect read uses.
    private var made = 0
    private var unusable = 0
    private var unrecognized = 0
    private var capture: Capture?
    /// The feed's own title and site, from the channel (RSS) or the feed element (Atom).
    private var feedTitle: String?
    private var siteURL: String?
    /// The local name of the root's child being read (RSS's `channel`).
    private var topElement: String?
    /// What the feed says about its schedule; the `skipHours` or `skipDays` element being read.
    private var schedule = FeedSchedule()
    private var skipList: (field: Field, depth: Int)?
    private var updatePeriod: Int?
    private var updateFrequency: Int?
    /// Namespace names by libxml2's interned pointer: each is made a String once per document.
    private var namespaces: [UnsafePointer<UInt8>: String] = [:]

    private init(base: String, contentType: String?, batch: Int, onItems: (([FeedItem]) throws -> Void)?) {
        bases = [base]
        self.contentType = contentType
        self.batch = batch
        self.onItems = onItems
    }

    /// Text fields of an entry, captured whole (nested markup's text included; XHTML's elements
    /// written as HTML).
    enum Field: Int, CaseIterable {
        case title, dcTitle, mediaTitle, link, guid, id, description, encoded, summary, content, pubDate, dcDate,
            published, image,
            updated, issued, modified, created,
            // The feed's schedule (read only at the feed's level).
            ttl, skipHour, skipDay, updatePeriod, updateFrequency,
            // An episode's length, for its enclosure (no part of an item's digest key).
            itunesDuration

        /// A field of words for people, which text encoded twice is repaired in (not an id or URL,
        /// where a repair would change what the item is).
        var isText: Bool {
            switch self {
            case .title, .dcTitle, .mediaTitle, .description, .encoded, .summary, .content: true
            default: false
            }
        }
    }

    private struct Capture {
        var field: Field
        var depth: Int
        var text: [UInt8] = []
        var type: String?
        /// Atom 0.3's `mode`: `escaped`, `base64` or `xml`.
        var mode: String?
        var base: String
        /// The feed's own title or link, not an entry's field.
        var ofFeed = false
        /// XHTML (`isMarkup`): its elements are written into `text` as HTML and its text escaped,
        /// so that it is read as HTML (its paragraphs, links and pictures kept, its scripts not text).
        var markup = false

        /// Whether the elements inside are written as HTML: in XHTML, and in a field of HTML (RSS's
        /// description, content, summary) holding its markup unescaped, "naked", as feedparser and
        /// gofeed read it. Not in a title, whose text keys an item that has no id or link.
        var writesElements: Bool {
            if markup { return true }
            switch field {
            case .description, .encoded, .summary, .content: return type != "text" && type != "text/plain"
            default: return false
            }
        }

        /// Atom's `type="xhtml"` (or `application/xhtml+xml`), 0.3's `mode="xml"`.
        static func isMarkup(type: String?, mode: String?) -> Bool {
            type == "xhtml" || type == "application/xhtml+xml" || mode == "xml"
        }

        /// Appends `bytes`, escaped in XHTML; a field is cut at `FeedLimits.fieldBytes` (one title
        /// of a million entity references holds a megabyte).
        @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            let room = FeedLimits.fieldBytes - text.count
            guard room > 0 else { return }
            guard markup else {
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.prefix(room)))
                return
            }
            HTMLText.appendEscaped(bytes.prefix(room), to: &text)
            if text.count > FeedLimits.fieldBytes { text.removeLast(text.count - FeedLimits.fieldBytes) }
        }

        /// Writes an element's start tag, with the attributes whose names are plain. `base`: where
        /// an `xml:base` inside the field moved the base from the field's own (which the field is
        /// read against), its links and pictures are written absolute against it.
        mutating func appendStart(_ name: String, _ attributes: Attributes, base: String?) {
            guard text.count < FeedLimits.fieldBytes else { return }
            var tag = "<" + name
            for (name, value) in attributes.plainUnprefixed {
                let value = base.map { Self.resolved(name, value, against: $0) } ?? value
                tag += " \(name)=\"\(HTMLText.escaped(value))\""
            }
            appendTag(tag + ">")
        }

        /// An attribute's value with the URLs it holds made absolute against `base`.
        static func resolved(_ attribute: String, _ value: String, against base: String) -> String {
            switch attribute.lowercased() {
            case "href", "src", "poster": return DocumentURL.resolve(value, against: base) ?? value
            case "srcset": return ArticlePictures.srcset(value) { DocumentURL.resolve($0, against: base) ?? $0 }
            default: return value
            }
        }

        /// Writes an element's end tag (none for a void element, which HTML has no end for).
        mutating func appendEnd(_ name: String) {
            if text.count < FeedLimits.fieldBytes, !HTMLNames.voidTags.contains(name.lowercased()) {
                appendTag("</\(name)>")
            }
        }

        private mutating func appendTag(_ tag: String) {
            text.append(contentsOf: tag.utf8.prefix(max(0, FeedLimits.fieldBytes - text.count)))
        }
    }

    /// A field's text, its Atom `type` (and 0.3 `mode`) and the base URL in effect where it was.
    private struct Captured {
        var text: [UInt8]
        var type: String?
        var mode: String?
        var base: String

        /// Atom's `type` says whether a field is text or markup (XHTML is HTML by now); RSS text is
        /// treated as HTML, as it is in practice.
        var isText: Bool { type == "text" || type == "text/plain" }

        /// The field as one line of plain text; with `limit`, only enough of markup for a cut to it.
        func plain(limit: Int? = nil) -> String {
            isText
                ? HTMLText.collapsingWhitespace(String(decoding: text, as: UTF8.self))
                : HTMLText.plain(text, limit: limit)
        }
    }

    private struct Entry {
        /// By `Field.rawValue`: a dozen slots, no hashing per field.
        var fields = [Captured?](repeating: nil, count: Field.allCases.count)
        subscript(field: Field) -> Captured? {
            get { fields[field.rawValue] }
            set { fields[field.rawValue] = newValue }
        }
        var guidIsPermaLink = true
        /// RSS 1.0's `rdf:about`, the item's URI.
        var about: String?
        var alternate: String?
        /// The first image enclosure.
        var enclosure: String?
        /// The first enclosure of any type (a podcast's episode), for an item keyed by its link,
        /// and whether it is sound or video.
        var mediaFile: String?
        var mediaIsAudioOrVideo = false
        var mediaContent: String?
        /// The first `media:content` of any type, for an item that has nothing else.
        var media: String?
        var mediaThumbnail: String?
        var itunesImage: String?
        /// Its files other than pictures, in order, as found (`FeedEnclosure.merged` evens them).
        var enclosures: [FeedEnclosure] = []
        /// An RSS item's `<image url="…">` (its text form is the field `image`).
        var image: String?
    }

    private enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let atom03 = "http://purl.org/atom/ns#"
        static let rss1 = "http://purl.org/rss/1.0/"
        static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let content = "http://purl.org/rss/1.0/modules/content/"
        static let dc = "http://purl.org/dc/elements/1.1/"
        static let media = "http://search.yahoo.com/mrss/"
        static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
        static let xhtml = "http://www.w3.org/1999/xhtml"
        static let sy = "http://purl.org/rss/1.0/modules/syndication/"
    }

    // MARK: Events

    /// Whether an element inside a field is written as HTML: in XHTML's namespace, or in none and
    /// unprefixed, named in ASCII letters, digits and `-`. Any other (`ev:title`, a Cyrillic name)
    /// gives only its text, never an HTML element of the same local name.
    static func isHTML(_ name: UnsafePointer<UInt8>, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?)
        -> Bool
    {
        guard uri.map({ strcmp($0, Namespace.xhtml) == 0 }) ?? (prefix == nil) else { return false }
        var index = 0
        while name[index] != 0 {
            let byte = name[index]
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            guard letter || index > 0 && (byte == UInt8(ascii: "-") || byte >= 0x30 && byte <= 0x39) else {
                return false
            }
            index += 1
        }
        return index > 0
    }

    private func didStart(
        _ localName: UnsafePointer<UInt8>, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?,
        _ attributes: Attributes
    ) {
        let name = String(cString: localName)
        // A `media:` prefix with no namespace declared for it is Media RSS: feeds write it often enough.
        let namespace =
            uri.map(namespace(at:)) ?? (prefix.map { strcmp($0, "media") == 0 } == true ? Namespace.media : "")
        let parentBase = bases.last!
        let base = DocumentURL.resolve(attributes["base"], against: parentBase) ?? parentBase
        bases.append(base)
        let depth = bases.count - 1
        func url(_ attribute: StaticString) -> String? { DocumentURL.resolve(attributes[attribute], against: base) }

        guard format != nil else {
            switch (namespace, name) {
            case (_, "rss"):
                format = .rss
                rssNamespace = namespace  // RSS 0.91 to 2.0, some in a default namespace
            case (Namespace.rdf, "RDF"): format = .rss  // RSS 0.90 and 1.0
            case (_, "feed"):
                // Atom 1.0 and 0.3, none, or the namespaces of its drafts (echo, pie, necho).
                format = .atom
                atomNamespace = namespace
            case (_, "html"), (_, "HTML"):
                error = FeedError(
                    "the document is a web page, not a feed; use the address of the site's RSS or Atom feed")
                stop()
            default:
                error = FeedError("the XML is neither RSS nor Atom (its root element is <\(name)>)")
                stop()
            }
            return
        }
        // Atom 1.0 and 0.3 are read alike, and an Atom root without a namespace makes its
        // unqualified children Atom; RSS's are unqualified, or in RSS 0.90's, 1.0's or the root's.
        let atom =
            namespace == Namespace.atom || namespace == Namespace.atom03 || format == .atom && namespace.isEmpty
            || namespace == atomNamespace
        let plain =
            !atom
            && (namespace.isEmpty || namespace == Namespace.rss1 || namespace == Namespace.rss090
                || namespace == rssNamespace)

        if let open = capture {
            if open.writesElements, Self.isHTML(localName, prefix, uri) {
                capture!.appendStart(name, attributes, base: base == open.base ? nil : base)
            }
            // An item's `<image>` written like a channel's: its URL is the `<url>` child's text alone.
            if open.field == .image, !open.ofFeed, depth == open.depth + 1, plain, name == "url" {
                capture = Capture(field: .image, depth: depth, base: base)
            }
            return
        }
        // An Atom feed's <item> is read as an entry, as feedparser does.
        let startsEntry = (plain || atom) && name == "item" || atom && name == "entry"
        // Entries never nest: one that starts inside another means the other was not closed (a
        // document libxml2 is recovering from). The open one ends here.
        if startsEntry, let open = entry {
            entry = nil
            finish(open)
        }
        // The root is at depth 1: Atom's feed-level elements are at 2, RSS's channel's at 3.
        if depth == 2 { topElement = name }
        guard entry != nil else {
            let ofFeed = atom ? depth == 2 : plain && depth == 3 && topElement == "channel"
            if startsEntry {
                entriesSeen += 1
                sourceDepth = nil
                entry = Entry()
                entry?.about = attributes["about"].flatMap { DocumentURL.resolve($0, against: base) }
                entryDepth = depth
            } else if name == "item" || name == "entry" {
                unrecognized += 1
            } else if atom, name == "link" {
                switch attributes["rel"]?.lowercased() {
                case "next": next = next ?? url("href")
                case "prev-archive": previousArchive = previousArchive ?? url("href")
                case "alternate", nil: if ofFeed, siteURL == nil { siteURL = url("href") }
                default: break
                }
            } else if let field = scheduleField(name, namespace, depth: depth, ofFeed: ofFeed && plain) {
                capture = Capture(field: field, depth: depth, base: base, ofFeed: true)
            } else if ofFeed, plain, name == "skipHours" || name == "skipDays" {
                skipList = (name == "skipHours" ? .skipHour : .skipDay, depth)
            } else if ofFeed, name == "title" && feedTitle == nil || !atom && name == "link" && siteURL == nil {
                let (type, mode) = (attributes["type"]?.lowercased(), attributes["mode"]?.lowercased())
                capture = Capture(
                    field: name == "title" ? .title : .link, depth: depth, type: type, mode: mode, base: base,
                    ofFeed: true, markup: name == "title" && Capture.isMarkup(type: type, mode: mode))
            }
            return
        }

        // Only the entry's own children are its fields: what Atom's `source` holds (another feed's
        // title and links) gives it nothing, and deeper elements (a `<link>` in a `<category>`'s
        // `<image>`) nothing but Media RSS pictures (`media:content` in a `media:group`).
        if sourceDepth != nil { return }
        if atom, name == "source", depth == entryDepth + 1 {
            sourceDepth = depth
            return
        }
        if depth > entryDepth + 1, namespace != Namespace.media { return }

        // Taken out while changed, so it is changed in place, not copied.
        var current = entry!
        entry = nil
        defer { entry = current }
        let type = attributes["type"]?.lowercased()
        func begin(_ field: Field, xhtml: Bool = false) {
            // The first of each field, but the last `updated`, as feedparser reads a date given twice.
            guard current[field] == nil || field == .updated else { return }
            let mode = attributes["mode"]?.lowercased()
            capture = Capture(
                field: field, depth: depth, type: type, mode: mode, base: base,
                markup: xhtml || field.isText && Capture.isMarkup(type: type, mode: mode))
        }
        let isImageType = type?.hasPrefix("image/") == true
        func enclose(_ file: String?, length: String?, duration: String? = nil) {
            if let found = FeedEnclosure.checked(url: file, type: type, length: length, duration: duration) {
                current.enclosures.append(found)
            }
        }
        switch (atom ? Namespace.atom : plain ? "" : namespace, name) {
        case ("", "title"), (Namespace.atom, "title"): begin(.title)
        case (Namespace.dc, "title"): begin(.dcTitle)
        case (Namespace.media, "title"): begin(.mediaTitle)
        case ("", "link"):
            // An RSS item's link written as Atom writes it, in an `href`.
            if let href = url("href"), current.alternate == nil,
                attributes["rel"].map({ $0.lowercased() == "alternate" }) ?? true
            {
                current.alternate = href
            } else {
                begin(.link)
            }
        case ("", "id"): begin(.id)  // an RSS item with an Atom-style id
        case ("", "guid"):
            current.guidIsPermaLink = attributes["isPermaLink"]?.lowercased() != "false"
            begin(.guid)
        case ("", "description"): begin(.description)
        case ("", "image"):
            // An item's own picture, as some feeds write it: its URL as the text, or an attribute.
            if let attribute = url("url") ?? url("href") {
                current.image = current.image ?? attribute
            } else {
                begin(.image)
            }
        case ("", "pubDate"): begin(.pubDate)
        case ("", "enclosure"):
            if current.mediaFile == nil, let file = url("url") {
                current.mediaFile = file
                current.mediaIsAudioOrVideo = Self.isAudioOrVideo(type: type, url: file)
            }
            if isImageType || type == nil && Self.looksLikeImage(attributes["url"]) {
                current.enclosure = current.enclosure ?? url("url")
            } else {
                enclose(url("url"), length: attributes["length"])
            }
        case (Namespace.atom, "id"): begin(.id)
        case (Namespace.atom, "summary"): begin(.summary)
        case (Namespace.atom, "content"): if attributes["src"] == nil { begin(.content) }
        case (Namespace.atom, "published"): begin(.published)
        case (Namespace.atom, "updated"): begin(.updated)
        case (Namespace.atom, "issued"): begin(.issued)  // Atom 0.3's dates
        case (Namespace.atom, "modified"): begin(.modified)
        case (Namespace.atom, "created"): begin(.created)
        case (Namespace.atom, "link"):
            let rel = attributes["rel"]?.lowercased() ?? "alternate"
            if rel == "alternate", attributes["href"] == nil {
                begin(.link)  // Atom 0.3 as some wrote it: the URL as the element's text
            } else if rel == "alternate", current.alternate == nil, type == nil || type!.contains("html") {
                current.alternate = url("href")
            } else if rel == "enclosure" {
                if current.mediaFile == nil, let file = url("href") {
                    current.mediaFile = file
                    current.mediaIsAudioOrVideo = Self.isAudioOrVideo(type: type, url: file)
                }
                if isImageType {
                    current.enclosure = current.enclosure ?? url("href")
                } else {
                    enclose(url("href"), length: attributes["length"])
                }
            }
        case (Namespace.content, "encoded"): begin(.encoded)
        // An item's whole post as XHTML, in its namespace or (as feedparser also reads it) in none.
        case (Namespace.xhtml, "body"), ("", "body"): begin(.encoded, xhtml: true)
        case (Namespace.dc, "date"): begin(.dcDate)
        case (Namespace.media, "content"):
            // medium="image" whatever the URL ends in; untyped, an image by its extension.
            current.media = current.media ?? url("url")
            let medium = attributes["medium"]?.lowercased()
            if medium == "image" || isImageType
                || medium == nil && type == nil && Self.looksLikeImage(attributes["url"])
            {
                current.mediaContent = current.mediaContent ?? url("url")
            } else if let file = url("url"),
                medium == "audio" || medium == "video" || Self.isAudioOrVideo(type: type, url: file)
            {
                enclose(file, length: attributes["fileSize"], duration: attributes["duration"])
            }
        case (Namespace.media, "thumbnail"): current.mediaThumbnail = current.mediaThumbnail ?? url("url")
        case (Namespace.itunes, "image"): current.itunesImage = current.itunesImage ?? url("href")
        case (Namespace.itunes, "duration"): begin(.itunesDuration)
        default: break
        }
    }

    /// The schedule element (of the feed, not an entry) that starts here, if one does: RSS's
    /// `ttl`, an `hour` or `day` of its skip lists, or an `sy:` element of the channel or feed.
    private func scheduleField(_ name: String, _ namespace: String, depth: Int, ofFeed: Bool) -> Field? {
        if ofFeed, name == "ttl", schedule.ttlMinutes == nil { return .ttl }
        if let list = skipList, depth == list.depth + 1, namespace.isEmpty || namespace == rssNamespace,
            name == (list.field == .skipHour ? "hour" : "day")
        {
            return list.field
        }
        let feedLevel = format == .atom ? depth == 2 : depth == 3 && topElement == "channel"
        guard feedLevel, namespace == Namespace.sy else { return nil }
        switch name {
        case "updatePeriod" where updatePeriod == nil: return .updatePeriod
        case "updateFrequency" where updateFrequency == nil: return .updateFrequency
        default: return nil
        }
    }

    private func namespace(at uri: UnsafePointer<UInt8>) -> String {
        if let known = namespaces[uri] { return known }
        let name = String(cString: uri)
        namespaces[uri] = name
        return name
    }

    private func found(_ bytes: UnsafePointer<UInt8>?, _ count: Int) {
        expanded += count
        if expanded - pushed > FeedLimits.expansionBytes, error == nil {
            error = FeedError(
                "its entities expand to more than \(FeedLimits.expansionBytes >> 20) MB of text "
                    + "beyond the document's own length"
            )
            stop()
            return
        }
        guard capture != nil, let bytes else { return }
        capture!.append(UnsafeBufferPointer(start: bytes, count: count))
    }

    private func didEnd(
        _ localName: UnsafePointer<UInt8>?, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?
    ) {
        let depth = bases.count - 1
        bases.removeLast()
        if let done = capture, done.depth == depth {
            capture = nil
            var text = HTMLEntities.replacingC1(done.text)
            // Text encoded twice is repaired before anything (a summary, a title) is made of it.
            if done.field.isText { text = Mojibake.repaired(text) }
            let captured = Captured(
                text: text, type: done.markup ? "html" : done.type, mode: done.markup ? nil : done.mode,
                base: done.base)
            if done.ofFeed {
                foundOfFeed(done.field, captured)
            } else {
                entry?[done.field] = captured
            }
        } else if capture?.writesElements == true, let localName, Self.isHTML(localName, prefix, uri) {
            capture!.appendEnd(String(cString: localName))
        } else if capture == nil, depth == skipList?.depth {
            skipList = nil
        } else if capture == nil, depth == sourceDepth {
            sourceDepth = nil
        } else if capture == nil, depth == entryDepth, let finished = entry {
            entry = nil
            finish(finished)
        }
    }

    /// Makes an item of a read entry, or counts it skipped.
    private func finish(_ entry: Entry) {
        let read = item(from: entry)
        if let item = read.flatMap(FeedLimits.bounded) {
            made += 1
            items.append(item)
            linkKeyed.append(item.key == item.link && entry[.id] == nil && entry[.guid] == nil && entry.about == nil)
            mediaFiles.append(entry.mediaFile.map { ($0, entry.mediaIsAudioOrVideo) })
            if items.count >= batch { flush() }
        } else {
            skipped += 1  // nothing to show (no id, link, title, text or picture), or over a limit
            if read != nil { unusable += 1 }
        }
    }

    /// The first fatal error makes the document unusable; warnings and namespace errors (an
    /// undeclared prefix) do not.
    /// The first fatal error is remembered: libxml2 recovers and reads on, and the document is
    /// refused only if nothing could be read at all. Warnings and namespace errors (an undeclared
    /// prefix) are not errors.
    private func failed(_ report: xmlErrorPtr?) {
        guard malformed == nil, let report = report?.pointee, report.level == XML_ERR_FATAL else { return }
        let reason = report.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
        // libxml2's words, bounded: a message quotes bytes of the document.
        malformed = "line \(report.line), column \(report.int2)\(reason.map { " (\(String($0.prefix(120))))" } ?? "")"
    }

    /// Hands the items read so far to `onItems`, when streaming.
    private func flush() {
        distinguishSharedLinks()
        guard let onItems, !items.isEmpty, error == nil, callbackError == nil else { return }
        do {
            try onItems(items)
        } catch {
            callbackError = error
            stop()
        }
        items.removeAll(keepingCapacity: true)
    }

    /// Items keyed by their link (they have no id) may be different items sharing it (a podcast's
    /// episodes on one page). One with a sound or video enclosure is keyed by link and
    /// enclosure, always, so its key never depends on its neighbours; one whose link another item
    /// read with it shares, by link and title (over the whole document when it is read in memory,
    /// over each part when it is read in parts), so two sharing both are one story, stored once;
    /// any other by its link alone: a story's picture (which a CDN renames) is no part of who it
    /// is. Such an item with a picture enclosure was keyed by link and picture before: that key is
    /// its `formerKey`, by which the store finds it.
    private func distinguishSharedLinks() {
        guard linkKeyed.count == items.count else { return }
        defer {
            linkKeyed.removeAll(keepingCapacity: true)
            mediaFiles.removeAll(keepingCapacity: true)
        }
        guard linkKeyed.contains(true) else { return }
        // Items sharing each link (those with sound or video aside); and, for the former rule,
        // those with no enclosure at all.
        var shared: [String: Int] = [:]
        var formerlyShared: [String: Int] = [:]
        for (index, item) in items.enumerated() where linkKeyed[index] {
            if mediaFiles[index]?.audioOrVideo != true { shared[item.key, default: 0] += 1 }
            if mediaFiles[index] == nil { formerlyShared[item.key, default: 0] += 1 }
        }
        func keyed(_ link: String, _ suffix: String) -> String {
            let key = link + "#" + suffix
            // Within the key's limit: a long suffix is replaced by its hash.
            return key.utf8.count <= FeedLimits.keyBytes
                ? key : link + "#" + (ItemKey.hash(title: suffix, pictureURL: nil) ?? "")
        }
        for index in items.indices where linkKeyed[index] {
            let link = items[index].key
            let media = mediaFiles[index]
            if let media, media.audioOrVideo {
                items[index].key = keyed(link, media.file)
            } else if shared[link, default: 0] > 1 {
                items[index].key = keyed(link, items[index].title)  // the same title too: the same story
            }
            let former =
                media.map { keyed(link, $0.file) }
                ?? (formerlyShared[link, default: 0] > 1 ? keyed(link, items[index].title) : link)
            if former != items[index].key { items[index].formerKey = former }
        }
    }

    /// The feed's title (plain text, cut like an item's) or its site's link.
    private func foundOfFeed(_ field: Field, _ captured: Captured) {
        let text = String(decoding: captured.text, as: UTF8.self)
        switch field {
        case .title: feedTitle = FeedLimits.boundedTitle(captured.plain()).nilIfEmpty
        case .ttl: schedule.ttlMinutes = FeedSchedule.minutes(text)
        case .skipHour: if let hour = FeedSchedule.hour(text) { schedule.skipHours |= 1 << hour }
        case .skipDay: if let day = FeedSchedule.day(text) { schedule.skipDays |= 1 << day }
        case .updatePeriod: updatePeriod = FeedSchedule.period(text)
        case .updateFrequency: updateFrequency = FeedSchedule.minutes(text).flatMap { $0 > 0 ? $0 : nil }
        default: siteURL = DocumentURL.resolve(text, against: captured.base)
        }
    }

    // MARK: Entry to item

    private func item(from original: Entry) -> FeedItem? {
        let entry = Self.decodingBase64(original)
        let limit = HTMLText.summaryLength
        func string(_ field: Field) -> String? { entry[field].map { String(decoding: $0.text, as: UTF8.self) } }
        func plain(_ field: Field, limit: Int? = nil) -> String? { entry[field]?.plain(limit: limit).nilIfEmpty }
        // The content: the first field that has any, as HTML; and its plain text, made once for
        // the search index and for the summary when that comes from the same field.
        var content: (field: Field, html: String)?
        for field in [Field.encoded, .content, .description, .summary] {
            guard let captured = entry[field] else { continue }
            let text = String(decoding: captured.text, as: UTF8.self)
            if let html = (captured.isText ? HTMLText.html(fromText: text) : text.trimmed).nilIfEmpty {
                content = (field, html)
                break
            }
        }
        let plainContent = content.map { SearchText.plainContent(Array($0.html.utf8)) }
        func summary(_ field: Field) -> String? {
            guard let captured = entry[field] else { return nil }
            if field == content?.field, !captured.isText, let plainContent {
                return HTMLText.cut(plainContent, to: limit).nilIfEmpty
            }
            return captured.isText
                ? HTMLText.cut(HTMLText.collapsingWhitespace(String(decoding: captured.text, as: UTF8.self)), to: limit)
                    .nilIfEmpty
                : HTMLText.summary(captured.text, limit: limit).nilIfEmpty
        }

        // A link or guid escaped twice (`&amp;amp;`, often inside CDATA) means its `&`.
        let rawGuid = string(.guid)?.trimmed.nilIfEmpty
        let guid = rawGuid.map(Self.ampersandsUnescaped)
        let rawLink = DocumentURL.resolve(string(.link), against: entry[.link]?.base)
        var link =
            entry.alternate
            ?? DocumentURL.resolve(string(.link).map(Self.ampersandsUnescaped), against: entry[.link]?.base)
        if link == nil, let guid, entry.guidIsPermaLink, guid.hasPrefix("http://") || guid.hasPrefix("https://"),
            URLComponents(string: guid)?.host?.isEmpty == false
        {
            link = guid  // a permalink that is a URL (`http://example.c[o.test/` is none)
        }
        var body: (field: Field, summary: String)?
        for field in [Field.summary, .description, .content, .encoded] {
            if let text = summary(field) {
                body = (field, text)
                break
            }
        }
        let title =
            plain(.title) ?? plain(.dcTitle) ?? plain(.mediaTitle)
            ?? body.flatMap { plain($0.field, limit: limit) }.map { HTMLText.cut($0, to: 80) } ?? ""

        var picture =
            entry.enclosure ?? entry.mediaContent ?? entry.mediaThumbnail ?? entry.itunesImage ?? entry.image
            ?? entry[.image].flatMap { image in
                // Its URL, the first word (an `<image>` like a channel's holds a title after it).
                DocumentURL.resolve(
                    String(decoding: image.text, as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(
                        String.init),
                    against: image.base)
            }
        if picture == nil {
            for field in [Field.encoded, .content, .description, .summary] {
                if let captured = entry[field], captured.type != "text",
                    let source = HTMLText.firstImageSource(captured.text)
                {
                    picture = DocumentURL.resolve(source, against: captured.base)
                    break
                }
            }
        }
        var date: String?
        // Atom 0.3's dates in their order (issued, created, modified) before a Dublin Core date
        // the entry also carries; Atom 1.0's `updated` last.
        for field in [Field.published, .pubDate, .issued, .created, .dcDate, .updated, .modified] {
            if let text = entry[field]?.text, let found = FeedDate.normalise(text) {
                date = found
                break
            }
        }
        let id = string(.id)?.trimmed.nilIfEmpty
        // With no id, link, title or picture, an item is still one (a podcast's episode, a post of
        // a microblog, a point of GeoRSS) while anything of it is there: keyed by all of it.
        let byTitle = ItemKey.byTitle(title, picture: picture)
        guard
            let key = id ?? guid ?? entry.about ?? link ?? byTitle?.key
                ?? ItemKey.digest(
                    [entry.mediaFile, entry.media]
                        + Field.allCases.filter { $0 != .itunesDuration }.map { field in
                            entry[field].map { String(decoding: $0.text, as: UTF8.self) }
                        })
        else { return nil }
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture, published: date, summary: body?.summary,
            content: content?.html)
        // What earlier versions keyed the item by, so the store finds it under its new key.
        if id == nil, key == guid, rawGuid != guid {
            item.formerKey = rawGuid
        } else if id == nil, guid == nil, entry.about == nil, key == link, entry.alternate == nil, rawLink != link {
            item.formerKey = rawLink
        } else if key == byTitle?.key {
            item.formerKey = byTitle?.former
        }
        item.searchBody = SearchText.body(plainContent: plainContent, summary: body?.summary)
        item.enclosures = FeedEnclosure.merged(
            entry.enclosures, duration: string(.itunesDuration).flatMap(FeedEnclosure.seconds))
        if let content {
            item.contentPictures = ArticlePictures.find(in: Array(content.html.utf8), base: entry[content.field]?.base)
        }
        return item
    }

    /// `text` with every `&amp;` (however often escaped) made `&` again: a publisher's URL never
    /// means the five characters.
    static func ampersandsUnescaped(_ text: String) -> String {
        // One pass over the bytes (each item's link and guid pass here; Foundation's search bridged
        // both to NSString, 1-2 % of a pull): an "&" followed by "amp;" however often is one "&".
        guard text.containsUTF8(UInt8(ascii: "&")) else { return text }
        let bytes = Array(text.utf8)
        let amp = Array("amp;".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            out.append(bytes[index])
            index += 1
            if out.last == UInt8(ascii: "&") {
                while bytes[index...].starts(with: amp) { index += amp.count }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The entry with base64 fields decoded: Atom 0.3's `mode="base64"` (whose `type` is
    /// `text/plain` unless it says otherwise), and Atom 1.0 text whose `type` is a media type that
    /// is neither text nor XML (RFC 4287, 4.1.3.3). Decoded HTML stays HTML; anything else is read
    /// as text. Text that only looks like base64, decoding to no UTF-8 (`test` under a made-up
    /// type), stays as it was written.
    private static func decodingBase64(_ entry: Entry) -> Entry {
        var decoded = entry
        for field in Field.allCases {
            guard let captured = entry[field],
                let type = captured.type ?? (captured.mode == "base64" ? "text/plain" : nil)
            else { continue }
            let isMediaType = type.contains("/")
            let binary = isMediaType && !type.hasPrefix("text/") && !type.contains("xml")
            guard captured.mode == "base64" || binary,
                let bytes = Data(base64Encoded: Data(captured.text), options: .ignoreUnknownCharacters),
                captured.mode == "base64" || String(validating: bytes, as: UTF8.self) != nil
            else { continue }
            decoded[field] = Captured(
                text: [UInt8](bytes), type: type.hasPrefix("text/html") ? "html" : "text", mode: nil,
                base: captured.base)
        }
        return decoded
    }

    /// Whether an enclosure is sound or video: by its type, else by its file's extension.
    static func isAudioOrVideo(type: String?, url: String) -> Bool {
        FeedEnclosure.isSoundOrVideo(type: type, url: url)
    }

    private static func looksLikeImage(_ url: String?) -> Bool {
        guard let path = url?.lowercased().split(separator: "?").first else { return false }
        return [".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"].contains { path.hasSuffix($0) }
    }
}
