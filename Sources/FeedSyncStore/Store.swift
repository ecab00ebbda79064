// FeedSyncStore: the local SQLite store; this file holds the class and its whole public API,
// Model.swift the domain types, and the other files the SQL the calls share. Only
// this module speaks SQL. Where it sits: docs/architecture.md.

internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

/// The SQLite store of one data home: WAL, so `list` reads while a pull writes.
public final class Store: Sendable {
    let database: any DatabaseWriter
    public let path: String
    /// Where every time the store writes down or compares with comes from (the time an item was
    /// stored, a mark queued, a picture's next attempt): the library's clock, so a test's clock
    /// governs the records as it governs the schedule.
    public let clock: TimeSource

    /// How the store is opened.
    public enum Connections: Sendable {
        /// A pool: one writer and concurrent readers, for a pull and its picture downloads.
        case pool
        /// One connection, for a command that reads a page and exits (`list`, `status`). GRDB's
        /// pool starts every open with no WAL file by creating and dropping a table, and the
        /// close after it checkpoints: a third of `list`'s time, for nothing a short read needs.
        case single
    }

    /// Opens (creating if needed) the database at `path` and applies pending migrations. A single
    /// connection (`list`, `status`) that cannot open the store for writing (a read-only mount, a
    /// backup) opens it read-only, and failing that as an immutable file.
    public init(path: String, connections: Connections = .pool, clock: TimeSource = .system) throws(StoreError) {
        Self.configureSQLite
        self.path = path
        self.clock = clock
        var configuration = Configuration()
        // A command that reads waits a few seconds for a lock; a pull, which writes, longer. Past
        // that the store is reported as locked (exit 75), never waited for in silence.
        configuration.busyMode = .timeout(connections == .single ? 3 : 10)
        let opening = Opening()
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                // Before anything is written (a pool writes as it opens): a newer feedsync's store is
                // refused here, untouched.
                let upToDate = try Self.isUpToDate(db)
                opening.upToDate.withLock { $0 = upToDate }
                // WAL with NORMAL sync survives a killed process; a power cut may lose the last pages.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            // The search index's triggers make an item's indexed text again (Migrations/0009).
            db.add(function: Self.searchTitle)
            db.add(function: Self.searchBody)
        }
        do {
            database = try Self.open(
                path: path, configuration: configuration, connections: connections, opening: opening)
        } catch {
            let failure = Self.storeError(error, "cannot open the database \(path)")
            guard connections == .single, failure.kind == .failure, FileManager.default.fileExists(atPath: path) else {
                throw failure
            }
            configuration.readonly = true
            var opened: (any DatabaseWriter)?
            // Read-only needs the WAL's shared-memory file; an immutable file needs nothing written,
            // but ignores the WAL, so it is opened so only when the WAL holds no commit.
            var names = [path]
            let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
            if wal == 0 { names.append("file:\(Self.uriEscaped(path))?immutable=1") }
            for name in names where opened == nil {
                opened = try? Self.openReadOnly(path: name, configuration: configuration)
            }
            guard let opened else { throw failure }
            database = opened
        }
    }

    /// Opens a store that is up to date for reading only; a store that needs a migration cannot be.
    private static func openReadOnly(path: String, configuration: Configuration) throws -> any DatabaseWriter {
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try database.read { db in
            guard try isUpToDate(db) else {
                throw StoreError("the store needs an upgrade, which a read-only store cannot have")
            }
        }
        return database
    }

    /// `path` with the characters a URI gives a meaning to percent-escaped.
    private static func uriEscaped(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }

    /// What the connection that may write found as it opened (`isUpToDate`).
    final class Opening: Sendable {
        let upToDate = Mutex(false)
    }

    /// Whether every migration this version knows has been applied, from one read of the
    /// migrations table. A store some of whose migrations this version does not know was written
    /// by a newer feedsync: its schema may mean things this version would get wrong, so it is not
    /// touched (this throws).
    static func isUpToDate(_ db: Database) throws -> Bool {
        let applied = try appliedMigrations(db)
        let known = Set(embeddedMigrations.map(\.name))
        let unknown = applied.subtracting(known)
        guard unknown.isEmpty else {
            throw StoreError(
                "this store was written by a newer feedsync "
                    + "(its schema has \(unknown.sorted().joined(separator: ", "))); "
                    + "upgrade feedsync, or set FEEDSYNC_HOME to another folder",
                kind: .newer)
        }
        return applied.count == known.count
    }

    /// The migrations GRDB recorded as applied, none when it has no table for them yet: read by
    /// position, where `DatabaseMigrator.appliedIdentifiers`' generic fetch and the migrator it
    /// needs made a tenth of a view's start (measured).
    static func appliedMigrations(_ db: Database) throws -> Set<String> {
        let table = try db.makeStatement(
            sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
        guard try Row.fetchCursor(table).next() != nil else { return [] }
        let statement = try db.makeStatement(sql: "SELECT identifier FROM grdb_migrations")
        var applied = Set<String>()
        let rows = try Row.fetchCursor(statement)
        while try rows.next() != nil {
            if let name = statement.value(at: 0).text { applied.insert(name) }
        }
        return applied
    }

    /// Opens the database and applies pending migrations. A store already up to date is only read,
    /// so `list` never waits for, or gets in the way of, a pull. Processes opening one store take
    /// turns, holding an exclusive `flock` on its folder (which nothing else locks) while they
    /// open it: two that find a new store would otherwise race to create and migrate it, and the
    /// loser's migration would fail on what the winner made. The turn lasts an open, or a
    /// migration when one is due.
    static func open(
        path: String, configuration: Configuration, connections: Connections, opening: Opening
    ) throws -> any DatabaseWriter {
        let directory = (path as NSString).deletingLastPathComponent
        let folder = Glibc.open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if folder >= 0 { close(folder) } }  // which ends the turn
        while folder >= 0, flock(folder, LOCK_EX) != 0, errno == EINTR {}
        func connect() throws -> any DatabaseWriter {
            switch connections {
            case .pool: try DatabasePool(path: path, configuration: configuration)
            case .single: try DatabaseQueue(path: path, configuration: configuration)
            }
        }
        let database = try connect()
        if opening.upToDate.withLock({ $0 }) { return database }
        try migrator.migrate(database)
        // A pool sets WAL itself; a store made by one connection is made WAL for the pools that
        // follow (the mode is kept in the file).
        if connections == .single {
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
        }
        // Reader connections that read before the migration keep the old schema in their
        // prepared statements' columns: start afresh.
        return try connect()
    }

    /// Before SQLite's first use in the process: its memory statistics off. Counting took a
    /// process-wide mutex on every allocation SQLite makes (BENCHMARKS.md).
    private static let configureSQLite: Void = {
        _ = fs_sqlite_without_memory_statistics()
        _ = fs_sqlite_with_uri_names()
    }()

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in embeddedMigrations {
            migrator.registerMigration(migration.name) { db in
                try db.execute(sql: migration.text)
                if migration.name == "0009_search_contentless" { try indexForSearch(db) }
                if migration.name == "0010_article_pictures" { try findArticlePictures(db) }
            }
        }
        return migrator
    }

    /// `SearchText.title` and `SearchText.body` as SQL functions, for the search index's triggers.
    static let searchTitle = DatabaseFunction("search_title", argumentCount: 1, pure: true) { values in
        SearchText.title(String.fromDatabaseValue(values[0]) ?? "")
    }
    static let searchBody = DatabaseFunction("search_body", argumentCount: 2, pure: true) { values in
        SearchText.body(content: String.fromDatabaseValue(values[0]), summary: String.fromDatabaseValue(values[1]))
    }

    /// Fills the search index with the items stored before it was made as it is now (0006 made
    /// it, 0009 made it anew), as a page commit would: in Swift, which SQL cannot do (plain text
    /// from HTML, spaced-out CJK characters).
    static func indexForSearch(_ db: Database) throws {
        let insert = try db.makeStatement(sql: "INSERT INTO item_search (rowid, title, body) VALUES (?, ?, ?)")
        let items = try Row.fetchCursor(db, sql: "SELECT id, title, content, summary FROM item")
        while let item = try items.next() {
            try insert.execute(arguments: [
                item["id"] as Int64, SearchText.title(item["title"] ?? ""),
                SearchText.body(content: item["content"], summary: item["summary"]),
            ])
        }
    }

    /// Finds the pictures in the content of the items stored before content pictures were kept,
    /// as a page commit would (relative references against the item's page).
    static func findArticlePictures(_ db: Database) throws {
        let items = try Row.fetchCursor(db, sql: "SELECT id, link, content FROM item WHERE content IS NOT NULL")
        while let item = try items.next() {
            let content: String = item["content"]
            try linkArticlePictures(
                db, item: item["id"], ArticlePictures.find(in: Array(content.utf8), base: item["link"]))
        }
    }

    /// The names of the migrations applied to this database, in order.
    public func appliedMigrations() async throws(StoreError) -> [String] {
        try await read { db in try Self.migrator.appliedMigrations(db) }
    }

    /// `PRAGMA integrity_check`'s answer: `["ok"]` for a sound file.
    public func integrityCheck() async throws(StoreError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    // Reads and writes run on the caller's thread (GRDB's synchronous API), not by its async API's
    // two thread hops a call: a long document's 120 commits took P2 5–8 % longer so, and a
    // cancelled pull still writes its feeds' records, which the async API refuses
    // (docs/architecture.md, Concurrency model).
    func read<T>(_ body: (Database) throws -> T) async throws(StoreError) -> T {
        do { return try database.read(body) } catch { throw Self.storeError(error, "cannot read \(path)") }
    }

    func write<T>(_ body: (Database) throws -> T) async throws(StoreError) -> T {
        do { return try database.write(body) } catch { throw Self.storeError(error, "cannot write \(path)") }
    }

    /// `error` as a StoreError, its message after `context`; a lock held past the busy timeout
    /// is said so, in words.
    static func storeError(_ error: any Error, _ context: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return StoreError("the store is locked by another process; try again when it is done", kind: .locked)
        }
        return StoreError("\(context): \(describe(error))")
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "SQLite error \(error.resultCode)"
        }
        return String(describing: error)
    }
}

// MARK: - Feeds: subscribing, how each pull ended, status

extension Store {
    /// Remembers `url` as a subscribed feed, or returns it if it already is, with its format set
    /// as `format` says.
    public func subscribe(url: String, format: FormatSetting = .keep) async throws(StoreError) -> Feed {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO feed (url, added_at, format) VALUES (?, ?, 'auto') ON CONFLICT(url) DO NOTHING",
                arguments: [url, clock.now().timeIntervalSince1970])
            switch format {
            case .keep: break
            case .found: try db.execute(sql: "UPDATE feed SET format_chosen = 0 WHERE url = ?", arguments: [url])
            case .chosen(let format):
                try db.execute(
                    sql: "UPDATE feed SET format = ?, format_chosen = 1 WHERE url = ?",
                    arguments: [format.rawValue, url])
            }
            return try Feed.fetchOne(db, sql: "SELECT * FROM feed WHERE url = ?", arguments: [url])!
        }
    }

    /// Subscribes to those of `feeds` (an OPML file's) not subscribed yet (URLs compared as given),
    /// each with its title, site and folder, in one transaction; returns which were added.
    public func subscribe(_ feeds: [OPML.Entry]) async throws(StoreError) -> [Bool] {
        try await write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO feed (url, added_at, format, custom_title, folder, site_url)
                    VALUES (?, ?, 'auto', ?, ?, ?) ON CONFLICT (url) DO NOTHING
                    """)
            let now = clock.now().timeIntervalSince1970
            return try feeds.map { feed in
                try insert.execute(arguments: [feed.url, now, feed.title, feed.folder, feed.siteURL])
                return db.changesCount == 1
            }
        }
    }

    /// Every subscribed feed, in the order they were added.
    public func feeds() async throws(StoreError) -> [Feed] {
        try await read { db in try Feed.all(db) }
    }

    public func feed(url: String) async throws(StoreError) -> Feed? {
        try await read { db in try Feed.fetchOne(db, sql: "SELECT * FROM feed WHERE url = ?", arguments: [url]) }
    }

    /// Records how a pull of the feed ended and when it is due again. A permanent redirect seen
    /// by the pull before this one too moves the feed to its target (unless another feed is
    /// there); returns the URL the feed moved to, if it did.
    @discardableResult
    public func recordPull(feedID: Int64, _ pull: PullRecord) async throws(StoreError) -> String? {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE feed SET last_pull_at = ?, last_outcome = ?, last_error = ?, next_retry_at = ?, malformed = ?,
                        due_at = ?, due_reason = ?, failures = ?, unanswered = ?, gone_at = coalesce(gone_at, ?)
                    WHERE id = ?
                    """,
                arguments: [
                    pull.at.timeIntervalSince1970, pull.outcome.rawValue, pull.error,
                    pull.retryAfter?.timeIntervalSince1970, pull.malformed,
                    pull.due?.timeIntervalSince1970, pull.dueReason, pull.failures, pull.unanswered,
                    pull.gone ? pull.at.timeIntervalSince1970 : nil, feedID,
                ])
            if let history = pull.history {
                try db.execute(
                    sql: "UPDATE feed SET history_stop = ?, history_retry_at = ? WHERE id = ?",
                    arguments: [history.stop, history.retryAt?.timeIntervalSince1970, feedID])
            }
            if let validators = pull.validators {
                try db.execute(
                    sql: "UPDATE feed SET etag = ?, last_modified = ? WHERE id = ?",
                    arguments: [validators.etag, validators.lastModified, feedID])
            }
            if let found = pull.found { try Self.write(found, feedID: feedID, db) }
            if let schedule = pull.schedule {
                try db.execute(
                    sql: "UPDATE feed SET ttl = ?, update_interval = ?, skip_hours = ?, skip_days = ? WHERE id = ?",
                    arguments: [
                        schedule.ttlMinutes, schedule.updateSeconds, schedule.skipHours, schedule.skipDays, feedID,
                    ])
            }
            guard pull.askedFeedURL else { return nil }
            let (url, seenBefore) =
                try Row.fetchOne(
                    db, sql: "SELECT url, redirect_url FROM feed WHERE id = ?", arguments: [feedID]
                ).map { ($0.text("url") ?? "", $0.text("redirect_url")) } ?? ("", nil)
            guard let target = pull.redirect, target == seenBefore,
                try Bool.fetchOne(db, sql: "SELECT 1 FROM feed WHERE url = ?", arguments: [target]) == nil
            else {
                try db.execute(
                    sql: "UPDATE feed SET redirect_url = ? WHERE id = ?", arguments: [pull.redirect, feedID])
                return nil
            }
            try db.execute(
                sql: "UPDATE feed SET url = ?, moved_from = ?, moved_at = ?, redirect_url = NULL WHERE id = ?",
                arguments: [target, url, pull.at.timeIntervalSince1970, feedID])
            // The reading position of the feed's own list is kept by its URL.
            try db.execute(
                sql: "UPDATE OR IGNORE reading_position SET scope = ? WHERE scope = ?", arguments: [target, url])
            return target
        }
    }

    /// Per feed: items stored, pictures by status, and everything the feed row says.
    public func status() async throws(StoreError) -> [FeedStatus] {
        try await read { db in
            let feeds = try Feed.all(db)
            return try feeds.map { feed in
                var pictures: [PictureStatus: (count: Int, bytes: Int64)] = [:]
                // Distinct pictures, however many items share one: the rows' own and those inside
                // their articles, the same pictures a pull counts as it downloads them.
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT status, count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM picture
                        WHERE id IN (
                            SELECT picture_id FROM item WHERE feed_id = ?1
                            UNION SELECT c.picture_id FROM item_content_picture c JOIN item i ON i.id = c.item_id
                            WHERE i.feed_id = ?1)
                        GROUP BY status
                        """,
                    arguments: [feed.id])
                {
                    guard let status = row.text("status").flatMap(PictureStatus.init(rawValue:)) else { continue }
                    pictures[status] = (row.integer("n") ?? 0, Int64(row.integer("bytes") ?? 0))
                }
                pictures[.none] = (
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM item WHERE feed_id = ? AND picture_id IS NULL",
                        arguments: [feed.id]) ?? 0, 0
                )
                let count =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE feed_id = ?", arguments: [feed.id]) ?? 0
                return FeedStatus(feed: feed, itemCount: count, pictures: pictures)
            }
        }
    }
}

// MARK: - Reading: feeds' counts, items, marks, renaming and removing

extension Store {
    /// Every feed with its item and unread counts, in the order they were added. The counts come
    /// from `band_size` and the triggers' `read_count`: no feed's items are scanned.
    public func feedSummaries() async throws(StoreError) -> [FeedSummary] {
        try await read { db in
            let statement = try db.makeStatement(
                sql: """
                    SELECT \(FeedColumn.selection), read_count,
                        coalesce((SELECT sum(size) FROM band_size WHERE feed_id = feed.id), 0)
                    FROM feed ORDER BY id
                    """)
            let (readColumn, itemsColumn) = (CInt(FeedColumn.allCases.count), CInt(FeedColumn.allCases.count + 1))
            var summaries: [FeedSummary] = []
            summaries.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM feed") ?? 0)
            let rows = try Row.fetchCursor(statement)
            while try rows.next() != nil {
                let count = statement.value(at: itemsColumn).integer(in: 0...Int(Int32.max)) ?? 0
                let read = statement.value(at: readColumn).integer(in: 0...Int(Int32.max)) ?? 0
                summaries.append(FeedSummary(feed: Feed(statement), items: count, unread: max(0, count - read)))
            }
            return summaries
        }
    }

    /// Gives the feed a title of the user's, or with nil gives it back its own.
    public func rename(feedID: Int64, title: String?) async throws(StoreError) {
        try await write { db in
            try db.execute(sql: "UPDATE feed SET custom_title = ? WHERE id = ?", arguments: [title, feedID])
        }
    }

    /// Files the feeds `feedIDs` in `folder` (a path, `Tech/Swift`), or in none; one transaction.
    public func setFolder(_ folder: String?, feedIDs: [Int64]) async throws(StoreError) {
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE feed SET folder = ? WHERE id = ?")
            for id in feedIDs { try update.execute(arguments: [folder, id]) }
        }
    }

    /// Unsubscribes: the feed, its items, and the pictures no item uses any more go, in one
    /// transaction. Returns the files of the pictures that went, for the caller to delete.
    public func removeFeed(id: Int64) async throws(StoreError) -> [String] {
        try await write { db in
            // Items (and their band sizes) go with the feed: ON DELETE CASCADE.
            try db.execute(sql: "DELETE FROM feed WHERE id = ?", arguments: [id])
            return try Self.deleteUnusedPictures(db)
        }
    }

    /// What removing feed `id` would take: its items, and the cached pictures (with their bytes)
    /// no other feed's item shows.
    public func removal(feedID id: Int64) async throws(StoreError) -> (items: Int, pictures: Int, bytes: Int64) {
        try await read { db in
            let items = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE feed_id = ?", arguments: [id]) ?? 0
            let row = try Row.fetchOne(
                db,
                sql: """
                    WITH shown(picture_id) AS (
                        SELECT picture_id FROM item WHERE feed_id = ?1 AND picture_id IS NOT NULL
                        UNION SELECT shown.picture_id FROM item_content_picture AS shown
                            JOIN item ON item.id = shown.item_id WHERE item.feed_id = ?1)
                    SELECT count(*), coalesce(sum(picture.bytes), 0) FROM shown
                    JOIN picture ON picture.id = shown.picture_id AND picture.status = 'cached'
                    WHERE NOT EXISTS (SELECT 1 FROM item WHERE picture_id = shown.picture_id AND feed_id != ?1)
                        AND NOT EXISTS (
                            SELECT 1 FROM item_content_picture AS other JOIN item ON item.id = other.item_id
                            WHERE other.picture_id = shown.picture_id AND item.feed_id != ?1)
                    """, arguments: [id])
            return (items, row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    /// Removes the items read, not starred and older than `before` (their place in the timeline),
    /// but for an account's item with a mark still queued for its server, in one transaction:
    /// their keys stay (`item_gone`) so no pull stores them again, the lists close up around
    /// them (each band's seqs renumbered from 0, the band sizes and timeline runs of their feeds
    /// made again), and the pictures no item uses any more go. How many went, and the files of
    /// the pictures that went, for the caller to delete.
    public func removeItems(before: Date) async throws(StoreError) -> (items: Int, files: [String]) {
        try await write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TABLE doomed AS SELECT id, feed_id, band, key FROM item
                    WHERE read = 1 AND starred = 0 AND timeline < ?
                        AND NOT EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id)
                    """, arguments: [before.timeIntervalSince1970])
            defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.doomed; DROP TABLE IF EXISTS temp.renumbered") }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.doomed") ?? 0
            guard count > 0 else { return (0, []) }
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO item_gone (feed_id, key, band) SELECT feed_id, key, band FROM temp.doomed;
                    DELETE FROM item WHERE id IN (SELECT id FROM temp.doomed);
                    CREATE TEMP TABLE renumbered AS
                        SELECT item.id, row_number() OVER (PARTITION BY item.feed_id, item.band ORDER BY item.seq) - 1 AS seq
                        FROM item WHERE (item.feed_id, item.band) IN (SELECT feed_id, band FROM temp.doomed);
                    UPDATE item SET seq = -1 - seq WHERE id IN (SELECT id FROM temp.renumbered);
                    UPDATE item SET seq = renumbered.seq FROM temp.renumbered WHERE renumbered.id = item.id;
                    UPDATE band_size SET size = (
                        SELECT count(*) FROM item WHERE item.feed_id = band_size.feed_id AND item.band = band_size.band)
                    WHERE (feed_id, band) IN (SELECT feed_id, band FROM temp.doomed);
                    DELETE FROM timeline_run WHERE feed_id IN (SELECT feed_id FROM temp.doomed);
                    INSERT INTO timeline_run (timeline, feed_id, band, first_seq, size)
                        SELECT timeline, feed_id, band, min(seq), count(*) FROM (
                            SELECT timeline, feed_id, band, seq,
                                seq - row_number() OVER (PARTITION BY feed_id, band, timeline ORDER BY seq) AS island
                            FROM item WHERE feed_id IN (SELECT feed_id FROM temp.doomed)
                        ) GROUP BY timeline, feed_id, band, island;
                    """)
            return (count, try Self.deleteUnusedPictures(db))
        }
    }

    /// The item numbered `number`, whole, or nil when there is none.
    public func item(number: Int64) async throws(StoreError) -> ItemDetail? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.listColumns), item.author, summary, content, article.status AS article_status,
                        article.html AS article_html, article.error AS article_error
                    FROM item \(Self.listJoin)
                    LEFT JOIN item_article AS article ON article.item_id = item.id AND article.link = item.link
                    WHERE item.id = ?
                    """,
                arguments: [number]
            ).map { row in
                let article = row.text("article_status") == "stored" ? row.text("article_html") : nil
                return ItemDetail(
                    item: try Self.withEnclosures(db, [Self.storedItem(row, position: 0)])[0],
                    author: row.text("author"),
                    summary: row.text("summary"), content: article ?? row.text("content"),
                    contentSource: article == nil ? "feed" : "page",
                    articleError: row.text("article_status") == "failed" ? row.text("article_error") : nil,
                    pictures: try Self.articlePictures(db, ofItem: number))
            }
        }
    }

    /// The file of item `number`'s own picture, or of the picture at `position` inside its
    /// article, when that picture is cached; nil otherwise. One row, not the whole item: the page
    /// asks for fifty pictures a screen.
    public func cachedPictureFile(ofItem number: Int64, inside position: Int? = nil) async throws(StoreError)
        -> CachedFile?
    {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: position == nil
                    ? """
                    SELECT picture.id, picture.file, picture.bytes, picture.hash
                    FROM item JOIN picture ON picture.id = item.picture_id
                    WHERE item.id = ? AND picture.status = 'cached'
                    """
                    : """
                    SELECT picture.id, picture.file, picture.bytes, picture.hash
                    FROM item_content_picture AS shown JOIN picture ON picture.id = shown.picture_id
                    WHERE shown.item_id = ? AND shown.position = ? AND picture.status = 'cached'
                    """,
                arguments: position.map { [number, $0] } ?? [number]
            ).flatMap { CachedFile.from($0) }
        }
    }

    /// Marks the items numbered `numbers` read (or unread); returns the numbers that name no item.
    public func mark(_ numbers: [Int64], read: Bool) async throws(StoreError) -> [Int64] {
        try await set("read", read, of: numbers)
    }

    /// Stars the items numbered `numbers` (or takes their stars off); returns the numbers that name no item.
    public func star(_ numbers: [Int64], starred: Bool) async throws(StoreError) -> [Int64] {
        try await set("starred", starred, of: numbers)
    }

    /// Sets the flag `column` (read, starred) of the items numbered `numbers`, queuing the change
    /// for an account's items; the numbers that name no item.
    private func set(_ column: String, _ value: Bool, of numbers: [Int64]) async throws(StoreError) -> [Int64] {
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE item SET \(column) = ? WHERE id = ?")
            var missing: [Int64] = []
            for number in numbers {
                try update.execute(arguments: [value, number])
                // An UPDATE counts every row its WHERE matched, changed or not.
                if db.changesCount == 0 { missing.append(number) }
            }
            try queueMarks(
                db, field: column, value: value, where: "item.id IN (SELECT value FROM json_each(?))",
                ["[" + numbers.map(String.init).joined(separator: ",") + "]"])
            return missing
        }
    }

    /// Marks every item read (or unread), or only `feedID`'s, or only those published (or, with no
    /// date, placed in the timeline) before `before`; returns how many changed.
    public func markAll(read: Bool, feedID: Int64?, before: Date?) async throws(StoreError) -> Int {
        try await write { db in
            var conditions = ["read != ?"]
            var values: [(any DatabaseValueConvertible)?] = [read]
            if let feedID {
                conditions.append("feed_id = ?")
                values.append(feedID)
            }
            if let before {
                conditions.append("timeline < ?")
                values.append(before.timeIntervalSince1970)
            }
            let filter = conditions.joined(separator: " AND ")
            // The account items' marks wait for their servers: queued before the update changes
            // what `read != ?` selects.
            try queueMarks(db, field: "read", value: read, where: filter, values)
            try db.execute(
                sql: "UPDATE item SET read = ? WHERE \(filter)", arguments: StatementArguments([read] + values))
            return db.changesCount
        }
    }

}

// MARK: - Pages: what a pull stores

extension Store {
    /// For those of `keys` already stored in the feed, the band each one sits in.
    public func bands(feedID: Int64, keys: [String]) async throws(StoreError) -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        return try await read { db in
            // One statement a page: json_each walks the keys in order and each probes the
            // (feed_id, key) index; an `IN (…)` list would sort the keys into a temporary table first.
            var found: [String: Int] = [:]
            // An item removed for its age (`item_gone`) is known where it was: the paging treats it
            // as stored, and `writeItems` does not store it again.
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT item.key, item.band FROM json_each(?1) AS wanted
                        CROSS JOIN item ON item.feed_id = ?2 AND item.key = wanted.value
                        UNION ALL
                        SELECT gone.key, gone.band FROM json_each(?1) AS wanted
                        CROSS JOIN item_gone AS gone ON gone.feed_id = ?2 AND gone.key = wanted.value
                        """),
                arguments: [jsonArray(keys), feedID])
            while let row = try rows.next() { found[row[0]] = row[1] as Int }
            return found
        }
    }

    /// The highest band in use (the lowest number), or `nil` when the feed has no items.
    public func topBand(feedID: Int64) async throws(StoreError) -> Int? {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT min(band) FROM item WHERE feed_id = ?", arguments: [feedID])
        }
    }

    /// Writes items to `band` of the feed: those not stored before appended in order, those stored
    /// before refreshed in place (a `commit`'s, or an account page's, in its transaction). Returns
    /// how many were new.
    @discardableResult
    func writeItems(_ db: Database, feedID: Int64, band: Int, new: [FeedItem], updated: [FeedItem]) throws
        -> Int
    {
        let now = clock.now().timeIntervalSince1970
        var seq =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT max(seq) FROM item WHERE feed_id = ? AND band = ?"),
                arguments: [feedID, band]) ?? -1
        // New and known items are written alike: an insert that finds the key already stored
        // refreshes the content in place instead, so a known key keeps its place (band, seq).
        // seq counts only rows really inserted, keeping each band's seq 0, 1, 2 ... without
        // holes, and band_size in step (list relies on both). Items sharing a picture URL share
        // its row.
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO item (feed_id, key, band, seq, title, link, pic_url, picture_id, published, summary,
                                  content, stored_at, timeline, author)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feed_id, key) DO NOTHING
                """)
        let refresh = try db.cachedStatement(
            sql: """
                UPDATE item SET title = ?, link = ?, published = ?, summary = ?, content = ?, pic_url = ?,
                    picture_id = ?, author = ?
                WHERE feed_id = ? AND key = ? RETURNING id
                """)
        let index = try db.cachedStatement(sql: "INSERT INTO item_search (rowid, title, body) VALUES (?, ?, ?)")
        let dropEnclosures = try db.cachedStatement(sql: "DELETE FROM item_enclosure WHERE item_id = ?")
        let addEnclosure = try db.cachedStatement(
            sql: "INSERT INTO item_enclosure (item_id, position, url, type, length, duration) VALUES (?, ?, ?, ?, ?, ?)"
        )
        func enclose(_ id: Int64, _ item: FeedItem) throws {
            for (position, file) in item.enclosures.enumerated() {
                try addEnclosure.execute(arguments: [id, position, file.url, file.type, file.length, file.duration])
            }
        }
        var timeline = try Timeline(db, feedID: feedID, band: band, above: seq)
        var inserted = 0
        var searched: [(id: Int64, item: FeedItem)] = []
        // An item stored under the key an earlier rule gave it moves to its key (no
        // duplicate; its place, read state and number kept).
        let rekey = try db.cachedStatement(sql: "UPDATE OR IGNORE item SET key = ? WHERE feed_id = ? AND key = ?")
        for item in updated {
            if let former = item.formerKey { try rekey.execute(arguments: [item.key, feedID, former]) }
        }
        let gone = try db.cachedStatement(sql: "SELECT 1 FROM item_gone WHERE feed_id = ? AND key = ?")
        for (index, item) in [new, updated].joined().enumerated() {
            // A known key may be one removed for its age: it stays removed.
            if index >= new.count, try Bool.fetchOne(gone, arguments: [feedID, item.key]) == true { continue }
            let pictureID = try item.pictureURL.map { url in try Self.pictureID(db, url: url) }
            let time = timeline.time(published: item.publishedSeconds, now: Int64(now))
            // The one statement stepped through SQLite's C API (Store+SQLite.swift explains why).
            try insert.run(db) { values in
                values.add(feedID)
                values.add(item.key)
                values.add(band)
                values.add(seq + 1)
                values.add(item.title)
                values.add(item.link)
                values.add(item.pictureURL)
                values.add(pictureID)
                values.add(item.published)
                values.add(item.summary)
                values.add(item.content)
                values.add(now)
                values.add(time)
                values.add(item.author)
            }
            if db.changesCount == 1 {
                seq += 1
                inserted += 1
                timeline.append(time, seq: seq)
                let id = db.lastInsertedRowID
                searched.append((id, item))
                try Self.linkArticlePictures(db, item: id, item.contentPictures ?? [])
                try enclose(id, item)
            } else {
                // A changed text re-indexes itself (Migrations/0009's trigger).
                refresh.setUncheckedArguments([
                    item.title, item.link, item.published, item.summary, item.content, item.pictureURL, pictureID,
                    item.author, feedID, item.key,
                ])
                guard let id = try Int64.fetchOne(refresh) else { continue }
                try db.cachedStatement(sql: "DELETE FROM item_content_picture WHERE item_id = ?").execute(
                    arguments: [id])
                try Self.linkArticlePictures(db, item: id, item.contentPictures ?? [])
                try dropEnclosures.execute(arguments: [id])
                try enclose(id, item)
            }
        }
        // The search index is written after the items, not between them: FTS5 rows inserted
        // between other statements cost four times as much (BENCHMARKS.md, P6).
        for (id, item) in searched {
            // The index keeps no copy of the text: a row leaves it only given the same text,
            // made again from the item's columns (search_body), so the parser's must be that.
            assert(
                item.searchBody == nil
                    || item.searchBody == SearchText.body(content: item.content, summary: item.summary))
            try index.run(db) { values in
                values.add(id)
                values.add(SearchText.title(item.title))
                values.add(item.searchBody ?? SearchText.body(content: item.content, summary: item.summary))
            }
        }
        try timeline.write(db)
        // GRDB's observers did not see the inserts stepped above: tell them.
        try db.notifyChanges(in: Table("item"))
        if inserted > 0 {
            try db.cachedStatement(
                sql: """
                    INSERT INTO band_size (feed_id, band, size) VALUES (?, ?, ?)
                    ON CONFLICT (feed_id, band) DO UPDATE SET size = size + excluded.size
                    """
            ).execute(arguments: [feedID, band, inserted])
        }
        return inserted
    }

    /// Writes a page's items and the cursor that follows them in one transaction: a process killed
    /// at any instant leaves either both or neither.
    public func commit(_ page: PageCommit) async throws(StoreError) {
        try await write { db in
            try writeItems(
                db, feedID: page.feedID, band: page.band, new: page.newItems, updated: page.updatedItems)
            let items = page.newItems + page.updatedItems
            if items.count >= 3 {
                // A podcast's episodes are the sound or video they carry, not summaries of a page.
                let short = items.filter { item in
                    !item.enclosures.contains(where: \.isSoundOrVideo)
                        && (item.content ?? item.summary ?? "").utf8.count < 600
                        && (item.link?.hasPrefix("http://") == true || item.link?.hasPrefix("https://") == true)
                }
                try db.cachedStatement(sql: "UPDATE feed SET summary_only = ? WHERE id = ?").execute(
                    arguments: [10 * short.count >= 8 * items.count, page.feedID])
            }
            let cursor = page.cursor
            try db.cachedStatement(
                sql: """
                    UPDATE feed SET etag = ?, last_modified = ?, body_hash = ?, remote_total = ?, per_page = ?,
                        backfill_page = ?, backfill_url = ?, backfill_total = ?, backfill_done = ?, backfill_note = ?,
                        gap_band = ?, gap_page = ?, gap_total = ?, gap_url = ?
                    WHERE id = ?
                    """
            ).execute(arguments: [
                cursor.etag, cursor.lastModified, cursor.bodyHash, cursor.remoteTotal, cursor.perPage,
                cursor.backfillPage, cursor.backfillURL, cursor.backfillTotal, cursor.backfillDone, cursor.backfillNote,
                cursor.gap?.band, cursor.gap?.page, cursor.gap?.total, cursor.gap?.url, page.feedID,
            ])
            if let found = page.found { try Self.write(found, feedID: page.feedID, db) }
        }
    }
}

// MARK: - Lists: the pages `list` and the reading page show, and where the reader is

extension Store {
    /// The row (0-based) the item numbered `number` is at now in one feed's list or the timeline;
    /// nil when there is no such item.
    public func row(ofItem number: Int64, feedURL: String?) async throws(StoreError) -> Int? {
        try await read { db in
            guard
                let place = try Row.fetchOne(
                    db, sql: "SELECT feed_id, band, seq FROM item WHERE id = ?", arguments: [number]
                ).map({ ListPlace(feedID: $0["feed_id"], band: $0["band"], seq: $0["seq"]) })
            else { return nil }
            return try Self.row(db, of: place, in: ListOrder(feedURL: feedURL))
        }
    }

    /// One page of the list `query` describes.
    public func list(_ query: ListQuery, page: Int, perPage: Int) async throws(StoreError) -> ListedPage {
        try await read { db in
            let offset = (page - 1) * perPage
            let total: Int
            let items: [StoredItem]
            if query.isFiltered {
                (total, items) = try Self.filteredList(db, query, offset: offset, limit: perPage)
            } else {
                let order = ListOrder(feedURL: query.feedURL)
                total = try order.total(db)
                items = try Self.listRows(
                    db, order, positions: offset..<offset + perPage, columns: Self.listColumns, join: Self.listJoin
                ).map { position, row in Self.storedItem(row, position: position + 1) }
            }
            let lastPull = try Double.fetchOne(
                db, sql: "SELECT max(last_pull_at) FROM feed \(query.feedURL == nil ? "" : "WHERE url = ?")",
                arguments: query.feedURL.map { [$0] } ?? [])
            return ListedPage(
                items: try Self.withEnclosures(db, items), total: total,
                lastPullAt: lastPull.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// `items` with their enclosures: one statement for the page, on the table's key.
    static func withEnclosures(_ db: Database, _ items: [StoredItem]) throws -> [StoredItem] {
        guard !items.isEmpty else { return items }
        var found: [Int64: [FeedEnclosure]] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT file.item_id, file.url, file.type, file.length, file.duration FROM json_each(?) AS wanted
                    CROSS JOIN item_enclosure AS file ON file.item_id = wanted.value ORDER BY file.item_id, file.position
                    """),
            arguments: ["[" + items.map { String($0.number) }.joined(separator: ",") + "]"])
        while let row = try rows.next() {
            found[row[0], default: []].append(
                FeedEnclosure(url: row[1], type: row[2], length: row[3], duration: row[4]))
        }
        guard !found.isEmpty else { return items }
        return items.map { item in
            var item = item
            item.enclosures = found[item.number] ?? []
            return item
        }
    }

    /// Remembers the page the reader was shown, in the list of one feed or of all feeds. The page
    /// already remembered last is not written again: paging back and forth over one page stays a
    /// read, with no WAL to start and sync, no checkpoint when the store closes.
    public func setReadingPosition(_ position: ReadingPosition) async throws(StoreError) {
        guard try await latestReadingPosition() != position else { return }
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO reading_position (scope, page, per_page, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (scope) DO UPDATE SET page = excluded.page, per_page = excluded.per_page,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    position.feedURL ?? Self.allFeeds, position.page, position.perPage,
                    clock.now().timeIntervalSince1970,
                ])
        }
    }
}

// MARK: - Pictures and settings

extension Store {
    /// The position `list` recorded most recently, in whichever list it was.
    public func latestReadingPosition() async throws(StoreError) -> ReadingPosition? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT scope, page, per_page FROM reading_position ORDER BY updated_at DESC LIMIT 1"
            )
            .map { row in
                let scope = row.text("scope") ?? Self.allFeeds
                // Clamped: the row is read by every pull, and a value from an older version or
                // another tool must not make each of them fail.
                let page = row.integer("page") ?? 1
                let perPage = row.integer("per_page") ?? ReadingPosition.start.perPage
                return ReadingPosition(
                    feedURL: scope == Self.allFeeds ? nil : scope,
                    page: page.clamped(to: ReadingPosition.pages),
                    perPage: perPage.clamped(to: ReadingPosition.perPages))
            }
        }
    }

    /// Pictures shown by rows `rows` of the list of `feedURL`, due for a download: not cached, and
    /// not waiting out a backoff. At most `limit` rows are read: the first ones, or with
    /// `backwards` the last ones, in reverse. One job per picture, at the first of them that shows it.
    public func duePictures(
        feedURL: String?, rows: Range<Int>, limit: Int = .max, backwards: Bool = false
    ) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            try Self.duePictures(db, feedURL: feedURL, rows: rows, limit: limit, backwards: backwards, now: clock.now())
        }
    }

    /// The first `limit` due pictures from row `top` down to the end of the list of `feedURL`, or
    /// from `resume` instead when it is below `top` and still at its row (nothing landed above
    /// it). All in one snapshot, with the place just past the list's last row: a page committed
    /// later lands at or past that place, or moves it to another row.
    public func duePictures(
        feedURL: String?, from top: Int, resuming resume: PlaceAtRow?, limit: Int
    ) async throws(StoreError) -> (jobs: [PictureJob], end: PlaceAtRow?) {
        try await read { db in
            let order = ListOrder(feedURL: feedURL)
            var from = top
            if let resume, resume.row > top, try Self.row(db, of: resume.place, in: order) == resume.row {
                from = resume.row
            }
            let jobs = try Self.duePictures(
                db, feedURL: feedURL, rows: from..<Int(Int32.max), limit: limit, now: clock.now())
            // The list's last item: what lands later lands below it or moves it.
            let (_, segments) = try order.segments(db, from: .max, backwards: true)
            let end = try segments.next().flatMap { last -> PlaceAtRow? in
                let firstSeq: Int = last["first_seq"]
                let size: Int = last["size"]
                let place = ListPlace(feedID: last["feed_id"], band: last["band"], seq: firstSeq + size - 1)
                return try Self.row(db, of: place, in: order).map { PlaceAtRow(place: place, row: $0) }
            }
            return (jobs, end)
        }
    }

    /// The first `limit` due pictures of the feeds other than the one of `feedURL`, feed by feed
    /// in the order they were added, each feed's in its list's order, at no row of that list
    /// (`row` is `far`): what `--images all` fetches once the reader's own list has all its own.
    public func duePictures(outside feedURL: String, far: Int, limit: Int) async throws(StoreError)
        -> [PictureJob]
    {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT item.seq, item.picture_id, picture.url, item.feed_id, item.band FROM item
                    JOIN picture ON picture.id = item.picture_id
                    WHERE item.feed_id IS NOT (SELECT id FROM feed WHERE url = ?) AND \(Self.pictureIsDue("?"))
                    ORDER BY item.feed_id, item.band, item.seq LIMIT ?
                    """, arguments: [feedURL, clock.now().timeIntervalSince1970, limit])
            return Self.pictureJobs(rows.map { (position: far, row: $0) })
        }
    }

    /// Due pictures of the first `perPage` rows of each feed whose own list was never shown, feed
    /// by feed in the order they were added, each at its row in its feed's list. One statement for
    /// all feeds: each band's first row from the band sizes, then a seek per band.
    public func duePicturesOfUnviewedFeeds(perPage: Int) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH band AS (
                        SELECT feed_id, band, sum(size) OVER (PARTITION BY feed_id ORDER BY band) - size AS start
                        FROM band_size
                        WHERE feed_id IN (SELECT id FROM feed WHERE url NOT IN (SELECT scope FROM reading_position)))
                    SELECT item.seq, item.picture_id, picture.url, item.feed_id, item.band, band.start + item.seq
                    FROM band
                    JOIN item ON item.feed_id = band.feed_id AND item.band = band.band AND item.seq < ?1 - band.start
                    JOIN picture ON picture.id = item.picture_id
                    WHERE band.start < ?1 AND \(Self.pictureIsDue("?2"))
                    ORDER BY item.feed_id, item.band, item.seq
                    """, arguments: [perPage, clock.now().timeIntervalSince1970])
            return Self.pictureJobs(rows.map { (position: $0[5] as Int, row: $0) })
        }
    }

    /// The picture of the item numbered `number` as a job, when it has one that is neither cached
    /// nor waiting out a backoff.
    public func duePicture(ofItem number: Int64) async throws(StoreError) -> PictureJob? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT picture.id, picture.url, item.feed_id, item.band, item.seq FROM item
                    JOIN picture ON picture.id = item.picture_id
                    WHERE item.id = ? AND \(Self.pictureIsDue("?"))
                    """, arguments: [number, clock.now().timeIntervalSince1970]
            ).map { row in
                PictureJob(
                    id: row["id"], url: row.text("url") ?? "", row: 0,
                    place: ListPlace(feedID: row["feed_id"], band: row["band"], seq: row["seq"]))
            }
        }
    }

    /// The first `limit` due pictures inside the content of the items at `rows` of the list of
    /// `feedURL`, row by row, each item's in the content's order; from `resume` instead of the
    /// first row when it is inside `rows` and still at its row (a later plan need not step again
    /// over the rows whose pictures the last one found cached).
    public func dueArticlePictures(
        feedURL: String?, rows: Range<Int>, resuming resume: PlaceAtRow? = nil, limit: Int
    ) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            var from = rows.lowerBound
            if let resume, rows.contains(resume.row),
                try Self.row(db, of: resume.place, in: ListOrder(feedURL: feedURL)) == resume.row
            {
                from = resume.row
            }
            return try Self.dueArticlePictures(
                db, feedURL: feedURL, rows: from..<rows.upperBound, limit: limit, now: clock.now())
        }
    }

    /// The due pictures inside the content of the item numbered `number`, in the content's order.
    public func dueArticlePictures(ofItem number: Int64) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT picture.id, picture.url, item.feed_id, item.band, item.seq FROM item
                    JOIN item_content_picture AS shown ON shown.item_id = item.id
                    JOIN picture ON picture.id = shown.picture_id
                    WHERE item.id = ? AND \(Self.pictureIsDue("?"))
                    ORDER BY shown.position
                    """, arguments: [number, clock.now().timeIntervalSince1970]
            ).map { row in
                PictureJob(
                    id: row["id"], url: row.text("url") ?? "", row: 0,
                    place: ListPlace(feedID: row["feed_id"], band: row["band"], seq: row["seq"]))
            }
        }
    }

    /// Records downloaded pictures, all in one transaction, with their byte counts and hashes.
    /// Call only once their files are whole and under their names.
    public func markPicturesCached(_ pictures: [DownloadedPicture]) async throws(StoreError) {
        try await write { db in
            let update = try db.cachedStatement(
                sql: """
                    UPDATE picture SET status = 'cached', file = ?, bytes = ?, hash = ?, mime = ?, attempts = 0,
                        next_attempt_at = NULL, last_error = NULL, updated_at = ?
                    WHERE id = ?
                    """)
            let now = clock.now().timeIntervalSince1970
            for picture in pictures {
                try update.execute(arguments: [
                    picture.file, picture.bytes, Int64(bitPattern: picture.hash), picture.mime, now, picture.id,
                ])
            }
        }
    }

    /// Records a failed download. A `permanent` failure shows as `failed`; a transient one stays
    /// `pending`. Either way it is not tried again before `retryAt`. A picture another download
    /// cached meanwhile stays cached.
    public func markPictureFailed(id: Int64, error: String, permanent: Bool, retryAt: Date) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = ?, file = NULL, bytes = NULL, attempts = attempts + 1,
                        next_attempt_at = ?, last_error = ?, updated_at = ?
                    WHERE id = ? AND status != 'cached'
                    """,
                arguments: [
                    permanent ? "failed" : "pending", retryAt.timeIntervalSince1970, error,
                    clock.now().timeIntervalSince1970, id,
                ])
        }
    }

    /// How many times the picture's download failed in a row.
    public func pictureAttempts(id: Int64) async throws(StoreError) -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT attempts FROM picture WHERE id = ?", arguments: [id]) ?? 0
        }
    }

    /// Every cached picture, each with the row of the list of `feedURL` that shows it nearest the
    /// reader: one inside `window` if any, else the one nearest the rows of the reading `page` (a
    /// picture shown by several rows is as near as its nearest).
    public func cachedPictures(feedURL: String?, page: Range<Int>, window: Range<Int>) async throws(StoreError)
        -> [CachedPicture]
    {
        try await read { db in
            let (filter, arguments): (String, StatementArguments) =
                feedURL.map { ("WHERE item.feed_id = (SELECT id FROM feed WHERE url = ?)", [$0]) } ?? ("", [])
            let order = ListOrder(feedURL: feedURL).itemOrder
            // The distance is PrefetchPlan.distance, 0 inside the window; with one min() in the
            // query, SQLite takes the bare `row` from the row that has it.
            // A picture is shown by a row as its thumbnail or inside its content.
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH ranked AS MATERIALIZED (
                        SELECT id, picture_id, row_number() OVER (ORDER BY \(order)) - 1 AS row FROM item \(filter)
                    ), shown AS (
                        SELECT picture_id, row FROM ranked WHERE picture_id IS NOT NULL
                        UNION ALL
                        SELECT inside.picture_id, ranked.row FROM item_content_picture AS inside
                        JOIN ranked ON ranked.id = inside.item_id
                    )
                    SELECT picture.id, picture.file, picture.bytes, nearest.row FROM picture
                    LEFT JOIN (
                        SELECT picture_id, row, min(CASE
                            WHEN row >= ? AND row < ? THEN 0
                            WHEN row < ? THEN ? - row
                            WHEN row >= ? THEN row - ? + 1
                            ELSE 0 END) AS distance
                        FROM shown GROUP BY picture_id
                    ) AS nearest ON nearest.picture_id = picture.id
                    WHERE picture.status = 'cached'
                    """,
                arguments: [
                    window.lowerBound, window.upperBound, page.lowerBound, page.lowerBound,
                    page.upperBound, page.upperBound,
                ] + arguments)
            return rows.map {
                CachedPicture(
                    id: $0["id"], file: $0.text("file") ?? "",
                    bytes: Int64($0.integer("bytes", in: 0...(1 << 40)) ?? 0),
                    row: $0.integer("row"))
            }
        }
    }

    /// Bytes and count of every cached picture.
    public func cachedTotals() async throws(StoreError) -> CacheTotals {
        try await read { db in
            // Kept by the picture table's triggers (Migrations/0015).
            let row = try Row.fetchOne(db, sql: "SELECT bytes, count FROM cache_total")
            return CacheTotals(bytes: row?[0] ?? 0, count: row?[1] ?? 0)
        }
    }

    /// Forgets a cached file (evicted, gone or damaged): the picture is pending again, and due
    /// at once.
    public func uncachePicture(id: Int64) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = 'pending', file = NULL, bytes = NULL, hash = NULL, mime = NULL,
                        next_attempt_at = NULL
                    WHERE id = ?
                    """,
                arguments: [id])
        }
    }

    /// Records the hash of a picture cached before hashes were kept, if it is still that file.
    public func setPictureHash(_ hash: UInt64, of picture: CachedFile) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE picture SET hash = ? WHERE id = ? AND status = 'cached' AND file = ? AND hash IS NULL",
                arguments: [Int64(bitPattern: hash), picture.id, picture.file])
        }
    }

    /// Deletes pictures no item uses any more; returns the files they had.
    public func deleteUnusedPictures() async throws(StoreError) -> [String] {
        try await write { db in try Self.deleteUnusedPictures(db) }
    }

    /// Every cached picture's file (of the pictures `ids` only, when given).
    public func cachedPictureFiles(ids: [Int64]? = nil) async throws(StoreError) -> [CachedFile] {
        try await read { db in
            let only = ids.map { "AND id IN (\(Array(repeating: "?", count: $0.count).joined(separator: ",")))" } ?? ""
            return try Row.fetchAll(
                db, sql: "SELECT id, file, bytes, hash FROM picture WHERE status = 'cached' \(only)",
                arguments: StatementArguments(ids ?? [])
            ).compactMap { CachedFile.from($0) }
        }
    }

    public func setting(_ name: String) async throws(StoreError) -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT value FROM setting WHERE name = ?", arguments: [name])
        }
    }

    public func setSetting(_ name: String, _ value: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql:
                    "INSERT INTO setting (name, value) VALUES (?, ?) "
                    + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                arguments: [name, value])
        }
    }
}
