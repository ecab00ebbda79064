// FeedSyncStore: the local SQLite store; only this module speaks SQL. Its public API is the
// class in this file (opening, migrations) and its calls by concern: Store+Feeds, +Reading,
// +Pages, +Lists, +Pictures, +Accounts, +Articles, +Rules (rules, views, patterns), +Settings;
// what it takes to write is Store+Inputs.swift (PageCommit, PullRecord). The SQL the calls share
// is Store+Queries, +Commit, +Rows, +Records and +SQLite (the two statements on SQLite's C API).
// The values it gives back are FeedSyncModel's. Where it sits: docs/architecture.md.

internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
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
            for function in Patterns.functions { db.add(function: function) }
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
