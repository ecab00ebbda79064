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
    static let chunkSize = 256 << 10

    /// Runs libxml2 over the chunks `feed` pushes; `push` answers `false` once parsing stopped.
    func parse(
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

    static func from(_ context: UnsafeMutableRawPointer?) -> XMLFeed {
        let reader = context!.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private!
        return Unmanaged<XMLFeed>.fromOpaque(reader).takeUnretainedValue()
    }

    /// Ends parsing early: the document is not a feed, or `onItems` failed.
    func stop() {
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

    let batch: Int
    /// The HTTP `Content-Type`, whose charset names the document's encoding.
    let contentType: String?
    /// Bytes of the document handed to libxml2, and bytes of character data it handed back: the
    /// latter outgrowing the former is entity expansion, which is bounded (`FeedLimits`).
    var pushed = 0
    var expanded = 0
    let onItems: (([FeedItem]) throws -> Void)?
    var context: xmlParserCtxtPtr?
    var format: FeedFormat?
    var error: FeedError?
    /// Where the document is not well-formed, and why: its first fatal error.
    var malformed: String?
    /// What `onItems` threw; parsing stopped there.
    var callbackError: (any Error)?
    var items: [FeedItem] = []
    /// For each of `items`: whether its key is its link, and its enclosure of any type.
    var linkKeyed: [Bool] = []
    var mediaFiles: [(file: String, audioOrVideo: Bool)?] = []
    var skipped = 0
    /// RFC 5005: `next` (paged feeds) and `prev-archive` (archived feeds) lead to older entries.
    var next: String?
    var previousArchive: String?

    /// The base URL in effect at each open element (`xml:base` changes it in Atom).
    var bases: [String]
    var entry: Entry?
    var entryDepth = 0
    /// The depth of the entry's Atom `source` while inside it.
    var sourceDepth: Int?
    /// The depth of the Atom `author` open (the feed's or an entry's): its `name` child is its name.
    var authorDepth: Int?
    /// The Atom feed's own author, for its entries that name none.
    var feedAuthor: String?
    /// The root's namespace when it is `<rss>` in one (some feeds put RSS 2.0 in a default namespace),
    /// or `<feed>` in one of Atom's drafts'.
    var rssNamespace: String?
    var atomNamespace: String?
    /// Entries met: a malformed document that has none is an empty feed, not an unreadable one.
    var entriesSeen = 0
    /// Items made; entries that made none although they carried something (a key or a link over
    /// its limit); and `item` or `entry` elements of a namespace no dialect read uses.
    var made = 0
    var unusable = 0
    var unrecognized = 0
    var capture: Capture?
    /// The feed's own title and site, from the channel (RSS) or the feed element (Atom).
    var feedTitle: String?
    var siteURL: String?
    /// The local name of the root's child being read (RSS's `channel`).
    var topElement: String?
    /// What the feed says about its schedule; the `skipHours` or `skipDays` element being read.
    var schedule = FeedSchedule()
    var skipList: (field: Field, depth: Int)?
    var updatePeriod: Int?
    var updateFrequency: Int?
    /// Namespace names by libxml2's interned pointer: each is made a String once per document.
    var namespaces: [UnsafePointer<UInt8>: String] = [:]

    private init(base: String, contentType: String?, batch: Int, onItems: (([FeedItem]) throws -> Void)?) {
        bases = [base]
        self.contentType = contentType
        self.batch = batch
        self.onItems = onItems
    }

    /// Text fields of an entry, captured whole (nested markup's text included; XHTML's elements

}
