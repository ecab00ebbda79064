// FeedSyncKit: feedsync's use cases behind one type, the face every front end calls (the command
// line, the reading page, the terminal reader). It re-exports FeedSyncModel, so a front end needs
// no other module of ours. Its public API: `FeedSync` (this file: opening a data home, feeds,
// lists, pictures, gc, a pull), FeedSync+Reading (what a reader is shown), +Commands (add with
// autodiscovery, pull of named feeds, serve's pulls), +Accounts, +Articles, +Rules (rules and
// saved views); Values.swift (the rules below Kit a front end needs), Words.swift (quantities in
// words), JSONText.swift (safe text, redaction, the item's JSON). Everything below it is reached through here.
// docs/architecture.md shows the modules and how work runs concurrently.

import FeedSyncFeed
import FeedSyncImages
import FeedSyncMarkup
@_exported import FeedSyncModel
import FeedSyncPull
import FeedSyncStore
import FeedSyncTransport
import Foundation

/// A data home opened for use: its store, and the pull lock when opened for writing.
public final class FeedSync: Sendable {
    public enum Access: Sendable {
        /// Read and note the reading position (list, status): one connection, no lock; a store
        /// that exists is read where it is, even from a read-only folder.
        case reading
        /// Pull and tidy the cache: takes the data home's pull lock first (one such process at a
        /// time) and opens the store for writing.
        case writing
        /// A long-running reader (the reading page): the store as a pool, for requests at once,
        /// and no lock; its pulls take the lock while they run (`lockedForWriting`).
        case serving
    }

    public let home: DataHome
    let store: Store
    /// The picture cache's owner: its folder and the store's rows of it. One per process: the
    /// pulls a long-running reader makes share it (`lockedForWriting`).
    let pictures: PictureCache
    /// The process's picture prefetch: its pulls' and the reading page's picture downloads.
    let prefetcher: PicturePrefetcher
    let lock: PullLock?

    /// The time a pull's schedule reads (which feeds are due, due times, backoff, `Retry-After`),
    /// the store's: the one it stamps its records with.
    public var clock: TimeSource { store.clock }

    /// For a command that goes to the network: loads libcurl beside the command's own start
    /// (`HTTPClient.preload`). `networkLoaded()` is owed before the process exits.
    public static func preloadNetwork() { HTTPClient.preload() }

    /// Waits for the loading `preloadNetwork` started (`HTTPClient.waitForLoading`).
    public static func networkLoaded() { HTTPClient.waitForLoading() }

    /// Opens `home` (created if needed). Throws `SyncError` (the folder, the lock) or `StoreError`.
    public init(home: DataHome, access: Access, clock: TimeSource = .system) throws {
        self.home = home
        switch access {
        case .reading:
            if !FileManager.default.fileExists(atPath: home.databasePath) { try home.prepare() }
            lock = nil
            store = try Store(path: home.databasePath, connections: .single, clock: clock)
        case .writing:
            try home.prepare()
            lock = try PullLock(path: home.lockPath)
            store = try Store(path: home.databasePath, clock: clock)
        case .serving:
            try home.prepare()
            lock = nil
            store = try Store(path: home.databasePath, clock: clock)
        }
        pictures = PictureCache(
            store: store, directory: home.cacheDirectory, directoryMayBeLink: home.cacheDirectoryMayBeLink)
        // The page's pictures while no pull runs: a few connections, the default settings.
        prefetcher = PicturePrefetcher(cache: pictures, idleClient: PullSettings().transport(maxConnections: 4))
    }

    private init(sharing library: FeedSync, lock: PullLock) {
        home = library.home
        store = library.store
        pictures = library.pictures
        prefetcher = library.prefetcher
        self.lock = lock
    }

    /// The same data home and store (one pool per database file), holding the pull lock until
    /// the returned value is gone: how a long-running reader (`.serving`) pulls. Throws
    /// `SyncError` when another process holds the lock.
    public func lockedForWriting() throws -> FeedSync {
        FeedSync(sharing: self, lock: try PullLock(path: home.lockPath))
    }

    // MARK: Feeds and the list

    /// Subscribes to `url` if new, with its format set as `format` says. A URL that differs from a
    /// subscribed one only in what `FeedURL.normalised` evens out is that feed.
    public func subscribe(url: String, format: FormatSetting = .keep) async throws(StoreError) -> Feed {
        let known = try await feed(url: url)
        return try await store.subscribe(url: known?.url ?? FeedURL.normalised(url), format: format)
    }

    public func feeds() async throws(StoreError) -> [Feed] { try await store.feeds() }

    /// What an import did with each feed of an OPML file.
    public struct ImportReport: Sendable {
        public var added: [OPML.Entry] = []
        /// Subscribed before, or listed twice.
        public var already: [OPML.Entry] = []
        /// Of `already`, the feeds that had no folder and are filed now in the file's.
        public var filed: [OPML.Entry] = []
        /// Feeds whose URL no request can be made for, with why.
        public var invalid: [(entry: OPML.Entry, reason: String)] = []
    }

    /// Subscribes to the feeds of an OPML file not subscribed yet, with their titles, sites and
    /// folders, in one transaction; fetches nothing. A feed subscribed already that is in no
    /// folder is filed in the file's. Importing a file again adds nothing.
    public func importFeeds(_ entries: [OPML.Entry]) async throws(StoreError) -> ImportReport {
        var report = ImportReport()
        let feeds = try await store.feeds()
        let unfiled = Dictionary(
            feeds.filter { $0.folder == nil && $0.accountID == nil }.map { (FeedURL.normalised($0.url), $0.id) }
        ) { first, _ in first }
        var known = Set(feeds.map { FeedURL.normalised($0.url) })
        var new: [OPML.Entry] = []
        for entry in entries {
            if let problem = HTTPRequest.problem(with: entry.url) {
                report.invalid.append((entry, "xmlUrl \(String(reflecting: entry.url)) cannot be used: \(problem)"))
                continue
            }
            var entry = entry
            entry.url = FeedURL.normalised(entry.url)
            // A folder no `folder` command could name (too long, a control character) files nothing.
            entry.folder = entry.folder.flatMap(Self.folderPath)
            if known.insert(entry.url).inserted { new.append(entry) } else { report.already.append(entry) }
        }
        let added = try await store.subscribe(new)
        for (entry, wasAdded) in zip(new, added) {
            if wasAdded { report.added.append(entry) } else { report.already.append(entry) }
        }
        // Each feed in the first folder the file files it in.
        var filing: [String: [Int64]] = [:]
        var seen: Set<Int64> = []
        for entry in report.already {
            guard let folder = entry.folder, let id = unfiled[FeedURL.normalised(entry.url)], seen.insert(id).inserted
            else { continue }
            filing[folder, default: []].append(id)
            report.filed.append(entry)
        }
        for (folder, ids) in filing { try await store.setFolder(folder, feedIDs: ids) }
        return report
    }

    /// The longest folder path a feed may be filed under, in characters.
    public static let folderCharacters = 200

    /// `name` as a folder path (`Tech/Swift`: its parts trimmed, none empty), or nil when it is
    /// none: empty, too long, or holding a line break or control character.
    public static func folderPath(_ name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let path = parts.joined(separator: "/")
        guard !parts.contains(where: \.isEmpty), path.count <= folderCharacters,
            !path.unicodeScalars.contains(where: SafeText.isUnsafe)
        else { return nil }
        return path
    }

    /// Files `feeds` in the folder `path` (`folderPath`'s), or in none. An account's feeds are in
    /// its server's folders, which each sync brings: they are left out, and returned.
    public func file(_ feeds: [Feed], in path: String?) async throws(StoreError) -> [Feed] {
        try await store.setFolder(path, feedIDs: feeds.filter { $0.accountID == nil }.map(\.id))
        return feeds.filter { $0.accountID != nil }
    }

    /// Every feed as an OPML outline: its title (the user's, else its own), site and folder.
    public func exportedFeeds() async throws(StoreError) -> [OPML.Entry] {
        try await store.feeds().map { feed in
            OPML.Entry(
                url: feed.url, title: feed.customTitle ?? feed.title, siteURL: feed.siteURL, folder: feed.folder,
                line: 0)
        }
    }

    /// Every feed with its item and unread counts.
    public func feedSummaries() async throws(StoreError) -> [FeedSummary] { try await store.feedSummaries() }

    /// The subscribed feed at `url`, compared as `FeedURL.normalised` makes URLs.
    public func feed(url: String) async throws(StoreError) -> Feed? {
        if let exact = try await store.feed(url: url) { return exact }
        return Self.feed(url: url, in: try await store.feeds())
    }

    private static func feed(url: String, in feeds: [Feed]) -> Feed? {
        let wanted = FeedURL.normalised(url)
        return feeds.first { FeedURL.normalised($0.url) == wanted }
    }

    /// What a feed named on the command line is.
    public enum FeedMatch: Sendable {
        case found(Feed)
        case none
        /// Several feeds' titles contain it.
        case ambiguous([Feed])
        /// A number that is no feed's, with the lowest and highest feed numbers (nil: no feeds).
        case noNumber(ClosedRange<Int64>?)
    }

    /// Whether `name` is a bare number, which names a feed by its number and nothing else.
    public static func isNumber(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 18 && name.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// The feed `name` names: its number (as `feeds` shows it), its URL, its whole title, or a part
    /// of one title only (letter case aside). A bare number is a feed's number only, never a part
    /// of a title or URL: a mistyped number must not name another feed.
    public func feed(named name: String) async throws(StoreError) -> FeedMatch {
        let feeds = try await store.feeds()
        if Self.isNumber(name) {
            if let feed = feeds.first(where: { $0.id == Int64(name) }) { return .found(feed) }
            let numbers = feeds.map(\.id)
            return .noNumber(numbers.min().map { $0...numbers.max()! })
        }
        if name.contains("://"), let feed = Self.feed(url: name, in: feeds) { return .found(feed) }
        let wanted = name.lowercased()
        if let feed = feeds.first(where: { $0.name.lowercased() == wanted }) { return .found(feed) }
        let matches = feeds.filter { $0.name.lowercased().contains(wanted) }
        switch matches.count {
        case 0: return .none
        case 1: return .found(matches[0])
        default: return .ambiguous(matches)
        }
    }

    /// Gives the feed a title of the user's; nil (or an empty one) gives it back its own.
    public func rename(_ feed: Feed, to title: String?) async throws(StoreError) {
        let title = title?.trimmingCharacters(in: .whitespacesAndNewlines)
        try await store.rename(feedID: feed.id, title: title?.isEmpty == false ? title : nil)
    }

    /// What removing `feed` would take: its items, and the cached pictures (and their bytes) that
    /// go with them because no other feed shows them.
    public func removal(of feed: Feed) async throws(StoreError) -> (items: Int, pictures: Int, bytes: Int64) {
        try await store.removal(feedID: feed.id)
    }

    /// Unsubscribes `feed` (open for `.writing`: not while a pull runs): the feed, its items and
    /// the pictures only it used go from the store, then their files from the cache.
    public func remove(_ feed: Feed) async throws(StoreError) {
        precondition(lock != nil, "a running pull writes the feed: open for .writing")
        try await pictures.removing { () async throws(StoreError) in try await store.removeFeed(id: feed.id) }
    }

    /// The item numbered `number`, whole.
    public func item(number: Int64) async throws(StoreError) -> ItemDetail? { try await store.item(number: number) }

    /// Marks items read or unread by number; returns the numbers that name no item.
    public func mark(_ numbers: [Int64], read: Bool) async throws(StoreError) -> [Int64] {
        try await store.mark(numbers, read: read)
    }

    /// Stars items (or takes their stars off) by number; returns the numbers that name no item.
    public func star(_ numbers: [Int64], starred: Bool) async throws(StoreError) -> [Int64] {
        try await store.star(numbers, starred: starred)
    }

    /// Marks every item (of `feed`, of the feeds in `folder`, published before `before`) read or
    /// unread; returns how many changed.
    public func markAll(read: Bool, feed: Feed?, folder: String? = nil, before: Date?) async throws(StoreError)
        -> Int
    {
        try await store.markAll(read: read, feedID: feed?.id, folder: folder, before: before)
    }

    public func status() async throws(StoreError) -> [FeedStatus] { try await store.status() }

    /// A page of the list `query` describes: one feed's, or all feeds' as one timeline.
    public func list(_ query: ListQuery, page: Int, perPage: Int) async throws(StoreError) -> ListedPage {
        try await store.list(query, page: page, perPage: perPage)
    }

    /// Fetches the picture of the item numbered `number` now (a row of the reading page in view
    /// whose picture is not cached) unless it is cached or backing off, through the process's one
    /// prefetcher; returns whether it is cached now.
    public func fetchPicture(ofItem number: Int64) async -> Bool {
        guard let job = try? await store.duePicture(ofItem: number) else {
            return (try? await store.item(number: number))??.item.imageStatus == .cached
        }
        return await prefetcher.fetchNow(job, options: await pageFetchOptions())
    }

    /// Fetches the pictures inside the article of the item numbered `number` that are neither
    /// cached nor backing off, at once (the client's per-host limit applies); returns how many
    /// it cached.
    public func fetchArticlePictures(ofItem number: Int64) async -> Int {
        let jobs = (try? await store.dueArticlePictures(ofItem: number)) ?? []
        let options = await pageFetchOptions()
        return await withTaskGroup(of: Bool.self) { group in
            for job in jobs { group.addTask { await self.prefetcher.fetchNow(job, options: options) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    /// The page's fetches keep the cache within the remembered budget.
    private func pageFetchOptions() async -> PrefetchOptions {
        PrefetchOptions(cacheBudget: (try? await cacheBudget(given: nil)) ?? Self.defaultCacheSize)
    }

    /// Item `number`'s own cached picture, or the cached one at `position` inside its article,
    /// with its type, checked as the cache checks every read: nil when there is none, or it
    /// failed (it is then due again).
    public func picture(ofItem number: Int64, inside position: Int? = nil) async throws(StoreError)
        -> (data: Data, type: String)?
    {
        guard let file = try await store.cachedPictureFile(ofItem: number, inside: position) else { return nil }
        return await pictures.read(file)
    }

    /// Where a cached picture's file is, checked as every read is: nil (and due again) when it
    /// failed. What `list` and `show` print.
    public func picturePath(_ picture: CachedFile?) async -> String? {
        guard let picture else { return nil }
        return await pictures.verifiedPath(picture)
    }

    /// The row the item numbered `number` is at now in the all-feeds timeline.
    public func timelineRow(ofItem number: Int64) async throws(StoreError) -> Int? {
        try await store.row(ofItem: number, feedURL: nil)
    }

    /// The page the reader was shown last, which steers the picture prefetch of a running pull.
    public func readingPosition() async throws(StoreError) -> ReadingPosition {
        try await store.latestReadingPosition() ?? .start
    }

    public func setReadingPosition(_ position: ReadingPosition) async throws(StoreError) {
        try await store.setReadingPosition(position)
    }

    // MARK: The picture cache

    static let cacheSizeSetting = "cache_size"
    public static let defaultCacheSize: Int64 = 1 << 30
    /// Sizes a cache may be given: up to a pebibyte, so sums of sizes cannot overflow.
    public static let cacheSizes: ClosedRange<Int64> = 0...(1 << 50)

    /// The cache budget to use now: `given` (then remembered for later runs), else the remembered
    /// one, else 1 GiB.
    public func cacheBudget(given: Int64?) async throws(StoreError) -> Int64 {
        if let given {
            try await store.setSetting(Self.cacheSizeSetting, String(given))
            return given
        }
        let remembered = try await store.setting(Self.cacheSizeSetting).flatMap { Int64($0) }
        return remembered.map { $0.clamped(to: Self.cacheSizes) } ?? Self.defaultCacheSize
    }

    /// Tidies the picture cache (open for `.writing`: a pull must not run beside it):
    /// `PictureCache.collectGarbage` around the reading position, within the cache budget
    /// (`cacheSize`, remembered, as `cacheBudget(given:)` says).
    public func collectGarbage(cacheSize: Int64?, pagesAhead: Int) async throws(StoreError)
        -> PictureCache.GarbageReport
    {
        precondition(lock != nil, "the cache is the pull's to write: open for .writing")
        return try await pictures.collectGarbage(
            budget: try await cacheBudget(given: cacheSize), pagesAhead: pagesAhead,
            around: try await readingPosition())
    }

    /// Removes the items read, not starred and older than `before` (open for `.writing`): they
    /// go from the lists and the search, stay gone at later pulls, and the pictures only they
    /// used go from the cache (`Store.removeItems`). How many went.
    public func removeItems(before: Date) async throws(StoreError) -> Int {
        precondition(lock != nil, "a running pull writes the items: open for .writing")
        var removed = 0
        try await pictures.removing { () async throws(StoreError) in
            let (items, files) = try await store.removeItems(before: before)
            removed = items
            return files
        }
        return removed
    }

    /// Compares the picture folder with the store, changing nothing (`gc --check`).
    public func checkCache() async throws(StoreError) -> PictureCache.Check { try await pictures.check() }

    // MARK: Pull

    /// How a pull runs: the settings of each feed's pull (the engine's own options, whose clock
    /// and callbacks `pull` sets), of the pictures (the prefetcher's), and of the client.
    public struct PullSettings: Sendable {
        /// Pages a feed may fetch, retries, the schedule.
        public var feeds = PullOptions()
        /// The pictures' settings; their `cacheBudget` is set from `cacheSize` when a pull starts.
        public var pictures = PrefetchOptions()
        /// How the pages of full-text feeds' items are fetched.
        public var articles = ArticleOptions()
        /// The picture cache's size, when the command line gives one (remembered for later
        /// runs); nil: the remembered one, else 1 GiB (`cacheBudget(given:)`).
        public var cacheSize: Int64?
        /// Feeds pulled at once.
        public var feedConcurrency = 4
        /// Seconds a transfer may make no progress.
        public var timeout = 20
        public var userAgent = FeedSyncVersion.userAgent
        /// Connections to one host at once, pages and pictures together.
        public var perHost = 2
        /// Which feeds this pull asks for.
        public var asking = Schedule.Asking.due

        /// The defaults, with the retry policy that `FEEDSYNC_RETRY_ATTEMPTS` (at least 1) and
        /// `FEEDSYNC_RETRY_BASE_DELAY` (seconds, at least 0) change, as every pull reads it (serve's
        /// too): tests use a short base delay, impatient users fewer attempts. Each variable is
        /// read alone (`getenv`), not through ProcessInfo's dictionary of them all, which every
        /// command would pay for at its start.
        public init(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) {
            if let attempts = environment("FEEDSYNC_RETRY_ATTEMPTS").flatMap(Int.init), attempts >= 1 {
                feeds.retry.maxAttempts = attempts
            }
            if let base = environment("FEEDSYNC_RETRY_BASE_DELAY").flatMap(Double.init), base >= 0 {
                feeds.retry.baseDelay = base
            }
        }

        /// The shortest wait between two asks of one feed (`pull --min-interval`).
        public var minInterval: Double {
            get { feeds.schedule.minInterval }
            set { feeds.schedule = Schedule(minInterval: newValue) }
        }

        /// The client's settings: this user agent, `timeout` without progress, at most 10 s to
        /// connect, `perHost` connections to a host.
        func transport(maxConnections: Int) -> TransportConfiguration {
            TransportConfiguration(
                userAgent: userAgent, connectTimeout: min(timeout, 10), lowSpeedSeconds: timeout,
                maxConnections: maxConnections, maxHostConnections: min(perHost, maxConnections))
        }
    }

    /// What a pull reports while it runs, in the order it happens.
    public typealias PullUpdate = FeedSyncModel.PullUpdate

    /// Pulls those of `feeds` (subscribed ones) that `settings.asking` asks for (`Schedule.skip`)
    /// while the pictures nearest the reading position download, `settings.feedConcurrency` feeds
    /// at a time; returns each feed's report, in order (nil for a feed not started because the
    /// pull was cancelled), then the accounts'. `run` says how.
    public func pull(
        _ feeds: [Feed], accounts: [Account] = [], settings: PullSettings, forgetting new: Set<Int64> = [],
        onUpdate: @escaping @Sendable (PullUpdate) -> Void = { _ in }
    ) async -> [PullReport?] {
        let done = await run(feeds, accounts: accounts, settings: settings, forgetting: new, onUpdate: onUpdate)
        return done.reports + done.accountReports
    }

    /// One pull, as `PullCoordinator.run` carries it out, with the process's picture prefetch as
    /// its companion through the pull's client (its per-host limit; the page's fetches share it
    /// too). `onUpdate` hears what happens as it happens, from the tasks doing it: it must return
    /// quickly. Cancelling the calling task stops every feed between two transactions and cuts
    /// the downloads off (what was cut off stays due). A change of the reading position while it
    /// runs re-targets the pictures within a second. A feed in `new` whose first pull failed for
    /// good is forgotten (`forgetIfFailedForGood`).
    func run(
        _ feeds: [Feed], accounts: [Account], settings: PullSettings, forgetting new: Set<Int64>,
        onUpdate: @escaping @Sendable (PullUpdate) -> Void
    ) async -> PullCoordinator.Result {
        precondition(lock != nil, "a pull needs the data home's lock: open for .writing")
        let client = HTTPClient(
            configuration: settings.transport(maxConnections: settings.pictures.concurrency + settings.feedConcurrency))
        defer { client.shutdown() }
        let coordinator = PullCoordinator(store: store, home: home, client: client, clock: clock)
        let prefetch = prefetcher.begin(
            client: client, options: settings.pictures, onEvent: { coordinator.heard($0, onUpdate: onUpdate) })
        return await coordinator.run(
            feeds, accounts: accounts,
            settings: PullCoordinator.Settings(
                feeds: settings.feeds, asking: settings.asking, feedConcurrency: settings.feedConcurrency,
                perHost: settings.perHost, articles: settings.articles),
            companion: PullCoordinator.Companion(
                run: { await prefetch.run() }, pagesChanged: { prefetch.pagesChanged(refreshing: $0) },
                pagingFinished: { prefetch.pagingFinished() }),
            settle: { feed, report in
                var report = report
                if new.contains(feed.id) { await self.forgetIfFailedForGood(feed, &report) }
                return report
            },
            onUpdate: onUpdate)
    }
}
