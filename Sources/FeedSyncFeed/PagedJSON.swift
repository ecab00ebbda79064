import FeedSyncMarkup
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
        item.author = text("author")
        if case .array(let tags)? = fields["tags"] { item.categories = tags.compactMap(\.text) }
        return item
    }
}

extension JSONValue {
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
}
