import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// The WordPress REST API's posts route (`/wp-json/wp/v2/posts`).
enum WordPress {
    /// The most posts WordPress hands out per request.
    static let perPage = 100

    /// Page `page`, 100 posts at a time (unless the URL asks for fewer), with `_embed` so the
    /// featured picture comes along.
    static func url(of feedURL: String, page: Int) -> String {
        guard var components = URLComponents(string: feedURL) else { return feedURL }
        var query = (components.queryItems ?? []).filter { $0.name != "page" }
        if !query.contains(where: { $0.name == "per_page" }) {
            query.append(URLQueryItem(name: "per_page", value: String(perPage)))
        }
        if !query.contains(where: { $0.name == "_embed" }) { query.append(URLQueryItem(name: "_embed", value: nil)) }
        query.append(URLQueryItem(name: "page", value: String(page)))
        components.queryItems = query
        return components.string ?? feedURL
    }

    static func page(from root: JSONValue, context: DocumentContext) throws(FeedError) -> FeedPage {
        guard case .array(let posts) = root else {
            throw FeedError("the WordPress answer is not an array of posts")
        }
        let (items, skipped) = JSONValue.items(of: posts) { item(from: $0, base: context.url) }
        let total = try FeedLimits.count(context.headers["x-wp-total"], field: "X-WP-Total", in: FeedLimits.totals)
        let pages = try FeedLimits.count(
            context.headers["x-wp-totalpages"], field: "X-WP-TotalPages", in: FeedLimits.pages)
        let hasMore: Bool? =
            if let pages {
                context.page < pages
            } else if LinkHeader.next(context.headers["link"], base: context.url) != nil {
                true
            } else {
                nil
            }
        return FeedPage(items: items, page: context.page, total: total, hasMore: hasMore, skipped: skipped)
    }

    static func item(from post: JSONValue, base: String) -> FeedItem? {
        guard case .object = post else { return nil }
        /// WordPress wraps text in `{"rendered": "…"}`.
        func rendered(_ name: String) -> String? { post[name]?["rendered"]?.text ?? post[name]?.text }
        let title = rendered("title").map { HTMLText.plain($0) } ?? ""
        let link = DocumentURL.resolve(post["link"]?.text, against: base)
        let media =
            if case .array(let list)? = post["_embedded"]?["wp:featuredmedia"] { list.first } else { JSONValue?.none }
        let picture = DocumentURL.resolve(
            media?["source_url"]?.text ?? post["jetpack_featured_media_url"]?.text
                ?? rendered("content").flatMap(HTMLText.firstImageSource),
            against: base)
        // The guid (`https://site/?p=123`) is also what the site's RSS uses, so the key stays the same
        // when a feed moves between the two.
        let byTitle = ItemKey.byTitle(title, picture: picture)
        let key = rendered("guid").map(HTMLText.decodeEntities) ?? post["id"]?.text ?? link ?? byTitle?.key
        guard let key else { return nil }
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture,
            published: (post["date_gmt"] ?? post["date"]).flatMap(FeedDate.normalise),
            summary: rendered("excerpt").map { HTMLText.summary(Array($0.utf8), limit: HTMLText.summaryLength) },
            content: rendered("content")?.trimmed.nilIfEmpty)
        if key == byTitle?.key { item.formerKey = byTitle?.former }
        // `_embed` gives the author and the terms (categories, tags: a list a taxonomy) inline.
        if case .array(let authors)? = post["_embedded"]?["author"] {
            item.author = authors.first?["name"]?.text.map { HTMLText.decodedText($0) }?.nilIfEmpty
        }
        if case .array(let taxonomies)? = post["_embedded"]?["wp:term"] {
            item.categories = taxonomies.flatMap { taxonomy -> [String] in
                guard case .array(let terms) = taxonomy else { return [] }
                return terms.compactMap { $0["name"]?.text.map { HTMLText.decodedText($0) } }
            }
        }
        return item
    }
}
