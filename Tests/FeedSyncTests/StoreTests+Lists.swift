import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import Testing

@testable import FeedSyncStore

// The store's lists: bands, pages, the timeline, and what a pull and a reader leave in it.

extension StoreTests {
    @Test func ordersByBandThenArrivalAndKeepsAKnownKeysPlace() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: 0, newItems: [item("a"), item("b")], updatedItems: [], cursor: FeedCursor()))
        try await store.commit(
            PageCommit(feedID: feed.id, band: -1, newItems: [item("new")], updatedItems: [], cursor: FeedCursor()))
        // "a" arrives again with a new title: refreshed in place, not moved, not duplicated.
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: 0, newItems: [item("c")], updatedItems: [item("a", title: "A2")],
                cursor: FeedCursor()))
        let page = try await store.list(ListQuery(feedURL: nil), page: 1, perPage: 10)
        #expect(page.items.map(\.key) == ["new", "a", "b", "c"])
        #expect(page.items.map(\.title) == ["new", "A2", "b", "c"])
        #expect(page.items.map(\.position) == [1, 2, 3, 4])
        #expect(page.total == 4)
        #expect(try await store.topBand(feedID: feed.id) == -1)
        #expect(try await store.bands(feedID: feed.id, keys: ["a", "new", "zzz"]) == ["a": 0, "new": -1])
        // Keys are looked up as a JSON array written by hand: every character a key may hold.
        let odd = ["say \"hi\"", "back\\slash", "tab\tline\nfeed\u{1}", "é ☃ 🎉", "[\"x\"]", "u\\u0041"]
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: -2, newItems: odd.map { item($0) }, updatedItems: [], cursor: FeedCursor()))
        #expect(
            try await store.bands(feedID: feed.id, keys: odd + ["uA", "x"])
                == Dictionary(uniqueKeysWithValues: odd.map { ($0, -2) }))
    }

    /// Every page, of every size, of one feed's list and of all feeds' is the slice of the full
    /// order (feed, band, seq) it should be: list finds pages by band sizes, not by OFFSET.
    @Test func everyPageIsTheRightSliceAcrossBandsAndFeeds() async throws {
        let one = try await store.subscribe(url: "http://h/one")
        let two = try await store.subscribe(url: "http://h/two")
        try await store.commit(
            PageCommit(
                feedID: one.id, band: 0, newItems: (0..<7).map { item("one-\($0)") }, updatedItems: [],
                cursor: FeedCursor()))
        try await store.commit(
            PageCommit(
                feedID: two.id, band: 0, newItems: (0..<5).map { item("two-\($0)") }, updatedItems: [],
                cursor: FeedCursor()))
        try await store.commit(
            PageCommit(
                feedID: one.id, band: -1, newItems: (0..<3).map { item("head-\($0)") }, updatedItems: [],
                cursor: FeedCursor()))
        // Refreshed and repeated items take no place: seq stays without holes.
        try await store.commit(
            PageCommit(
                feedID: one.id, band: -1, newItems: [item("head-3"), item("one-2")],
                updatedItems: [item("head-0", title: "again")], cursor: FeedCursor()))
        try await store.commit(
            PageCommit(feedID: one.id, band: -3, newItems: [item("top")], updatedItems: [], cursor: FeedCursor()))

        let expected: [String?: [String]] = [
            "http://h/one": ["top"] + (0..<4).map { "head-\($0)" } + (0..<7).map { "one-\($0)" },
            "http://h/two": (0..<5).map { "two-\($0)" },
        ]
        // All feeds are one timeline (these items are undated: by when each page was stored).
        let all = try timelineKeys()
        #expect(Set(all) == Set(expected.values.joined()))
        for (url, keys) in expected.merging([nil: all], uniquingKeysWith: { a, _ in a }) {
            for perPage in 1...6 {
                for page in 1...(keys.count / perPage + 2) {
                    let listed = try await store.list(ListQuery(feedURL: url), page: page, perPage: perPage)
                    let start = min(keys.count, (page - 1) * perPage)
                    #expect(
                        listed.items.map(\.key) == Array(keys[start..<min(keys.count, start + perPage)]),
                        "\(url ?? "all") page \(page) of \(perPage)")
                    #expect(listed.items.map(\.position) == Array(start + 1..<start + 1 + listed.items.count))
                    #expect(listed.total == keys.count)
                }
            }
        }
    }

    /// Every key in the timeline's order by its definition, one ORDER BY over all items.
    func timelineKeys() throws -> [String] {
        try DatabaseQueue(path: store.path).read { db in
            try String.fetchAll(db, sql: "SELECT key FROM item ORDER BY timeline DESC, feed_id, band, seq")
        }
    }

    /// The timeline's pages, rows and picture windows, found by adding bucket and run sizes, are
    /// those of its definition, with dates that repeat, cross buckets, lie ahead or are missing.
    @Test func theTimelineFindsEveryPageRowAndPictureByItsSizes() async throws {
        var random: UInt64 = 7
        func next(_ bound: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(bound))
        }
        var feeds: [Feed] = []
        for number in 0..<3 { feeds.append(try await store.subscribe(url: "http://h/\(number)")) }
        var stored = 0
        for round in 0..<12 {
            for feed in feeds {
                let items = (0..<(1 + next(12))).map { _ -> FeedItem in
                    stored += 1
                    let date: String? =
                        switch next(6) {
                        case 0: nil
                        case 1: "2100-01-01T00:00:00Z"
                        default: "2024-01-0\(1 + next(3))T\(10 + next(2)):00:00Z"
                        }
                    return FeedItem(
                        key: "k\(stored)", title: "t", link: nil, pictureURL: next(2) == 0 ? "http://p/\(stored)" : nil,
                        published: date, summary: nil)
                }
                try await store.commit(
                    PageCommit(
                        feedID: feed.id, band: round % 3 == 0 ? -round : 0, newItems: items, updatedItems: [],
                        cursor: FeedCursor()))
            }
        }
        let keys = try timelineKeys()
        #expect(keys.count == stored)
        for perPage in [1, 7, 50] {
            for page in 1...(keys.count / perPage + 1) {
                let listed = try await store.list(ListQuery(), page: page, perPage: perPage)
                let start = (page - 1) * perPage
                #expect(listed.items.map(\.key) == Array(keys[start..<min(keys.count, start + perPage)]))
                #expect(listed.total == keys.count)
            }
        }
        let queue = try DatabaseQueue(path: store.path)
        let rows = try queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT feed_id, band, seq, picture_id FROM item ORDER BY timeline DESC, feed_id, band, seq")
        }
        let places = rows.map { ListPlace(feedID: $0["feed_id"], band: $0["band"], seq: $0["seq"]) }
        let found = try await queue.read { db in try places.map { try Store.row(db, of: $0, in: .timeline) } }
        #expect(found == Array(rows.indices))
        // Pictures due above a row, nearest first, as the prefetch reads them backwards.
        for top in [0, 1, 40, 97, keys.count] {
            let pictures = rows.prefix(top).reversed().compactMap { $0["picture_id"] as Int64? }
            let due = try await store.duePictures(feedURL: nil, rows: 0..<top, limit: 6, backwards: true)
            #expect(due.map(\.id) == Array(pictures.prefix(6)), "above row \(top)")
        }
        let below = try await store.duePictures(feedURL: nil, from: 50, resuming: nil, limit: 4)
        #expect(below.jobs.map(\.id) == Array(rows.dropFirst(50).compactMap { $0["picture_id"] as Int64? }.prefix(4)))
        #expect(below.end?.row == keys.count - 1)
        // With every picture cached but those of two buckets (2^16 s each), the buckets with none
        // due are passed over, one statement each, both ways; what is found is the same.
        try await queue.write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = 'cached', file = 'x' WHERE id IN (
                        SELECT picture_id FROM item WHERE timeline >> 16 NOT IN (
                            (SELECT timeline >> 16 FROM item ORDER BY timeline DESC, feed_id, band, seq LIMIT 1 OFFSET 97),
                            (SELECT min(timeline) >> 16 FROM item)))
                    """)
        }
        let due = try await queue.read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT item.picture_id FROM item JOIN picture ON picture.id = item.picture_id
                    WHERE picture.status != 'cached' ORDER BY timeline DESC, feed_id, band, seq
                    """)
        }
        #expect(!due.isEmpty && due.count < rows.compactMap { $0["picture_id"] as Int64? }.count)
        let first = try await store.duePictures(feedURL: nil, from: 0, resuming: nil, limit: 1000)
        #expect(first.jobs.map(\.id) == due)
        #expect(first.jobs.map(\.row) == rows.indices.filter { due.contains(rows[$0]["picture_id"] as Int64? ?? -1) })
        let last = try await store.duePictures(feedURL: nil, rows: 0..<keys.count, limit: 3, backwards: true)
        #expect(last.map(\.id) == Array(due.reversed().prefix(3)))
    }

    /// A feed never listed on its own: the due pictures of its first page, across its bands, and
    /// none of a feed the reader has listed.
    @Test func theFirstPageOfEachFeedNeverListedSpansItsBands() async throws {
        let new = try await store.subscribe(url: "http://h/new")
        let seen = try await store.subscribe(url: "http://h/seen")
        for feed in [new, seen] {
            let name = feed.url.split(separator: "/").last!
            try await store.commit(
                PageCommit(
                    feedID: feed.id, band: 0,
                    newItems: (0..<30).map { item("\(name)-\($0)", picture: "http://p/\(name)/\($0)") },
                    updatedItems: [], cursor: FeedCursor()))
            try await store.commit(
                PageCommit(
                    feedID: feed.id, band: -1,
                    newItems: (0..<3).map { item("\(name)-head-\($0)", picture: "http://p/\(name)/head-\($0)") },
                    updatedItems: [], cursor: FeedCursor()))
        }
        try await store.setReadingPosition(ReadingPosition(feedURL: seen.url, page: 2, perPage: 10))
        let jobs = try await store.duePicturesOfUnviewedFeeds(perPage: 10)
        #expect(jobs.map(\.url) == (0..<3).map { "http://p/new/head-\($0)" } + (0..<7).map { "http://p/new/\($0)" })
        #expect(jobs.map(\.row) == Array(0..<10))
        #expect(jobs.allSatisfy { $0.place.feedID == new.id })
    }

    @Test func upgradingFromVersion2NumbersEachBandWithoutHoles() async throws {
        let path = directory.path + "/version2.sqlite"
        let queue = try Self.store(at: path, withMigrations: 2)
        try await queue.write { db in
            // Version 2 left holes where refreshed items used up numbers.
            try db.execute(
                sql: """
                    INSERT INTO feed (id, url, added_at) VALUES (1, 'http://h/feed', 0);
                    INSERT INTO item (feed_id, key, band, seq, title, stored_at) VALUES
                        (1, 'a', 0, 0, 'a', 0), (1, 'b', 0, 3, 'b', 0), (1, 'c', 0, 7, 'c', 0),
                        (1, 'new', -1, 2, 'new', 0), (1, 'newer', -1, 5, 'newer', 0);
                    """)
        }
        try queue.close()
        let upgraded = try Store(path: path)
        #expect(
            try await upgraded.list(ListQuery(feedURL: nil), page: 1, perPage: 10).items.map(\.key) == [
                "new", "newer", "a", "b", "c",
            ])
        #expect(try await upgraded.list(ListQuery(feedURL: nil), page: 2, perPage: 2).items.map(\.key) == ["a", "b"])
        try await upgraded.commit(
            PageCommit(feedID: 1, band: 0, newItems: [item("d")], updatedItems: [], cursor: FeedCursor()))
        #expect(
            try await upgraded.list(ListQuery(feedURL: "http://h/feed"), page: 1, perPage: 10).items.map(\.key) == [
                "new", "newer", "a", "b", "c", "d",
            ])
    }

    @Test func pictureStatusFollowsThePictureURL() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: 0, newItems: [item("p", picture: "http://h/1.png"), item("n")], updatedItems: [],
                cursor: FeedCursor()))
        #expect(
            try await store.list(ListQuery(feedURL: nil), page: 1, perPage: 10).items.map(\.imageStatus) == [
                .pending, .none,
            ])
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: 0, newItems: [],
                updatedItems: [item("p"), item("n", picture: "http://h/2.png")],
                cursor: FeedCursor()))
        #expect(
            try await store.list(ListQuery(feedURL: nil), page: 1, perPage: 10).items.map(\.imageStatus) == [
                .none, .pending,
            ])
    }

    @Test func theCursorIsWrittenWithThePage() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        let cursor = FeedCursor(
            etag: "\"x\"", lastModified: "Wed, 01 May 2024 10:00:00 GMT", remoteTotal: 95, perPage: 10,
            backfillPage: 4, backfillTotal: 95, backfillDone: false, gap: .init(band: -2, page: 3, total: 90))
        try await store.commit(
            PageCommit(feedID: feed.id, band: 0, newItems: [item("a")], updatedItems: [], cursor: cursor))
        #expect(try await store.feed(url: "http://h/feed")?.cursor == cursor)
    }

    @Test func subscribingTwiceKeepsOneFeed() async throws {
        let first = try await store.subscribe(url: "http://h/feed")
        let second = try await store.subscribe(url: "http://h/feed")
        #expect(first.id == second.id)
        #expect(try await store.feeds().count == 1)
    }

    @Test func theSchemaRejectsAFeedURLThatIsNotHTTP() async {
        await #expect(throws: StoreError.self) { try await store.subscribe(url: "file:///etc/passwd") }
    }

    @Test func remembersTheLatestReadingPositionInWhicheverList() async throws {
        #expect(try await store.latestReadingPosition() == nil)
        try await store.setReadingPosition(ReadingPosition(feedURL: nil, page: 3, perPage: 20))
        try await store.setReadingPosition(ReadingPosition(feedURL: nil, page: 4, perPage: 50))
        #expect(try await store.latestReadingPosition() == ReadingPosition(feedURL: nil, page: 4, perPage: 50))
        try await Task.sleep(for: .milliseconds(10))  // positions are ordered by the time they were recorded
        try await store.setReadingPosition(ReadingPosition(feedURL: "http://h/feed", page: 2, perPage: 10))
        #expect(
            try await store.latestReadingPosition() == ReadingPosition(feedURL: "http://h/feed", page: 2, perPage: 10))

        // The latest position again is not written: the store's data does not change.
        let changes = {
            try DatabaseQueue(path: self.store.path).read {
                try Double.fetchOne($0, sql: "SELECT sum(updated_at) FROM reading_position")
            }
        }
        let before = try changes()
        try await store.setReadingPosition(ReadingPosition(feedURL: "http://h/feed", page: 2, perPage: 10))
        #expect(try changes() == before)
        try await Task.sleep(for: .milliseconds(10))
        try await store.setReadingPosition(ReadingPosition(feedURL: nil, page: 4, perPage: 50))
        #expect(
            try await store.latestReadingPosition() == ReadingPosition(feedURL: nil, page: 4, perPage: 50),
            "an older one becomes the latest again")
    }
}

extension StoreTests {
    /// A keyset read from any row's key, forwards and backwards, in steps of any size, walks each
    /// list (the timeline with repeated dates, one feed's bands, filters) in the order its
    /// definition gives, every row once; and what lands above a key since does not move the rows
    /// after it, only the count of those before it.
    @Test func keysetReadsWalkEveryListInItsOrderWhateverLandsAbove() async throws {
        var feeds: [Feed] = []
        for number in 0..<3 { feeds.append(try await store.subscribe(url: "http://h/\(number)")) }
        var stored = 0
        for round in 0..<4 {
            for (index, feed) in feeds.enumerated() {
                let items = (0..<(3 + index * 2)).map { n -> FeedItem in
                    stored += 1
                    // Many items share a date: ties broken by (feed, band, seq).
                    let date = n % 3 == 0 ? nil : "2024-01-0\(1 + (stored % 3))T10:00:00Z"
                    return FeedItem(
                        key: "k\(stored)", title: "word\(stored % 4)", link: nil, pictureURL: nil, published: date,
                        summary: nil)
                }
                try await store.commit(
                    PageCommit(
                        feedID: feed.id, band: round % 2 == 0 ? -round : 0, newItems: items, updatedItems: [],
                        cursor: FeedCursor()))
            }
        }
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE item SET read = 1 WHERE id % 3 = 0")
            try db.execute(sql: "UPDATE item SET starred = 1 WHERE id % 4 = 1")
        }
        let cases: [(ListQuery, String, String)] = [
            (ListQuery(), "1", "timeline DESC, feed_id, band, seq"),
            (ListQuery(feedURL: "http://h/1"), "feed_id = \(feeds[1].id)", "band, seq"),
            (ListQuery(unread: true), "read = 0", "timeline DESC, feed_id, band, seq"),
            (ListQuery(starred: true), "starred = 1", "timeline DESC, feed_id, band, seq"),
            (ListQuery(feedURL: "http://h/2", unread: true), "feed_id = \(feeds[2].id) AND read = 0", "band, seq"),
        ]
        func walk(_ query: ListQuery, step: Int, backwards: Bool) async throws -> [StoredItem] {
            var rows: [StoredItem] = []
            while true {
                let next = try await store.rows(query, after: rows.last?.listKey, backwards: backwards, limit: step)
                rows += next
                if next.count < step { return rows }
            }
        }
        for (query, filter, order) in cases {
            let expected = try await queue.read { db in
                try String.fetchAll(db, sql: "SELECT key FROM item WHERE \(filter) ORDER BY \(order)")
            }
            #expect(try await store.total(query) == expected.count, "\(filter)")
            for step in [1, 2, 5, 50] {
                #expect(
                    try await walk(query, step: step, backwards: false).map(\.key) == expected, "\(filter) by \(step)")
                #expect(
                    try await walk(query, step: step, backwards: true).map(\.key) == expected.reversed(),
                    "\(filter) backwards by \(step)")
            }
            let rows = try await walk(query, step: 50, backwards: false)
            for (index, row) in rows.enumerated() {
                #expect(try await store.count(query, before: row.listKey!, cap: 1000) == index)
                #expect(try await store.count(query, before: row.listKey!, cap: 2) == min(2, index))
            }
        }
        // A page lands above the fifth row: the rows after it are the same, five more before it.
        let before = try await store.rows(ListQuery(), after: nil, limit: 5)
        let after = try await store.rows(ListQuery(), after: before[4].listKey, limit: 10)
        try await store.commit(
            PageCommit(
                feedID: feeds[0].id, band: -9,
                newItems: (0..<5).map {
                    FeedItem(
                        key: "new\($0)", title: "n", link: nil, pictureURL: nil, published: "2030-01-01T00:00:00Z",
                        summary: nil)
                },
                updatedItems: [], cursor: FeedCursor()))
        #expect(try await store.rows(ListQuery(), after: before[4].listKey, limit: 10).map(\.key) == after.map(\.key))
        #expect(try await store.count(ListQuery(), before: before[0].listKey!, cap: 100) == 5)
    }
}
