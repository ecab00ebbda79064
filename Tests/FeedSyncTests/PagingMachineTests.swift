import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Synchronization
import Testing

@testable import FeedSyncPull

/// The paging rules, driven with synthetic pages: no server, no database.
@Suite struct PagingMachineTests {
    typealias Machine = PagingMachine
    let noValidators = Machine.Validators(etag: nil, lastModified: nil)

    func page(_ keys: [String], total: Int? = nil, hasMore: Bool? = true) -> FeedPage {
        FeedPage(
            items: keys.map { FeedItem(key: $0, title: $0, link: nil, pictureURL: nil, published: nil, summary: nil) },
            total: total, hasMore: hasMore)
    }

    func keys(_ range: ClosedRange<Int>) -> [String] { range.reversed().map { "k\($0)" } }

    @Test func firstPullBackfillsFromPageOneIntoBandZeroUntilHasMoreIsFalse() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil)
        #expect(machine.start() == .fetch(page: 1, conditional: false))
        let first = machine.received(
            page(keys(21...30), total: 30), validators: .init(etag: "\"e1\"", lastModified: nil), bands: [:])
        #expect(first.commit?.band == 0)
        #expect(first.commit?.newItems.map(\.key) == keys(21...30))
        #expect(first.commit?.cursor.etag == "\"e1\"")
        #expect(first.commit?.cursor.backfillPage == 2)
        #expect(first.commit?.cursor.perPage == 10)
        #expect(first.next == .fetch(page: 2, conditional: false))
        _ = machine.received(page(keys(11...20), total: 30), validators: noValidators, bands: [:])
        let last = machine.received(page(keys(1...10), total: 30, hasMore: false), validators: noValidators, bands: [:])
        #expect(last.next == .finish(.complete))
        #expect(last.commit?.cursor.backfillDone == true)
        #expect(last.commit?.cursor.etag == "\"e1\"", "only page 1 sets the head's validators")
    }

    @Test func unchangedHeadIsOneConditionalRequest() {
        let cursor = FeedCursor(
            etag: "\"e\"", remoteTotal: 30, perPage: 10, backfillPage: 4, backfillTotal: 30, backfillDone: true)
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil)
        #expect(machine.start() == .fetch(page: 1, conditional: true))
        #expect(machine.notModified() == .finish(.complete))
    }

    @Test func headWalkPutsNewItemsInANewBandAboveAndStopsAtTheOverlap() {
        let known = Dictionary(uniqueKeysWithValues: keys(1...30).map { ($0, 0) })
        let cursor = FeedCursor(remoteTotal: 30, perPage: 10, backfillPage: 4, backfillTotal: 30, backfillDone: true)
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil)
        _ = machine.start()
        // 15 new items: page 1 is all new, page 2 has 5 new and then known ones.
        let first = machine.received(
            page(keys(36...45), total: 45), validators: .init(etag: "\"e2\"", lastModified: nil), bands: known)
        #expect(first.commit?.band == -1)
        #expect(first.commit?.newItems.count == 10)
        #expect(
            first.commit?.cursor.gap == FeedCursor.Walk(band: -1, page: 2, total: 45),
            "an interrupted head walk is resumable")
        #expect(first.next == .fetch(page: 2, conditional: false))
        let second = machine.received(page(keys(26...35), total: 45), validators: noValidators, bands: known)
        #expect(second.commit?.band == -1)
        #expect(second.commit?.newItems.map(\.key) == keys(31...35))
        #expect(second.commit?.updatedItems.map(\.key) == keys(26...30))
        #expect(second.commit?.cursor.gap == nil)
        #expect(second.next == .finish(.complete), "backfill was done: nothing older is fetched")
    }

    @Test func backfillResumesAtThePageShiftedByItemsAddedAtTheHead() {
        // Saved after page 3 of a 95-item feed (10 per page); 15 items were added since.
        let cursor = FeedCursor(etag: "\"e\"", remoteTotal: 95, perPage: 10, backfillPage: 4, backfillTotal: 95)
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil)
        _ = machine.start()
        let known = Dictionary(uniqueKeysWithValues: keys(66...95).map { ($0, 0) })
        _ = machine.received(page(keys(101...110), total: 110), validators: noValidators, bands: known)
        let headEnd = machine.received(page(keys(91...100), total: 110), validators: noValidators, bands: known)
        // Old page 4 (items 65...56) now starts 15 items further down: index 45 is on page 5.
        #expect(headEnd.next == .fetch(page: 5, conditional: false))
        let back = machine.received(page(keys(56...65), total: 110), validators: noValidators, bands: known)
        #expect(back.commit?.band == 0)
        #expect(back.commit?.newItems.map(\.key) == keys(56...65))
        #expect(back.commit?.updatedItems.isEmpty == true)
        #expect(back.commit?.cursor.backfillPage == 6)
        #expect(back.commit?.cursor.backfillTotal == 110)
    }

    @Test func notModifiedHeadGoesStraightToTheSavedBackfillPage() {
        let cursor = FeedCursor(etag: "\"e\"", remoteTotal: 95, perPage: 10, backfillPage: 4, backfillTotal: 95)
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil)
        _ = machine.start()
        #expect(machine.notModified() == .fetch(page: 4, conditional: false))
    }

    @Test func anInterruptedHeadWalkIsFinishedBeforeANewOneStarts() {
        // The last pull stored page 1 of a head walk into band -1 and stopped before page 2.
        let old = Dictionary(uniqueKeysWithValues: keys(1...30).map { ($0, 0) })
        var known = old
        for key in keys(36...45) { known[key] = -1 }
        let cursor = FeedCursor(
            etag: "\"e\"", remoteTotal: 45, perPage: 10, backfillPage: 4, backfillTotal: 30, backfillDone: true,
            gap: FeedCursor.Walk(band: -1, page: 2, total: 45))
        var machine = Machine(feedID: 1, cursor: cursor, topBand: -1, maxPages: nil)
        #expect(machine.start() == .fetch(page: 1, conditional: true))
        // 10 more arrived since; page 1 is held back while the gap is closed first.
        let head = machine.received(
            page(keys(46...55), total: 55), validators: .init(etag: "\"e3\"", lastModified: nil), bands: known)
        #expect(head.commit == nil)
        #expect(head.next == .fetch(page: 3, conditional: false), "gap page 2 shifted by 10 items")
        let gap = machine.received(page(keys(26...35), total: 55), validators: noValidators, bands: known)
        #expect(gap.commit?.band == -1)
        #expect(gap.commit?.newItems.map(\.key) == keys(31...35))
        #expect(gap.commit?.cursor.gap == nil)
        guard case .revisit(let held, let validators) = gap.next else {
            Issue.record("expected the held page 1, got \(gap.next)")
            return
        }
        for key in keys(31...35) { known[key] = -1 }
        let top = machine.received(held, validators: validators, bands: known)
        #expect(top.commit?.band == -2, "the new head walk opens a band above the gap's")
        #expect(top.commit?.newItems.map(\.key) == keys(46...55))
        #expect(top.commit?.cursor.etag == "\"e3\"")
    }

    @Test func anEmptyPageEndsTheBackfill() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil)
        _ = machine.start()
        _ = machine.received(page(keys(11...20)), validators: noValidators, bands: [:])
        let end = machine.received(page([], hasMore: true), validators: noValidators, bands: [:])
        #expect(end.next == .finish(.complete))
        #expect(end.commit?.cursor.backfillDone == true)
    }

    @Test func theSamePageAgainIsAnEndlessFeed() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil)
        _ = machine.start()
        _ = machine.received(page(keys(1...10)), validators: noValidators, bands: [:])
        let known = Dictionary(uniqueKeysWithValues: keys(1...10).map { ($0, 0) })
        let again = machine.received(page(keys(1...10)), validators: noValidators, bands: known)
        guard case .finish(.endless) = again.next else {
            Issue.record("expected endless, got \(again.next)")
            return
        }
        #expect(again.commit?.cursor.backfillDone == true)
    }

    @Test func pagesFarPastTheTotalThatStillClaimMoreAreAnEndlessFeed() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil)
        var action = machine.start()
        var fetched = 0
        var n = 1000
        while case .fetch = action, fetched < 100 {
            fetched += 1
            n -= 10
            action = machine.received(page(keys(n...(n + 9)), total: 20), validators: noValidators, bands: [:]).next
        }
        guard case .finish(.endless) = action else {
            Issue.record("expected endless, got \(action)")
            return
        }
        #expect(fetched == 4, "a 20-item feed has 2 pages; one extra is tolerated")
    }

    @Test func thePageBudgetStopsTheRunWithTheCursorSaved() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: 2)
        _ = machine.start()
        _ = machine.received(page(keys(21...30), total: 30), validators: noValidators, bands: [:])
        let second = machine.received(page(keys(11...20), total: 30), validators: noValidators, bands: [:])
        #expect(second.next == .finish(.budgetSpent))
        #expect(second.commit?.cursor.backfillPage == 3)
        #expect(second.commit?.cursor.backfillDone == false)
    }

    @Test func shiftIsIgnoredWhenTheTotalIsUnknownOrShrank() {
        let machine = Machine(feedID: 1, cursor: FeedCursor(remoteTotal: 50, perPage: 10), topBand: 0, maxPages: nil)
        #expect(machine.shifted(4, from: nil) == 4)
        #expect(machine.shifted(4, from: 60) == 4)
        #expect(machine.shifted(4, from: 41) == 4)  // 9 new items: old index 30 is now 39, still page 4
        #expect(machine.shifted(4, from: 40) == 5)
    }

    // MARK: Formats that link their pages

    func linked(_ keys: [String], next: String?) -> FeedPage {
        var linkedPage = page(keys, hasMore: next != nil)
        linkedPage.next = next
        return linkedPage
    }

    @Test func linkedFeedBackfillsByFollowingAndSavingEachLink() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil, followsLinks: true)
        #expect(machine.start() == .fetch(page: 1, conditional: false))
        let first = machine.received(
            linked(keys(21...30), next: "http://h/f?p=2"), validators: noValidators, bands: [:])
        #expect(first.commit?.cursor.backfillURL == "http://h/f?p=2")
        #expect(first.next == .fetch(page: 2, url: "http://h/f?p=2", conditional: false))
        let second = machine.received(
            linked(keys(11...20), next: "http://h/archive/1"), validators: noValidators, bands: [:])
        #expect(second.next == .fetch(page: 3, url: "http://h/archive/1", conditional: false))
        let last = machine.received(linked(keys(1...10), next: nil), validators: noValidators, bands: [:])
        #expect(last.next == .finish(.complete))
        #expect(last.commit?.cursor.backfillDone == true && last.commit?.cursor.backfillURL == nil)
    }

    @Test func linkedFeedResumesFromTheSavedLinkWithoutShifting() {
        let cursor = FeedCursor(etag: "\"e\"", backfillPage: 3, backfillURL: "http://h/f?p=3")
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil, followsLinks: true)
        #expect(machine.start() == .fetch(page: 1, conditional: true))
        #expect(machine.notModified() == .fetch(page: 3, url: "http://h/f?p=3", conditional: false))
    }

    @Test func aLinkSeenAgainInOneWalkStopsTheFeedAsEndless() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil, followsLinks: true)
        _ = machine.start()
        _ = machine.received(linked(keys(21...30), next: "http://h/a"), validators: noValidators, bands: [:])
        _ = machine.received(linked(keys(11...20), next: "http://h/b"), validators: noValidators, bands: [:])
        let loop = machine.received(linked(keys(1...10), next: "http://h/a"), validators: noValidators, bands: [:])
        guard case .finish(.endless) = loop.next else {
            Issue.record("expected endless, got \(loop.next)")
            return
        }
        #expect(loop.commit?.cursor.backfillDone == true)
    }

    @Test func aRefusedSavedLinkRestartsTheBackfillFromTheHeadOnce() {
        let known = Dictionary(uniqueKeysWithValues: keys(11...30).map { ($0, 0) })
        let cursor = FeedCursor(backfillPage: 3, backfillURL: "http://h/gone")
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: nil, followsLinks: true)
        _ = machine.start()
        #expect(machine.notModified() == .fetch(page: 3, url: "http://h/gone", conditional: false))
        #expect(machine.rejected() == .fetch(page: 1, conditional: false))
        let head = machine.received(
            linked(keys(21...30), next: "http://h/new2"), validators: noValidators, bands: known)
        #expect(head.commit?.band == 0 && head.commit?.newItems.isEmpty == true)
        #expect(head.commit?.cursor.backfillURL == "http://h/new2", "the new link is saved in place of the refused one")
        #expect(head.next == .fetch(page: 2, url: "http://h/new2", conditional: false))
        #expect(machine.rejected() == nil, "a second refusal in one run is an error")
    }

    @Test func anInterruptedLinkedHeadWalkResumesFromItsLink() {
        let known = Dictionary(uniqueKeysWithValues: keys(1...10).map { ($0, 0) })
        let cursor = FeedCursor(backfillPage: 2, backfillDone: true)
        var machine = Machine(feedID: 1, cursor: cursor, topBand: 0, maxPages: 1, followsLinks: true)
        _ = machine.start()
        let head = machine.received(linked(keys(21...30), next: "http://h/p2"), validators: noValidators, bands: known)
        #expect(head.commit?.cursor.gap == FeedCursor.Walk(band: -1, page: 2, total: nil, url: "http://h/p2"))
        #expect(head.next == .finish(.budgetSpent))

        var next = Machine(feedID: 1, cursor: head.commit!.cursor, topBand: -1, maxPages: nil, followsLinks: true)
        _ = next.start()
        let held = next.received(linked(keys(22...31), next: "http://h/p2b"), validators: noValidators, bands: [:])
        #expect(held.commit == nil)
        #expect(held.next == .fetch(page: 2, url: "http://h/p2", conditional: false))
        // The server no longer knows that link: the gap is given up and the held head page is read.
        guard case .revisit = next.rejected() else {
            Issue.record("expected the held head page")
            return
        }
    }

    // MARK: Pages read in parts

    @Test func aPageReadInPartsCommitsEachPartAndResumesFromThatPage() {
        var machine = Machine(feedID: 1, cursor: FeedCursor(), topBand: nil, maxPages: nil, followsLinks: true)
        _ = machine.start()
        #expect(machine.canReadInParts)
        let part = machine.receivedPart(page(keys(21...30)).items, bands: [:])
        #expect(part.band == 0 && part.newItems.count == 10)
        #expect(part.cursor.backfillPage == 1 && part.cursor.backfillURL == nil, "killed now, page 1 is read again")
        // The same key again in a later part is stored once: the earlier part is committed, so the
        // store knows it (in this walk's band), and the later entry refreshes it.
        let last = machine.received(
            linked(keys(11...20) + ["k30", "k11"], next: "http://h/2"), validators: noValidators, bands: ["k30": 0])
        #expect(last.commit?.newItems.map(\.key) == keys(11...20), "k11 twice in one part: its first entry")
        #expect(last.commit?.updatedItems.map(\.key) == ["k30"])
        #expect(last.newCount == 20)
        #expect(last.commit?.cursor.backfillPage == 2 && last.commit?.cursor.backfillURL == "http://h/2")

        // A store left mid-page-1 continues the first backfill, from page 1, in band 0.
        var again = Machine(feedID: 1, cursor: part.cursor, topBand: 0, maxPages: nil, followsLinks: true)
        #expect(again.start() == .fetch(page: 1, conditional: false))
        let resumed = again.received(
            linked(keys(11...30), next: nil), validators: noValidators,
            bands: Dictionary(uniqueKeysWithValues: keys(21...30).map { ($0, 0) }))
        #expect(resumed.commit?.band == 0 && resumed.commit?.newItems.map(\.key) == keys(11...20))
    }

    @Test func aHeadPageReadInPartsSavesItselfAsTheGap() {
        let known = Dictionary(uniqueKeysWithValues: keys(1...10).map { ($0, 0) })
        var machine = Machine(
            feedID: 1, cursor: FeedCursor(backfillPage: 2, backfillDone: true), topBand: 0, maxPages: nil)
        _ = machine.start()
        let part = machine.receivedPart(page(keys(26...30)).items, bands: known)
        #expect(part.band == -1)
        #expect(part.cursor.gap == FeedCursor.Walk(band: -1, page: 1, total: nil))
        let end = machine.received(page(keys(6...25), hasMore: true), validators: noValidators, bands: known)
        #expect(end.commit?.cursor.gap == nil, "the page overlapped what was stored: the head walk is done")
        #expect(end.newCount == 20)
    }

    @Test func aPageReadInPartsCountsItsNewAndRefreshedItemsOverAllParts() {
        // The prefetcher hears of refreshed items from these counts (a changed picture may be due
        // anywhere in the list), so the parts' must not be lost.
        let known = Dictionary(uniqueKeysWithValues: keys(1...5).map { ($0, 0) })
        var machine = Machine(
            feedID: 1, cursor: FeedCursor(backfillPage: 2, backfillDone: true), topBand: 0, maxPages: nil)
        _ = machine.start()
        _ = machine.receivedPart(page(keys(6...10) + ["k1"]).items, bands: known)
        let end = machine.received(page(["k2", "k3"] + keys(11...12)), validators: noValidators, bands: known)
        #expect(end.count == 10)
        #expect(end.newCount == 7)
        #expect(end.refreshedCount == 3)
    }
}
