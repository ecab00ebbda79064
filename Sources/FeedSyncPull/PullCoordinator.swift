// FeedSyncPull: pulling feeds and syncing accounts into the store. Its public API: the
// coordinator of a pull of many feeds and accounts (this file, with PullCoordinator+Articles),
// one feed's pull (FeedPuller over PullMachine, PagingMachine and FetchMachine, with
// PullOptions), the schedule (Schedule, Retry), the run's network (NetworkVerdict), the pull
// lock (PullLock), and an account's sync (AccountSync over AccountMachine and an
// AccountService: TinyTinyRSS). The machines decide, without I/O; the shells carry their actions
// out. It never imports FeedSyncImages: the prefetch is the coordinator's companion, given as
// closures. Where it sits: docs/architecture.md.

import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// One pull of many feeds and of the accounts beside them, through one client: which feeds it
/// asks (`Schedule.skip`), the others `feedConcurrency` at a time, each with an engine and a
/// download file of its own; the accounts meanwhile; then the pages of full-text feeds' items
/// (`PullCoordinator+Articles.swift`). What the run learns of the network (`RunNetwork`) decides
/// what is recorded: offline, nothing. The picture prefetch runs beside it as its `Companion`,
/// told of each commit. It counts what each feed's pictures did for the reports and says the
/// run's local fault once, whichever part met it first.
public final class PullCoordinator: Sendable {
    /// What follows the pull's commits (the picture prefetch): run beside the pull, told of each
    /// commit (`refreshing`: it rewrote items stored before), told when the paging is over, and
    /// awaited before the pull returns.
    public struct Companion: Sendable {
        public var run: @Sendable () async -> Void
        public var pagesChanged: @Sendable (_ refreshing: Bool) -> Void
        public var pagingFinished: @Sendable () -> Void

        public init(
            run: @escaping @Sendable () async -> Void, pagesChanged: @escaping @Sendable (_ refreshing: Bool) -> Void,
            pagingFinished: @escaping @Sendable () -> Void
        ) {
            self.run = run
            self.pagesChanged = pagesChanged
            self.pagingFinished = pagingFinished
        }
    }

    /// How the run goes.
    public struct Settings: Sendable {
        /// Each feed's pull (pages, retries, schedule); its clock, callbacks and network are the run's.
        public var feeds: PullOptions
        public var asking: PullAsking
        public var feedConcurrency: Int
        /// Connections to one host at once, for the requests sent before the host answered.
        public var perHost: Int
        public var articles: ArticleOptions

        public init(
            feeds: PullOptions, asking: PullAsking, feedConcurrency: Int, perHost: Int, articles: ArticleOptions
        ) {
            self.feeds = feeds
            self.asking = asking
            self.feedConcurrency = feedConcurrency
            self.perHost = perHost
            self.articles = articles
        }
    }

    /// What the run did.
    public struct Result: Sendable {
        /// Each feed's report, in order (nil: not started, the run was cancelled), its pictures counted.
        public var reports: [PullReport?]
        public var accountReports: [PullReport]
        public var articles: ArticleTally
        /// The first local fault, said once (`PullUpdate.localFault`); nil when none happened.
        public var localFault: String?
    }

    let store: Store
    let home: DataHome
    let client: HTTPClient
    let clock: TimeSource
    private let tally = Mutex(Tally())

    private struct Tally {
        var pictures: [Int64: PictureTally] = [:]
        var articles = ArticleTally()
        var localFault: String?
    }

    public init(store: Store, home: DataHome, client: HTTPClient, clock: TimeSource) {
        self.store = store
        self.home = home
        self.client = client
        self.clock = clock
    }

    /// What the prefetch did, counted for the feeds' reports and handed on; its local fault is the
    /// run's, said once.
    public func heard(_ event: PictureEvent, onUpdate: @Sendable (PullUpdate) -> Void) {
        switch event {
        case .cached(_, let bytes, let feedID):
            tally.withLock {
                $0.pictures[feedID, default: PictureTally()].count += 1
                $0.pictures[feedID, default: PictureTally()].bytes += bytes
            }
        case .failed(_, _, let feedID): tally.withLock { $0.pictures[feedID, default: PictureTally()].failed += 1 }
        case .localFault(let reason):
            if isFirstFault(reason) { onUpdate(.localFault(reason)) }
            return
        default: break
        }
        onUpdate(.picture(event))
    }

    /// Whether `reason` is the run's first local fault (then kept as the run's).
    private func isFirstFault(_ reason: String) -> Bool {
        tally.withLock { tally in
            defer { tally.localFault = tally.localFault ?? reason }
            return tally.localFault == nil
        }
    }

    /// Pulls those of `feeds` that `settings.asking` asks for, and syncs `accounts`, while the
    /// companion runs (`Companion`); `settle` may change a feed's report as it ends (a feed this
    /// run subscribed whose first pull failed for good is forgotten there). `onUpdate` hears what
    /// happens as it happens, from the tasks doing it: it must return quickly. Cancelling the
    /// calling task stops every feed between two transactions and cuts the downloads off.
    public func run(
        _ feeds: [Feed], accounts: [Account], settings: Settings, companion: Companion,
        settle: @escaping @Sendable (Feed, PullReport) async -> PullReport,
        onUpdate: @escaping @Sendable (PullUpdate) -> Void
    ) async -> Result {
        var reports = [PullReport?](repeating: nil, count: feeds.count)
        var asked: [Int] = []
        let now = clock.now()
        for (index, feed) in feeds.enumerated() {
            guard let skip = Schedule.skip(feed, asking: settings.asking, now: now) else {
                asked.append(index)
                continue
            }
            reports[index] = PullReport(url: feed.url, skipped: skip)
            onUpdate(.feed(.skipped(url: feed.url, skip)))
            onUpdate(.finished(index: index, feed: feed, reports[index]!))
        }
        let network = RunNetwork(
            hosts: Set(asked.map { NetworkVerdict.host(of: feeds[$0].url) }).count, perHost: settings.perHost)
        var feedOptions = settings.feeds
        feedOptions.clock = clock
        feedOptions.onEvent = { onUpdate(.feed($0)) }
        feedOptions.onCommit = { companion.pagesChanged($0) }
        feedOptions.network = network
        let options = feedOptions
        let (store, home, client) = (store, home, client)
        let accountReports: [PullReport]
        (reports, accountReports) = await withTaskCancellationHandler {
            // Pictures download while pages keep flowing.
            async let companionDone: Void = companion.run()
            async let synced = AccountSync.sync(
                accounts, store: store, home: home, client: client, clock: clock,
                onCommit: { companion.pagesChanged(false) })
            await withTaskGroup(of: (index: Int, slot: Int, report: PullReport).self) { group in
                // Each feed pulled at once has its own engine, with its own download file (slot).
                var next = asked.makeIterator()
                var free = Array((0..<settings.feedConcurrency).reversed())
                while true {
                    while !Task.isCancelled, !network.offline, !free.isEmpty, let index = next.next() {
                        let slot = free.removeLast()
                        let engine = FeedPuller(
                            store: store, client: client, downloadPath: home.downloadPath(slot: slot))
                        var feed = feeds[index]
                        // Asked with --force, a history that waits is tried now too.
                        if settings.asking == .forced { feed.historyRetryAt = nil }
                        group.addTask { [feed] in (index, slot, await engine.pull(feed, options: options)) }
                    }
                    guard let pulled = await group.next() else { break }
                    let report = await settle(feeds[pulled.index], pulled.report)
                    reports[pulled.index] = report
                    if let error = report.error, error.kind == .local, isFirstFault(error.message) {
                        onUpdate(.localFault(error.message))
                    }
                    onUpdate(.finished(index: pulled.index, feed: feeds[pulled.index], report))
                    free.append(pulled.slot)
                }
            }
            let accountReports = await synced
            // Then the pages of full-text feeds' items, while their pictures and the others download.
            if !network.offline, !Task.isCancelled {
                await fetchArticles(
                    options: settings.articles,
                    onEvent: { event in
                        if case .kept(_, let failure) = event {
                            self.tally.withLock { tally in
                                if failure == nil { tally.articles.stored += 1 } else { tally.articles.failed += 1 }
                            }
                        }
                        onUpdate(.article(event))
                    },
                    onStored: { companion.pagesChanged(false) })
            }
            companion.pagingFinished()
            await companionDone
            // Offline: nothing is recorded, and every feed not asked stays as due as it was.
            let held = network.takeHeld()
            guard network.offline else {
                for (feedID, record) in held { _ = try? await store.recordPull(feedID: feedID, record) }
                return (reports, accountReports)
            }
            for index in asked {
                if reports[index] == nil, !Task.isCancelled {
                    var report = PullReport(url: feeds[index].url)
                    report.error = SyncError(.transient, "not asked: no server answered this run")
                    report.unanswered = true
                    reports[index] = report
                }
                if reports[index]?.unanswered == true { reports[index]?.offline = true }
            }
            return (reports, accountReports)
        } onCancel: {
            client.shutdown()  // downloads are not tasks: cut them off
        }
        let counted = tally.withLock { $0 }
        for (index, feed) in feeds.enumerated() {
            reports[index]?.pictures = counted.pictures[feed.id] ?? PictureTally()
        }
        return Result(
            reports: reports, accountReports: accountReports, articles: counted.articles,
            localFault: counted.localFault)
    }
}
