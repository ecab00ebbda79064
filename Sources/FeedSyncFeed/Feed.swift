// FeedSyncFeed: the feed formats. Its public API is this file (the neutral shape every format is
// decoded into: FeedItem, FeedPage, FeedDocument, ItemKey; the limits on items) and
// FeedDocument+Detect.swift (`FeedDocument.decode`, the entry point: which format a document is,
// then its decoder: XMLFeed* for RSS and Atom over XMLInput*, JSONFeed, PagedJSON, WordPress),
// TinyTinyRSSAnswer.swift and GoogleReaderAnswer.swift (aggregators' answers read as a feed's),
// OPML.swift (subscription lists). It does no I/O but reading a file it is given. Where it sits:
// docs/architecture.md.

import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// One news item as the feed described it.
public struct FeedItem: Sendable, Equatable {
    /// Identity within its feed: `id`/`guid`, else the link, else a hash of title and picture URL.
    public var key: String
    public var title: String
    public var link: String?
    public var pictureURL: String?
    /// Normalised to ISO 8601 UTC (`2024-05-01T10:00:00Z`) when the feed gave a readable date.
    public var published: String?
    public var summary: String?
    /// The full content as HTML (`content:encoded`, Atom `content`, JSON Feed `content_html`,
    /// WordPress `content.rendered`; else RSS `description`), at most `FeedLimits.contentBytes`.
    public var content: String?
    /// What the search index holds for the item's body, `SearchText.body(content:summary:)`,
    /// made as the item was read (from the plain text its summary was cut from); nil when the item
    /// was made otherwise, and the store makes it. Not part of the item's equality: it is derived.
    public var searchBody: String?
    /// The pictures the content shows (`ArticlePictures.find`), found as the item was read,
    /// relative references against the content's base; nil when not looked for yet. Derived
    /// from the content, so not part of the item's equality either.
    public var contentPictures: [ContentPicture]?
    /// The key an earlier feedsync gave this item, when its rule has changed since (an item with
    /// no id keyed by link and picture), so the store finds it under that key and keeps it one
    /// item. Not part of the item's equality.
    public var formerKey: String?
    /// Who wrote it, plain text, when the source says (an aggregator's article); not part of the
    /// item's equality.
    public var author: String?
    /// Its categories (tags, terms, labels), plain text, at most `FeedLimits.categories`, none
    /// repeated; not part of the item's equality.
    public var categories: [String] = []
    /// The files it carries (a podcast's episode), at most `FeedLimits.enclosures`; its picture
    /// is `pictureURL`, never one of these. Not part of the item's equality.
    public var enclosures: [FeedEnclosure] = []

    public init(
        key: String, title: String, link: String?, pictureURL: String?, published: String?, summary: String?,
        content: String? = nil
    ) {
        self.key = key
        self.title = title
        self.link = link
        self.pictureURL = pictureURL
        self.published = published
        self.summary = summary
        self.content = content
    }

    /// `published` in seconds since 1970.
    public var publishedSeconds: Int64? { published.flatMap(FeedDate.parse) }

    public static func == (a: FeedItem, b: FeedItem) -> Bool {
        (a.key, a.title, a.link, a.pictureURL, a.published) == (b.key, b.title, b.link, b.pictureURL, b.published)
            && (a.summary, a.content) == (b.summary, b.content)
    }
}

/// One page of a feed.
public struct FeedPage: Sendable, Equatable {
    public var items: [FeedItem]
    /// The page number the server says this is, if it says.
    public var page: Int?
    /// The number of items in the whole feed, if the server says.
    public var total: Int?
    /// Whether an older page follows. `nil` when the server does not say.
    public var hasMore: Bool?
    /// Entries that were not objects, or carried nothing usable (or an id or URL over
    /// `FeedLimits`), and were skipped.
    public var skipped: Int
    /// The absolute URL of the next older document, for formats that link their pages
    /// (`next_url`, `rel="next"`, `rel="prev-archive"`, `Link: <…>; rel="next"`).
    public var next: String?
    /// Why the document's next link is not followed (it was taken out of `next`), if it is not.
    public var unfollowed: String?
    /// Where the document is not well-formed (`line 12, column 5 (reason)`), when its items were
    /// read past the damage.
    public var malformed: String?
    /// The feed's own title (`<channel><title>`, Atom's `<title>`, JSON Feed's `title`), plain text.
    public var title: String?
    /// The site the feed belongs to (RSS `<channel><link>`, Atom's alternate link, `home_page_url`).
    public var siteURL: String?
    /// What the document says about how often to ask for it.
    public var schedule = FeedSchedule()

    public init(
        items: [FeedItem], page: Int? = nil, total: Int? = nil, hasMore: Bool? = nil, skipped: Int = 0,
        next: String? = nil
    ) {
        self.items = items
        self.page = page
        self.total = total
        self.hasMore = hasMore
        self.skipped = skipped
        self.next = next
    }
}

/// Where a document came from: what relative URLs resolve against and what the headers said.
public struct DocumentContext: Sendable {
    /// The URL the document was served from, after redirects.
    public var url: String
    /// Response headers, names in lower case.
    public var headers: [String: String]
    /// The page number asked for (1 for the head; counts on for formats that follow links).
    public var page: Int

    public init(url: String, headers: [String: String] = [:], page: Int = 1) {
        self.url = url
        self.headers = headers
        self.page = page
    }
}

/// Reads one document of any supported format into a FeedPage.
public enum FeedDocument {
    /// Decodes `body`. With `format` `nil`, the format is found from the first bytes and the
    /// document itself (JSON Feed's `version`, a JSON array for WordPress, the XML root element),
    /// then the content type. Items with the same key are kept once, the first time.
    public static func decode(
        _ body: Data, format: FeedFormat?, context: DocumentContext
    ) throws(FeedError) -> (format: FeedFormat, page: FeedPage) {
        do {
            var (found, page) = try decodeAnyFormat(.data(body), format: format, context: context)
            page.items = uniqueKeys(page.items)
            return (found, page)
        } catch let error as FeedError {
            throw error
        } catch {
            throw FeedError("\(error)")  // only the callback of the other entry point throws others
        }
    }

    /// Decodes the document in the file at `path` in parts, so a long one is never held whole:
    /// XML is read as a stream, JSON mapped from the file with its list of items read one entry at
    /// a time (`readJSONList`). Items reach `onItems` in order, `batch` at a time, and the page
    /// returned carries none. What `onItems` throws is thrown on; problems with the document are
    /// `FeedError`s.
    public static func decode(
        fileAt path: String, format: FeedFormat?, context: DocumentContext, batch: Int,
        onItems: ([FeedItem]) throws -> Void
    ) throws -> (format: FeedFormat, page: FeedPage) {
        try withoutActuallyEscaping(onItems) { onItems in
            try decodeAnyFormat(.file(path, parts: (batch, onItems)), format: format, context: context)
        }
    }

    /// Whether an error status means the feed has no more pages rather than that it failed:
    /// WordPress answers a page past the end with 400 `rest_post_invalid_page_number`.
    public static func isPastLastPage(status: Int, body: Data, format: FeedFormat?) -> Bool {
        status == 400 && format != .jsonFeed && format != .rss && format != .atom
            && String(decoding: body.prefix(4096), as: UTF8.self).contains("rest_post_invalid_page_number")
    }
}

/// Keys for items that carry neither id nor link.
public enum ItemKey {
    /// A key for an item that has neither id, link, title nor picture, from everything it does
    /// have (its texts, dates, enclosure), in a fixed order: nil when it has nothing.
    static func digest(_ parts: [String?]) -> String? {
        let texts = parts.map { $0?.trimmed ?? "" }
        guard texts.contains(where: { !$0.isEmpty }) else { return nil }
        return hash(title: texts.joined(separator: "\u{0}"), pictureURL: nil)
    }

    /// The key of an item with neither id nor link: its title, as a picture's URL (which a CDN
    /// renames) is no part of who an item is; its picture only when it has no title. `former` is
    /// the key earlier versions gave it (title and picture), where that differs.
    public static func byTitle(_ title: String, picture: String?) -> (key: String, former: String?)? {
        guard let key = hash(title: title, pictureURL: title.isEmpty ? picture : nil) else { return nil }
        return (key, title.isEmpty || picture == nil ? nil : hash(title: title, pictureURL: picture))
    }

    /// `h:` and 16 hex digits of FNV-1a over title and picture URL; `nil` when both are empty.
    public static func hash(title: String, pictureURL: String?) -> String? {
        guard !title.isEmpty || pictureURL != nil else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in title.utf8 + [0] + (pictureURL ?? "").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "h:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension FeedFormat {
    /// The URL of page `page`. Formats that follow links have only page 1 here, the feed's own URL.
    public func url(of feedURL: String, page: Int) -> String {
        switch self {
        case .pagedJSON: PagedJSON.url(of: feedURL, page: page)
        case .wordpress: WordPress.url(of: feedURL, page: page)
        case .jsonFeed, .rss, .atom: feedURL
        }
    }
}

extension FeedSchedule {
    /// Minutes a `<ttl>` may say: up to a year (a due time is capped at a day anyway).
    static let ttls = 0...525_600
    /// Reads `<ttl>`: digits only.
    static func minutes(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= 9, FeedLimits.isDigits(trimmed), let value = Int(trimmed), ttls.contains(value)
        else { return nil }
        return value
    }
    /// Reads `<hour>`: 0 to 23 (24, which some write for midnight, is 0).
    static func hour(_ text: String) -> Int? {
        minutes(text).flatMap { $0 == 24 ? 0 : (0...23).contains($0) ? $0 : nil }
    }
    /// Reads `<day>`: an English day name, any letter case.
    static func day(_ text: String) -> Int? {
        let days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        return days.firstIndex(of: text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
    }
    /// Seconds of an `sy:updatePeriod`.
    static func period(_ text: String) -> Int? {
        switch text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() {
        case "hourly": 3600
        case "daily": 86_400
        case "weekly": 604_800
        case "monthly": 2_592_000
        case "yearly": 31_536_000
        default: nil
        }
    }
}

extension FeedEnclosure {
    /// An enclosure from what a feed wrote, each part checked: nil when its URL is no web URL.
    static func checked(url: String?, type: String?, length: String?, duration: String?) -> FeedEnclosure? {
        guard let url = FeedLimits.webURL(url) else { return nil }
        return FeedEnclosure(
            url: url, type: mediaType(type), length: length.flatMap(bytes), duration: duration.flatMap(seconds))
    }
    /// A media type as a feed writes it (`audio/mpeg`, `video/mp4; codecs=…` is `video/mp4`),
    /// lowercased; nil for anything else.
    static func mediaType(_ text: String?) -> String? {
        guard let text else { return nil }
        let type = text.split(separator: ";", maxSplits: 1).first.map { String($0).trimmed.lowercased() } ?? ""
        let parts = type.split(separator: "/", omittingEmptySubsequences: false)
        let token = { (part: Substring) in
            !part.isEmpty && part.utf8.count <= 64
                && part.utf8.allSatisfy { byte in
                    (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || "!#$&^_.+-".utf8.contains(byte)
                }
        }
        return parts.count == 2 && parts.allSatisfy(token) ? type : nil
    }
    /// Bytes as digits (`length`, `fileSize`, `size_in_bytes`); 0 (unknown, as feeds write it)
    /// and anything out of `lengths` are nil.
    static func bytes(_ text: String) -> Int64? {
        let digits = text.trimmed
        guard digits.utf8.count <= 13, FeedLimits.isDigits(digits), let value = Int64(digits) else { return nil }
        return lengths.contains(value) ? value : nil
    }
    /// A duration as podcasts write it: seconds (`3723`, `3723.5`), `MM:SS` or `H:MM:SS`.
    static func seconds(_ text: String) -> Int? {
        let parts = text.trimmed.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0
        for (index, part) in parts.enumerated() {
            // Only the seconds may have a fraction (dropped); minutes and seconds after a colon are two digits at most.
            let whole = index == parts.count - 1 ? part.split(separator: ".", maxSplits: 1).first ?? "" : part
            guard whole.utf8.count <= 7, FeedLimits.isDigits(whole), let value = Int(whole),
                index == 0 || value < 60
            else { return nil }
            total = total * 60 + value
        }
        return durations.contains(total) ? total : nil
    }
    /// `found` with each URL once (the first's fields, filled in from a later one's with the same
    /// URL), at most `FeedLimits.enclosures`; `duration` (`itunes:duration`, the item's) goes to
    /// the first sound or video file that has none.
    static func merged(_ found: [FeedEnclosure], duration: Int? = nil) -> [FeedEnclosure] {
        var merged: [FeedEnclosure] = []
        for enclosure in found {
            if let index = merged.firstIndex(where: { $0.url == enclosure.url }) {
                merged[index].type = merged[index].type ?? enclosure.type
                merged[index].length = merged[index].length ?? enclosure.length
                merged[index].duration = merged[index].duration ?? enclosure.duration
            } else if merged.count < FeedLimits.enclosures {
                merged.append(enclosure)
            }
        }
        if let duration, let index = merged.firstIndex(where: { $0.duration == nil && $0.isSoundOrVideo }) {
            merged[index].duration = duration
        }
        return merged
    }
}

extension FeedLimits {
    /// A count from the network, `field` naming it: nil when absent, an error when out of range.
    static func count(_ text: String?, field: String, in range: ClosedRange<Int>) throws(FeedError) -> Int? {
        guard let text = text?.trimmed, !text.isEmpty else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw FeedError(
                "its \(field) \(String(reflecting: String(text.prefix(40)))) is not a count "
                    + "from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return value
    }

    /// Categories as an item keeps them: plain, bounded as titles, none empty or repeated (in
    /// any case), at most `categories`.
    static func categories(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return Array(
            names.map { boundedTitle(HTMLText.collapsingWhitespace($0)) }
                .filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }.prefix(categories))
    }

    /// `item` within the limits: its title cut and an over-long picture URL dropped, or nil
    /// (skipped) when its key or link is too long. Its texts encoded twice are repaired.
    static func bounded(_ item: FeedItem) -> FeedItem? {
        guard item.key.utf8.count <= keyBytes, (item.link?.utf8.count ?? 0) <= urlBytes else { return nil }
        var bounded = item
        if (item.pictureURL?.utf8.count ?? 0) > urlBytes { bounded.pictureURL = nil }
        if let content = item.content {
            bounded.content = HTMLText.cutHTML(Mojibake.repaired(content), toBytes: contentBytes)
        }
        bounded.summary = item.summary.map(Mojibake.repaired)
        bounded.title = boundedTitle(item.title)
        bounded.author = item.author.map { boundedTitle(HTMLText.collapsingWhitespace($0)) }.flatMap {
            $0.isEmpty ? nil : $0
        }
        bounded.categories = categories(item.categories)
        if item.searchBody == nil || bounded.content != item.content || bounded.summary != item.summary {
            bounded.searchBody = SearchText.body(content: bounded.content, summary: bounded.summary)
        }
        if item.contentPictures == nil || bounded.content != item.content {
            // A format that does not say where its content is from: the item's page.
            bounded.contentPictures = bounded.content.map { ArticlePictures.find(in: Array($0.utf8), base: item.link) }
        }
        return bounded
    }
}
