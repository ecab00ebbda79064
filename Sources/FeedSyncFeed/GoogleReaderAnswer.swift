import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// A subscription on a Google Reader API server: its stream id, title, address and labels.
public struct GoogleReaderSubscription: Sendable, Equatable {
    public var streamID: String
    public var title: String
    public var url: String?
    public var labels: [String]
}

/// A page of a stream: what it held, and where the next page starts (nil: this was the last).
public struct GoogleReaderPage<Element: Sendable>: Sendable {
    public var elements: [Element]
    public var continuation: String?
    /// Entries left out as unusable.
    public var skipped: Int
}

/// Reads the answers of a server that speaks the Google Reader API (FreshRSS, Miniflux,
/// Inoreader, The Old Reader, BazQux), checking every field as a feed's: ids of a form a server
/// uses, strings bounded, links only http(s), items through `FeedLimits`. The Content-Type is not
/// read: FreshRSS sends its JSON as `text/html`.
public enum GoogleReaderAnswer {
    /// The most entries one answer may hold: ids as many as a listing of states asks
    /// (`GoogleReader.idsPerListing`), items and subscriptions fewer.
    static let entriesPerAnswer = 100_000
    /// The longest id, continuation or token kept.
    static let tokenLength = 1024
    static let longPrefix = "tag:google.com,2005:reader/item/"

    /// An item id in the long form every server takes back (BazQux refuses bare hex; FreshRSS
    /// reads 16 digits without a leading 0 as decimal): decimal ids (stream/items/ids) become 16
    /// hex digits, hex ids (FreshRSS's 16 digits, The Old Reader's 24-digit ObjectIds) keep
    /// their digits; nil for anything else.
    public static func itemID(_ raw: String) -> String? {
        let digits = raw.hasPrefix(longPrefix) ? Substring(raw.dropFirst(longPrefix.count)) : Substring(raw)
        guard !digits.isEmpty, digits.utf8.count <= 32 else { return nil }
        let hex: String
        // A 64-bit number has at most 20 digits: more is an ObjectId whose hex digits are all below a.
        if !raw.hasPrefix(longPrefix), digits.utf8.count <= 20, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let number = UInt64(digits) else { return nil }
            hex = String(number, radix: 16)
        } else {
            guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
            hex = digits.lowercased()
        }
        return longPrefix + String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// ClientLogin's `Auth=` value (FreshRSS: `USER/` and 40 hex digits).
    public static func auth(_ data: Data) throws(RemoteRefusal) -> String {
        let text = String(decoding: data.prefix(16 * 1024), as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("Auth=") {
            if let value = token(line.dropFirst(5)) { return value }
        }
        throw RemoteRefusal(code: nil, description: "the log-in answer holds no Auth")
    }

    /// `token`'s action token, sent as `T=` with every POST.
    public static func actionToken(_ data: Data) throws(RemoteRefusal) -> String {
        let text = String(decoding: data.prefix(16 * 1024), as: UTF8.self)
        guard let value = token(text.trimmingCharacters(in: .whitespacesAndNewlines)[...]) else {
            throw RemoteRefusal(code: nil, description: "the token answer holds no token")
        }
        return value
    }

    /// Printable ASCII without spaces, bounded: a token, an id or a continuation as sent back.
    static func token(_ text: Substring) -> String? {
        guard !text.isEmpty, text.utf8.count <= tokenLength,
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return String(text)
    }

    /// The answer's JSON object, or one sentence saying it is not the API's.
    static func object(_ data: Data) throws(RemoteRefusal) -> JSONValue {
        let root = try RemoteRefusal.json(data)
        guard case .object = root else {
            // Miniflux answers `[]` for a call it does not route (stream/contents).
            throw RemoteRefusal(code: nil, description: "the answer is not the API's JSON (no object)")
        }
        return root
    }

    static func list(_ value: JSONValue?, _ what: String) throws(RemoteRefusal) -> [JSONValue] {
        guard case .array(let entries)? = value else {
            throw RemoteRefusal(code: nil, description: "the answer holds no list of \(what)")
        }
        guard entries.count <= entriesPerAnswer else {
            throw RemoteRefusal(code: nil, description: "the answer holds more than \(entriesPerAnswer) \(what)")
        }
        return entries
    }

    static func continuation(_ root: JSONValue) -> String? {
        root["continuation"]?.text.flatMap { token($0[...]) }
    }

    /// stream/items/ids: the ids in the long form, and the continuation.
    public static func itemIDs(_ data: Data) throws(RemoteRefusal) -> GoogleReaderPage<String> {
        let root = try object(data)
        // An empty stream may leave the list out.
        let entries = root["itemRefs"] == nil ? [] : try list(root["itemRefs"], "item ids")
        let ids = entries.compactMap { $0["id"]?.text.flatMap(itemID) }
        return GoogleReaderPage(elements: ids, continuation: continuation(root), skipped: entries.count - ids.count)
    }

    /// stream/contents and stream/items/contents: the items, in the server's order; those with
    /// no usable id or feed, or nothing to show, are left out and counted.
    public static func items(_ data: Data) throws(RemoteRefusal) -> GoogleReaderPage<RemoteArticle> {
        let root = try object(data)
        let entries = root["items"] == nil ? [] : try list(root["items"], "items")
        let articles = entries.compactMap(article)
        return GoogleReaderPage(
            elements: articles, continuation: continuation(root), skipped: entries.count - articles.count)
    }

    /// `OK`, the answer of a call that changes something (edit-tag, subscription/edit).
    public static func accepted(_ data: Data) throws(RemoteRefusal) {
        guard String(decoding: data.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "OK"
        else { throw RemoteRefusal(code: nil, description: "the answer is not OK") }
    }

    /// quickadd's stream id of the feed subscribed to, else the server's reason (one bounded line).
    public static func quickadd(_ data: Data) throws(RemoteRefusal) -> (streamID: String?, error: String?) {
        let root = try object(data)
        if let stream = streamID(root["streamId"]) { return (stream, nil) }
        return (nil, root["error"]?.text.map { FeedLimits.boundedTitle(HTMLText.collapsingWhitespace($0)) })
    }

    /// subscription/list's feeds.
    public static func subscriptions(_ data: Data) throws(RemoteRefusal) -> [GoogleReaderSubscription] {
        try list(object(data)["subscriptions"], "subscriptions").compactMap { entry in
            guard let stream = streamID(entry["id"]) else { return nil }
            let labels = (entry["categories"].flatMap { try? list($0, "labels") } ?? []).compactMap {
                label($0["id"]?.text) ?? $0["label"]?.text.map(FeedLimits.boundedTitle)
            }
            return GoogleReaderSubscription(
                streamID: stream, title: FeedLimits.boundedTitle(entry["title"]?.text ?? stream),
                url: FeedLimits.webURL(entry["url"]?.text), labels: labels)
        }
    }

    /// tag/list's labels (folders), by name; states and other tags left out.
    public static func labels(_ data: Data) throws(RemoteRefusal) -> [String] {
        try list(object(data)["tags"], "tags").compactMap { label($0["id"]?.text) }
    }

    /// The name in `user/-/label/NAME` (or `user/<id>/label/NAME`), bounded as a title is.
    static func label(_ id: String?) -> String? {
        guard let id, id.hasPrefix("user/"), let range = id.range(of: "/label/") else { return nil }
        let name = FeedLimits.boundedTitle(String(id[range.upperBound...]))
        return name.isEmpty ? nil : name
    }

    /// Whether `categories` holds the state `name` (`user/-/state/com.google/read`, or with the
    /// user's id for `-`).
    static func has(_ categories: [String], state name: String) -> Bool {
        categories.contains { $0.hasPrefix("user/") && $0.hasSuffix("/state/com.google/" + name) }
    }

    static func streamID(_ value: JSONValue?) -> String? {
        guard let text = value?.text, text.hasPrefix("feed/"), text.utf8.count <= 2048,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return text
    }

    /// An item: its id in the long form, its feed's stream id (`feed/3`, `feed/http://…`,
    /// `feed/<ObjectId>`), its states from its categories.
    static func article(_ entry: JSONValue) -> RemoteArticle? {
        guard let id = entry["id"]?.text.flatMap(itemID), let stream = streamID(entry["origin"]?["streamId"]) else {
            return nil
        }
        let categories = (entry["categories"].flatMap { try? list($0, "categories") } ?? []).compactMap(\.text)
        guard
            let bounded = FeedItem.aggregated(
                key: id, entry: entry, link: firstLink(entry["canonical"]) ?? firstLink(entry["alternate"]),
                html: entry["content"]?["content"]?.text ?? entry["summary"]?["content"]?.text,
                published: entry["published"], attachments: entry["enclosure"], fields: (url: "href", type: "type"))
        else { return nil }
        // Its own categories are those not the user's (states and labels are `user/…`).
        var item = bounded
        item.categories = FeedLimits.categories(categories.filter { !$0.hasPrefix("user/") })
        return RemoteArticle(
            id: id, feedID: stream, unread: !has(categories, state: "read"),
            starred: has(categories, state: "starred"),
            feedTitle: entry["origin"]?["title"]?.text.map(FeedLimits.boundedTitle), item: item,
            time: microseconds(entry["timestampUsec"]) ?? microseconds(entry["crawlTimeMsec"]).map { $0 * 1000 })
    }

    /// A time given as decimal digits (or a number), bounded to a date before the year 2200.
    static func microseconds(_ value: JSONValue?) -> Int64? {
        guard let text = value?.text ?? value?.integer.map(String.init), (1...16).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int64(text), number < 7_258_118_400_000_000
        else { return nil }
        return number
    }

    /// The `href` of a list of links' first entry (`canonical`, `alternate`).
    static func firstLink(_ value: JSONValue?) -> String? {
        guard case .array(let links)? = value else { return nil }
        return links.lazy.compactMap { $0["href"]?.text }.first
    }
}
