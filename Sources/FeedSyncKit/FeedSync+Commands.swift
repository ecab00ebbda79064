import FeedSyncFeed
import FeedSyncImages
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncPull
import FeedSyncStore
import FeedSyncTransport
import Foundation

// The use cases of `add` and `pull`, each one call for the command line: it parses arguments,
// calls one of these and formats what comes back.

extension FeedSync {
    /// Which feeds `pull` asks.
    public enum PullSelection: Sendable {
        /// Every subscribed feed, as `settings.asking` says.
        case subscribed
        /// These URLs, subscribed first if new (with `format`); a feed this run subscribed whose
        /// first pull fails for good is forgotten.
        case named([String], format: FormatSetting)
    }

    /// What a `pull` asked and how each feed ended (nil: not started, the pull was cancelled),
    /// each report with its feed's pictures.
    public struct PullRun: Sendable {
        public var feeds: [Feed]
        public var reports: [PullReport?]
        /// The accounts synced, and how each ended (nil: not reached, the pull was cancelled).
        public var accounts: [Account] = []
        public var accountReports: [PullReport?] = []
        /// The articles of full-text feeds' items that this pull stored, and the pages that had none.
        public var articles = ArticleTally()
        /// The run's first local fault (said once as it happened, `PullUpdate.localFault`): the
        /// pull went on, and ends as a local failure.
        public var localFault: String?

        /// The hosts that gave no answer in the run, each once, in the feeds' order, and how.
        public var silent: [Silence] {
            var seen: Set<String> = []
            return reports.compactMap { $0?.silence }.filter { seen.insert($0.host).inserted }
        }
    }

    /// Pulls the feeds `selection` names (`pull(_:settings:forgetting:onUpdate:)` says how).
    /// A feed subscribed by this run whose first pull failed for good (a data error, no page
    /// stored) is not kept: its report says so (`forgotten`, and "nothing was subscribed" in its
    /// error) by the time `onUpdate` hears it finished.
    public func pull(
        _ selection: PullSelection, settings: PullSettings,
        onUpdate: @escaping @Sendable (PullUpdate) -> Void = { _ in }
    ) async throws(StoreError) -> PullRun {
        let settings = try await withCacheBudget(settings)
        var feeds: [Feed] = []
        var accounts: [Account] = []
        var new = Set<Int64>()
        switch selection {
        case .subscribed:
            (feeds, accounts) = try await pulled()
        case .named(let urls, let format):
            for url in urls {
                let known = try await feed(url: url) != nil
                let subscribed = try await subscribe(url: url, format: format)
                if !known { new.insert(subscribed.id) }
                feeds.append(subscribed)
            }
        }
        let done = await run(feeds, accounts: accounts, settings: settings, forgetting: new, onUpdate: onUpdate)
        return PullRun(
            feeds: feeds, reports: done.reports, accounts: accounts, accountReports: done.accountReports,
            articles: done.articles, localFault: done.localFault)
    }

    /// What a plain pull asks: the feeds it fetches itself (an account's come down with its sync)
    /// and the accounts.
    func pulled() async throws(StoreError) -> (feeds: [Feed], accounts: [Account]) {
        (try await store.feeds().filter { $0.accountID == nil }, try await store.accounts())
    }

    /// What `add` did.
    public enum AddOutcome: Sendable {
        /// The URL (in any spelling) was subscribed before.
        case already(Feed)
        case added(Feed, PullReport)
        /// `kept`: the feed stays subscribed (a transient failure, or pages stored before it).
        case failed(SyncError, kept: Bool)
    }

    /// Subscribes to `url` (titled `title`) and pulls it. When it is no feed (a data error on
    /// the first pull, no format chosen), the web page there is read for the feeds it names
    /// (`discoverFeeds`), and the first is added instead; `discovered` lists them all.
    /// `url` given without a scheme (`example.com/feed`) is tried as `https://` first, then as
    /// `http://` when no server answers that, as a browser's address bar does. A feed whose host
    /// does not exist or refused the connection is not kept (a mistyped address must not stay
    /// subscribed) unless `keep`; one whose server answered with a failure, or stopped answering
    /// midway, is kept for a later pull.
    public func add(
        _ url: String, title: String?, format: FormatSetting, fullText: Bool = false, keep: Bool = false,
        settings: PullSettings, onUpdate: @escaping @Sendable (PullUpdate) -> Void = { _ in }
    ) async throws(StoreError) -> (outcome: AddOutcome, discovered: [String]) {
        let settings = try await withCacheBudget(settings)
        let url = Self.hasScheme(url) ? url : await Self.withScheme(url, settings: settings)
        var outcome = try await subscribeAndPull(url, title: title, format: format, fullText, keep, settings, onUpdate)
        guard case .failed(let error, kept: false) = outcome, error.kind == .data, case .keep = format else {
            return (outcome, [])
        }
        // Not a feed, perhaps a web page that names its feeds.
        let found = (try? await discoverFeeds(at: url, settings: settings)) ?? []
        guard let first = found.first else { return (.failed(error, kept: false), []) }
        outcome = try await subscribeAndPull(first, title: title, format: format, fullText, keep, settings, onUpdate)
        return (outcome, found)
    }

    /// Whether `url` names its scheme (`https://`); an address without one is a host and path.
    public static func hasScheme(_ url: String) -> Bool { url.contains("://") }

    /// `address` (no scheme) as `https://address` when a server answers there at all (any
    /// status), else as `http://address`.
    static func withScheme(_ address: String, settings: PullSettings) async -> String {
        let secure = "https://" + address
        let client = HTTPClient(configuration: settings.transport(maxConnections: 1))
        defer { client.shutdown() }
        do {
            _ = try await client.get(HTTPRequest(url: secure, maxBodyBytes: 1))
            return secure
        } catch {
            return error.answered || error.kind == .tooLarge ? secure : "http://" + address
        }
    }

    private func subscribeAndPull(
        _ url: String, title: String?, format: FormatSetting, _ fullText: Bool, _ keep: Bool,
        _ settings: PullSettings, _ onUpdate: @escaping @Sendable (PullUpdate) -> Void
    ) async throws(StoreError) -> AddOutcome {
        if let known = try await feed(url: url) { return .already(known) }
        let feed = try await subscribe(url: url, format: format)
        if let title { try await rename(feed, to: title) }
        if fullText { try await store.setFullText(feedID: feed.id, true) }
        let report = await pull([feed], settings: settings, forgetting: [feed.id], onUpdate: onUpdate).first ?? nil
        guard let report else { return .failed(SyncError(.transient, "interrupted"), kept: true) }
        guard var error = report.error else { return .added(try await self.feed(url: feed.url) ?? feed, report) }
        // No such host, or nothing listening: most likely a mistyped address.
        if !keep, !report.forgotten, let silence = report.silence,
            [.noSuchHost, .refused, .unreachable].contains(silence.how), !Task.isCancelled
        {
            try await remove(feed)
            error.message =
                "\(silence.host) did not answer (\(silence.how)), so nothing was subscribed; check the address, "
                + "or subscribe anyway, for a later pull to fetch, with: feedsync add --keep \(url)"
            return .failed(error, kept: false)
        }
        return .failed(error, kept: !report.forgotten)
    }

    /// The feeds the web page at `url` names for autodiscovery, in the page's order: one GET of
    /// at most 4 MB. A status of 408, 429 or 5xx, or a network failure, is transient; any other
    /// failure, data.
    public func discoverFeeds(at url: String, settings: PullSettings) async throws(SyncError) -> [String] {
        let client = HTTPClient(configuration: settings.transport(maxConnections: 1))
        defer { client.shutdown() }
        let response: HTTPResponse
        do {
            response = try await client.get(HTTPRequest(url: url, maxBodyBytes: 4 << 20))
        } catch {
            throw SyncError(error.kind == .tooLarge || error.kind == .refusedRedirect ? .data : .transient, "\(error)")
        }
        guard (200..<300).contains(response.status) else {
            throw SyncError(
                response.isTransientFailure ? .transient : .data, "\(url): the server answered \(response.status)")
        }
        do {
            return try FeedDiscovery.feeds(inHTML: response.body, pageURL: response.effectiveURL)
                .filter(HTTPRequest.isFetchable)
        } catch {
            throw SyncError(.local, error.reason)
        }
    }

    /// A web page, fetched once: at most `maxBytes`, HTML only (`Content-Type` text/html or
    /// application/xhtml+xml, or none), no cookie kept. Its bytes and its address after redirects.
    public static func fetchPage(_ url: String, maxBytes: Int) async throws(SyncError) -> (bytes: [UInt8], url: String)
    {
        if let problem = HTTPRequest.problem(with: url) {
            throw SyncError(.usage, "\(String(reflecting: url)) cannot be fetched: \(problem)")
        }
        let client = HTTPClient(configuration: PullSettings().transport(maxConnections: 1))
        defer { client.shutdown() }
        let response: HTTPResponse
        do {
            response = try await client.get(
                HTTPRequest(url: url, headers: [("Accept", "text/html,application/xhtml+xml")], maxBodyBytes: maxBytes))
        } catch {
            throw SyncError(error.kind == .tooLarge || error.kind == .refusedRedirect ? .data : .transient, "\(error)")
        }
        guard (200..<300).contains(response.status) else {
            throw SyncError(
                response.isTransientFailure ? .transient : .data, "\(url): the server answered \(response.status)")
        }
        guard response.isWebPage else {
            throw SyncError(.data, "\(url) is not a web page (\(response.contentType.prefix(60)))")
        }
        return (Array(response.body), response.effectiveURL)
    }

    /// `settings` with the pictures' budget its `cacheSize` gives (`cacheBudget(given:)`, which
    /// remembers a given size).
    func withCacheBudget(_ settings: PullSettings) async throws(StoreError) -> PullSettings {
        var settings = settings
        settings.pictures.cacheBudget = try await cacheBudget(given: settings.cacheSize)
        return settings
    }

    /// A feed this run subscribed whose first pull failed for good (a data error) is not kept if
    /// no page of it was ever stored, so a mistyped URL does not fail every pull after it; its
    /// one error sentence says so.
    func forgetIfFailedForGood(_ feed: Feed, _ report: inout PullReport) async {
        guard let error = report.error, error.kind == .data, let current = try? await store.feed(url: feed.url),
            current.cursor.backfillPage == nil, (try? await remove(current)) != nil
        else { return }
        report.forgotten = true
        report.error?.message = error.message + "; nothing was subscribed"
    }

    /// Pulls the feeds that are due every `every` seconds. A feed no server answered stays due
    /// (the schedule's rule for a lost network, `Schedule.afterNoAnswer`), so after such a round
    /// the next comes in 30 s: a pull the lost network interrupted resumes soon after it returns,
    /// and the schedule's backoff from the fourth such failure in a row ends the quick rounds. A
    /// round that finds a `feedsync pull` holding the lock is tried after 30 s.
    public func pullRepeatedly(every: Double) async {
        while !Task.isCancelled {
            var wait = min(every, 30)
            if let writer = try? lockedForWriting() {
                let settings = (try? await writer.withCacheBudget(PullSettings())) ?? PullSettings()
                let (feeds, accounts) = (try? await writer.pulled()) ?? ([], [])
                let reports = await writer.pull(feeds, accounts: accounts, settings: settings)
                let now = writer.clock.now()
                if !reports.contains(where: { $0?.unanswered == true && $0?.due.map { $0.at <= now } == true }) {
                    wait = every
                }
            }
            try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
        }
    }
}
