internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

// An entry as an item: its fields read as a reader expects (the first of each, the dates in
// their order, a link or guid escaped twice made whole), its key, its picture and enclosures.

extension XMLFeed {
    /// RSS 2.0's `author` is an address, often with the name after it: `jane@example.com (Jane Doe)`
    /// gives the name.
    static func authorName(_ text: String) -> String {
        guard text.hasSuffix(")"), let open = text.firstIndex(of: "("),
            text[..<open].trimmingCharacters(in: .whitespaces).contains("@")
        else { return text }
        let name = text[text.index(after: open)..<text.index(before: text.endIndex)].trimmingCharacters(
            in: .whitespaces)
        return name.isEmpty ? text : name
    }

    func item(from original: Entry) -> FeedItem? {
        let entry = Self.decodingBase64(original)
        let limit = HTMLText.summaryLength
        func string(_ field: Field) -> String? { entry[field].map { String(decoding: $0.text, as: UTF8.self) } }
        func plain(_ field: Field, limit: Int? = nil) -> String? { entry[field]?.plain(limit: limit).nilIfEmpty }
        // The content: the first field that has any, as HTML; and its plain text, made once for
        // the search index and for the summary when that comes from the same field.
        var content: (field: Field, html: String)?
        for field in [Field.encoded, .content, .description, .summary] {
            guard let captured = entry[field] else { continue }
            let text = String(decoding: captured.text, as: UTF8.self)
            if let html = (captured.isText ? HTMLText.html(fromText: text) : text.trimmed).nilIfEmpty {
                content = (field, html)
                break
            }
        }
        let plainContent = content.map { SearchText.plainContent(Array($0.html.utf8)) }
        func summary(_ field: Field) -> String? {
            guard let captured = entry[field] else { return nil }
            if field == content?.field, !captured.isText, let plainContent {
                return HTMLText.cut(plainContent, to: limit).nilIfEmpty
            }
            return captured.isText
                ? HTMLText.cut(HTMLText.collapsingWhitespace(String(decoding: captured.text, as: UTF8.self)), to: limit)
                    .nilIfEmpty
                : HTMLText.summary(captured.text, limit: limit).nilIfEmpty
        }

        // A link or guid escaped twice (`&amp;amp;`, often inside CDATA) means its `&`.
        let rawGuid = string(.guid)?.trimmed.nilIfEmpty
        let guid = rawGuid.map(Self.ampersandsUnescaped)
        let rawLink = DocumentURL.resolve(string(.link), against: entry[.link]?.base)
        var link =
            entry.alternate
            ?? DocumentURL.resolve(string(.link).map(Self.ampersandsUnescaped), against: entry[.link]?.base)
        if link == nil, let guid, entry.guidIsPermaLink, guid.hasPrefix("http://") || guid.hasPrefix("https://"),
            URLComponents(string: guid)?.host?.isEmpty == false
        {
            link = guid  // a permalink that is a URL (`http://example.c[o.test/` is none)
        }
        var body: (field: Field, summary: String)?
        for field in [Field.summary, .description, .content, .encoded] {
            if let text = summary(field) {
                body = (field, text)
                break
            }
        }
        let title =
            plain(.title) ?? plain(.dcTitle) ?? plain(.mediaTitle)
            ?? body.flatMap { plain($0.field, limit: limit) }.map { HTMLText.cut($0, to: 80) } ?? ""

        var picture =
            entry.enclosure ?? entry.mediaContent ?? entry.mediaThumbnail ?? entry.itunesImage ?? entry.image
            ?? entry[.image].flatMap { image in
                // Its URL, the first word (an `<image>` like a channel's holds a title after it).
                DocumentURL.resolve(
                    String(decoding: image.text, as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(
                        String.init),
                    against: image.base)
            }
        if picture == nil {
            for field in [Field.encoded, .content, .description, .summary] {
                if let captured = entry[field], captured.type != "text",
                    let source = HTMLText.firstImageSource(captured.text)
                {
                    picture = DocumentURL.resolve(source, against: captured.base)
                    break
                }
            }
        }
        var date: String?
        // Atom 0.3's dates in their order (issued, created, modified) before a Dublin Core date
        // the entry also carries; Atom 1.0's `updated` last.
        for field in [Field.published, .pubDate, .issued, .created, .dcDate, .updated, .modified] {
            if let text = entry[field]?.text, let found = FeedDate.normalise(text) {
                date = found
                break
            }
        }
        let id = string(.id)?.trimmed.nilIfEmpty
        // With no id, link, title or picture, an item is still one (a podcast's episode, a post of
        // a microblog, a point of GeoRSS) while anything of it is there: keyed by all of it.
        let byTitle = ItemKey.byTitle(title, picture: picture)
        guard
            let key = id ?? guid ?? entry.about ?? link ?? byTitle?.key
                ?? ItemKey.digest(
                    [entry.mediaFile, entry.media]
                        + Field.allCases.filter(\.keysItem).map { field in
                            entry[field].map { String(decoding: $0.text, as: UTF8.self) }
                        })
        else { return nil }
        var item = FeedItem(
            key: key, title: title, link: link, pictureURL: picture, published: date, summary: body?.summary,
            content: content?.html)
        // What earlier versions keyed the item by, so the store finds it under its new key.
        if id == nil, key == guid, rawGuid != guid {
            item.formerKey = rawGuid
        } else if id == nil, guid == nil, entry.about == nil, key == link, entry.alternate == nil, rawLink != link {
            item.formerKey = rawLink
        } else if key == byTitle?.key {
            item.formerKey = byTitle?.former
        }
        item.author = (plain(.author).map(Self.authorName) ?? plain(.dcCreator)) ?? feedAuthor
        item.categories = entry.categories
        item.searchBody = SearchText.body(plainContent: plainContent, summary: body?.summary)
        item.enclosures = FeedEnclosure.merged(
            entry.enclosures, duration: string(.itunesDuration).flatMap(FeedEnclosure.seconds))
        if let content {
            item.contentPictures = ArticlePictures.find(in: Array(content.html.utf8), base: entry[content.field]?.base)
        }
        return item
    }

    /// `text` with every `&amp;` (however often escaped) made `&` again: a publisher's URL never
    /// means the five characters.
    static func ampersandsUnescaped(_ text: String) -> String {
        // One pass over the bytes (each item's link and guid pass here; Foundation's search bridged
        // both to NSString, 1-2 % of a pull): an "&" followed by "amp;" however often is one "&".
        guard text.containsUTF8(UInt8(ascii: "&")) else { return text }
        let bytes = Array(text.utf8)
        let amp = Array("amp;".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            out.append(bytes[index])
            index += 1
            if out.last == UInt8(ascii: "&") {
                while bytes[index...].starts(with: amp) { index += amp.count }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The entry with base64 fields decoded: Atom 0.3's `mode="base64"` (whose `type` is
    /// `text/plain` unless it says otherwise), and Atom 1.0 text whose `type` is a media type that
    /// is neither text nor XML (RFC 4287, 4.1.3.3). Decoded HTML stays HTML; anything else is read
    /// as text. Text that only looks like base64, decoding to no UTF-8 (`test` under a made-up
    /// type), stays as it was written.
    static func decodingBase64(_ entry: Entry) -> Entry {
        var decoded = entry
        for field in Field.allCases {
            guard let captured = entry[field],
                let type = captured.type ?? (captured.mode == "base64" ? "text/plain" : nil)
            else { continue }
            let isMediaType = type.contains("/")
            let binary = isMediaType && !type.hasPrefix("text/") && !type.contains("xml")
            guard captured.mode == "base64" || binary,
                let bytes = Data(base64Encoded: Data(captured.text), options: .ignoreUnknownCharacters),
                captured.mode == "base64" || String(validating: bytes, as: UTF8.self) != nil
            else { continue }
            decoded[field] = Captured(
                text: [UInt8](bytes), type: type.hasPrefix("text/html") ? "html" : "text", mode: nil,
                base: captured.base)
        }
        return decoded
    }

    /// Whether an enclosure is sound or video: by its type, else by its file's extension.
    static func isAudioOrVideo(type: String?, url: String) -> Bool {
        FeedEnclosure.isSoundOrVideo(type: type, url: url)
    }

    static func looksLikeImage(_ url: String?) -> Bool {
        guard let path = url?.lowercased().split(separator: "?").first else { return false }
        return [".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"].contains { path.hasSuffix($0) }
    }
}
