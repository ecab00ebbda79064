import Foundation

/// The same generated feed written in each format. Item `n` is the n-th oldest: key `item-n`,
/// title `Item n`, link `/items/n`, picture `/pictures/k.png`, published `n` minutes after a fixed
/// moment. Page 1 is the newest.
extension DemoServer {
    struct Document {
        var status = 200
        var body: Data
        var contentType: String
        var headers: [(String, String)] = []
    }

    /// One demo item, with what every format writes of it.
    struct DemoItem {
        var number: Int
        var title: String
        var link: String
        var picture: String
        var published: Date
        /// HTML with the item's pictures inside it (`Faults.articlePictures`), else nil.
        var content: String?
    }

    static func document(_ format: DemoFormat, page: Int, state: State, baseURL: String) -> Document {
        let total = state.itemCount
        let perPage = state.perPage
        let lastPage = max(1, (total + perPage - 1) / perPage)
        let shown = state.faults.endless ? min(page, lastPage) : page
        let start = (shown - 1) * perPage
        let numbers = start < total ? (start..<min(total, start + perPage)).map { total - $0 } : []
        let hasMore = state.faults.endless || start + perPage < total
        let items = numbers.map { n in
            DemoItem(
                number: n,
                title: state.faults.hostileTitles && format == .pagedJSON
                    ? "\\u001b[31mItem \(n)\\u001b]0;pwned\\u0007\\u202eevil\\r\\nnext" : "Item \(n)",
                link: "\(baseURL)/items/\(n)",
                picture: state.faults.pictureURLs[n]
                    ?? "\(baseURL)/pictures/\((n - 1) % state.distinctPictures + 1).png",
                published: Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 60),
                content: state.faults.articlePictures == 0
                    ? nil
                    : "<p>Item \(n).</p>"
                        + (0..<state.faults.articlePictures).map { k in
                            "<p><img src=\"\(baseURL)/pictures/\(Faults.articlePicture(n, k)).png\" "
                                + "alt=\"Picture \(k + 1) of item \(n)\"></p>"
                        }.joined())
        }
        let next = hasMore ? "\(format.path)?page=\(page + 1)" : nil
        switch format {
        case .pagedJSON:
            return Document(
                body: pagedJSON(items, page: page, total: total, hasMore: hasMore), contentType: "application/json")
        case .jsonFeed:
            return Document(body: jsonFeed(items, next: next), contentType: "application/feed+json")
        case .rss:
            return Document(
                body: rss(items, next: next.map { baseURL + $0 }, baseURL: baseURL, schedule: state.faults),
                contentType: "application/rss+xml; charset=utf-8")
        case .atom:
            return Document(body: atom(items, next: next), contentType: "application/atom+xml")
        case .wordpress:
            guard page <= lastPage || state.faults.endless else {
                return Document(
                    status: 400,
                    body: Data(
                        #"""
                        {"code":"rest_post_invalid_page_number",\#
                        "message":"The page number requested is larger than the number of pages available.",\#
                        "data":{"status":400}}
                        """#.utf8),
                    contentType: "application/json")
            }
            let claimed = total + state.faults.staleWordPressTotals
            let claimedPages = max(1, (claimed + perPage - 1) / perPage)
            var headers = [("X-WP-Total", String(claimed)), ("X-WP-TotalPages", String(claimedPages))]
            if page < claimedPages {
                headers.append(("Link", "<\(baseURL)\(format.path)?page=\(page + 1)>; rel=\"next\""))
            }
            return Document(body: wordpress(items), contentType: "application/json; charset=UTF-8", headers: headers)
        }
    }

    static func pagedJSON(_ items: [DemoItem], page: Int, total: Int, hasMore: Bool) -> Data {
        let entries = items.map { item in
            """
            {"id": "item-\(item.number)", "title": "\(item.title)", "link": "\(item.link)", \
            "picUrl": \(jsonString(item.picture)), "published": "\(iso(item.published))", \
            \(item.content.map { "\"content\": \(jsonString($0)), " } ?? "")"summary": "Summary of item \(item.number)."}
            """
        }
        return Data(
            """
            {"page": \(page), "total": \(total), "has_more": \(hasMore), "items": [\(entries.joined(separator: ", "))]}
            """.utf8)
    }

    static func jsonFeed(_ items: [DemoItem], next: String?) -> Data {
        let entries = items.map { item in
            """
            {"id": "item-\(item.number)", "url": "\(item.link)", "title": "\(item.title)", \
            "image": \(jsonString(item.picture)), "date_published": "\(iso(item.published))", \
            \(item.content.map { "\"content_html\": \(jsonString($0)), " } ?? "")"content_text": "Summary of item \(item.number)."}
            """
        }
        return Data(
            """
            {"version": "https://jsonfeed.org/version/1.1", "title": "feedsync demo", \
            \(next.map { "\"next_url\": \(jsonString($0)), " } ?? "")"items": [\(entries.joined(separator: ", "))]}
            """.utf8)
    }

    /// Pictures take turns among the carriers RSS has: a relative enclosure, media:content, and
    /// an <img> in the description.
    /// `<skipHours><hour>1</hour>…</skipHours>`, or nothing for no values.
    private static func list(_ name: String, _ element: String, _ values: [String]) -> String {
        values.isEmpty ? "" : "<\(name)>" + values.map { "<\(element)>\($0)</\(element)>" }.joined() + "</\(name)>"
    }

    static func rss(_ items: [DemoItem], next: String?, baseURL: String, schedule: Faults = Faults()) -> Data {
        let entries = items.map { item in
            let picture = xml(item.picture)
            let relative =
                item.picture.hasPrefix(baseURL + "/") ? String(item.picture.dropFirst(baseURL.count)) : item.picture
            let carrier =
                switch item.number % 3 {
                case 0: "<enclosure url=\"\(xml(relative))\" length=\"300\" type=\"image/png\"/>"
                case 1: "<media:content url=\"\(picture)\" medium=\"image\"/>"
                default:
                    "<description>\(xml("<p><img src=\"\(item.picture)\"> Summary of item \(item.number).</p>"))"
                        + "</description>"
                }
            return """
                <item><title>\(xml(item.title))</title><link>\(xml(item.link))</link>\
                <guid isPermaLink="false">item-\(item.number)</guid>\
                <pubDate>\(rfc822(item.published))</pubDate>\(carrier)\
                \(item.content.map { "<content:encoded>\(xml($0))</content:encoded>" } ?? "")</item>
                """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" \
            xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel><title>feedsync demo</title><link>http://127.0.0.1/</link>\
            \(schedule.ttl.map { "<ttl>\($0)</ttl>" } ?? "")\
            \(list("skipHours", "hour", schedule.skipHours.map(String.init)))\(list("skipDays", "day", schedule.skipDays))\
            \(next.map { "<atom:link rel=\"next\" href=\"\(xml($0))\"/>" } ?? "")
            \(entries.joined(separator: "\n"))
            </channel></rss>
            """.utf8)
    }

    static func atom(_ items: [DemoItem], next: String?) -> Data {
        let entries = items.map { item in
            """
            <entry><id>item-\(item.number)</id><title type="html">\(xml(item.title))</title>\
            <link rel="alternate" href="\(xml(item.link))"/>\
            <link rel="enclosure" type="image/png" href="\(xml(item.picture))"/>\
            <updated>\(iso(item.published))</updated></entry>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>feedsync demo</title><id>urn:feedsync:demo</id>\
            \(next.map { "<link rel=\"prev-archive\" href=\"\(xml($0))\"/>" } ?? "")
            \(entries.joined(separator: "\n"))
            </feed>
            """.utf8)
    }

    static func wordpress(_ items: [DemoItem]) -> Data {
        let posts = items.map { item in
            """
            {"id": \(item.number), "guid": {"rendered": "item-\(item.number)"}, "link": "\(item.link)", \
            "date_gmt": "\(String(iso(item.published).dropLast()))", "title": {"rendered": "\(item.title)"}, \
            "_embedded": {"wp:featuredmedia": [{"source_url": \(jsonString(item.picture))}]}}
            """
        }
        return Data("[\(posts.joined(separator: ", "))]".utf8)
    }

    /// `text` with `&`, `<`, `>` and `"` escaped; in one pass over its bytes, not through
    /// Foundation's `replacingOccurrences`, whose bridge to NSString crashed a test run once
    /// (an index out of range in `NSString.mutableCopy`).
    static func xml(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case UInt8(ascii: "\""): out += Array("&quot;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // Format styles, made once: a DateFormatter or ISO8601DateFormatter made for each date cost
    // 0.1 ms, 8 ms of every 100-item document, which a client pulling it waited for.
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// `Tue, 01 Dec 2026 10:00:00 GMT`: RSS's dates, and HTTP's.
    public static func rfc822(_ date: Date) -> String {
        date.formatted(rfc822Style)
    }

    private static let rfc822Style = Date.VerbatimFormatStyle(
        format: """
            \(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \
            \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\
            \(second: .twoDigits) GMT
            """,
        locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian))
}

/// A small seeded generator, so "random" delays and bytes are the same at every run.
public struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
