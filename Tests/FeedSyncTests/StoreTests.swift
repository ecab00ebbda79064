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

/// The store on a real SQLite file with the real migrations.
@Suite struct StoreTests {
    let directory: TempDirectory
    let store: Store

    init() throws {
        directory = try TempDirectory()
        store = try Store(path: directory.path + "/feedsync.sqlite")
    }

    /// A store at `path` as a feedsync of schema version `count` left it: its first `count`
    /// migrations' SQL applied, none of the Swift steps.
    static func store(at path: String, withMigrations count: Int) throws -> DatabaseQueue {
        var migrator = DatabaseMigrator()
        for migration in embeddedMigrations.prefix(count) {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.text) }
        }
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue)
        return queue
    }

    func item(_ key: String, title: String? = nil, picture: String? = nil) -> FeedItem {
        FeedItem(key: key, title: title ?? key, link: nil, pictureURL: picture, published: nil, summary: nil)
    }

    @Test func theCachesTotalFollowsEveryChangeToAPictureWhoeverMakesIt() async throws {
        // A store of version 14 with pictures cached: the migration starts the total from them.
        let path = directory.path + "/old.sqlite"
        try await Self.store(at: path, withMigrations: 14).write { db in
            try db.execute(
                sql: """
                    INSERT INTO picture (url, status, file, bytes) VALUES
                        ('a', 'cached', 'a', 100), ('b', 'pending', NULL, NULL), ('c', 'cached', 'c', 30)
                    """)
        }
        let upgraded = try Store(path: path)
        #expect(try await upgraded.cachedTotals() == CacheTotals(bytes: 130, count: 2))
        // Then changes made by hand, as another process or a later migration would: the total follows.
        let queue = try DatabaseQueue(path: path)
        func sum() throws -> CacheTotals {
            try queue.read { db in
                let row = try Row.fetchOne(
                    db, sql: "SELECT coalesce(sum(bytes), 0), count(*) FROM picture WHERE status = 'cached'")!
                return CacheTotals(bytes: row[0], count: row[1])
            }
        }
        for (change, expected) in [
            (
                "UPDATE picture SET status = 'cached', file = 'b', bytes = 7 WHERE url = 'b'",
                CacheTotals(bytes: 137, count: 3)
            ),
            ("UPDATE picture SET bytes = 50 WHERE url = 'a'", CacheTotals(bytes: 87, count: 3)),
            (
                "UPDATE picture SET status = 'failed', file = NULL, bytes = NULL WHERE url = 'c'",
                CacheTotals(bytes: 57, count: 2)
            ),
            ("UPDATE picture SET attempts = 3 WHERE url = 'c'", CacheTotals(bytes: 57, count: 2)),
            ("DELETE FROM picture WHERE url = 'a'", CacheTotals(bytes: 7, count: 1)),
            (
                "INSERT INTO picture (url, status, file, bytes) VALUES ('d', 'cached', 'd', 5)",
                CacheTotals(bytes: 12, count: 2)
            ),
        ] {
            try await queue.write { db in try db.execute(sql: change) }
            #expect(try await upgraded.cachedTotals() == expected, "\(change)")
            #expect(try sum() == expected, "\(change)")
        }
        let id = try await queue.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM picture WHERE url = 'b'")! }
        try await upgraded.uncachePicture(id: id)
        #expect(try await upgraded.cachedTotals() == CacheTotals(bytes: 5, count: 1))
    }

    @Test func appliesTheEmbeddedMigrationsOnceAndInOrder() async throws {
        let migrations = [
            "0001_init", "0002_formats", "0003_band_sizes", "0004_feed_notes", "0005_reader", "0006_timeline",
            "0007_schedule", "0008_no_answer", "0009_search_contentless", "0010_article_pictures", "0011_history",
            "0012_picture_hash",
            "0013_accounts",
            "0014_articles", "0015_cache_total", "0016_article_index", "0017_enclosures", "0018_gone",
            "0019_remote_keys", "0020_rules",
        ]
        #expect(try await store.appliedMigrations() == migrations)
        // Opening again applies nothing twice.
        let again = try Store(path: store.path)
        #expect(try await again.appliedMigrations() == migrations)
        #expect(try await again.integrityCheck() == ["ok"])
    }

    @Test func connectionsOpeningANewStoreAtOnceAllSucceed() throws {
        // `list` started while the first `pull` creates the store: both migrate, neither fails.
        for round in 0..<40 {
            let path = directory.path + "/race-\(round).sqlite"
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                do { _ = try Store(path: path) } catch { failures.withLock { $0.append("\(error)") } }
            }
            #expect(failures.withLock { $0 } == [])
        }
    }

    @Test func aStoreMadeByOneConnectionIsWALAndOpensAgainWithoutWriting() async throws {
        let path = directory.path + "/single.sqlite"
        let single = try Store(path: path, connections: .single)
        #expect(try await single.appliedMigrations() == embeddedMigrations.map(\.name))
        let mode = { try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } }
        #expect(try mode() == "wal", "the pools that follow find WAL")
        let version = { try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "PRAGMA schema_version") } }
        let before = try version()
        _ = try Store(path: path, connections: .single)
        #expect(try version() == before, "opening a migrated store changes nothing in it")
    }

    @Test func upgradingFromVersion1KeepsPulledFeedsInTheSeedFormat() async throws {
        let path = directory.path + "/version1.sqlite"
        let queue = try Self.store(at: path, withMigrations: 1)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO feed (url, added_at, backfill_page) \
                    VALUES ('http://h/pulled', 0, 3), ('http://h/new', 0, NULL)
                    """)
        }
        try queue.close()
        let upgraded = try Store(path: path)
        #expect(try await upgraded.feed(url: "http://h/pulled")?.format == .pagedJSON)
        #expect(try await upgraded.feed(url: "http://h/new")?.format == nil, "never pulled: found at the first pull")
    }

    @Test func upgradingFromVersion18KeepsATinyTinyRSSAccountsWalkAndFeedsAsText() async throws {
        let path = directory.path + "/version18.sqlite"
        let queue = try Self.store(at: path, withMigrations: 18)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO account (name, kind, url, user_name, added_at, backfill_skip, last_id, head_since,
                        head_skip, head_band)
                    VALUES ('a', 'ttrss', 'http://h/api/', 'u', 0, 400, 812, 700, 200, -2);
                    INSERT INTO feed (url, added_at, account_id, remote_id) VALUES ('http://h/api/#feed=12', 0, 1, 12);
                    """)
        }
        try queue.close()
        let upgraded = try Store(path: path)
        let account = try #require(try await upgraded.accounts().first)
        #expect(account.cursor.backfillPlace == "400" && !account.cursor.backfillDone && account.cursor.lastID == "812")
        #expect(
            account.cursor.head?.since == "700" && account.cursor.head?.place == "200"
                && account.cursor.head?.band == -2)
        #expect(try await upgraded.feed(url: "http://h/api/#feed=12")?.remoteID == "12")
        #expect(try await upgraded.integrityCheck() == ["ok"])
    }

    @Test func theSearchIndexKeepsNoCopyOfTheTextAndFollowsEveryChangeExactly() async throws {
        // A store from before 0009, with items its index never saw: the upgrade indexes them.
        let path = directory.path + "/version8.sqlite"
        let queue = try Self.store(at: path, withMigrations: 8)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO feed (url, added_at) VALUES ('http://h/feed', 0)")
            try db.execute(
                sql: """
                    INSERT INTO item (feed_id, key, band, seq, title, summary, content, stored_at)
                    VALUES (1, 'a', 0, 0, 'Apples', 'Old orchards', '<p>Pears &amp; <b>plums</b></p>', 0),
                           (1, 'b', 0, 1, '東京の天気', '今日は晴れです', NULL, 0)
                    """)
            try db.execute(
                sql: """
                    INSERT INTO item (feed_id, key, band, seq, title, link, content, stored_at)
                    VALUES (1, 'p', 0, 2, 'Pictured', 'https://site.example/s/1', '<img src="i.png"><img src="i.png">', 0)
                    """)
        }
        try queue.close()
        let upgraded = try Store(path: path)
        func found(_ words: String) async throws -> [String] {
            var query = ListQuery()
            query.search = SearchText.query(words)
            return try await upgraded.list(query, page: 1, perPage: 20).items.map(\.title)
        }
        func vocabulary() throws -> Set<String> {
            try DatabaseQueue(path: path).write { db in
                try db.execute(sql: "CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, item_search, row)")
                return Set(try String.fetchAll(db, sql: "SELECT term FROM temp.words"))
            }
        }
        #expect(try await found("plum") == ["Apples"])
        #expect(try await found("晴れ") == ["東京の天気"])
        // And 0010 finds the pictures inside the articles already stored.
        #expect(try await upgraded.item(number: 3)?.pictures.map(\.url) == ["https://site.example/s/i.png"])
        #expect(try await upgraded.read { db in try db.tableExists("item_search_content") } == false)

        // A pull that finds the text changed: the old words leave the index, the new ones come.
        var changed = FeedItem(
            key: "a", title: "Apples", link: nil, pictureURL: nil, published: nil, summary: "New orchards",
            content: "<p>Quinces</p>")
        changed.searchBody = SearchText.body(content: changed.content, summary: changed.summary)
        let new = FeedItem(key: "c", title: "Cherries", link: nil, pictureURL: nil, published: nil, summary: "Sour")
        try await upgraded.commit(
            PageCommit(feedID: 1, band: 0, newItems: [new], updatedItems: [changed], cursor: FeedCursor()))
        #expect(try await found("plum").isEmpty)
        #expect(try await found("quince") == ["Apples"])
        #expect(try await found("sour") == ["Cherries"])
        #expect(try vocabulary().isSuperset(of: ["apples", "quinces", "cherries", "sour", "京"]))
        #expect(try !vocabulary().contains("plums"))

        // Every row leaves the index with its feed: not one word is left behind.
        _ = try await upgraded.removeFeed(id: 1)
        #expect(try vocabulary() == [])
    }

    /// A stored article is searched by its text: the store writes its index row after its batch's
    /// other rows (Migrations/0016), one stored again is searched by its new text only, a failure
    /// indexes nothing, and every word leaves with the feed.
    @Test func articlesAreSearchedByTheirTextAsStoredLast() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        try await store.commit(
            PageCommit(
                feedID: feed.id, band: 0,
                newItems: [item("a", title: "A"), item("b", title: "B"), item("c", title: "C")],
                updatedItems: [], cursor: FeedCursor()))
        let ids = try await store.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT key, id FROM item").map { row -> (String, Int64) in
                    (row["key"], row["id"])
                })
        }
        func stored(_ key: String, _ html: String) -> ArticleOutcome {
            ArticleOutcome(
                itemID: ids[key]!, link: "http://h/\(key)",
                result: .stored(html: html, title: nil, byline: nil, pictures: []))
        }
        func found(_ words: String) async throws -> [String] {
            var query = ListQuery()
            query.search = SearchText.query(words)
            return try await store.list(query, page: 1, perPage: 20).items.map(\.title).sorted()
        }
        try await store.keepArticles([
            stored("a", "<p>Quinces in autumn</p>"), stored("b", "<p>Quinces and medlars</p>"),
            ArticleOutcome(
                itemID: ids["c"]!, link: "http://h/c", result: .failed(error: "404", attempts: 1, retryAt: nil)),
        ])
        #expect(try await found("quince") == ["A", "B"])
        #expect(try await found("medlar") == ["B"])
        try await store.keepArticles([stored("a", "<p>Damsons</p>")])
        #expect(try await found("quince") == ["B"])
        #expect(try await found("damson") == ["A"])
        func vocabulary() async throws -> Set<String> {
            try await store.write { db in
                try db.execute(
                    sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.words USING fts5vocab(main, article_search, row)")
                return Set(try String.fetchAll(db, sql: "SELECT term FROM temp.words"))
            }
        }
        #expect(try await vocabulary() == ["quinces", "and", "medlars", "damsons"])
        _ = try await store.removeFeed(id: feed.id)
        #expect(try await vocabulary() == [])
    }

    @Test func remembersAChosenFormatAndTheLinksAFeedPagesBy() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        #expect(feed.format == nil && !feed.formatChosen)
        let found = PageCommit.Found(title: "Feed", siteURL: nil, format: .rss)
        _ = try await store.recordPull(feedID: feed.id, PullRecord(outcome: .ok, at: Date(), found: found))
        let named = try await store.feed(url: feed.url)
        #expect(named?.format == .rss && named?.title == "Feed")

        let chosen = try await store.subscribe(url: feed.url, format: .chosen(.atom))
        #expect(chosen.format == .atom && chosen.formatChosen)
        try await store.commit(
            PageCommit(feedID: feed.id, band: 0, newItems: [], updatedItems: [], cursor: FeedCursor(), found: found))
        #expect(try await store.feed(url: feed.url)?.format == .atom, "documents do not change a chosen format")
        #expect(try await store.subscribe(url: feed.url).formatChosen, "subscribing again keeps the choice")
        #expect(try await !store.subscribe(url: feed.url, format: .found).formatChosen)

        let cursor = FeedCursor(
            backfillPage: 4, backfillURL: "http://h/feed?before=9",
            gap: FeedCursor.Walk(band: -2, page: 3, total: nil, url: "http://h/feed?before=40"))
        try await store.commit(PageCommit(feedID: feed.id, band: 0, newItems: [], updatedItems: [], cursor: cursor))
        #expect(try await store.feed(url: feed.url)?.cursor == cursor)
    }

    /// A feed read by its columns' names (one feed) and by their positions (every feed, and
    /// `feeds`' summaries) is the same feed, with every column set; each `FeedColumn` names the
    /// table's column of the case's name.
    @Test func aFeedReadsTheSameByNameAndByPosition() async throws {
        let feed = try await store.subscribe(url: "http://h/feed")
        let queue = try DatabaseQueue(path: directory.path + "/feedsync.sqlite")
        let table = try await queue.read { db in try db.columns(in: "feed").map(\.name) }
        for column in FeedColumn.allCases {
            #expect(table.contains(column.name), "\(column.name)")
            #expect(
                column.name.split(separator: "_").enumerated().map { $0 == 0 ? String($1) : $1.capitalized }
                    .joined() == "\(column)")
        }
        // Every column a value of its own kind: text (a URL, as some must be), a whole number or a
        // time, none null.
        let numbers: Set = [
            "gap_band", "gap_page", "remote_total", "per_page", "backfill_page", "backfill_total", "gap_total",
            "failures", "unanswered", "ttl", "update_interval", "skip_hours", "skip_days",
        ]
        let times: Set = [
            "last_pull_at", "next_retry_at", "due_at", "history_retry_at", "moved_at", "gone_at",
        ]
        let values: [String: DatabaseValue] = [
            "format": "atom".databaseValue, "format_chosen": 1.databaseValue, "backfill_done": 1.databaseValue,
            "last_outcome": "transient".databaseValue, "gap_band": (-2).databaseValue,
            "account_id": 7.databaseValue, "full_text": 1.databaseValue,
        ]
        let set = FeedColumn.allCases.filter { $0 != .id && $0 != .url }
        let arguments = set.map { column in
            let index = Int(column.rawValue)
            return values[column.name]
                ?? (numbers.contains(column.name)
                    ? index.databaseValue
                    : times.contains(column.name)
                        ? (1_700_000_000.5 + Double(index)).databaseValue : "http://h/\(column.name)".databaseValue)
        }
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO account (id, name, kind, url, user_name, added_at)
                    VALUES (7, 'a', 'ttrss', 'http://h/api/', 'u', 0)
                    """)
            try db.execute(
                sql: "UPDATE feed SET \(set.map { "\($0.name) = ?" }.joined(separator: ", ")) WHERE id = ?",
                arguments: StatementArguments(arguments + [feed.id.databaseValue]))
        }
        let named = try #require(try await store.feed(url: feed.url))
        #expect(
            named.folder == "http://h/folder" && named.format == .atom && named.dueAt != nil && named.cursor.gap != nil
                && named.accountID == 7 && named.fullText)
        #expect(named.schedule.skipDays == FeedColumn.skipDays.rawValue)
        #expect(try await store.feeds() == [named])
        #expect(try await store.feedSummaries().map(\.feed) == [named])
    }

    @Test func theStatementSteppedThroughSQLitesCAPIBindsEveryKindOfValue() throws {
        let queue = try DatabaseQueue(path: directory.path + "/bindings.sqlite")
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (i INTEGER, d REAL, s TEXT NOT NULL, n TEXT, b INTEGER)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?)")
            for (i, s) in [
                (Int64.min, "Ünïcødé 📰 <b>&amp;</b>"), (Int64.max, ""), (0, String(repeating: "é", count: 5000)),
            ] {
                try insert.run(db) { values in
                    values.add(i)
                    values.add(1.5)
                    values.add(s)
                    values.add(nil as String?)
                    values.add(1)
                }
            }
            let rows = try Row.fetchAll(db, sql: "SELECT i, d, s, n, b FROM t ORDER BY rowid")
            #expect(rows.map { $0[0] as Int64 } == [.min, .max, 0])
            #expect(rows.map { $0[1] as Double } == [1.5, 1.5, 1.5])
            #expect(
                rows.map { $0[2] as String } == ["Ünïcødé 📰 <b>&amp;</b>", "", String(repeating: "é", count: 5000)])
            #expect(rows.allSatisfy { $0[3] == nil && $0[4] as Int == 1 })
            // Too few values is an error, not a NULL bound in silence.
            let short = #expect(throws: DatabaseError.self) { try insert.run(db) { $0.add(1) } }
            #expect(short?.resultCode == .SQLITE_RANGE)
            // SQLite's refusal comes back with its message, and the statement runs again after it.
            let refused = #expect(throws: DatabaseError.self) {
                try insert.run(db) { values in
                    for value in [1, 2] as [Int] { values.add(value) }
                    values.add(nil as String?)
                    values.add(nil as String?)
                    values.add(nil as Int?)
                }
            }
            #expect(refused?.resultCode == .SQLITE_CONSTRAINT)
            #expect(refused?.message?.contains("t.s") == true)
            try insert.run(db) { values in
                values.add(7)
                values.add(nil as Double?)
                values.add("again")
                values.add(nil as String?)
                values.add(0)
            }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 4)
            // Text ends at a NUL, as GRDB binds it.
            try insert.run(db) { values in
                values.add(8)
                values.add(nil as Double?)
                values.add("cut\u{0}off")
                values.add("\u{0}")
                values.add(nil as Int?)
            }
            #expect(try Row.fetchOne(db, sql: "SELECT s, n FROM t WHERE i = 8") == ["s": "cut", "n": ""])
            // A value SQLite refuses to bind is named, though values bound after it succeeded.
            sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, 1000)
            let tooBig = #expect(throws: DatabaseError.self) {
                try insert.run(db) { values in
                    values.add(9)
                    values.add(nil as Double?)
                    values.add(String(repeating: "x", count: 2000))
                    values.add("fine")
                    values.add(1)
                }
            }
            #expect(tooBig?.resultCode == .SQLITE_TOOBIG)
            #expect(tooBig?.message?.contains("too big") == true, "\(String(describing: tooBig?.message))")
        }
    }

}
