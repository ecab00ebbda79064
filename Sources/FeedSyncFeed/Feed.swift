// This file is the entirety of the public API of FeedSyncFeed: the neutral shape every feed
// format is decoded into, and the decoders. It does no I/O.

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

    public init(key: String, title: String, link: String?, pictureURL: String?, published: String?, summary: String?) {
        self.key = key
        self.title = title
        self.link = link
        self.pictureURL = pictureURL
        self.published = published
        self.summary = summary
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
    /// Entries that were not objects, or carried nothing usable, and were skipped.
    public var skipped: Int

    public init(items: [FeedItem], page: Int? = nil, total: Int? = nil, hasMore: Bool? = nil, skipped: Int = 0) {
        self.items = items
        self.page = page
        self.total = total
        self.hasMore = hasMore
        self.skipped = skipped
    }
}

/// Why a document could not be used. `reason` is one plain sentence fragment for the user.
public struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// The seed format: `{"page": N, "total": T, "has_more": bool, "items": [ … ]}`.
public enum PagedJSON {
    /// The URL of page `page` of the feed at `feedURL`: its `page` query parameter set to `page`.
    public static func url(of feedURL: String, page: Int) -> String {
        guard var components = URLComponents(string: feedURL) else { return feedURL }
        var query = (components.queryItems ?? []).filter { $0.name != "page" }
        query.append(URLQueryItem(name: "page", value: String(page)))
        components.queryItems = query
        return components.string ?? feedURL
    }

    /// Decodes one page. Items that are not objects are skipped and counted; fields that are
    /// missing, null or of the wrong type are treated as absent.
    public static func decode(_ data: Data) throws(FeedError) -> FeedPage {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            let preview = String(decoding: data.prefix(40), as: UTF8.self)
            throw FeedError("the page is not valid JSON (it starts with \(String(reflecting: preview)))")
        }
        guard case .object(let object) = root else {
            throw FeedError("the page is JSON but not an object")
        }
        guard case .array(let entries) = object["items"] ?? object["news"] else {
            throw FeedError("the page has no \"items\" (or \"news\") array")
        }
        var items: [FeedItem] = []
        items.reserveCapacity(entries.count)
        var skipped = 0
        for entry in entries {
            guard case .object(let fields) = entry, let item = item(from: fields) else {
                skipped += 1
                continue
            }
            items.append(item)
        }
        return FeedPage(
            items: items,
            page: object["page"]?.integer,
            total: object["total"]?.integer.flatMap { $0 >= 0 ? $0 : nil },
            hasMore: (object["has_more"] ?? object["hasMore"])?.boolean,
            skipped: skipped)
    }

    static func item(from fields: [String: JSONValue]) -> FeedItem? {
        func text(_ names: String...) -> String? {
            names.lazy.compactMap { fields[$0]?.text }.first
        }
        let title = text("title") ?? ""
        let picture = text("picUrl", "pic_url", "image", "imageUrl", "image_url")
        let link = text("link", "url")
        guard let key = text("id", "guid") ?? link ?? ItemKey.hash(title: title, pictureURL: picture) else {
            return nil
        }
        return FeedItem(
            key: key, title: title, link: link, pictureURL: picture,
            published: (fields["published"] ?? fields["date"]).flatMap(FeedDate.normalise),
            summary: text("summary"))
    }
}

/// Any JSON value, decoded without guessing: a boolean is never a number, a number never a string.
enum JSONValue: Decodable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// A non-empty trimmed string; a whole number is accepted as its decimal text (ids often are).
    var text: String? {
        switch self {
        case .string(let string):
            let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        case .number:
            return integer.map(String.init)
        default:
            return nil
        }
    }

    var integer: Int? {
        switch self {
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: Int(value)
        case .string(let string): Int(string.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    var boolean: Bool? {
        switch self {
        case .bool(let value): value
        case .number(let value): value != 0
        case .string("true"): true
        case .string("false"): false
        default: nil
        }
    }
}

/// Keys for items that carry neither id nor link.
public enum ItemKey {
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
