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

    /// A page of the articles `ids`, newest first, and where the next starts.
    static func page(_ ids: ClosedRange<Int64>, next: String?) -> AccountPage {
        AccountPage(
            ids.reversed().map { id in
                RemoteArticle(
                    id: String(id), feedID: "1", unread: true, starred: false, feedTitle: nil,
                    item: FeedItem(
                        key: String(id), title: "t", link: nil, pictureURL: nil, published: nil, summary: nil))
            }, next: next)
    }

    static let empty = AccountPage([], next: nil)

    @Test func aFirstSyncListsFeedsAndCountersThenWalksEveryPageThenWhatIsNew() {
        var machine = AccountMachine(account: Self.account(), queued: [], newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .listSubscriptions)
        #expect(machine.next(.subscriptionsListed) == .fetchCounters, "before the walk: a change during it shows")
        #expect(machine.next(.counters("c0")) == .fetchArticles(newerThan: nil, from: nil))
        guard case .commit(_, 0, let first) = machine.next(.articles(Self.page(4...5, next: "2"))) else {
            Issue.record("a page is committed to band 0")
            return
        }
        #expect(first.backfillPlace == "2" && !first.backfillDone && first.lastID == "5")
        #expect(machine.next(.committed) == .fetchArticles(newerThan: nil, from: "2"))
        guard case .commit(_, 0, let last) = machine.next(.articles(Self.page(3...3, next: nil))) else { return }
        #expect(last.backfillDone && last.lastID == "5")
        #expect(machine.next(.committed) == .fetchArticles(newerThan: "5", from: nil), "what arrived meanwhile")
        #expect(
            machine.next(.articles(Self.empty)) == .finish(counters: "c0", statePassed: true),
            "the pages brought each article's state")
    }

    @Test func aFirstSyncCutOffGoesOnAndEndsWithAPassOverStates() {
        var cursor = AccountCursor()
        cursor.backfillPlace = "4"
        var machine = AccountMachine(account: Self.account(cursor), queued: [], newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .fetchArticles(newerThan: nil, from: "4"))
        _ = machine.next(.articles(Self.page(1...1, next: nil)))
        #expect(machine.next(.committed) == .fetchArticles(newerThan: "1", from: nil))
        #expect(machine.next(.articles(Self.empty)) == .fetchCounters)
        #expect(machine.next(.counters("c1")) == .listSubscriptions)
        #expect(machine.next(.subscriptionsListed) == .fetchIDs(.unread))
        #expect(machine.next(.ids(.unread, ["1"])) == .fetchIDs(.starred))
        #expect(machine.next(.ids(.starred, [])) == .applyState(unread: ["1"], starred: []))
        #expect(machine.next(.stateApplied(missing: [])) == .finish(counters: "c1", statePassed: true))
    }

    @Test func unreadOrStarredIdsStoredNowhereAreFetchedByIdAThousandASync() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, "5000")
        var machine = AccountMachine(account: Self.account(cursor), queued: [], newBand: -4, now: Self.now)
        _ = machine.next(.start)
        _ = machine.next(.articles(Self.empty))
        _ = machine.next(.counters("c"))
        _ = machine.next(.subscriptionsListed)
        _ = machine.next(.ids(.unread, []))
        _ = machine.next(.ids(.starred, []))
        let missing = (1...1500).map { String(2000 - $0) }
        #expect(
            machine.next(.stateApplied(missing: missing))
                == .fetchMissing(Array(missing.prefix(1000)), band: -4, cursor: cursor), "the newest thousand, above")
        #expect(machine.next(.missingStored) == .finish(counters: "c", statePassed: true))
    }

    @Test func anUnchangedServerCostsTwoRequestsOrThreeWithoutCounters() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, "5")
        var machine = AccountMachine(
            account: Self.account(cursor, counters: "c1", stateAt: Self.now.addingTimeInterval(-3600)), queued: [],
            newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .fetchArticles(newerThan: "5", from: nil))
        #expect(machine.next(.articles(Self.empty)) == .fetchCounters)
        #expect(machine.next(.counters("c1")) == .finish(counters: "c1", statePassed: false))
        // Six hours on, the states come down whatever the counters say.
        var later = AccountMachine(
            account: Self.account(cursor, counters: "c1", stateAt: Self.now.addingTimeInterval(-6 * 3600)),
            queued: [], newBand: -1, now: Self.now)
        _ = later.next(.start)
        _ = later.next(.articles(Self.empty))
        #expect(later.next(.counters("c1")) == .listSubscriptions)
        // A server without counters (a Google Reader one) lists the states every time, its feeds
        // every six hours.
        var counterless = AccountMachine(
            account: Self.account(cursor, stateAt: Self.now), queued: [], newBand: -1, now: Self.now)
        _ = counterless.next(.start)
        _ = counterless.next(.articles(Self.empty))
        #expect(counterless.next(.counters(nil)) == .fetchIDs(.unread))
        var counterlessLater = AccountMachine(
            account: Self.account(cursor, stateAt: Self.now.addingTimeInterval(-6 * 3600)), queued: [], newBand: -1,
            now: Self.now)
        _ = counterlessLater.next(.start)
        _ = counterlessLater.next(.articles(Self.empty))
        #expect(counterlessLater.next(.counters(nil)) == .listSubscriptions)
    }

    @Test func queuedMarksGoFirstOneBatchPerFieldAndValue() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, "9")
        let marks = [
            QueuedMark(itemID: 1, remoteID: "11", field: "read", value: true),
            QueuedMark(itemID: 2, remoteID: "12", field: "starred", value: true),
            QueuedMark(itemID: 3, remoteID: "13", field: "read", value: true),
            QueuedMark(itemID: 4, remoteID: "14", field: "read", value: false),
        ]
        var machine = AccountMachine(account: Self.account(cursor), queued: marks, newBand: -1, now: Self.now)
        #expect(machine.next(.start) == .send(field: .unread, value: false, marks: [marks[0], marks[2]]))
        #expect(machine.next(.sent) == .send(field: .starred, value: true, marks: [marks[1]]))
        #expect(machine.next(.sent) == .send(field: .unread, value: true, marks: [marks[3]]))
        #expect(machine.next(.sent) == .fetchArticles(newerThan: "9", from: nil))
    }

    @Test func aWalkAboveTheStoredArticlesGoesOnWhereItStoppedInItsBand() {
        var cursor = AccountCursor()
        (cursor.backfillDone, cursor.lastID) = (true, "100")
        cursor.head = (since: "90", place: "400", band: -3)
        var machine = AccountMachine(
            account: Self.account(cursor, counters: "c", stateAt: Self.now), queued: [], newBand: -7, now: Self.now)
        #expect(
            machine.next(.start) == .fetchArticles(newerThan: "90", from: "400"), "the walk under way, not a new one")
        guard case .commit(_, -3, let after) = machine.next(.articles(Self.page(101...102, next: "402"))) else {
            Issue.record("into the walk's band")
            return
        }
        #expect(after.head?.place == "402" && after.head?.since == "90" && after.lastID == "102")
    }

    @Test func idsCompareAsNumbersInDecimalAndInTheLongHexForm() {
        #expect(RemoteID.isNewer("100", than: "99") && !RemoteID.isNewer("99", than: "100"))
        let long = "tag:google.com,2005:reader/item/"
        #expect(RemoteID.isNewer(long + "00066199a05bded3", than: long + "00066199a05bdea0"))
        #expect(!RemoteID.isNewer(long + "0000000000000009", than: long + "000000000000000a"))
    }
}
