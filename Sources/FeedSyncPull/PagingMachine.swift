import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore

/// Decides which page a pull asks for next, where each item of a page goes, and when to stop.
/// It does no I/O: the engine feeds it responses and carries out what it returns, so every path
/// (head walk, overlap, backfill cursor, shifted pages, endless feeds) is unit-tested with
/// synthetic pages.
///
/// Pages are found by number (`?page=N`, with the shift rule for resuming) or, for formats that
/// link their documents (`next_url`, `rel="next"`), by the link the previous page carried; a
/// link is saved like a page number, and a saved link the server now refuses restarts the walk.
///
/// A pull has up to three walks through consecutive pages, in this order:
/// 1. **gap**: the rest of a head walk an earlier pull could not finish, from its saved page;
/// 2. **head**: from page 1 until a page overlaps items stored before, into a new band on top;
/// 3. **backfill**: older pages from the saved cursor into band 0, until the feed ends.
/// The head walk runs only when no gap is left, so at most one gap ever needs remembering.
public struct PagingMachine: Sendable {
    public typealias Finish = PullFinish
    public enum Action: Sendable, Equatable {
        /// Ask for this page, at `url` when the feed links its pages (`nil`: the page by number,
        /// or the feed's own URL for page 1); with `conditional`, send the stored validators.
        case fetch(page: Int, url: String? = nil, conditional: Bool)
        /// Look up the bands of this page's keys again and hand it back to `received`: page 1 was
        /// fetched before the gap walk and is processed once the gap is closed.
        case revisit(FeedPage, Validators)
        case finish(Finish)
    }

    /// Validators of a response, kept for the next conditional GET of the head.
    public struct Validators: Sendable, Equatable {
        public var etag: String?
        public var lastModified: String?
        /// The document's hash, to know the same document sent again.
        public var bodyHash: String?
        public init(etag: String?, lastModified: String?, bodyHash: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
            self.bodyHash = bodyHash
        }
    }

    /// The outcome of one page: what to write (in one transaction) and what to do next.
    public struct Step: Sendable {
        /// `nil` when the page is held back for later (see `Action.revisit`).
        public var commit: PageCommit?
        public var next: Action
        /// The page's items (each key once), over all its parts.
        public var count: Int
        /// How many of them were not stored before.
        public var newCount: Int
        /// How many were, and were refreshed in place.
        public var refreshedCount: Int
    }

    enum Phase: Sendable, Equatable {
        case headCheck, gap, head, backfill, done
    }

    public private(set) var cursor: FeedCursor
    /// The feed's format finds older pages by following links, not by number. Known once the
    /// first document is read, so the engine sets it.
    public var followsLinks: Bool
    let feedID: Int64
    /// The lowest band number in use, `nil` when the feed has no items: known once the store is
    /// read, so `PullMachine.start(topBand:)` sets it.
    var topBand: Int?
    let maxPages: Int?
    var phase: Phase = .headCheck
    var page = 1
    /// The link the current page was fetched from, if it was.
    var url: String?
    /// Links fetched in the current walk: one seen again means the feed loops.
    var visited: Set<String> = []
    /// A refused link restarted the backfill from the head; a second refusal is an error.
    var restarted = false
    var pagesFetched = 0
    /// Band the current walk writes into.
    var band = 0
    /// Page 1 held back while the gap walk runs.
    var heldHead: (FeedPage, Validators)?
    /// The page being read, which may arrive in parts.
    var reading = PageReading()
    /// The keys of the previous page of this walk, to notice a page served again.
    var previousKeys: [String]?
    /// The feed's size as last reported in this run.
    var currentTotal: Int?
    /// The walk into the history waits (a page of it failed; `Feed.historyRetryAt`): the run
    /// looks at the head only.
    public var historyPaused = false

    /// - Parameters:
    ///   - topBand: the lowest band number in use, `nil` when the feed has no items yet.
    ///   - maxPages: pages this run may fetch (a 304 counts as one), `nil` for no limit.
    public init(feedID: Int64, cursor: FeedCursor, topBand: Int?, maxPages: Int?, followsLinks: Bool = false) {
        self.feedID = feedID
        self.followsLinks = followsLinks
        self.cursor = cursor
        self.topBand = topBand
        self.maxPages = maxPages
        currentTotal = cursor.remoteTotal
    }

    /// The first thing to do.
    public mutating func start() -> Action {
        if cursor.backfillPage == nil || cursor.backfillPage == 1 && !cursor.backfillDone {
            // Never committed a whole page: the first pull is a backfill from page 1 into band 0.
            phase = .backfill
            band = 0
            return fetch(1, conditional: false)
        }
        phase = .headCheck
        return fetch(1, conditional: true)
    }

    /// The head check answered 304 Not Modified: nothing new at the top.
    public mutating func notModified() -> Action {
        precondition(phase == .headCheck, "only the head check is conditional")
        return afterHead()
    }

    /// Whether the page being fetched may be handed over in parts (`receivedPart`), so a long
    /// document never has to be held whole. Not while the head page is to be held back for a gap.
    public var canReadInParts: Bool { !(phase == .headCheck && cursor.gap != nil) }

    /// Part of a page arrived and more of it follows. Its items are placed as `received` places
    /// them; the commit's cursor points back at this page, so a process killed before the page
    /// ends fetches it again and finds these items known, in their place.
    public mutating func receivedPart(_ items: [FeedItem], bands: [String: Int]) -> PageCommit {
        precondition(canReadInParts, "the held head page is read whole")
        if phase == .headCheck { beginHeadWalk() }
        let (newItems, updated) = place(items, bands: bands)
        switch phase {
        case .gap, .head:
            cursor.gap = FeedCursor.Walk(band: band, page: page, total: currentTotal, url: url)
        case .backfill:
            cursor.backfillPage = page
            cursor.backfillURL = url
            cursor.backfillTotal = currentTotal
        case .headCheck, .done:
            preconditionFailure("no page is expected in phase \(phase)")
        }
        return PageCommit(feedID: feedID, band: band, newItems: newItems, updatedItems: updated, cursor: cursor)
    }

    /// A page arrived (or the last part of one, after `receivedPart`). `bands` maps those of its
    /// keys already stored to their band.
    public mutating func received(_ feedPage: FeedPage, validators: Validators, bands: [String: Int]) -> Step {
        if let total = feedPage.total { currentTotal = total }
        cursor.remoteTotal = currentTotal

        if phase == .headCheck {
            if cursor.gap != nil {
                heldHead = (feedPage, validators)
                return Step(commit: nil, next: startGap(), count: 0, newCount: 0, refreshedCount: 0)
            }
            beginHeadWalk()
        }
        if page == 1, phase == .head || phase == .backfill {
            cursor.etag = validators.etag
            cursor.lastModified = validators.lastModified
            cursor.bodyHash = validators.bodyHash
        }

        // Place each item: new ones are appended to the walk's band, known ones refreshed in place.
        let (newItems, updated) = place(feedPage.items, bands: bands)
        let read = reading
        reading = PageReading()
        if feedPage.hasMore == true, read.count > 0 {
            cursor.perPage = max(cursor.perPage ?? 0, read.count)
        }
        let nextURL = feedPage.next
        let repeated = read.count > 0 && read.keys == previousKeys || nextURL.map(visited.contains) == true
        previousKeys = read.keys
        let ended = read.count == 0 || !hasMore(feedPage)
        let pastTotal = isFarPastTotal(page: page, hasMore: feedPage.hasMore)

        let next: Action
        switch phase {
        case .gap, .head:
            if read.overlap || ended || repeated || pastTotal {
                cursor.gap = nil
                next = phase == .gap ? afterGap() : afterHead()
            } else {
                cursor.gap = FeedCursor.Walk(band: band, page: page + 1, total: currentTotal, url: nextURL)
                next = fetch(page + 1, url: nextURL, conditional: false)
            }
        case .backfill:
            cursor.backfillPage = page + 1
            cursor.backfillURL = nextURL
            cursor.backfillTotal = currentTotal
            if repeated || pastTotal {
                cursor.backfillDone = true
                phase = .done
                next = .finish(
                    .endless(
                        repeated
                            ? "page \(page) repeats a page before it"
                            : "page \(page) says more follow, though \(currentTotal ?? 0) items "
                                + "should fit in fewer pages"
                    ))
            } else if ended {
                cursor.backfillDone = true
                cursor.backfillNote = feedPage.unfollowed
                phase = .done
                next = .finish(.complete)
            } else {
                next = fetch(page + 1, url: nextURL, conditional: false)
            }
        case .headCheck, .done:
            preconditionFailure("no page is expected in phase \(phase)")
        }
        let commit = PageCommit(
            feedID: feedID, band: band, newItems: newItems, updatedItems: updated, cursor: cursor)
        return Step(
            commit: commit, next: next, count: read.count, newCount: read.newCount, refreshedCount: read.refreshedCount)
    }

    /// The server refused (4xx) the link this page was fetched from. Returns what to do instead,
    /// or `nil` when the refusal is an error: a refused saved link restarts the backfill from the
    /// head once per run rather than failing every pull from now on; a refused gap link gives the
    /// gap up (the head walk then runs from page 1).
    public mutating func rejected() -> Action? {
        guard url != nil else { return nil }
        switch phase {
        case .backfill where !restarted:
            restarted = true
            cursor.backfillURL = nil
            startWalk()
            return fetch(1, conditional: false)
        case .gap:
            cursor.gap = nil
            return afterGap()
        default:
            return nil
        }
    }

    // MARK: Walk transitions

    private mutating func startWalk() {
        previousKeys = nil
        visited = []
    }

    private mutating func beginHeadWalk() {
        phase = .head
        band = (topBand ?? 0) - 1
        startWalk()
    }

    /// Sorts items of the page being read into new ones (appended to the walk's band) and known
    /// ones (refreshed in place), each key once. A key repeated within `items` keeps its first
    /// entry; one repeated in a later part of a long page is known by then (the earlier part is
    /// committed) and refreshes it. Keys are compared whole: a page is never short of an item
    /// because two keys looked alike.
    private mutating func place(_ items: [FeedItem], bands: [String: Int]) -> (
        new: [FeedItem], updated: [FeedItem]
    ) {
        var newItems: [FeedItem] = []
        var updated: [FeedItem] = []
        var seen = Set<String>(minimumCapacity: items.count)
        for item in items where seen.insert(item.key).inserted {
            reading.add(item.key)
            if let knownBand = bands[item.key] {
                updated.append(item)
                reading.refreshedCount += 1
                if knownBand != band { reading.overlap = true }
            } else {
                newItems.append(item)
                reading.newCount += 1
            }
        }
        return (newItems, updated)
    }

    private mutating func startGap() -> Action {
        guard let gap = cursor.gap else { return afterGap() }
        if followsLinks, gap.url == nil {
            // A linked walk cannot be resumed without its link.
            cursor.gap = nil
            return afterGap()
        }
        phase = .gap
        band = gap.band
        startWalk()
        if let link = gap.url { return fetch(gap.page, url: link, conditional: false) }
        return fetch(shifted(gap.page, from: gap.total), conditional: false)
    }

    private mutating func afterGap() -> Action {
        if let (held, validators) = heldHead {
            heldHead = nil
            phase = .headCheck  // the held page 1 now starts the head walk
            page = 1
            return .revisit(held, validators)
        }
        return afterHead()
    }

    private mutating func afterHead() -> Action {
        if cursor.gap != nil, phase == .headCheck {
            return startGap()  // 304 on the head, but an earlier head walk left a gap
        }
        guard !historyPaused, !cursor.backfillDone, let saved = cursor.backfillPage else {
            phase = .done
            return .finish(.complete)
        }
        phase = .backfill
        band = 0
        startWalk()
        if followsLinks {
            // Without a saved link (the format changed, say) the backfill starts again from the head.
            return fetch(cursor.backfillURL == nil ? 1 : saved, url: cursor.backfillURL, conditional: false)
        }
        return fetch(shifted(saved, from: cursor.backfillTotal), conditional: false)
    }

    private mutating func fetch(_ number: Int, url link: String? = nil, conditional: Bool) -> Action {
        if let maxPages, pagesFetched >= maxPages {
            phase = .done
            return .finish(.budgetSpent)
        }
        pagesFetched += 1
        page = number
        url = link
        if let link { visited.insert(link) }
        return .fetch(page: number, url: link, conditional: conditional)
    }

    // MARK: Rules

    /// Offset-paged feeds shift when items are added at the head: a page numbered when the feed had
    /// `oldTotal` items now starts `currentTotal - oldTotal` items further down. Overlap with known
    /// items absorbs any error, so a page is never skipped, only seen twice.
    func shifted(_ number: Int, from oldTotal: Int?) -> Int {
        guard let oldTotal, let currentTotal, let perPage = cursor.perPage, currentTotal > oldTotal else {
            return number
        }
        return ((number - 1) * perPage + currentTotal - oldTotal) / perPage + 1
    }

    func hasMore(_ page: FeedPage) -> Bool {
        if let hasMore = page.hasMore { return hasMore }
        // The server did not say: go on while the reported total says more items exist.
        guard let total = currentTotal, let perPage = cursor.perPage else { return false }
        return self.page * perPage < total
    }

    /// A page well past the last one the reported total allows, that still claims more follow.
    func isFarPastTotal(page: Int, hasMore: Bool?) -> Bool {
        guard hasMore == true, let total = currentTotal, let perPage = cursor.perPage else { return false }
        let lastPage = (total + perPage - 1) / perPage
        return page > lastPage + 1
    }
}

/// What is known of the page being read so far; it may arrive in parts.
struct PageReading: Sendable {
    /// An item already stored in another band: the walk has reached what was known.
    var overlap = false
    var newCount = 0
    var refreshedCount = 0
    /// The page's keys in order: a page served twice has the same ones.
    var keys: [String] = []
    var count: Int { keys.count }

    /// Records a key that was not in the page (or the part of it) before.
    mutating func add(_ key: String) {
        keys.append(key)
    }
}
