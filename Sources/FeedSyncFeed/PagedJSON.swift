import FeedSyncModel
import Foundation

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
    /// missing, null or of the wrong type are treated as absent. Relative picture URLs and links
    /// are resolved against `base` when it is given.
    public static func decode(_ data: Data, base: String? = nil) throws(FeedError) -> FeedPage {
        try page(from: JSONValue.parse(data), base: base)
    }

    static func page(from root: JSONValue, base: String?) throws(FeedError) -> FeedPage {
        guard case .object(let object) = root else {
            throw FeedError("the page is JSON but not an object")
        }
        guard case .array(let entries) = object["items"] ?? object["news"] else {
            throw FeedError("the page has no \"items\" (or \"news\") array")
        }
        let (items, skipped) = JSONValue.items(of: entries) { item(from: $0, base: base) }
        return FeedPage(
            items: items,
            page: object["page"]?.integer,
            total: try count(object["total"], field: "\"total\""),
            hasMore: (object["has_more"] ?? object["hasMore"])?.boolean,
            skipped: skipped)
    }

    /// A count the page reports: absent when missing or null, an error when it is a number out of
    /// `FeedLimits.totals` (a negative one has always been read as unknown).
    static func count(_ value: JSONValue?, field: String) throws(FeedError) -> Int? {
        switch value {
        case .number(let number)?:
            if number < 0 { return nil }
            guard number.rounded() == number, number <= Double(FeedLimits.totals.upperBound) else {
                throw FeedError("its \(field) \(number) is not a count from 0 to \(FeedLimits.totals.upperBound)")
            }
            return Int(number)
        case .string(let text)?:
            return try FeedLimits.count(text, field: field, in: FeedLimits.totals)
        default:
            return nil
        }
    }

    /// The item an entry of the list makes; nil when it is not an object or carries nothing usable.
    static func item(from entry: JSONValue, base: String?) -> FeedItem? {
        guard case .object(let fields) = entry else { return nil }
        // Names tried in turn with ??, not a variadic list: an array built for every field of every item.
        func text(_ name: String) -> String? { fields[name]?.text }
        let title = text("title") ?? ""
        let picture = DocumentURL.resolve(
            text("picUrl") ?? text("pic_url") ?? text("image") ?? text("imageUrl") ?? text("image_url"), against: base)
        let link = DocumentURL.resolve(text("link") ?? text("url"), against: base)
        let byTitle = ItemKey.byTitle(title, picture: picture)
        guard let key = text("id") ?? text("guid") ?? link ?? byTitle?.key else { return nil }
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture,
            published: (fields["published"] ?? fields["date"]).flatMap(FeedDate.normalise),
            summary: text("summary"), content: text("content")?.trimmed.nilIfEmpty)
        if key == byTitle?.key { item.formerKey = byTitle?.former }
        return item
    }
}

/// Any JSON value, decoded without guessing: a boolean is never a number, a number never a string.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Each entry made an item, in order; those that cannot be (not objects, nothing usable) are
    /// skipped and counted.
    static func items(of entries: [JSONValue], _ item: (JSONValue) -> FeedItem?) -> (items: [FeedItem], skipped: Int) {
        var items: [FeedItem] = []
        items.reserveCapacity(entries.count)
        for entry in entries {
            if let made = item(entry).flatMap(FeedLimits.bounded) { items.append(made) }
        }
        return (items, entries.count - items.count)
    }

    /// The `url` field of the first entry of the list `attachments` whose `type` field names an
    /// image type (JSON Feed's attachments, Tiny Tiny RSS's).
    static func firstImage(in attachments: JSONValue?, url: String, type: String) -> String? {
        guard case .array(let list)? = attachments else { return nil }
        return list.lazy.compactMap { attachment -> String? in
            guard attachment[type]?.text?.lowercased().hasPrefix("image/") == true else { return nil }
            return attachment[url]?.text
        }.first
    }

    /// The files of the list `attachments` that are not pictures, as enclosures (JSON Feed's
    /// attachments, Tiny Tiny RSS's), their URLs resolved against `base`, each part checked.
    static func enclosures(
        in attachments: JSONValue?, base: String, url: String, type: String, length: String, duration: String
    ) -> [FeedEnclosure] {
        guard case .array(let list)? = attachments else { return [] }
        return FeedEnclosure.merged(
            list.prefix(4 * FeedLimits.enclosures).compactMap { attachment in
                let kind = attachment[type]?.text
                guard kind?.lowercased().hasPrefix("image/") != true else { return nil }
                return FeedEnclosure.checked(
                    url: DocumentURL.resolve(attachment[url]?.text, against: base), type: kind,
                    length: attachment[length]?.text, duration: attachment[duration]?.text)
            })
    }

    /// The value at `key` when this is an object.
    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// A non-empty trimmed string; a whole number is accepted as its decimal text (ids often are).
    var text: String? {
        switch self {
        case .string(let string):
            let trimmed = string.trimmed
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
        case .string(let string): Int(string.trimmed)
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

/// An object's members in document order; a name given twice means its last value, as a
/// dictionary built in order would. Looked up by a scan: a feed's objects have a handful of
/// members, and hashing every name going in and every name asked for was a quarter of a paged-JSON
/// page's decoding (BENCHMARKS.md, P4).
struct JSONObject: Sendable {
    struct Member: Sendable {
        var name: String
        var value: JSONValue
    }

    var members: [Member] = []

    subscript(name: String) -> JSONValue? { members.last { $0.name == name }?.value }
}
