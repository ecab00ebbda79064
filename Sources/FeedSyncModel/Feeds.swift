import Foundation

/// Where a pull stands with one feed: what to ask for next, and how to ask.
public struct FeedCursor: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?
    /// The hash of the head document those validators came with (`HTTPResponse.bodyHash`).
    public var bodyHash: String?
    public var remoteTotal: Int?
    public var perPage: Int?
    /// Next older page to ask for, numbered as when the feed had `backfillTotal` items.
    /// `nil` until the first page was committed.
    public var backfillPage: Int?
    /// The link to the next older document, for formats that link their pages.
    public var backfillURL: String?
    public var backfillTotal: Int?
    public var backfillDone: Bool
    /// Why the backfill ended before the feed did (a next link feedsync will not follow), if it did.
    public var backfillNote: String?
    /// An interrupted head walk: new items above the old top were only partly fetched.
    public var gap: Walk?

    // What the paging arithmetic accepts, from a server or from the store: within these, no
    // product or sum of them overflows. A server's figure beyond them is refused as bad data.
    public static let totals = 0...1_000_000_000
    public static let pages = 1...1_000_000_000
    public static let perPages = 1...100_000_000
    public static let bands = -1_000_000_000...0

    /// A walk through consecutive pages that was stopped and will be continued.
    public struct Walk: Sendable, Equatable {
        public var band: Int
        public var page: Int
        public var total: Int?
        /// The link to `page`, for formats that link their pages.
        public var url: String?
        public init(band: Int, page: Int, total: Int?, url: String? = nil) {
            self.band = band
            self.page = page
            self.total = total
            self.url = url
        }
    }

    public init(
        etag: String? = nil, lastModified: String? = nil, bodyHash: String? = nil, remoteTotal: Int? = nil,
        perPage: Int? = nil,
        backfillPage: Int? = nil, backfillURL: String? = nil, backfillTotal: Int? = nil, backfillDone: Bool = false,
        backfillNote: String? = nil, gap: Walk? = nil
    ) {
        self.bodyHash = bodyHash
        self.etag = etag
        self.lastModified = lastModified
        self.remoteTotal = remoteTotal
        self.perPage = perPage
        self.backfillPage = backfillPage
        self.backfillURL = backfillURL
        self.backfillTotal = backfillTotal
        self.backfillDone = backfillDone
        self.backfillNote = backfillNote
        self.gap = gap
    }
}

extension FeedCursor {
    /// Where the next pull continues: what `status` shows and an interrupted pull says.
    public enum Next: Sendable, Equatable {
        /// A head walk was cut off: it goes on from this page of the new items.
        case newItems(page: Int)
        /// No page was stored yet.
        case firstPage
        /// The backfill goes on from page `page` (of `pages`, when the server said), or from
        /// the document at `url` for a feed that links its pages.
        case backfill(page: Int, url: String?, pages: Int?)
        /// The backfill is over (`note`: why it ended early); only new items are looked for.
        case newItemsOnly(note: String?)
    }

    public var next: Next {
        if let gap { return .newItems(page: gap.page) }
        return backfillNext
    }

    /// Where the backfill stands, the head aside.
    public var backfillNext: Next {
        if backfillDone { return .newItemsOnly(note: backfillNote) }
        guard let page = backfillPage else { return .firstPage }
        var pages: Int?
        if let total = remoteTotal, let perPage, perPage > 0 { pages = (total + perPage - 1) / perPage }
        return .backfill(page: page, url: backfillURL, pages: backfillURL == nil ? pages : nil)
    }
}

/// How a pull of one feed ended.
public enum PullOutcome: String, Sendable {
    case ok, transient, data, local
}

/// A subscribed feed.
public struct Feed: Sendable, Equatable {
    public var id: Int64
    public var url: String
    /// The feed's format, `nil` until a document was read.
    public var format: FeedFormat?
    /// The format was chosen with `--format`, so documents do not change it.
    public var formatChosen: Bool
    public var cursor: FeedCursor
    public var lastPullAt: Date?
    public var lastOutcome: PullOutcome?
    public var lastError: String?
    /// The server asked not to be asked before then (`Retry-After`); only `pull --force` does.
    public var nextRetryAt: Date?
    /// When a plain `pull` asks next (nil: at once), and why then.
    public var dueAt: Date?
    public var dueReason: String?
    /// Pulls in a row that failed with an answer from the server.
    public var failures: Int = 0
    /// Pulls in a row where no server answered at all (counted apart from `failures`).
    public var unanswered: Int = 0
    /// Why the walk into the feed's history stopped ("history stops at page 3: … answered 404"),
    /// and when the backfill is tried again; nil while it goes on.
    public var historyStop: String?
    public var historyRetryAt: Date?
    /// What the last head document said about its schedule.
    public var schedule: FeedSchedule = FeedSchedule()
    /// A permanent redirect of the feed URL seen at the last pull, not followed for good yet.
    public var redirectURL: String?
    /// The URL the feed had before a permanent redirect moved it, and when.
    public var movedFrom: String?
    public var movedAt: Date?
    /// The server said 410 Gone then: the feed is not asked again.
    public var goneAt: Date?
    /// Where the last pull found a document not well-formed (and read past the damage), if it did.
    public var malformed: String?
    /// The feed's own title and site, from its documents.
    public var title: String?
    public var siteURL: String?
    /// The title the user gave it, which wins over the feed's own.
    public var customTitle: String?
    /// Its folder (from OPML), levels joined by "/".
    public var folder: String?
    /// The account whose server fetches this feed (a pull does not), and the feed's own address there.
    public var accountID: Int64?
    public var remoteID: String?
    public var sourceURL: String?
    /// Each item's page is fetched for its article (`add --full-text`, `full-text F on`).
    public var fullText: Bool = false

    /// What the feed is called: the user's title, else its own, else its URL's host (and port),
    /// as `Store.feedName` has it in SQL.
    public var name: String { customTitle ?? title ?? Self.host(url) }

    /// The host (and port) of an http(s) URL: what follows `//` up to the next `/`, without a
    /// user name and password before an `@` (never shown).
    public static func host(_ url: String) -> String {
        guard let start = url.range(of: "//")?.upperBound else { return url }
        let authority = url[start...].prefix { $0 != "/" }
        return String(authority.firstIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority)
    }

    public init(
        id: Int64, url: String, format: FeedFormat? = nil, formatChosen: Bool = false,
        cursor: FeedCursor = FeedCursor(), lastPullAt: Date? = nil, lastOutcome: PullOutcome? = nil,
        lastError: String? = nil, nextRetryAt: Date? = nil, dueAt: Date? = nil, dueReason: String? = nil,
        failures: Int = 0, unanswered: Int = 0, historyStop: String? = nil, historyRetryAt: Date? = nil,
        schedule: FeedSchedule = FeedSchedule(), redirectURL: String? = nil, movedFrom: String? = nil,
        movedAt: Date? = nil, goneAt: Date? = nil, malformed: String? = nil, title: String? = nil,
        siteURL: String? = nil, customTitle: String? = nil, folder: String? = nil, accountID: Int64? = nil,
        remoteID: String? = nil, sourceURL: String? = nil, fullText: Bool = false
    ) {
        self.id = id
        self.url = url
        self.format = format
        self.formatChosen = formatChosen
        self.cursor = cursor
        self.lastPullAt = lastPullAt
        self.lastOutcome = lastOutcome
        self.lastError = lastError
        self.nextRetryAt = nextRetryAt
        self.dueAt = dueAt
        self.dueReason = dueReason
        self.failures = failures
        self.unanswered = unanswered
        self.historyStop = historyStop
        self.historyRetryAt = historyRetryAt
        self.schedule = schedule
        self.redirectURL = redirectURL
        self.movedFrom = movedFrom
        self.movedAt = movedAt
        self.goneAt = goneAt
        self.malformed = malformed
        self.title = title
        self.siteURL = siteURL
        self.customTitle = customTitle
        self.folder = folder
        self.accountID = accountID
        self.remoteID = remoteID
        self.sourceURL = sourceURL
        self.fullText = fullText
    }
}

/// What `status` shows for one feed.
public struct FeedStatus: Sendable {
    public var feed: Feed
    public var itemCount: Int
    /// Distinct pictures by status, however many items share one; `.none` counts items.
    public var pictures: [PictureStatus: (count: Int, bytes: Int64)]

    public init(
        feed: Feed, itemCount: Int, pictures: [PictureStatus: (count: Int, bytes: Int64)]
    ) {
        self.feed = feed
        self.itemCount = itemCount
        self.pictures = pictures
    }
}

/// How a feed's format is known.
public enum FormatSetting: Sendable, Equatable {
    /// As before (found in its documents, unless one was chosen).
    case keep
    /// Found in its documents again, forgetting a chosen one.
    case found
    /// This one, whatever the documents say.
    case chosen(FeedFormat)
}

/// A feed with its counts, as `feeds` shows it.
public struct FeedSummary: Sendable {
    public var feed: Feed
    public var items: Int
    public var unread: Int

    public init(
        feed: Feed, items: Int, unread: Int
    ) {
        self.feed = feed
        self.items = items
        self.unread = unread
    }
}

/// The formats feedsync reads. The raw values are what `--format` takes and `status` shows.
public enum FeedFormat: String, CaseIterable, Sendable {
    /// The seed format: `{"page", "total", "has_more", "items"}`, paged by `?page=N`.
    case pagedJSON = "paged-json"
    /// JSON Feed 1.0 and 1.1, paged by `next_url`.
    case jsonFeed = "jsonfeed"
    /// RSS 2.0 (and RSS 1.0), paged by `<atom:link rel="next">`.
    case rss
    /// Atom, paged by RFC 5005 `rel="next"` or `rel="prev-archive"`.
    case atom
    /// The WordPress REST API (`/wp-json/wp/v2/posts`), paged by `?page=N&per_page=100`.
    case wordpress

    /// Whether older pages are found by following the link each document carries, rather than
    /// by asking for a page number.
    public var followsLinks: Bool {
        switch self {
        case .jsonFeed, .rss, .atom: true
        case .pagedJSON, .wordpress: false
        }
    }

    /// What the URL alone says, before anything was fetched: WordPress's REST route is
    /// recognisable, and must be asked for with its own query parameters from the first page on.
    public static func guess(fromURL url: String) -> FeedFormat? {
        url.contains("/wp-json/") ? .wordpress : nil
    }

    /// The `Accept` header for a request of this format, or of any when `nil`.
    public static func accept(_ format: FeedFormat?) -> String {
        switch format {
        case .pagedJSON?, .wordpress?: "application/json"
        case .jsonFeed?: "application/feed+json, application/json;q=0.9"
        case .rss?, .atom?: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.8"
        case nil:
            "application/feed+json, application/json;q=0.9, application/rss+xml, application/atom+xml, "
                + "application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5"
        }
    }
}

/// What a document says about when to ask for it again: RSS `<ttl>`, `<skipHours>`, `<skipDays>`
/// and the syndication module's `sy:updatePeriod` / `sy:updateFrequency`, each range-checked.
public struct FeedSchedule: Sendable, Equatable {
    /// `<ttl>`: minutes the feed may be cached.
    public var ttlMinutes: Int?
    /// `sy:updatePeriod` divided by `sy:updateFrequency`, in seconds.
    public var updateSeconds: Int?
    /// Hours (UTC) not to ask in: bit h for hour h.
    public var skipHours: Int = 0
    /// Days (UTC) not to ask on: bit d for day d, Sunday 0.
    public var skipDays: Int = 0

    public init(ttlMinutes: Int? = nil, updateSeconds: Int? = nil, skipHours: Int = 0, skipDays: Int = 0) {
        self.ttlMinutes = ttlMinutes
        self.updateSeconds = updateSeconds
        self.skipHours = skipHours
        self.skipDays = skipDays
    }

}
