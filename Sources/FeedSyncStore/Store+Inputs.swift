// What the store takes to write a pull's work: a page's items with the cursor after them
// (PageCommit), and how a pull of one feed ended (PullRecord).

import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation

// The store's domain types: values the store reads and writes, and what its callers pass and get back.

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
