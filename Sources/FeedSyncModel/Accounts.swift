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

/// Where an account's sync stands, committed with each page.
public struct AccountCursor: Sendable, Equatable {
    /// Articles the first walk (all of them, newest first) has behind it, and whether it is over.
    public var backfillSkip = 0
    public var backfillDone = false
    /// The highest article id stored.
    public var lastID: Int64 = 0
    /// A walk through the articles above `since`, newest first, interrupted after `skip` of them;
    /// its items go to `band`.
    public var head: (since: Int64, skip: Int, band: Int)?

    public init() {}

    public static func == (a: AccountCursor, b: AccountCursor) -> Bool {
        (a.backfillSkip, a.backfillDone, a.lastID) == (b.backfillSkip, b.backfillDone, b.lastID)
            && a.head?.since == b.head?.since && a.head?.skip == b.head?.skip && a.head?.band == b.head?.band
    }
}

/// A mark made on an account's item and not yet accepted by its server.
public struct QueuedMark: Sendable, Equatable, Hashable {
    public var itemID: Int64
    /// The server's id for the item.
    public var remoteID: Int64
    /// `read` or `starred`.
    public var field: String
    public var value: Bool

    public init(
        itemID: Int64, remoteID: Int64, field: String, value: Bool
    ) {
        self.itemID = itemID
        self.remoteID = remoteID
        self.field = field
        self.value = value
    }
}
