import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import Foundation

/// What one sync of an account does next, decided from what the last step found (pure: no store,
/// no network; `AccountSync` carries each action out and reports back). The order:
///
/// 1. Queued marks go to the server first: the streams marked read up to a time (a Google
///    Reader server's `mark-all-as-read`), then one batch per field and value; each is forgotten
///    only once the server accepted it.
/// 2. On the first sync, the subscriptions (feeds and folders) and the counters come down before
///    any article: the pages bring each article's state with it, so no pass over states follows,
///    and counters that moved during the walk make the next sync's pass.
/// 3. Articles: the first sync walks all of them, newest first, a page at a time, each page
///    committed with the cursor (the place after it); later syncs walk what is newer than the
///    newest id stored. A walk killed or cut off goes on from its last committed page.
/// 4. The counters; when they moved since the last sync, or the last full pass is six hours
///    old, or the server has none, the subscriptions (without counters: every six hours) and the
///    ids of every unread and every starred article come down, and each stored item takes that
///    state, unless a mark of its own waits to be sent. Ids among them stored nowhere here (an
///    article a walk did not meet: Miniflux orders by publication, so one fetched late with an
///    old date is below where a walk of what is newer stops) are fetched by id, at most
///    `missingPerSync` a sync; one removed here (`gc --older-than`) is not.
///
/// 5. Marks queued during the sync (a rule's, on the articles that arrived) go up last, as in 1.
///
/// An unchanged server so costs two requests (the articles newer than the last id, the
/// counters), or three where it has no counters (the newer articles, the unread and the starred
/// ids).
public struct AccountMachine: Sendable {
    public enum Action: Sendable, Equatable {
        case catchUp(QueuedCatchUp)
        case send(field: RemoteState, value: Bool, marks: [QueuedMark])
        case listSubscriptions
        case fetchArticles(newerThan: String?, from: String?)
        /// Store these articles in `band` with the cursor after them.
        case commit([RemoteArticle], band: Int, cursor: AccountCursor)
        case fetchCounters
        case fetchIDs(RemoteState)
        case applyState(unread: Set<String>, starred: Set<String>)
        /// Fetch the articles `ids` (unread or starred there, stored nowhere here) and store them
        /// in `band` with the cursor as it is.
        case fetchMissing([String], band: Int, cursor: AccountCursor)
        /// Done: record the counters seen, and whether a full pass over states ran.
        case finish(counters: String?, statePassed: Bool)
    }

    public enum Event: Sendable {
        case start
        case sent
        case subscriptionsListed
        case articles(AccountPage)
        case committed
        case counters(String?)
        case ids(RemoteState, Set<String>)
        /// The states are applied; `missing`: the unread and starred ids stored nowhere here.
        case stateApplied(missing: [String])
        case missingStored
    }

    /// Articles a sync fetches by id at most (the rest at the next).
    public static let missingPerSync = 1000

    /// A full pass over states runs at least this often.
    public static let statePassInterval: TimeInterval = 6 * 3600

    public private(set) var cursor: AccountCursor
    /// The band a new walk above the stored articles writes to (above every feed's bands).
    let newBand: Int
    var catchUps: [QueuedCatchUp]
    var batches: [(field: RemoteState, value: Bool, marks: [QueuedMark])]
    let storedCounters: String?
    let statePassDue: Bool
    var listed = false
    /// The first sync of the account: nothing stored yet.
    let first: Bool
    /// Whether the counters were asked in this sync, and what they were (nil: the server has none).
    var counted = false
    var counters: String?
    var unread: Set<String>?
    var starred: Set<String>?
    /// A walk through what is newer than the stored articles finished in this sync: one walk a
    /// sync, so a server that keeps adding articles cannot hold it.
    var walkedNewer = false

    public init(account: Account, queued: [QueuedMark], catchUps: [QueuedCatchUp] = [], newBand: Int, now: Date) {
        self.catchUps = catchUps
        cursor = account.cursor
        first = !account.cursor.backfillDone && account.cursor.backfillPlace == nil
        self.newBand = newBand
        storedCounters = account.counters
        statePassDue = account.stateAt.map { now.timeIntervalSince($0) >= Self.statePassInterval } ?? true
        batches = Self.batches(queued)
    }

    /// Read marks as "unread" false/true, stars as they are: a batch per field and value.
    public static func batches(_ queued: [QueuedMark]) -> [(field: RemoteState, value: Bool, marks: [QueuedMark])] {
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
        return batches
    }

    public mutating func next(_ event: Event) -> Action {
        switch event {
        case .start, .sent:
            if !catchUps.isEmpty { return .catchUp(catchUps.removeFirst()) }
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
            if !counted { return first ? .fetchCounters : fetch() }
            return .fetchIDs(.unread)
        case .articles(let page):
            return commit(page)
        case .committed:
            return fetch()
        case .counters(let counters):
            (counted, self.counters) = (true, counters)
            if first { return fetch() }
            guard counters == nil || counters != storedCounters || statePassDue else {
                return .finish(counters: counters, statePassed: false)
            }
            // Without counters the states come down every sync, the feeds only every six hours
            // (an article of a feed not listed yet makes it from its own name for it).
            if counters == nil, !statePassDue { return .fetchIDs(.unread) }
            if listed { return .fetchIDs(.unread) }
            listed = true
            return .listSubscriptions
        case .ids(.unread, let ids):
            unread = ids
            return .fetchIDs(.starred)
        case .ids(.starred, let ids):
            starred = ids
            return .applyState(unread: unread ?? [], starred: ids)
        case .stateApplied(let missing):
            guard missing.isEmpty else {
                return .fetchMissing(Array(missing.prefix(Self.missingPerSync)), band: newBand, cursor: cursor)
            }
            return .finish(counters: counters, statePassed: true)
        case .missingStored:
            return .finish(counters: counters, statePassed: true)
        }
    }

    /// The next page of the walk under way, or the counters once no walk is left.
    mutating func fetch() -> Action {
        if !cursor.backfillDone { return .fetchArticles(newerThan: nil, from: cursor.backfillPlace) }
        if let head = cursor.head { return .fetchArticles(newerThan: head.since, from: head.place) }
        if walkedNewer { return walked() }
        return .fetchArticles(newerThan: cursor.lastID, from: nil)
    }

    /// What follows the walks: the counters, or on the first sync (which has them) the end.
    func walked() -> Action {
        first ? .finish(counters: counters, statePassed: true) : .fetchCounters
    }

    mutating func commit(_ page: AccountPage) -> Action {
        if page.articles.isEmpty, cursor.backfillDone, cursor.head == nil {
            walkedNewer = true  // nothing new: no write
            return walked()
        }
        let top = page.articles.lazy.map(\.id).reduce(cursor.lastID) { newest, id in
            newest.map { RemoteID.isNewer(id, than: $0) ? id : $0 } ?? id
        }
        if !cursor.backfillDone {
            cursor.backfillPlace = page.next
            cursor.backfillDone = page.next == nil
            cursor.lastID = top
            // The walk above the newest id follows at once: it picks up what arrived meanwhile.
            return .commit(page.articles, band: 0, cursor: cursor)
        }
        let walk = cursor.head ?? (since: cursor.lastID, place: "", band: newBand)
        cursor.lastID = top
        if let next = page.next {
            cursor.head = (walk.since, next, walk.band)
        } else {
            cursor.head = nil
            walkedNewer = true
        }
        return .commit(page.articles, band: walk.band, cursor: cursor)
    }
}
