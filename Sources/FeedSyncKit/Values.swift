import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncPull
import FeedSyncTransport
import Foundation

// The rules and limits of the layers below Kit that a front end needs besides Kit's calls: the
// schedule's bounds, what a URL must be, what a search means, how dates are stored.

extension Feed {
    /// From when a plain pull asks the feed: its due time, or the end of a server's `Retry-After`
    /// when that is later; nil when never (it is gone). A time not after now means the next pull.
    public var nextAsk: Date? { Schedule.nextAsk(self) }
}

extension FeedSync {
    /// The shortest wait between two asks of one feed, by default (`pull --min-interval`).
    public static let defaultMinInterval = Schedule.defaultMinInterval
    /// The longest wait a schedule gives a feed (a day).
    public static let maxInterval = Schedule.maxInterval
    /// Pulls in a row with no answer after which a feed is asked less often.
    public static let unansweredWithoutWait = Schedule.unansweredWithoutWait
    /// The longest title a feed may have, in characters.
    public static let titleCharacters = FeedLimits.titleCharacters

    /// Why no request can be made for `url` (not http or https, too long, no host), else nil.
    public static func problem(with url: String) -> String? { HTTPRequest.problem(with: url) }
}

extension ListQuery {
    /// `text` as the store's search (each word a whole word or the start of one), nil when it
    /// holds no letter or digit.
    public static func words(_ text: String) -> String? { SearchText.query(text) }
}

/// Dates as the store keeps them: ISO 8601 UTC, to the second.
public enum StoredDate {
    /// Seconds since 1970 of a stored date (or any a feed may write), nil when it is none.
    public static func seconds(_ text: String) -> Int64? { FeedDate.parse(text) }

    /// `date` as ISO 8601 UTC, to the second (`2026-11-24T10:00:00Z`).
    public static func iso(_ date: Date) -> String { FeedDate.format(Int64(date.timeIntervalSince1970.rounded(.down))) }
}

extension ItemDetail {
    /// The item's text as a terminal shows it: its content rendered (`ReadableText`), else its
    /// summary as one paragraph.
    public var rendered: RenderedText {
        content.map { ReadableText.render($0, base: item.link) }
            ?? RenderedText(paragraphs: summary.map { [$0] } ?? [], links: [])
    }
}

extension FeedSync {
    /// The feeds an OPML file lists, in its order, and the lines of the outlines that look like
    /// feeds but give no URL (`OPML.read`).
    public static func readSubscriptions(_ data: Data) throws(FeedError) -> (entries: [Subscription], missing: [Int]) {
        try OPML.read(data)
    }

    /// `feeds` as an OPML 2.0 document titled `title`, folders as nested outlines (`OPML.write`).
    public static func opml(_ feeds: [Subscription], title: String) -> String { OPML.write(feeds, title: title) }

    /// The article in a web page's bytes (`ArticleExtractor.extract`, its content made safe too with
    /// `safe`), nil when none is found.
    public static func extractArticle(_ page: [UInt8], url: String, safe: Bool) throws(FeedError) -> ExtractedArticle? {
        try ArticleExtractor.extract(page, url: url, safe: safe)
    }

    /// The pictures `html` shows, at their absolute URLs against `base` (`ArticlePictures.find`).
    public static func pictures(in html: String, base: String) -> [String] {
        ArticlePictures.find(in: Array(html.utf8), base: base).map(\.url)
    }
}
