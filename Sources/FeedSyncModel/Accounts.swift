import Foundation

/// An account on an aggregator (Migrations/0013_accounts.sql): where it is, who logs in, and where
/// the last sync stopped.
public struct Account: Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var kind: String
    public var url: String
    public var user: String
    public var cursor: AccountCursor
    /// The server's counters at the last sync, and when the last full pass over states ran.
    public var counters: String?
    public var stateAt: Date?
    public var lastSyncAt: Date?
    public var lastOutcome: PullOutcome?
    public var lastError: String?

    public init(
        id: Int64, name: String, kind: String, url: String, user: String, cursor: AccountCursor,
        counters: String? = nil, stateAt: Date? = nil, lastSyncAt: Date? = nil, lastOutcome: PullOutcome? = nil,
        lastError: String? = nil
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.url = url
        self.user = user
        self.cursor = cursor
        self.counters = counters
        self.stateAt = stateAt
        self.lastSyncAt = lastSyncAt
        self.lastOutcome = lastOutcome
        self.lastError = lastError
    }
}

/// Where an account's sync stands, committed with each page. A place is the service's own: Tiny
/// Tiny RSS's count of articles behind it, a Google Reader server's continuation.
public struct AccountCursor: Sendable, Equatable {
    /// Where the first walk (every article, newest first) goes on (nil: its start), and whether
    /// it is over.
    public var backfillPlace: String?
    public var backfillDone = false
    /// The newest article id stored (`RemoteID.isNewer`).
    public var lastID: String?
    /// A walk through the articles newer than `since`, interrupted before `place`; its items go
    /// to `band`.
    public var head: (since: String?, place: String, band: Int)?

    public init() {}

    public static func == (a: AccountCursor, b: AccountCursor) -> Bool {
        (a.backfillPlace, a.backfillDone, a.lastID) == (b.backfillPlace, b.backfillDone, b.lastID)
            && a.head?.since == b.head?.since && a.head?.place == b.head?.place && a.head?.band == b.head?.band
    }
}

/// An aggregator's ids as the server writes them: Tiny Tiny RSS's decimal numbers, a Google
/// Reader server's item ids in the long form (hex of one length on one server: FreshRSS's and
/// Miniflux's 16 digits, The Old Reader's 24-digit ObjectIds).
public enum RemoteID {
    /// Whether `a` is a later id than `b`: the longer, or of one length the greater; numbers
    /// compare so in decimal and in hex alike.
    public static func isNewer(_ a: String, than b: String) -> Bool {
        a.utf8.count != b.utf8.count ? a.utf8.count > b.utf8.count : a > b
    }
}

/// A stream of an account (a feed's, a label's, every item's) marked read up to a time and not
/// yet accepted by its server (a Google Reader server's `mark-all-as-read`).
public struct QueuedCatchUp: Sendable, Equatable, Hashable {
    public var accountID: Int64
    /// `feed/…`, `user/-/label/…` or `user/-/state/com.google/reading-list`.
    public var stream: String
    /// The newest item time the server had given (microseconds): nothing later is marked.
    public var upTo: Int64
    public var queuedAt: Double

    public init(accountID: Int64, stream: String, upTo: Int64, queuedAt: Double) {
        self.accountID = accountID
        self.stream = stream
        self.upTo = upTo
        self.queuedAt = queuedAt
    }
}

/// A mark made on an account's item and not yet accepted by its server.
public struct QueuedMark: Sendable, Equatable, Hashable {
    public var itemID: Int64
    /// The server's id for the item.
    public var remoteID: String
    /// `read` or `starred`.
    public var field: String
    public var value: Bool

    public init(
        itemID: Int64, remoteID: String, field: String, value: Bool
    ) {
        self.itemID = itemID
        self.remoteID = remoteID
        self.field = field
        self.value = value
    }
}
