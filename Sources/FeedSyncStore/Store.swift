// FeedSyncStore: the local SQLite store; the Store+*.swift files add its calls by subject. Only
// this module speaks SQL. Where it sits: docs/architecture.md.

internal import CFeedSyncSystem
import FeedSyncFeed
import Foundation
import GRDB

/// Where a pull stands with one feed: what to ask for next, and how to ask.
public struct FeedCursor: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?
    /// The hash of the head document those validators came with (`HTTPResponse.bodyHash`).
    public var bodyHash: String?
    public var remoteTotal: Int?
    public var perPage: Int?
    /// Next older page to ask for, numbered as when the feed had `backfillTotal` items.
    /// `nil` until the first page was committed.
    public var backfillPage: Int?
    /// The link to the next older document, for formats that link their pages.
    public var backfillURL: String?
    public var backfillTotal: Int?
    public var backfillDone: Bool
    /// Why the backfill ended before the feed did (a next link feedsync will not follow), if it did.
    public var backfillNote: String?
    /// An interrupted head walk: new items above the old top were only partly fetched.
    public var gap: Walk?

    // What the paging arithmetic accepts, from a server or from the store: within these, no
    // product or sum of them overflows. A server's figure beyond them is refused as bad data.
    public static let totals = FeedLimits.totals
    public static let pages = 1...1_000_000_000
    public static let perPages = 1...100_000_000
    public static let bands = -1_000_000_000...0

    /// A walk through consecutive pages that was stopped and will be continued.
    public struct Walk: Sendable, Equatable {
        public var band: Int
        public var page: Int
        public var total: Int?
        /// The link to `page`, for formats that link their pages.
        public var url: String?
        public init(band: Int, page: Int, total: Int?, url: String? = nil) {
            self.band = band
            self.page = page
            self.total = total
            self.url = url
        }
    }

    public init(
        etag: String? = nil, lastModified: String? = nil, bodyHash: String? = nil, remoteTotal: Int? = nil,
        perPage: Int? = nil,
        backfillPage: Int? = nil, backfillURL: String? = nil, backfillTotal: Int? = nil, backfillDone: Bool = false,
        backfillNote: String? = nil, gap: Walk? = nil
    ) {
        self.bodyHash = bodyHash
        self.etag = etag
        self.lastModified = lastModified
        self.remoteTotal = remoteTotal
        self.perPage = perPage
        self.backfillPage = backfillPage
        self.backfillURL = backfillURL
        self.backfillTotal = backfillTotal
        self.backfillDone = backfillDone
        self.backfillNote = backfillNote
        self.gap = gap
    }
}

extension FeedCursor {
    /// Where the next pull continues: what `status` shows and an interrupted pull says.
    public enum Next: Sendable, Equatable {
        /// A head walk was cut off: it goes on from this page of the new items.
        case newItems(page: Int)
        /// No page was stored yet.
        case firstPage
        /// The backfill goes on from page `page` (of `pages`, when the server said), or from
        /// the document at `url` for a feed that links its pages.
        case backfill(page: Int, url: String?, pages: Int?)
        /// The backfill is over (`note`: why it ended early); only new items are looked for.
        case newItemsOnly(note: String?)
    }

    public var next: Next {
        if let gap { return .newItems(page: gap.page) }
        return backfillNext
    }

    /// Where the backfill stands, the head aside.
    public var backfillNext: Next {
        if backfillDone { return .newItemsOnly(note: backfillNote) }
        guard let page = backfillPage else { return .firstPage }
        var pages: Int?
        if let total = remoteTotal, let perPage, perPage > 0 { pages = (total + perPage - 1) / perPage }
        return .backfill(page: page, url: backfillURL, pages: backfillURL == nil ? pages : nil)
    }
}

/// How a pull of one feed ended.
public enum PullOutcome: String, Sendable {
    case ok, transient, data, local
}

/// What a pull of one feed leaves on its row (`Store.recordPull`).
public struct PullRecord: Sendable {
    public var outcome: PullOutcome
    public var error: String?
    public var at: Date
    /// Not asked before then unless forced (the server's `Retry-After`).
    public var retryAfter: Date?
    /// Where a document of this pull was not well-formed (its items read past the damage).
    public var malformed: String?
    public var due: Date?
    public var dueReason: String?
    /// Failures in a row with an answer from the server, this pull's included.
    public var failures: Int
    /// Pulls in a row where no server answered at all, this pull's included (counted apart).
    public var unanswered: Int
    /// What the head document said about its schedule; nil keeps what was stored.
    public var schedule: FeedSchedule?
    /// The pull asked for the feed's own URL, so `redirect` says whether it redirects for good.
    public var askedFeedURL: Bool
    public var redirect: String?
    /// The server answered 410 Gone.
    public var gone: Bool
    /// Validators of a head answer that brought the same document again: sent next time.
    public var validators: (etag: String?, lastModified: String?)?
    /// What the pull found of the feed that no page commit wrote.
    public var found: PageCommit.Found?

    public init(
        outcome: PullOutcome, error: String? = nil, at: Date, retryAfter: Date? = nil, malformed: String? = nil,
        due: Date? = nil, dueReason: String? = nil, failures: Int = 0, unanswered: Int = 0,
        schedule: FeedSchedule? = nil,
        askedFeedURL: Bool = false, redirect: String? = nil, gone: Bool = false,
        validators: (etag: String?, lastModified: String?)? = nil, found: PageCommit.Found? = nil
    ) {
        self.outcome = outcome
        self.error = error
        self.at = at
        self.retryAfter = retryAfter
        self.malformed = malformed
        self.due = due
        self.dueReason = dueReason
        self.failures = failures
        self.unanswered = unanswered
        self.schedule = schedule
        self.askedFeedURL = askedFeedURL
        self.redirect = redirect
        self.gone = gone
        self.validators = validators
        self.found = found
    }
}

/// A subscribed feed.
public struct Feed: Sendable, Equatable {
    public var id: Int64
    public var url: String
    /// The feed's format, `nil` until a document was read.
    public var format: FeedFormat?
    /// The format was chosen with `--format`, so documents do not change it.
    public var formatChosen: Bool
    public var cursor: FeedCursor
    public var lastPullAt: Date?
    public var lastOutcome: PullOutcome?
    public var lastError: String?
    /// The server asked not to be asked before then (`Retry-After`); only `pull --force` does.
    public var nextRetryAt: Date?
    /// When a plain `pull` asks next (nil: at once), and why then.
    public var dueAt: Date?
    public var dueReason: String?
    /// Pulls in a row that failed with an answer from the server.
    public var failures = 0
    /// Pulls in a row where no server answered at all (counted apart from `failures`).
    public var unanswered = 0
    /// What the last head document said about its schedule.
    public var schedule = FeedSchedule()
    /// A permanent redirect of the feed URL seen at the last pull, not followed for good yet.
    public var redirectURL: String?
    /// The URL the feed had before a permanent redirect moved it, and when.
    public var movedFrom: String?
    public var movedAt: Date?
    /// The server said 410 Gone then: the feed is not asked again.
    public var goneAt: Date?
    /// Where the last pull found a document not well-formed (and read past the damage), if it did.
    public var malformed: String?
    /// The feed's own title and site, from its documents.
    public var title: String?
    public var siteURL: String?
    /// The title the user gave it, which wins over the feed's own.
    public var customTitle: String?
    /// Its folder (from OPML), levels joined by "/".
    public var folder: String?

    /// What the feed is called: the user's title, else its own, else its URL.
    public var name: String { customTitle ?? title ?? url }
}

/// Where an item's picture is: what `list` and `status` show.
public enum PictureStatus: String, Sendable, CaseIterable {
    /// The item has no picture.
    case none
    /// Not downloaded yet (or failed for a reason that may pass; tried again later).
    case pending
    case cached
    /// Missing or unusable at its server; tried again after days.
    case failed
}

/// A stored item, as `list` shows it.
public struct StoredItem: Sendable, Equatable {
    /// The item's number: the same across pulls, what `show`, `open` and `mark` take.
    public var number: Int64
    public var key: String
    public var title: String
    public var link: String?
    public var pictureURL: String?
    public var imageStatus: PictureStatus
    public var imagePath: String?
    public var published: String?
    /// 1-based rank in the list being shown.
    public var position: Int
    public var read: Bool
    /// The name of the item's feed (`Feed.name`).
    public var feedName: String
}

/// A page of the local list.
public struct ListedPage: Sendable {
    public var items: [StoredItem]
    public var total: Int
    public var lastPullAt: Date?
}

/// What `status` shows for one feed.
public struct FeedStatus: Sendable {
    public var feed: Feed
    public var itemCount: Int
    /// Distinct pictures by status, however many items share one; `.none` counts items.
    public var pictures: [PictureStatus: (count: Int, bytes: Int64)]
}

/// A page's changes, written in one transaction together with the cursor that follows them.
public struct PageCommit: Sendable {
    public var feedID: Int64
    /// Items not stored before, in the server's order, appended to `band`.
    public var newItems: [FeedItem]
    /// Items stored before whose content is refreshed in place; their order is kept.
    public var updatedItems: [FeedItem]
    public var cursor: FeedCursor

    /// Band `0` holds the first pull and all backfill; each head walk opens a lower band.
    public var band: Int
    /// What the pull found of the feed since its last commit, written with the page.
    public var found: Found?

    /// The feed's names and format as its documents give them.
    public struct Found: Sendable, Equatable {
        public var title: String?
        public var siteURL: String?
        /// Not written over a format chosen with `--format`.
        public var format: FeedFormat?
        public init(title: String?, siteURL: String?, format: FeedFormat?) {
            self.title = title
            self.siteURL = siteURL
            self.format = format
        }
    }

    public init(
        feedID: Int64, band: Int, newItems: [FeedItem], updatedItems: [FeedItem], cursor: FeedCursor,
        found: Found? = nil
    ) {
        self.feedID = feedID
        self.band = band
        self.newItems = newItems
        self.updatedItems = updatedItems
        self.cursor = cursor
        self.found = found
    }
}

/// A failure of the local database or file system.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// The database or the disk failed.
        case failure
        /// Another process held a lock on the database for longer than the busy timeout.
        case locked
        /// The database was written by a newer feedsync (a migration this version does not know).
        case newer
    }

    public var kind: Kind
    public var message: String
    public init(_ message: String, kind: Kind = .failure) {
        self.message = message
        self.kind = kind
    }
    public var description: String { message }
}

/// The SQLite store of one data home: WAL, so `list` reads while a pull writes.
public final class Store: Sendable {
    let database: any DatabaseWriter
    public let path: String

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
    public init(path: String, connections: Connections = .pool) throws(StoreError) {
        Self.configureSQLite
        self.path = path
        var configuration = Configuration()
        // A command that reads waits a few seconds for a lock; a pull, which writes, longer. Past
        // that the store is reported as locked (exit 75), never waited for in silence.
        configuration.busyMode = .timeout(connections == .single ? 3 : 10)
        configuration.prepareDatabase { db in
            // WAL with NORMAL sync survives a killed process; a power cut may lose the last pages.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
        do {
            database = try Self.open(path: path, configuration: configuration, connections: connections)
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
            try refuseNewer(db)
            guard try migrator.hasCompletedMigrations(db) else {
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

    /// A store some of whose migrations this version does not know was written by a newer
    /// feedsync: its schema may mean things this version would get wrong, so it is not touched.
    static func refuseNewer(_ db: Database) throws {
        guard try db.tableExists("grdb_migrations") else { return }
        let known = Set(embeddedMigrations.map(\.name))
        let unknown = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").filter {
            !known.contains($0)
        }
        guard unknown.isEmpty else {
            throw StoreError(
                "this store was written by a newer feedsync "
                    + "(its schema has \(unknown.sorted().joined(separator: ", "))); "
                    + "upgrade feedsync, or set FEEDSYNC_HOME to another folder",
                kind: .newer)
        }
    }

    /// Opens the database and applies pending migrations. A store already up to date is only read,
    /// so `list` never waits for, or gets in the way of, a pull. Two processes opening a new store
    /// at once race to create and migrate it (GRDB reads what is applied, then runs each migration
    /// in its own transaction): the loser is refused or its migration fails, rolled back whole,
    /// and it tries again from what the winner did. Its look at what the winner did waits like any
    /// other connection: a fresh file's WAL recovery answers SQLITE_BUSY to a connection that
    /// does not wait, and that once failed the loser outright.
    static func open(path: String, configuration: Configuration, connections: Connections) throws -> any DatabaseWriter
    {
        let migrator = Self.migrator
        func connect() throws -> any DatabaseWriter {
            switch connections {
            case .pool: try DatabasePool(path: path, configuration: configuration)
            case .single: try DatabaseQueue(path: path, configuration: configuration)
            }
        }
        if connections == .pool, FileManager.default.fileExists(atPath: path) {
            // Before the pool, whose first open writes (it makes the WAL files by creating and
            // dropping a table): a newer feedsync's store is not written at all.
            var readOnly = configuration
            readOnly.readonly = true
            try DatabaseQueue(path: path, configuration: readOnly).read(refuseNewer)
        }
        var applied: [String] = []
        for attempt in 1... {
            do {
                let database = try connect()
                if connections == .single { try database.read(refuseNewer) }  // a pool's was checked above
                applied = try database.read(migrator.appliedMigrations)
                if try database.read(migrator.hasCompletedMigrations) { return database }
                try migrator.migrate(database)
                // A pool sets WAL itself; a store made by one connection is made WAL for the pools
                // that follow (the mode is kept in the file).
                if connections == .single {
                    try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
                }
                // Reader connections that read before the migration keep the old schema in their
                // prepared statements' columns: start afresh.
                return try connect()
            } catch let error as DatabaseError where attempt < 50 {
                // Busy once may be the winner's first transaction; busy again, after the busy
                // timeout, is a lock held by another process: reported, not waited out 50 times.
                if error.resultCode == .SQLITE_BUSY {
                    guard attempt < 2 else { throw error }
                } else {
                    let progressed =
                        (try? DatabaseQueue(path: path, configuration: configuration).read(migrator.appliedMigrations))
                        .map { $0 != applied }
                    guard progressed == true else { throw error }
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        fatalError("unreachable")
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
                if migration.name == "0006_timeline" { try indexForSearch(db) }
            }
        }
        return migrator
    }

    /// Fills the search index with the items stored before it existed, as a page commit would:
    /// in Swift, which SQL cannot do (plain text from HTML, spaced-out CJK characters).
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

    /// The names of the migrations applied to this database, in order.
    public func appliedMigrations() throws(StoreError) -> [String] {
        try read { db in try Self.migrator.appliedMigrations(db) }
    }

    /// `PRAGMA integrity_check`'s answer: `["ok"]` for a sound file.
    public func integrityCheck() throws(StoreError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try database.read(body) } catch { throw Self.storeError(error, "cannot read \(path)") }
    }

    func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
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
