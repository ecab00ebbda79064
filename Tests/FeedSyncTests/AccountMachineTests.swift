import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage
@testable import FeedSyncPull
@testable import FeedSyncStore

/// `AccountMachine`'s decisions, without a server or a store.
@Suite struct AccountMachineTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func account(_ cursor: AccountCursor = AccountCursor(), counters: String? = nil, stateAt: Date? = nil)
        -> Account
    {
        Account(
            id: 1, name: "a", kind: "ttrss", url: "http://h/api/", user: "u", cursor: cursor, counters: counters,
            stateAt: stateAt)
    }

    static func articles(_ ids: ClosedRange<Int64>) -> [RemoteArticle] {
        ids.reversed().map { id in
            RemoteArticle(
                id: id, feedID: 1, unread: true, starred: false, feedTitle: nil,
                item: FeedItem(key: String(id), title: "t", link: nil, pictureURL: nil, published: nil, summary: nil))
        }
    }

    @Test func aFirstSyncListsFeedsAndCountersThenWalksEveryPageThenWhatIsNew() {
        var machine = AccountMachine(account: Self.account(), queued: [], pageSize: 2, newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .listSubscriptions)
        #expect(machine.next(.subscriptionsListed) == .fetchCounters, "before the walk: a change during it shows")
        #expect(machine.next(.counters("c0")) == .fetchArticles(since: 0, skip: 0))
        guard case .commit(_, 0, let first) = machine.next(.articles(Self.articles(4...5))) else {
            Issue.record("a page is committed to band 0")
            return
        }
        #expect(first.backfillSkip == 2 && !first.backfillDone && first.lastID == 5)
        #expect(machine.next(.committed) == .fetchArticles(since: 0, skip: 2))
        guard case .commit(_, 0, let last) = machine.next(.articles(Self.articles(3...3))) else { return }
        #expect(last.backfillDone && last.lastID == 5)
        #expect(machine.next(.committed) == .fetchArticles(since: 5, skip: 0), "what arrived meanwhile")
        #expect(
            machine.next(.articles([])) == .finish(counters: "c0", statePassed: true),
            "the pages brought each article's state")
    }

    @Test func aFirstSyncCutOffGoesOnAndEndsWithAPassOverStates() {
        var cursor = AccountCursor()
        cursor.backfillSkip = 4
        var machine = AccountMachine(account: Self.account(cursor), queued: [], pageSize: 2, newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .fetchArticles(since: 0, skip: 4))
        _ = machine.next(.articles(Self.articles(1...1)))
        #expect(machine.next(.committed) == .fetchArticles(since: 1, skip: 0))
        #expect(machine.next(.articles([])) == .fetchCounters)
        #expect(machine.next(.counters("c1")) == .listSubscriptions)
        #expect(machine.next(.subscriptionsListed) == .fetchIDs(.unread))
        #expect(machine.next(.ids(.unread, [1])) == .fetchIDs(.starred))
        #expect(machine.next(.ids(.starred, [])) == .applyState(unread: [1], starred: []))
        #expect(machine.next(.stateApplied) == .finish(counters: "c1", statePassed: true))
    }

    @Test func anUnchangedServerCostsTwoRequests() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.backfillSkip, cursor.lastID) = (true, 3, 5)
        var machine = AccountMachine(
            account: Self.account(cursor, counters: "c1", stateAt: Self.now.addingTimeInterval(-3600)), queued: [],
            pageSize: 200, newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .fetchArticles(since: 5, skip: 0))
        #expect(machine.next(.articles([])) == .fetchCounters)
        #expect(machine.next(.counters("c1")) == .finish(counters: "c1", statePassed: false))
        // Six hours on, the states come down whatever the counters say.
        var later = AccountMachine(
            account: Self.account(cursor, counters: "c1", stateAt: Self.now.addingTimeInterval(-6 * 3600)),
            queued: [], pageSize: 200, newBand: -1, now: Self.now)
        _ = later.next(.start)
        _ = later.next(.articles([]))
        #expect(later.next(.counters("c1")) == .listSubscriptions)
    }

    @Test func queuedMarksGoFirstOneBatchPerFieldAndValue() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, 9)
        let marks = [
            QueuedMark(itemID: 1, remoteID: 11, field: "read", value: true),
            QueuedMark(itemID: 2, remoteID: 12, field: "starred", value: true),
            QueuedMark(itemID: 3, remoteID: 13, field: "read", value: true),
            QueuedMark(itemID: 4, remoteID: 14, field: "read", value: false),
        ]
        var machine = AccountMachine(
            account: Self.account(cursor), queued: marks, pageSize: 200, newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .send(field: .unread, value: false, marks: [marks[0], marks[2]]))
        #expect(machine.next(.sent) == .send(field: .starred, value: true, marks: [marks[1]]))
        #expect(machine.next(.sent) == .send(field: .unread, value: true, marks: [marks[3]]))
        #expect(machine.next(.sent) == .fetchArticles(since: 9, skip: 0))
    }

    @Test func aWalkAboveTheStoredArticlesGoesOnWhereItStoppedInItsBand() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, 100)
        cursor.head = (since: 90, skip: 400, band: -3)
        var machine = AccountMachine(
            account: Self.account(cursor, counters: "c", stateAt: Self.now), queued: [], pageSize: 2, newBand: -7,
            now: Self.now)
        #expect(machine.next(.start) == .fetchArticles(since: 90, skip: 400), "the walk under way, not a new one")
        guard case .commit(_, -3, let after) = machine.next(.articles(Self.articles(101...102))) else {
            Issue.record("into the walk's band")
            return
        }
        #expect(after.head?.skip == 402 && after.head?.since == 90 && after.lastID == 102)
    }
}
