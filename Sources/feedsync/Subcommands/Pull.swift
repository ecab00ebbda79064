import ArgumentParser
import FeedSyncFeed
import FeedSyncImages
import FeedSyncStore
import FeedSyncSync
import FeedSyncTransport
import Foundation
import Synchronization

struct Pull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",  // named here, not derived from the type's name at every start
        abstract: "Page through remote feeds and store their items.",
        discussion: """
            With --feed (repeatable), those feeds are remembered and pulled; without it, every \
            remembered feed is pulled. A pull continues where the last one stopped. Made for cron: \
            */15 * * * * feedsync pull --quiet
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Option(help: ArgumentHelp("Subscribe to this feed (if new) and pull it; repeat for more feeds.", valueName: "url"))
    var feed: [String] = []

    @Option(help: ArgumentHelp(
        "With --feed: read it as this format from now on (\(FormatChoice.allValueStrings.joined(separator: ", "))); auto finds it from the documents again.",
        valueName: "format"))
    var format: FormatChoice?

    @Option(help: ArgumentHelp("Fetch at most this many pages per feed in this run.", valueName: "n"))
    var maxPages: Int?

    @OptionGroup var pictureOptions: PictureOptions

    @Option(help: ArgumentHelp("Which pictures to download: window, all or none.", valueName: "mode"))
    var images: PrefetchMode = .window

    @Option(help: ArgumentHelp("Prefetch pictures this many pages past the reading position.", valueName: "k"))
    var prefetchPages = 5

    @Option(help: ArgumentHelp("Picture downloads running at once.", valueName: "n"))
    var imageConcurrency = 8

    @Option(help: ArgumentHelp("Feeds pulled at once.", valueName: "n"))
    var feedConcurrency = 4

    @Option(help: ArgumentHelp("Largest picture accepted, in bytes (K, M and G suffixes work).", valueName: "size"),
            transform: ByteSize.parse)
    var maxImageBytes: Int64 = 10 << 20

    @Option(help: ArgumentHelp("Give up on a transfer that makes no progress for this many seconds.", valueName: "seconds"))
    var timeout = 20

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Report every page and retry on stderr.")
    var verbose = false

    func validate() throws {
        try feed.forEach(validateFeedURL)
        if format != nil, feed.isEmpty { throw ValidationError("--format needs --feed: it is remembered with the feed") }
        if let maxPages, maxPages < 1 { throw ValidationError("--max-pages must be at least 1") }
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
        if prefetchPages < 0 { throw ValidationError("--prefetch-pages must be 0 or more") }
        guard (1...64).contains(imageConcurrency) else { throw ValidationError("--image-concurrency must be between 1 and 64") }
        guard (1...16).contains(feedConcurrency) else { throw ValidationError("--feed-concurrency must be between 1 and 16") }
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
        guard maxImageBytes >= 1 else { throw ValidationError("--max-image-bytes must be at least 1") }
    }

    func run() async throws {
        HTTPClient.loadInBackground()  // while the store opens (and, the first time, is created)
        defer { HTTPClient.waitForLoading() }  // before any exit, even one that never makes a client
        let (dataHome, lock, store) = try homeOptions.lockAndOpenStore()
        defer { withExtendedLifetime(lock) {} }

        let feeds: [Feed]
        if !feed.isEmpty {
            feeds = try feed.map { url in try fail(on: { try store.subscribe(url: url, format: format?.rawValue) }) }
        } else {
            feeds = try fail(on: { try store.feeds() })
            guard !feeds.isEmpty else {
                complain("no feeds to pull yet; subscribe to one with: feedsync pull --feed URL")
                throw ExitCode(Exit.usage)
            }
        }

        let client = HTTPClient(configuration: TransportConfiguration(
            userAgent: FeedSyncVersion.userAgent, connectTimeout: min(timeout, 10), lowSpeedSeconds: timeout,
            maxConnections: imageConcurrency + feedConcurrency))
        defer { client.shutdown() }
        let talk = !quiet && Terminal.isInteractive
        let progress = talk ? ProgressLine() : nil
        let verbose = verbose

        let prefetcher = PicturePrefetcher(
            store: store, client: client, directory: dataHome.cacheDirectory,
            options: PrefetchOptions(
                mode: images, pagesAhead: prefetchPages, concurrency: imageConcurrency,
                maxBytes: Int(maxImageBytes), cacheBudget: try pictureOptions.budget(store)),
            onEvent: { event in
                progress?.record(event)
                if verbose { Self.log(event) }
            })
        let options = PullOptions(maxPages: maxPages, retry: Self.retryPolicy(), onEvent: { event in
            if case .page(_, _, _, _, let refreshed) = event { prefetcher.pagesChanged(refreshing: refreshed > 0) }
            progress?.record(event)
            if verbose { Self.log(event) }
        })

        // Pictures download while pages keep flowing; the exit code reflects paging only.
        async let pictures: Void = prefetcher.run()
        // `feedConcurrency` workers take the feeds in order, each with its own engine and
        // download file; a failed feed is reported at once and does not stop the others.
        let next = Mutex(0)
        let claim = { @Sendable () -> Int? in
            next.withLock { index in
                defer { index += 1 }
                return index < feeds.count ? index : nil
            }
        }
        let outcomes = Mutex([Result<PullReport, SyncError>?](repeating: nil, count: feeds.count))
        let record = { @Sendable (index: Int, outcome: Result<PullReport, SyncError>) in
            outcomes.withLock { $0[index] = outcome }
        }
        await withTaskGroup(of: Void.self) { group in
            for slot in 0..<min(feedConcurrency, feeds.count) {
                let engine = SyncEngine(store: store, client: client, downloadPath: dataHome.downloadPath(slot: slot))
                group.addTask {
                    while let index = claim() {
                        do throws(SyncError) {
                            record(index, .success(try await engine.pull(feeds[index], options: options)))
                        } catch {
                            record(index, .failure(error))
                            progress?.clear()
                            complain(error.message)
                        }
                    }
                }
            }
        }
        prefetcher.pagingFinished()
        await pictures
        progress?.clear()
        var worst: SyncError.Kind? = nil
        for outcome in outcomes.withLock({ $0 }) {
            switch outcome {
            case .success(let report)?: if talk { print(Self.summary(report)) }
            case .failure(let error)?: worst = max(worst ?? error.kind, error.kind)
            case nil: break
            }
        }
        if let worst { throw ExitCode(Exit.code(for: worst)) }
    }

    /// The default policy, which `FEEDSYNC_RETRY_ATTEMPTS` and `FEEDSYNC_RETRY_BASE_DELAY` (seconds)
    /// can change: tests use a short base delay, impatient users fewer attempts.
    static func retryPolicy() -> RetryPolicy {
        var policy = RetryPolicy()
        let environment = ProcessInfo.processInfo.environment
        if let attempts = environment["FEEDSYNC_RETRY_ATTEMPTS"].flatMap(Int.init), attempts >= 1 {
            policy.maxAttempts = attempts
        }
        if let base = environment["FEEDSYNC_RETRY_BASE_DELAY"].flatMap(Double.init), base >= 0 {
            policy.baseDelay = base
        }
        return policy
    }

    static func summary(_ report: PullReport) -> String {
        let url = Terminal.safe(report.url)
        if let until = report.skippedUntil { return "\(url): skipped, the server asked to wait until \(iso(until))" }
        var line = "\(url): \(report.newItems) new item\(report.newItems == 1 ? "" : "s"), \(report.pages) request\(report.pages == 1 ? "" : "s")"
        switch report.finish {
        case .budgetSpent: line += "; --max-pages reached, the next pull continues"
        case .endless(let reason): line += "; stopped an endless feed (\(reason))"
        default: break
        }
        return line
    }

    static func log(_ event: PictureEvent) {
        let line: String
        switch event {
        case .failed(let url, let reason): line = "picture \(url): \(reason)"
        case .evicted(let count, let bytes): line = "evicted \(count) pictures (\(bytes) bytes) to fit the cache size"
        case .planned, .cached: return
        }
        FileHandle.standardError.write(Data((Terminal.safe(line) + "\n").utf8))
    }

    static func log(_ event: PullEvent) {
        let line: String = switch event {
        case .notModified(let url): "\(url): not modified"
        case .page(let url, let number, let items, let new, _): "\(url): page \(number), \(items) items, \(new) new"
        case .retrying(let url, let attempt, let delay, let reason):
            "\(url): \(reason); retry \(attempt) in \(String(format: "%.1f", delay)) s"
        case .skipped(let url, let until): "\(url): skipped until \(iso(until)) as the server asked"
        case .endless(let url, let reason): "\(url): stopped an endless feed: \(reason)"
        case .linkRefused(let url, let status): "\(url): answered \(status) to a saved link; starting again from the head"
        }
        FileHandle.standardError.write(Data((Terminal.safe(line) + "\n").utf8))
    }
}

/// `--format`: one of the formats, or `auto` to have the documents say again.
struct FormatChoice: ExpressibleByArgument, Equatable {
    /// A FeedFormat raw value, or "auto".
    var rawValue: String

    init?(argument: String) {
        guard argument == "auto" || FeedFormat(rawValue: argument) != nil else { return nil }
        rawValue = argument
    }

    static var allValueStrings: [String] { FeedFormat.allCases.map(\.rawValue) + ["auto"] }
}
