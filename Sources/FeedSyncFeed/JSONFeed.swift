import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1).
enum JSONFeed {
    static func page(from root: JSONValue, base: String) throws(FeedError) -> FeedPage {
        guard case .object(let object) = root else { throw FeedError("the JSON Feed is not an object") }
        guard case .array(let entries) = object["items"] else {
            throw FeedError("the JSON Feed has no \"items\" array")
        }
        let feedAuthor = author(object)
        let (items, skipped) = JSONValue.items(of: entries) { entry in
            var item = item(from: entry, base: base)
            if item?.author == nil { item?.author = feedAuthor }
            return item
        }
        let next = DocumentURL.resolve(object["next_url"]?.text, against: base)
        var page = FeedPage(items: items, hasMore: next != nil, skipped: skipped, next: next)
        page.title =
            object["title"]?.text.map { FeedLimits.boundedTitle(HTMLText.decodedText($0)) }?.nilIfEmpty
        page.siteURL = FeedLimits.webURL(DocumentURL.resolve(object["home_page_url"]?.text, against: base))
        return page
    }

    /// The item an entry of the list makes; nil when it is not an object or carries nothing usable.
    static func item(from entry: JSONValue, base: String) -> FeedItem? {
        guard case .object(let fields) = entry else { return nil }
        let link = DocumentURL.resolve(fields["url"]?.text ?? fields["external_url"]?.text, against: base)
        let html = fields["content_html"]?.text
        // The HTML as plain text once: for the search index, and the title and summary without text.
        let plainHTML = html.map { SearchText.plainContent(Array($0.utf8)) }
        let text = fields["content_text"]?.text.map(HTMLText.collapsingWhitespace) ?? plainHTML
        // A title is optional in JSON Feed (microblog posts have none): the start of the text stands in.
        let title =
            fields["title"]?.text.map(HTMLText.decodedText) ?? text.map { HTMLText.cut($0, to: 80) } ?? ""
        let picture = DocumentURL.resolve(
            fields["image"]?.text ?? fields["banner_image"]?.text ?? JSONValue.firstImage(
                in: fields["attachments"], url: "url", type: "mime_type")
                ?? html.flatMap(HTMLText.firstImageSource),
            against: base)
        // With no id, link, title or picture, an item is still one while anything of it is there
        // (a podcast's episode, a dated post): keyed by all of it.
        let byTitle = ItemKey.byTitle(title, picture: picture)
        guard
            let key = fields["id"]?.text ?? link ?? byTitle?.key
                ?? ItemKey.digest(
                    [html, fields["content_text"]?.text, fields["date_published"]?.text, fields["date_modified"]?.text]
                        + attachmentURLs(fields["attachments"]))
        else { return nil }
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture,
            published: (fields["date_published"] ?? fields["date_modified"]).flatMap(FeedDate.normalise),
            summary: fields["summary"]?.text ?? text.map { HTMLText.cut($0, to: HTMLText.summaryLength) },
            content: html ?? fields["content_text"]?.text.map(HTMLText.html(fromText:)))
        if let html, !html.isEmpty {
            item.searchBody = SearchText.body(plainContent: plainHTML, summary: item.summary)
            item.contentPictures = ArticlePictures.find(in: Array(html.utf8), base: base)
        }
        if key == byTitle?.key { item.formerKey = byTitle?.former }
        item.author = author(fields)
        if case .array(let tags)? = fields["tags"] { item.categories = tags.compactMap(\.text) }
        item.enclosures = JSONValue.enclosures(
            in: fields["attachments"], base: base, url: "url", type: "mime_type", length: "size_in_bytes",
            duration: "duration_in_seconds")
        return item
    }

    /// The names of 1.1's `authors`, or 1.0's `author`'s, joined.
    private static func author(_ fields: JSONObject) -> String? {
        let authors: [JSONValue] =
            if case .array(let list)? = fields["authors"] { list } else { fields["author"].map { [$0] } ?? [] }
        return authors.compactMap { $0["name"]?.text?.trimmed.nilIfEmpty }.joined(separator: ", ").nilIfEmpty
    }

    /// Every attachment's URL, in order.
    private static func attachmentURLs(_ attachments: JSONValue?) -> [String?] {
        guard case .array(let list)? = attachments else { return [] }
        return list.map { $0["url"]?.text }
    }
}
