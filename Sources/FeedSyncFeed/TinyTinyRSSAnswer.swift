import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// An article as an aggregator keeps it: the server's id, its feed's, its read and starred state,
/// and the item feedsync stores (keyed by the server's id, so it is stored once however often it
/// comes down). Ids are the server's, as text (`RemoteID`).
public struct RemoteArticle: Sendable, Equatable {
    public var id: String
    public var feedID: String
    public var unread: Bool
    public var starred: Bool
    /// The feed's title as the article names it, for a feed not listed yet.
    public var feedTitle: String?
    public var item: FeedItem
    /// When the server stored it, in microseconds, where the server says (a Google Reader
    /// server's `timestampUsec`): what `mark-all-as-read` compares.
    public var time: Int64?
}

/// A subscription on an aggregator: its id, title, address and category (nil: none).
public struct RemoteFeed: Sendable, Equatable {
    public var id: String
    public var title: String
    public var url: String?
    public var categoryID: Int64?
    public init(id: String, title: String, url: String?, categoryID: Int64?) {
        self.id = id
        self.title = title
        self.url = url
        self.categoryID = categoryID
    }
}

/// What the aggregator's API answered instead of content: its error code (`NOT_LOGGED_IN`,
/// `LOGIN_ERROR`, `API_DISABLED`, …), or a body that is not the API's answer at all.
public struct RemoteRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The API's error code, bounded and made of letters, digits and `_` only; nil when the
    /// body was not the API's JSON.
    public var code: String?
    public var description: String

    /// `data` parsed as JSON, or the refusal saying it is not the API's.
    static func json(_ data: Data) throws(RemoteRefusal) -> JSONValue {
        do {
            return try JSONValue.parse(data)
        } catch {
            throw RemoteRefusal(code: nil, description: "the answer is not the API's JSON (\(error.reason))")
        }
    }
}

/// Reads Tiny Tiny RSS's JSON API answers (`{"seq", "status", "content"}`), checking every field
/// as a feed's: ids in range, strings bounded, items through `FeedLimits`.
public enum TinyTinyRSSAnswer {
    /// Ids the server hands out: positive, within what a JSON number holds exactly.
    static let ids: ClosedRange<Int64> = 1...(1 << 53)
    /// The most articles one answer may hold (the API pages by 200).
    static let articlesPerAnswer = 10_000

    /// The answer's `content`, or the refusal it carries.
    static func content(_ data: Data) throws(RemoteRefusal) -> JSONValue {
        let root = try RemoteRefusal.json(data)
        guard case .object(let envelope) = root, let content = envelope["content"] else {
            throw RemoteRefusal(code: nil, description: "the answer is not the API's JSON (no \"content\")")
        }
        if envelope["status"]?.integer != 0 {
            let raw = content["error"]?.text ?? "an unnamed error"
            let code = String(raw.prefix(64).filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            throw RemoteRefusal(code: code.isEmpty ? nil : code, description: "the server answered \(code)")
        }
        return content
    }

    /// `login`'s session id.
    public static func session(_ data: Data) throws(RemoteRefusal) -> String {
        let content = try content(data)
        guard let session = content["session_id"]?.text, session.utf8.count <= 256,
            session.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ",") })
        else { throw RemoteRefusal(code: nil, description: "the login answer holds no usable session id") }
        return session
    }

    /// Whether the answer is a success (`updateArticle`, `subscribeToFeed` …).
    public static func accepted(_ data: Data) throws(RemoteRefusal) {
        _ = try content(data)
    }

    /// `subscribeToFeed`'s result: its code (0 subscribed before, 1 now, others why not) and the
    /// feed's id when there is one.
    public static func subscription(_ data: Data) throws(RemoteRefusal) -> (code: Int, feedID: Int64?) {
        let status = try content(data)["status"]
        guard let code = status?["code"]?.integer, (0...100).contains(code) else {
            throw RemoteRefusal(code: nil, description: "the subscription's answer holds no code")
        }
        return (code, id(status?["feed_id"]))
    }

    /// `getHeadlines`' articles, in the server's order; those with an id out of range or nothing
    /// usable are left out and counted.
    public static func articles(_ data: Data) throws(RemoteRefusal) -> (articles: [RemoteArticle], skipped: Int) {
        guard case .array(let entries) = try content(data) else {
            throw RemoteRefusal(code: nil, description: "the headlines are not a list")
        }
        guard entries.count <= articlesPerAnswer else {
            throw RemoteRefusal(code: nil, description: "the answer holds more than \(articlesPerAnswer) articles")
        }
        let articles = entries.compactMap(article)
        return (articles, entries.count - articles.count)
    }

    /// A page of headlines asked for their ids only: the ids in range, and how many entries the
    /// page held (a short page is the last). A struct, not a tuple: it is a task group's result,
    /// where a labelled tuple miscompiles in release builds.
    public struct HeadlineIDs: Sendable {
        public var ids: [String]
        public var entries: Int
    }

    public static func articleIDs(_ data: Data) throws(RemoteRefusal) -> HeadlineIDs {
        guard case .array(let entries) = try content(data) else {
            throw RemoteRefusal(code: nil, description: "the headlines are not a list")
        }
        guard entries.count <= articlesPerAnswer else {
            throw RemoteRefusal(code: nil, description: "the answer holds more than \(articlesPerAnswer) articles")
        }
        return HeadlineIDs(ids: entries.compactMap { id($0["id"]).map(String.init) }, entries: entries.count)
    }

    static func id(_ value: JSONValue?) -> Int64? {
        guard let number = value?.integer.map(Int64.init), ids.contains(number) else { return nil }
        return number
    }

    static func article(_ entry: JSONValue) -> RemoteArticle? {
        guard let id = Self.id(entry["id"]), let feedID = Self.id(entry["feed_id"]) else { return nil }
        // The picture: an image attachment, else the content's first, else the one the server
        // picked (flavor_image: a video's, say; the server's URL rewriting drops ports from it).
        guard
            var item = FeedItem.aggregated(
                key: String(id), entry: entry, link: entry["link"]?.text, html: entry["content"]?.text,
                published: entry["updated"], attachments: entry["attachments"],
                fields: (url: "content_url", type: "content_type"), lastPicture: entry["flavor_image"]?.text)
        else { return nil }
        // Its tags (the feed's categories, as tt-rss keeps them) and its labels' captions.
        var categories: [String] = []
        if case .array(let tags)? = entry["tags"] { categories += tags.compactMap(\.text) }
        if case .array(let labels)? = entry["labels"] {
            categories += labels.compactMap { label in
                if case .array(let fields) = label, fields.count > 1 { fields[1].text } else { nil }
            }
        }
        item.categories = FeedLimits.categories(categories)
        return RemoteArticle(
            id: String(id), feedID: String(feedID), unread: entry["unread"]?.bool ?? true,
            starred: entry["marked"]?.bool ?? false,
            feedTitle: entry["feed_title"]?.text.map(FeedLimits.boundedTitle), item: item)
    }

    /// `getFeeds`' subscriptions (real feeds only: the API lists its virtual ones with ids below 1).
    public static func feeds(_ data: Data) throws(RemoteRefusal) -> [RemoteFeed] {
        guard case .array(let entries) = try content(data) else {
            throw RemoteRefusal(code: nil, description: "the feeds are not a list")
        }
        return entries.prefix(articlesPerAnswer).compactMap { entry in
            guard let id = Self.id(entry["id"]) else { return nil }
            return RemoteFeed(
                id: String(id), title: entry["title"]?.text.map(FeedLimits.boundedTitle) ?? "Feed \(id)",
                url: FeedLimits.webURL(entry["feed_url"]?.text), categoryID: Self.id(entry["cat_id"]))
        }
    }

    /// `getCategories`' names by id (real categories only).
    public static func categories(_ data: Data) throws(RemoteRefusal) -> [Int64: String] {
        guard case .array(let entries) = try content(data) else {
            throw RemoteRefusal(code: nil, description: "the categories are not a list")
        }
        var names: [Int64: String] = [:]
        for entry in entries.prefix(articlesPerAnswer) {
            guard let id = Self.id(entry["id"]), let title = entry["title"]?.text else { continue }
            names[id] = FeedLimits.boundedTitle(title)
        }
        return names
    }

    /// `getCounters`' figures that move when articles are read or starred anywhere: the unread
    /// count of all articles and of starred ones, the starred count; as one text to compare.
    public static func counters(_ data: Data) throws(RemoteRefusal) -> String {
        guard case .array(let entries) = try content(data) else {
            throw RemoteRefusal(code: nil, description: "the counters are not a list")
        }
        var figures: [String] = []
        for entry in entries.prefix(articlesPerAnswer) {
            guard let id = entry["id"]?.text, entry["kind"]?.text == nil else { continue }
            let values = ["counter", "auxcounter", "markedcounter"].map { entry[$0]?.integer.map(String.init) ?? "-" }
            figures.append("\(id.prefix(32)):\(values.joined(separator: ","))")
        }
        return figures.sorted().joined(separator: " ")
    }
}

extension FeedItem {
    /// The item an aggregator's article makes (Tiny Tiny RSS's, a Google Reader API server's),
    /// bounded as a feed's: its title (else the content's start), link, date, author, content,
    /// the files of `attachments` (whose URL and type are named by `fields`) and its picture (an
    /// image attachment, else the content's first, else `lastPicture`); nil when nothing is left.
    static func aggregated(
        key: String, entry: JSONValue, link: String?, html: String?, published: JSONValue?, attachments: JSONValue?,
        fields: (url: String, type: String), lastPicture: String? = nil
    ) -> FeedItem? {
        let link = FeedLimits.webURL(link)
        let plain = html.map { SearchText.plainContent(Array($0.utf8)) }
        let title = entry["title"]?.text.map(HTMLText.decodedText) ?? plain.map { HTMLText.cut($0, to: 80) } ?? ""
        let picture = FeedLimits.webURL(
            JSONValue.firstImage(in: attachments, url: fields.url, type: fields.type)
                ?? html.flatMap(HTMLText.firstImageSource) ?? lastPicture)
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture, published: published.flatMap(FeedDate.normalise),
            summary: plain.map { HTMLText.cut($0, to: HTMLText.summaryLength) }, content: html)
        if let html, !html.isEmpty {
            item.searchBody = SearchText.body(plainContent: plain, summary: item.summary)
            item.contentPictures = ArticlePictures.find(in: Array(html.utf8), base: link ?? "")
        }
        item.author = entry["author"]?.text.map { FeedLimits.boundedTitle(HTMLText.collapsingWhitespace($0)) }
        item.enclosures = JSONValue.enclosures(
            in: attachments, base: link ?? "", url: fields.url, type: fields.type, length: "length",
            duration: "duration")
        return FeedLimits.bounded(item)
    }
}

extension JSONValue {
    var bool: Bool? {
        if let boolean { return boolean }
        guard case .string(let text) = self else { return nil }
        return ["true", "t", "1"].contains(text.lowercased())
    }
}
