import FeedSyncFeed
import Foundation

// The store's domain types: values the store reads and writes, and what its callers pass and get back.

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
    public static let totals = FeedLimits.totals
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

/// What a pull of one feed leaves on its row (`Store.recordPull`).
public struct PullRecord: Sendable {
    public var outcome: PullOutcome
    public var error: String?
    public var at: Date
    /// Not asked before then unless forced (the server's `Retry-After`).
    public var retryAfter: Date?
    /// Where a document of this pull was not well-formed (its items read past the damage).
    public var malformed: String?
    public var due: Date?
    public var dueReason: String?
    /// Failures in a row with an answer from the server, this pull's included.
    public var failures: Int
    /// Pulls in a row where no server answered at all, this pull's included (counted apart).
    public var unanswered: Int
    /// The walk into the feed's history: stopped (why, and when it is tried again), or going on
    /// again (`(nil, nil)`); nil leaves it as it was.
    public var history: (stop: String?, retryAt: Date?)?
    /// What the head document said about its schedule; nil keeps what was stored.
    public var schedule: FeedSchedule?
    /// The pull asked for the feed's own URL, so `redirect` says whether it redirects for good.
    public var askedFeedURL: Bool
    public var redirect: String?
    /// The server answered 410 Gone.
    public var gone: Bool
    /// Validators of a head answer that brought the same document again: sent next time.
    public var validators: (etag: String?, lastModified: String?)?
    /// What the pull found of the feed that no page commit wrote.
    public var found: PageCommit.Found?

    public init(
        outcome: PullOutcome, error: String? = nil, at: Date, retryAfter: Date? = nil, malformed: String? = nil,
        due: Date? = nil, dueReason: String? = nil, failures: Int = 0, unanswered: Int = 0,
        schedule: FeedSchedule? = nil,
        askedFeedURL: Bool = false, redirect: String? = nil, gone: Bool = false,
        validators: (etag: String?, lastModified: String?)? = nil, found: PageCommit.Found? = nil
    ) {
        self.outcome = outcome
        self.error = error
        self.at = at
        self.retryAfter = retryAfter
        self.malformed = malformed
        self.due = due
        self.dueReason = dueReason
        self.failures = failures
        self.unanswered = unanswered
        self.schedule = schedule
        self.askedFeedURL = askedFeedURL
        self.redirect = redirect
        self.gone = gone
        self.validators = validators
        self.found = found
    }
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
    public var failures = 0
    /// Pulls in a row where no server answered at all (counted apart from `failures`).
    public var unanswered = 0
    /// Why the walk into the feed's history stopped ("history stops at page 3: … answered 404"),
    /// and when the backfill is tried again; nil while it goes on.
    public var historyStop: String?
    public var historyRetryAt: Date?
    /// What the last head document said about its schedule.
    public var schedule = FeedSchedule()
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
    public var remoteID: Int64?
    public var sourceURL: String?
    /// Each item's page is fetched for its article (`add --full-text`, `full-text F on`).
    public var fullText = false

    /// What the feed is called: the user's title, else its own, else its URL.
    public var name: String { customTitle ?? title ?? url }
}

/// Where an item's picture is: what `list` and `status` show.
public enum PictureStatus: String, Sendable, CaseIterable {
    /// The item has no picture.
    case none
    /// Not downloaded yet (or failed for a reason that may pass; tried again later).
    case pending
    case cached
    /// Missing or unusable at its server; tried again after days.
    case failed
}

/// A stored item, as `list` shows it.
public struct StoredItem: Sendable, Equatable {
    /// The item's number: the same across pulls, what `show`, `open` and `mark` take.
    public var number: Int64
    public var key: String
    public var title: String
    public var link: String?
    public var pictureURL: String?
    public var imageStatus: PictureStatus
    /// Its picture's file, when the store says it is cached (`PictureCache` checks it when read).
    public var image: CachedFile?
    public var published: String?
    /// 1-based rank in the list being shown.
    public var position: Int
    public var read: Bool
    public var starred = false
    /// The name of the item's feed (`Feed.name`).
    public var feedName: String
    /// The files it carries (a podcast's episode), in its feed's order.
    public var enclosures: [FeedEnclosure] = []
}

/// A page of the local list.
public struct ListedPage: Sendable {
    public var items: [StoredItem]
    public var total: Int
    public var lastPullAt: Date?
}

/// What `status` shows for one feed.
public struct FeedStatus: Sendable {
    public var feed: Feed
    public var itemCount: Int
    /// Distinct pictures by status, however many items share one; `.none` counts items.
    public var pictures: [PictureStatus: (count: Int, bytes: Int64)]
}

/// A page's changes, written in one transaction together with the cursor that follows them.
public struct PageCommit: Sendable {
    public var feedID: Int64
    /// Items not stored before, in the server's order, appended to `band`.
    public var newItems: [FeedItem]
    /// Items stored before whose content is refreshed in place; their order is kept.
    public var updatedItems: [FeedItem]
    public var cursor: FeedCursor

    /// Band `0` holds the first pull and all backfill; each head walk opens a lower band.
    public var band: Int
    /// What the pull found of the feed since its last commit, written with the page.
    public var found: Found?

    /// The feed's names and format as its documents give them.
    public struct Found: Sendable, Equatable {
        public var title: String?
        public var siteURL: String?
        /// Not written over a format chosen with `--format`.
        public var format: FeedFormat?
        public init(title: String?, siteURL: String?, format: FeedFormat?) {
            self.title = title
            self.siteURL = siteURL
            self.format = format
        }
    }

    public init(
        feedID: Int64, band: Int, newItems: [FeedItem], updatedItems: [FeedItem], cursor: FeedCursor,
        found: Found? = nil
    ) {
        self.feedID = feedID
        self.band = band
        self.newItems = newItems
        self.updatedItems = updatedItems
        self.cursor = cursor
        self.found = found
    }
}

/// A failure of the local database or file system.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// The database or the disk failed.
        case failure
        /// Another process held a lock on the database for longer than the busy timeout.
        case locked
        /// The database was written by a newer feedsync (a migration this version does not know).
        case newer
    }

    public var kind: Kind
    public var message: String
    public init(_ message: String, kind: Kind = .failure) {
        self.message = message
        self.kind = kind
    }
    public var description: String { message }
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

/// What `list` shows: one feed's items in the server's order, or (`feedURL` nil) every feed's as
/// one timeline, newest first; with any filter, only the items that pass all of them.
public struct ListQuery: Sendable, Equatable {
    public var feedURL: String?
    /// Only feeds in this folder or a folder inside it.
    public var folder: String?
    public var unread = false
    public var starred = false
    /// An FTS5 query (`SearchText.query`).
    public var search: String?
    /// Only items whose timeline time is at or after this.
    public var since: Date?

    public init(
        feedURL: String? = nil, folder: String? = nil, unread: Bool = false, search: String? = nil,
        since: Date? = nil, starred: Bool = false
    ) {
        self.starred = starred
        self.feedURL = feedURL
        self.folder = folder
        self.unread = unread
        self.search = search
        self.since = since
    }

    /// Whether a filter leaves out items: such a list is not one the picture window follows.
    public var isFiltered: Bool { folder != nil || unread || starred || search != nil || since != nil }
}

/// Where an item sits for good: its feed, band and seq. Its row number in a list grows as pages
/// land in bands above it; its place never changes.
public struct ListPlace: Sendable, Equatable, Hashable {
    public var feedID: Int64
    public var band: Int
    public var seq: Int
    public init(feedID: Int64, band: Int, seq: Int) {
        self.feedID = feedID
        self.band = band
        self.seq = seq
    }
}

/// A place and the row it was at when it was read.
public struct PlaceAtRow: Sendable, Equatable {
    public var place: ListPlace
    public var row: Int
    public init(place: ListPlace, row: Int) {
        self.place = place
        self.row = row
    }
}

/// A picture to download, with the first list row (0-based) that shows it and that row's place.
public struct PictureJob: Sendable, Equatable, Hashable {
    public var id: Int64
    public var url: String
    public var row: Int
    public var place: ListPlace
    public init(id: Int64, url: String, row: Int, place: ListPlace) {
        self.id = id
        self.url = url
        self.row = row
        self.place = place
    }
}

/// A cached picture file and the list row that shows it nearest the reader (`nil`: no row in that list).
public struct CachedPicture: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    public var row: Int?
}

/// How many pictures are cached, in how many bytes.
public struct CacheTotals: Sendable, Equatable {
    public var bytes: Int64 = 0
    public var count = 0
    public init(bytes: Int64 = 0, count: Int = 0) {
        self.bytes = bytes
        self.count = count
    }

    /// A picture's bytes on average; 0 when none is cached.
    public var average: Int64 { count > 0 ? bytes / Int64(count) : 0 }

    public mutating func add(_ other: CacheTotals) {
        bytes += other.bytes
        count += other.count
    }
}

/// A picture file written for the store's row `id`, not yet recorded.
public struct DownloadedPicture: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    public var mime: String
    /// XXH3-64 of its bytes.
    public var hash: UInt64
    public init(id: Int64, file: String, bytes: Int64, mime: String, hash: UInt64 = 0) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.mime = mime
        self.hash = hash
    }
}

/// The page the reader was shown last, in the list of `feedURL` (nil: all feeds).
public struct ReadingPosition: Sendable, Equatable {
    public var feedURL: String?
    public var page: Int
    public var perPage: Int
    public init(feedURL: String?, page: Int, perPage: Int) {
        self.feedURL = feedURL
        self.page = page
        self.perPage = perPage
    }

    /// Where a reader who never ran `list` is: page 1 of all feeds, `list`'s default page size.
    public static let start = ReadingPosition(feedURL: nil, page: 1, perPage: 20)

    /// The pages and page sizes a position may have: every row number they make fits an Int32,
    /// so the arithmetic on rows never overflows, whatever a store edited by hand holds.
    public static let pages = 1...4_000_000
    public static let perPages = 1...500

    /// The rows (0-based) of the reading page.
    public var rows: Range<Int> {
        let first = (page - 1) * perPage
        return first..<first + perPage
    }
}

/// A feed with its counts, as `feeds` shows it.
public struct FeedSummary: Sendable {
    public var feed: Feed
    public var items: Int
    public var unread: Int
}

/// One item whole, as `show` shows it.
public struct ItemDetail: Sendable {
    public var item: StoredItem
    public var author: String?
    public var summary: String?
    /// What is shown of the item (HTML): the article extracted from its page when one is stored,
    /// else the content the feed gave, if any.
    public var content: String?
    /// Where `content` comes from: `feed` or `page`.
    public var contentSource: String = "feed"
    /// Why the item's page gave no article, when it did not.
    public var articleError: String?
    /// The pictures the content shows, in its order.
    public var pictures: [ArticlePicture]

    /// The feed's own summary, where an article from the item's page is shown and says something
    /// else (the summary's start is nowhere in the article's text): `show` and the reading page
    /// put it before the article.
    public var summaryBesideArticle: String? {
        guard contentSource == "page", let summary, !summary.isEmpty else { return nil }
        let text = ReadableText.render(content ?? "", base: nil).paragraphs.joined(separator: " ")
        return text.contains(summary.prefix(60)) ? nil : summary
    }
}

/// A picture inside an item's content, and where its copy is.
public struct ArticlePicture: Sendable, Equatable {
    /// Its place among the item's content pictures (0-based).
    public var position: Int
    /// The reference as the content writes it (`ContentPicture.source`).
    public var source: String
    public var url: String
    public var status: PictureStatus
    /// The cached file, when the store says it is cached (`PictureCache` checks it when read).
    public var cached: CachedFile?
}

/// A picture the store records as cached: its file's name in the picture folder, and the byte
/// count and hash the file had when it was recorded, against which every read checks it.
public struct CachedFile: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    /// XXH3-64 of the bytes; nil for a picture cached before hashes were kept (its size is checked).
    public var hash: UInt64?

    public init(id: Int64, file: String, bytes: Int64, hash: UInt64?) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.hash = hash
    }
}

/// Where a pull's schedule reads the time (which feeds are due, due times, backoff across pulls,
/// `Retry-After`): the system's clock, or a test's, so a test can run a day of timer runs in
/// seconds. `FeedSync` takes one and hands it to the pull and the store, which stamps its records with it.
public struct TimeSource: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = TimeSource { Date() }
}

extension Comparable {
    /// The value, or the nearest bound of `range` when it lies outside.
    public func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
