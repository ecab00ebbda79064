import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import Foundation

/// What one sync of an account does next, decided from what the last step found (pure: no store,
/// no network; `AccountSync` carries each action out and reports back). The order:
///
/// 1. Queued marks go to the server first, one batch per field and value; each is forgotten only
///    once the server accepted it.
/// 2. On the first sync, the subscriptions (feeds and folders) and the counters come down before
///    any article: the pages bring each article's state with it, so no pass over states follows,
///    and counters that moved during the walk make the next sync's pass.
/// 3. Articles: the first sync walks all of them, newest first, a page at a time, each page
///    committed with the cursor after it; later syncs walk what is above the highest id stored.
///    A walk killed or cut off goes on from its last committed page.
/// 4. The counters; when they moved since the last sync, or the last full pass is six hours
///    old, the subscriptions and the ids of every unread and every starred article come down,
///    and each stored item takes that state, unless a mark of its own waits to be sent.
///
/// An unchanged server so costs two requests: the articles above the last id, the counters.
public struct AccountMachine: Sendable {
    public enum Action: Sendable, Equatable {
        case send(field: RemoteState, value: Bool, marks: [QueuedMark])
        case listSubscriptions
        case fetchArticles(since: Int64, skip: Int)
        /// Store these articles in `band` with the cursor after them.
        case commit([RemoteArticle], band: Int, cursor: AccountCursor)
        case fetchCounters
        case fetchIDs(RemoteState)
        case applyState(unread: Set<Int64>, starred: Set<Int64>)
        /// Done: record the counters seen, and whether a full pass over states ran.
        case finish(counters: String?, statePassed: Bool)
    }

    public enum Event: Sendable {
        case start
        case sent
        case subscriptionsListed
        case articles([RemoteArticle])
        case committed
        case counters(String)
        case ids(RemoteState, Set<Int64>)
        case stateApplied
    }

    /// A full pass over states runs at least this often.
    public static let statePassInterval: TimeInterval = 6 * 3600

    public private(set) var cursor: AccountCursor
    let pageSize: Int
    /// The band a new walk above the stored articles writes to (above every feed's bands).
    let newBand: Int
    var batches: [(field: RemoteState, value: Bool, marks: [QueuedMark])]
    let storedCounters: String?
    let statePassDue: Bool
    var listed = false
    /// The first sync of the account: nothing stored yet.
    let first: Bool
    var counters: String?
    var unread: Set<Int64>?
    var starred: Set<Int64>?

    public init(
        account: Account, queued: [QueuedMark], pageSize: Int, newBand: Int, now: Date
    ) {
        cursor = account.cursor
        first = !account.cursor.backfillDone && account.cursor.backfillSkip == 0
        self.pageSize = pageSize
        self.newBand = newBand
        storedCounters = account.counters
        statePassDue = account.stateAt.map { now.timeIntervalSince($0) >= Self.statePassInterval } ?? true
        // Read marks go as "unread" false/true, stars as they are; a batch per field and value.
        var batches: [(field: RemoteState, value: Bool, marks: [QueuedMark])] = []
        for mark in queued {
            let field: RemoteState = mark.field == "read" ? .unread : .starred
            let value = mark.field == "read" ? !mark.value : mark.value
            if let index = batches.firstIndex(where: { $0.field == field && $0.value == value }) {
                batches[index].marks.append(mark)
            } else {
                batches.append((field, value, [mark]))
            }
        }
        self.batches = batches
    }

    public mutating func next(_ event: Event) -> Action {
        switch event {
        case .start, .sent:
            if !batches.isEmpty {
                let batch = batches.removeFirst()
                return .send(field: batch.field, value: batch.value, marks: batch.marks)
            }
            if first {
                listed = true
                return .listSubscriptions
            }
            return fetch()
        case .subscriptionsListed:
            if counters == nil { return first ? .fetchCounters : fetch() }
            return .fetchIDs(.unread)
        case .articles(let articles):
            return commit(articles)
        case .committed:
            return fetch()
        case .counters(let counters):
            self.counters = counters
            if first { return fetch() }
            guard counters != storedCounters || statePassDue else {
                return .finish(counters: counters, statePassed: false)
            }
            if listed { return .fetchIDs(.unread) }
            listed = true
            return .listSubscriptions
        case .ids(.unread, let ids):
            unread = ids
            return .fetchIDs(.starred)
        case .ids(.starred, let ids):
            starred = ids
            return .applyState(unread: unread ?? [], starred: ids)
        case .stateApplied:
            return .finish(counters: counters, statePassed: true)
        }
    }

    /// The next page of the walk under way, or the counters once no walk is left.
    mutating func fetch() -> Action {
        if !cursor.backfillDone { return .fetchArticles(since: 0, skip: cursor.backfillSkip) }
        if let head = cursor.head { return .fetchArticles(since: head.since, skip: head.skip) }
        if walkedAbove == cursor.lastID { return walked() }
        return .fetchArticles(since: cursor.lastID, skip: 0)
    }

    /// What follows the walks: the counters, or on the first sync (which has them) the end.
    func walked() -> Action {
        first ? .finish(counters: counters, statePassed: true) : .fetchCounters
    }

    /// The last id a finished walk above the stored articles started from in this sync: one walk
    /// a sync, so a server that keeps adding articles cannot hold it.
    var walkedAbove: Int64?

    mutating func commit(_ articles: [RemoteArticle]) -> Action {
        if articles.isEmpty, cursor.backfillDone, cursor.head == nil {
            walkedAbove = cursor.lastID  // nothing new: no write
            return walked()
        }
        let last = articles.count < pageSize
        let top = articles.map(\.id).max() ?? 0
        if !cursor.backfillDone {
            cursor.backfillSkip += articles.count
            cursor.backfillDone = last
            cursor.lastID = max(cursor.lastID, top)
            // The walk above the highest id follows at once: it picks up what arrived meanwhile.
            return .commit(articles, band: 0, cursor: cursor)
        }
        let walk = cursor.head ?? (since: cursor.lastID, skip: 0, band: newBand)
        cursor.lastID = max(cursor.lastID, top)
        if last {
            cursor.head = nil
            walkedAbove = cursor.lastID
        } else {
            cursor.head = (walk.since, walk.skip + articles.count, walk.band)
        }
        return .commit(articles, band: walk.band, cursor: cursor)
    }
}
