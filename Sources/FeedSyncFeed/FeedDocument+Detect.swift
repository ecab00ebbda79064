import FeedSyncMarkup
import FeedSyncModel
import Foundation

extension FeedDocument {
    /// A document in memory, read whole; or in a file, its items handed to `parts` as they are
    /// read.
    enum Source {
        case data(Data)
        case file(String, parts: Parts)

        var start: Data {
            switch self {
            case .data(let data): data.prefix(1024)
            case .file(let path, _):
                FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 1024) } ?? Data()
            }
        }
    }

    typealias Parts = (batch: Int, onItems: ([FeedItem]) throws -> Void)

    /// JSON or XML by the first byte, then the format by what the document says of itself.
    static func decodeAnyFormat(
        _ source: Source, format: FeedFormat?, context: DocumentContext
    ) throws -> (FeedFormat, FeedPage) {
        let contentType = context.headers["content-type"]?.lowercased() ?? ""
        let start = source.start
        var (found, page): (FeedFormat, FeedPage)
        switch family(of: start) ?? family(ofContentType: contentType) {
        case .xml?:
            if format == .pagedJSON || format == .jsonFeed || format == .wordpress {
                throw FeedError(
                    "the document is XML, not \(format!.rawValue) as chosen with --format", wrongFormat: true)
            }
            if rootElement(of: start)?.lowercased() == "html" {
                throw FeedError(
                    "the document is a web page, not a feed; use the address of the site's RSS or Atom feed")
            }
            switch source {
            case .file(let path, let parts):
                (found, page) = try XMLFeed.decode(
                    file: path, base: context.url, contentType: context.headers["content-type"], batch: parts.batch,
                    onItems: parts.onItems)
            case .data(let data):
                (found, page) = try XMLFeed.decode(
                    data, base: context.url, contentType: context.headers["content-type"])
            }
        case .json?:
            if format == .rss || format == .atom {
                throw FeedError(
                    "the document is JSON, not \(format!.rawValue) as chosen with --format", wrongFormat: true)
            }
            var streamed: (format: FeedFormat?, skipped: Int) = (nil, 0)
            let root: JSONValue
            switch source {
            case .file(let path, let parts):
                (root, streamed) = try readJSONList(file: path, format: format, context: context, parts: parts)
            case .data(let data):
                root = try JSONValue.parse(data)
            }
            // The format the items were read as, if they were: a `version` given again after the
            // list does not change it.
            found = format ?? streamed.format ?? jsonFormat(of: root, headers: context.headers)
            switch found {
            case .jsonFeed: page = try JSONFeed.page(from: root, base: context.url)
            case .wordpress: page = try WordPress.page(from: root, context: context)
            default: (found, page) = (.pagedJSON, try PagedJSON.page(from: root, base: context.url))
            }
            page.skipped += streamed.skipped
            // Items not in the list read as a stream (a paged-JSON page's `news`) are handed over here.
            if case .file(_, let parts) = source {
                for start in stride(from: 0, to: page.items.count, by: parts.batch) {
                    try parts.onItems(Array(page.items[start..<min(start + parts.batch, page.items.count)]))
                }
                page.items = []
            }
        case nil:
            let preview = String(decoding: start.prefix(40), as: UTF8.self)
            throw FeedError("the document is neither JSON nor XML (it starts with \(String(reflecting: preview)))")
        }
        if page.next == nil, found.followsLinks, let link = LinkHeader.next(context.headers["link"], base: context.url)
        {
            page.next = link
            page.hasMore = true
        }
        return (found, page)
    }

    /// A long JSON document, mapped from its file, its list of items made into items and handed
    /// to `parts` as it is read (JSONValue.parse(mappedFile:)), so memory holds one part however
    /// long the list. The format is told from what comes before the list: the one chosen, or a
    /// JSON Feed's `version`, or a root array (WordPress). When it cannot be (the seed format has
    /// no `version`; JSON Feed allows it after `items`), the list is read twice: first to check
    /// the document and find the rest of the root, then for its items. Returns the root, with
    /// the list empty, the format the list was read as (nil if it was not), and how many of its
    /// entries were no items.
    static func readJSONList(
        file path: String, format: FeedFormat?, context: DocumentContext, parts: Parts
    ) throws -> (root: JSONValue, list: (format: FeedFormat?, skipped: Int)) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FeedError("cannot read the downloaded document at \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FeedError("cannot read the downloaded document at \(path)") }
        let count = Int(status.st_size)
        var mapping: UnsafeMutableRawPointer? = nil
        if count > 0 {
            mapping = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0)
            guard mapping != MAP_FAILED else {
                throw FeedError("cannot map the downloaded document at \(path): \(String(cString: strerror(errno)))")
            }
        }
        defer { if let mapping { munmap(mapping, count) } }
        let bytes = UnsafeBufferPointer(start: mapping?.assumingMemoryBound(to: UInt8.self), count: count)

        var batch: [FeedItem] = []
        var skipped = 0
        var readAs: FeedFormat? = nil
        let root = try JSONValue.parse(mappedFile: bytes) { root, complete -> ((JSONValue) throws -> Void)? in
            let known: Bool =
                switch root {
                case .array: true
                case .object(let object): object["version"] != nil
                default: false
                }
            guard complete || format != nil || known else { return nil }
            let item: (JSONValue) -> FeedItem?
            let found = format ?? jsonFormat(of: root, headers: context.headers)
            switch (found, root) {
            case (.jsonFeed, .object): item = { JSONFeed.item(from: $0, base: context.url) }
            case (.wordpress, .array): item = { WordPress.item(from: $0, base: context.url) }
            case (.pagedJSON, .object): item = { PagedJSON.item(from: $0, base: context.url) }
            default:
                return nil  // not the shape the format has: the page says so once the document is read
            }
            readAs = found
            return { element in
                guard let made = item(element).flatMap(FeedLimits.bounded) else {
                    skipped += 1
                    return
                }
                batch.append(made)
                if batch.count >= parts.batch {
                    try parts.onItems(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
        if !batch.isEmpty { try parts.onItems(batch) }
        return (root, (readAs, skipped))
    }

    /// The name of the first element in `start`, past declarations, comments and a doctype.
    static func rootElement(of start: Data) -> String? {
        let bytes = [UInt8](start)
        var index = 0
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")), open + 1 < bytes.count {
            let next = bytes[open + 1]
            if next == UInt8(ascii: "?") || next == UInt8(ascii: "!") {
                index = open + 2  // a declaration, comment or doctype: the root comes later
                continue
            }
            let name = bytes[(open + 1)...].prefix { $0 > 0x20 && $0 != UInt8(ascii: ">") && $0 != UInt8(ascii: "/") }
            return String(decoding: name, as: UTF8.self)
        }
        return nil
    }

    enum Family { case json, xml }

    /// By the first byte that is not a byte-order mark or whitespace.
    static func family(of body: Data) -> Family? {
        var bytes = body.prefix(1024)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        // A UTF-16 or UTF-32 byte order mark, or the first `<` in either: XML (JSON is UTF-8).
        if XMLInput.encodingName(Array(bytes.prefix(4)), contentType: nil)?.hasPrefix("utf-") == true
            && !bytes.starts(with: [0xEF, 0xBB, 0xBF])
        {
            return .xml
        }
        switch bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
        case UInt8(ascii: "<"): return .xml
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .json
        default: return nil
        }
    }

    static func family(ofContentType type: String) -> Family? {
        if type.contains("xml") { return .xml }
        if type.contains("json") { return .json }
        return nil
    }

    /// JSON Feed names itself in `version`; WordPress answers with an array of posts; anything
    /// else is read as the seed format, which says what is wrong if it is not that either.
    static func jsonFormat(of root: JSONValue, headers: [String: String]) -> FeedFormat {
        if case .object(let object) = root, object["version"]?.text?.contains("jsonfeed.org/version/") == true {
            return .jsonFeed
        }
        // A `version` that names no jsonfeed.org URL, on items with JSON Feed's own fields.
        if case .object(let object) = root, object["version"] != nil, case .array(let items)? = object["items"],
            items.prefix(10).contains(where: {
                $0["content_html"] != nil || $0["content_text"] != nil || $0["date_published"] != nil
            })
        {
            return .jsonFeed
        }
        if case .array = root { return .wordpress }
        if headers["x-wp-total"] != nil || headers["x-wp-totalpages"] != nil { return .wordpress }
        return .pagedJSON
    }

    /// Items in order, each key once: the first occurrence wins.
    static func uniqueKeys(_ items: [FeedItem]) -> [FeedItem] {
        var seen = Set<String>(minimumCapacity: items.count)
        return items.filter { seen.insert($0.key).inserted }
    }
}

/// The `rel="next"` target of an HTTP `Link` header (RFC 8288).
enum LinkHeader {
    static func next(_ header: String?, base: String) -> String? {
        guard let header else { return nil }
        // `<url>; rel="next", <url>; rel="prev"`: URLs are in angle brackets, so commas inside
        // them do not split links.
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = rest[rest.index(after: open)..<close]
            let parameters = rest[rest.index(after: close)...].prefix { $0 != "<" }
            rest = rest[close...].dropFirst()
            let relations = parameters.split(separator: ";").compactMap { parameter -> [Substring]? in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "rel"
                else { return nil }
                return pair[1].trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(
                    in: CharacterSet(charactersIn: "\"")
                ).lowercased()
                    .split(separator: " ")
            }.joined()
            if relations.contains("next") { return DocumentURL.resolve(String(target), against: base) }
        }
        return nil
    }
}
