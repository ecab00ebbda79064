import ArgumentParser
import FeedSyncStore
import FeedSyncSync
import FeedSyncTransport
import Foundation

struct Pull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Page through remote feeds and store their items.",
        discussion: """
            With --feed, the feed is remembered and pulled; without it, every remembered feed is \
            pulled. A pull continues where the last one stopped. Made for cron: \
            */15 * * * * feedsync pull --quiet
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Option(help: ArgumentHelp("Subscribe to this feed (if new) and pull only it.", valueName: "url"))
    var feed: String?

    @Option(help: ArgumentHelp("Fetch at most this many pages per feed in this run.", valueName: "n"))
    var maxPages: Int?

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Report every page and retry on stderr.")
    var verbose = false

    func validate() throws {
        if let feed { try validateFeedURL(feed) }
        if let maxPages, maxPages < 1 { throw ValidationError("--max-pages must be at least 1") }
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
    }

    func run() async throws {
        let dataHome = homeOptions.dataHome
        try fail(on: { try dataHome.prepare() })
        let lock = try fail(on: { try PullLock(path: dataHome.lockPath) })
        defer { withExtendedLifetime(lock) {} }
        let store = try fail(on: { try Store(path: dataHome.databasePath) })

        let feeds: [Feed]
        if let feed {
            feeds = [try fail(on: { try store.subscribe(url: feed) })]
        } else {
            feeds = try fail(on: { try store.feeds() })
            guard !feeds.isEmpty else {
                complain("no feeds to pull yet; subscribe to one with: feedsync pull --feed URL")
                throw ExitCode(Exit.usage)
            }
        }

        let client = HTTPClient(configuration: TransportConfiguration(userAgent: FeedSyncVersion.userAgent))
        defer { client.shutdown() }
        let engine = SyncEngine(store: store, client: client)
        let verbose = verbose
        let onEvent: @Sendable (PullEvent) -> Void = { event in if verbose { Self.log(event) } }
        let options = PullOptions(maxPages: maxPages, retry: Self.retryPolicy(), onEvent: onEvent)
        let talk = !quiet && Terminal.isInteractive

        var worst: SyncError.Kind? = nil
        for feed in feeds {
            do throws(SyncError) {
                let report = try await engine.pull(feed, options: options)
                if talk { print(Self.summary(report)) }
            } catch {
                complain(error.message)
                worst = max(worst ?? error.kind, error.kind)
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

    static func log(_ event: PullEvent) {
        let line: String = switch event {
        case .notModified(let url): "\(url): not modified"
        case .page(let url, let number, let items, let new): "\(url): page \(number), \(items) items, \(new) new"
        case .retrying(let url, let attempt, let delay, let reason):
            "\(url): \(reason); retry \(attempt) in \(String(format: "%.1f", delay)) s"
        case .skipped(let url, let until): "\(url): skipped until \(iso(until)) as the server asked"
        case .endless(let url, let reason): "\(url): stopped an endless feed: \(reason)"
        }
        FileHandle.standardError.write(Data((Terminal.safe(line) + "\n").utf8))
    }
}
