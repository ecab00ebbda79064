import FeedSyncFeed
import FeedSyncStore

/// Decides which page a pull asks for next, where each item of a page goes, and when to stop.
/// It does no I/O: the engine feeds it responses and carries out what it returns, so every path
/// (head walk, overlap, backfill cursor, shifted pages, endless feeds) is unit-tested with
/// synthetic pages.
///
/// A pull has up to three walks through consecutive pages, in this order:
/// 1. **gap**: the rest of a head walk an earlier pull could not finish, from its saved page;
/// 2. **head**: from page 1 until a page overlaps items stored before, into a new band on top;
/// 3. **backfill**: older pages from the saved cursor into band 0, until the feed ends.
/// The head walk runs only when no gap is left, so at most one gap ever needs remembering.
public struct PagingMachine: Sendable {
    public enum Action: Sendable, Equatable {
        /// Ask for this page; with `conditional`, send the stored validators (the head check).
        case fetch(page: Int, conditional: Bool)
        /// Look up the bands of this page's keys again and hand it back to `received`: page 1 was
        /// fetched before the gap walk and is processed once the gap is closed.
        case revisit(FeedPage, Validators)
        case finish(Finish)
    }

    public enum Finish: Sendable, Equatable {
        /// Every walk ran to its end.
        case complete
        /// `--max-pages` ran out; the next pull continues from the saved cursor.
        case budgetSpent
        /// The feed would not end (same page again, or pages far past its total). The backfill is
        /// marked done so later pulls don't repeat it.
        case endless(String)
    }

    /// Validators of a response, kept for the next conditional GET of the head.
    public struct Validators: Sendable, Equatable {
        public var etag: String?
        public var lastModified: String?
        public init(etag: String?, lastModified: String?) {
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// The outcome of one page: what to write (in one transaction) and what to do next.
    public struct Step: Sendable {
        /// `nil` when the page is held back for later (see `Action.revisit`).
        public var commit: PageCommit?
        public var next: Action
        /// How many of the page's items were not stored before.
        public var newCount: Int
    }

    enum Phase: Sendable, Equatable {
        case headCheck, gap, head, backfill, done
    }

    public private(set) var cursor: FeedCursor
    let feedID: Int64
    let topBand: Int?
    let maxPages: Int?
    var phase: Phase = .headCheck
    var page = 1
    var pagesFetched = 0
    /// Band the current walk writes into.
    var band = 0
    /// Page 1 held back while the gap walk runs.
    var heldHead: (FeedPage, Validators)?
    var previousKeys: [String] = []
    /// The feed's size as last reported in this run.
    var currentTotal: Int?

    /// - Parameters:
    ///   - topBand: the lowest band number in use, `nil` when the feed has no items yet.
    ///   - maxPages: pages this run may fetch (a 304 counts as one), `nil` for no limit.
    public init(feedID: Int64, cursor: FeedCursor, topBand: Int?, maxPages: Int?) {
        self.feedID = feedID
        self.cursor = cursor
        self.topBand = topBand
        self.maxPages = maxPages
        currentTotal = cursor.remoteTotal
    }

    /// The first thing to do.
    public mutating func start() -> Action {
        if cursor.backfillPage == nil {
            // Never committed a page: the first pull is a backfill from page 1 into band 0.
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

    /// A page arrived. `bands` maps those of its keys already stored to their band.
    public mutating func received(_ feedPage: FeedPage, validators: Validators, bands: [String: Int]) -> Step {
        if let total = feedPage.total { currentTotal = total }
        if feedPage.hasMore == true, !feedPage.items.isEmpty {
            cursor.perPage = max(cursor.perPage ?? 0, feedPage.items.count)
        }
        cursor.remoteTotal = currentTotal

        if phase == .headCheck {
            if cursor.gap != nil {
                heldHead = (feedPage, validators)
                return Step(commit: nil, next: startGap(), newCount: 0)
            }
            phase = .head
            band = (topBand ?? 0) - 1
            previousKeys = []
        }
        if page == 1, phase == .head || phase == .backfill {
            cursor.etag = validators.etag
            cursor.lastModified = validators.lastModified
        }

        // Place each item: new ones are appended to the walk's band, known ones refreshed in place.
        var newItems: [ItemContent] = []
        var updated: [ItemContent] = []
        var overlap = false
        var seen = Set<String>()
        for item in feedPage.items where seen.insert(item.key).inserted {
            let entry = ItemContent(
                key: item.key, title: item.title, link: item.link, pictureURL: item.pictureURL,
                published: item.published, summary: item.summary)
            if let knownBand = bands[item.key] {
                updated.append(entry)
                if knownBand != band { overlap = true }
            } else {
                newItems.append(entry)
            }
        }

        let keys = feedPage.items.map(\.key)
        let repeated = !keys.isEmpty && keys == previousKeys
        previousKeys = keys
        let ended = feedPage.items.isEmpty || !hasMore(feedPage)
        let pastTotal = isFarPastTotal(page: page, hasMore: feedPage.hasMore)

        let next: Action
        switch phase {
        case .gap, .head:
            if overlap || ended || repeated || pastTotal {
                cursor.gap = nil
                next = phase == .gap ? afterGap() : afterHead()
            } else {
                cursor.gap = FeedCursor.Walk(band: band, page: page + 1, total: currentTotal)
                next = fetch(page + 1, conditional: false)
            }
        case .backfill:
            cursor.backfillPage = page + 1
            cursor.backfillTotal = currentTotal
            if repeated || pastTotal {
                cursor.backfillDone = true
                phase = .done
                next = .finish(.endless(repeated
                    ? "page \(page) repeats the page before it"
                    : "page \(page) says more follow, though \(currentTotal ?? 0) items should fit in fewer pages"))
            } else if ended {
                cursor.backfillDone = true
                phase = .done
                next = .finish(.complete)
            } else {
                next = fetch(page + 1, conditional: false)
            }
        case .headCheck, .done:
            preconditionFailure("no page is expected in phase \(phase)")
        }
        let commit = PageCommit(
            feedID: feedID, band: band, newItems: newItems, updatedItems: updated, cursor: cursor)
        return Step(commit: commit, next: next, newCount: newItems.count)
    }

    // MARK: Walk transitions

    private mutating func startGap() -> Action {
        guard let gap = cursor.gap else { return afterGap() }
        phase = .gap
        band = gap.band
        previousKeys = []
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
        guard !cursor.backfillDone, let saved = cursor.backfillPage else {
            phase = .done
            return .finish(.complete)
        }
        phase = .backfill
        band = 0
        previousKeys = []
        return fetch(shifted(saved, from: cursor.backfillTotal), conditional: false)
    }

    private mutating func fetch(_ number: Int, conditional: Bool) -> Action {
        if let maxPages, pagesFetched >= maxPages {
            phase = .done
            return .finish(.budgetSpent)
        }
        pagesFetched += 1
        page = number
        return .fetch(page: number, conditional: conditional)
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
