import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Pull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",  // named here, not derived from the type's name at every start
        abstract: "Page through remote feeds and store their items.",
        usage: "feedsync pull [--feed <url> ...] [--force] [--quiet | --verbose | --json] [<options>]",
        // --help opens with the usage and the options most used; the prose is the man page's
        // (scripts/man, which reads the commands through --experimental-dump-help).
        discussion: CommandLine.arguments.contains("--experimental-dump-help") ? manual : "")

    static let manual = """
        Without --feed, every feed that is due is pulled: when its server and its document \
        allow (Cache-Control, Expires, ttl, sy:updatePeriod, Retry-After, skipHours, skipDays), \
        at least --min-interval apart and at most a day, later after failures. With --feed \
        (repeatable), those feeds are remembered and pulled now, but not before a Retry-After; \
        --force pulls every feed now. A pull continues where the last one stopped. Made for \
        cron: */15 * * * * feedsync pull --quiet

        On a terminal a pull prints a line for each feed that brought news or failed, then one \
        line for the run (--verbose: a line for every feed, and every page and retry). A failure \
        names the feed by its number and title, and what to do.

        Offline is known in seconds: a request no server answered (no such host, refused, \
        no connection in time, closed before answering) is tried again once; when no server \
        answered and three hosts (or all) gave no answer, the pull stops, records nothing, \
        names those hosts and how, and exits 75. A page past the first that fails (404, a broken page, the \
        network cut) stops only the walk into the feed's history: the feed stays healthy, \
        and that page is asked again at the next pull (cut off) or in a day (refused or \
        broken). --images all fetches every picture of every feed.
        """

    @OptionGroup(title: "Most used") var common: PullCommon

    @OptionGroup var homeOptions: HomeOptions

    var feed: [String] { common.feed }
    var force: Bool { common.force }
    var json: Bool { common.json }
    var quiet: Bool { common.quiet }
    var verbose: Bool { common.verbose }

    @Option(
        help: ArgumentHelp(
            "With --feed: read it as this format from now on "
                + "(\(FormatChoice.allValueStrings.joined(separator: ", "))); "
                + "auto finds it from the documents again.",
            valueName: "format"))
    var format: FormatChoice?

    @Option(help: ArgumentHelp("Fetch at most this many pages per feed in this run.", valueName: "n"))
    var maxPages: Int?

    @OptionGroup var pictureOptions: PictureOptions

    @Option(help: ArgumentHelp("Which pictures to download: window, all or none.", valueName: "mode"))
    var images: PrefetchMode = .window

    @Option(
        help: ArgumentHelp(
            "Also download the pictures inside the articles of the window's rows (window), or not (none).",
            valueName: "mode"))
    var articlePictures: ArticlePicturesMode = .window

    @Option(help: ArgumentHelp("Prefetch pictures this many pages past the reading position.", valueName: "k"))
    var prefetchPages = 5

    @Option(help: ArgumentHelp("Picture downloads running at once.", valueName: "n"))
    var imageConcurrency = 8

    @Option(help: ArgumentHelp("Feeds pulled at once.", valueName: "n"))
    var feedConcurrency = 4

    @Option(
        help: ArgumentHelp(
            "Full-text feeds: fetch at most this many item pages of one host in this run (the rest next run).",
            valueName: "n"))
    var articlePages = 20

    @Option(
        help: ArgumentHelp("Largest picture accepted, in bytes (K, M and G suffixes work).", valueName: "size"),
        transform: ByteSize.parse)
    var maxImageBytes: Int64 = 10 << 20

    @Option(
        help: ArgumentHelp("Give up on a transfer that makes no progress for this many seconds.", valueName: "seconds"))
    var timeout = 20

    @Option(
        help: ArgumentHelp(
            "Ask a feed at most this often (minutes, or with s, m or h: 900s, 15m, 1h; at most 24h).",
            valueName: "duration"),
        transform: Interval.parse)
    var minInterval: Double = FeedSync.defaultMinInterval

    @Option(help: ArgumentHelp("Connections to one host at once, pages and pictures together.", valueName: "n"))
    var perHost = 2

    func validate() throws {
        for url in feed { try validateFeedURL(url) }
        if format != nil, feed.isEmpty {
            throw ValidationError("--format needs --feed: it is remembered with the feed")
        }
        if let maxPages { try check(maxPages, in: 1...1_000_000, "--max-pages") }
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
        try check(perHost, in: 1...16, "--per-host")
        try check(prefetchPages, in: PictureOptions.prefetchPages, "--prefetch-pages")
        try check(imageConcurrency, in: 1...64, "--image-concurrency")
        try check(feedConcurrency, in: 1...16, "--feed-concurrency")
        try check(articlePages, in: 0...1000, "--article-pages")
        try check(timeout, in: 1...600, "--timeout (seconds)")
        // A picture is held in memory while it is checked.
        try check(maxImageBytes, in: 1...(1 << 30), "--max-image-bytes")
    }

    func run() async throws {
        FeedSync.preloadNetwork()  // while the store opens (and, the first time, is created)
        defer { FeedSync.networkLoaded() }  // before any exit, even one that never makes a client
        let library = try await homeOptions.open(.writing)
        var settings = FeedSync.PullSettings()
        settings.feeds.maxPages = maxPages
        settings.pictures = PrefetchOptions(
            mode: images, articlePictures: articlePictures, pagesAhead: prefetchPages, concurrency: imageConcurrency,
            maxBytes: Int(maxImageBytes))
        settings.cacheSize = pictureOptions.cacheSize
        settings.feedConcurrency = feedConcurrency
        settings.articles.perHost = articlePages
        settings.timeout = timeout
        settings.perHost = perHost
        settings.minInterval = minInterval
        settings.asking = force ? .forced : feed.isEmpty ? .due : .named
        let selection: FeedSync.PullSelection =
            feed.isEmpty ? .subscribed : .named(feed, format: format?.setting ?? .keep)
        let talk = !quiet && !json && Terminal.isInteractive
        let started = Date()
        // The feeds by title for the progress line (a feed new to this pull is named by its host).
        let known = talk ? (try? await library.feeds()) ?? [] : []
        let report = PullReporting(
            progress: talk ? ProgressLine(names: Dictionary(known.map { ($0.url, $0.name) }) { a, _ in a }) : nil,
            verbose: verbose, failure: PullWords.failure)
        let chosen = settings
        let (pulled, interrupted) = try await fail {
            try await interruptible { try await library.pull(selection, settings: chosen, onUpdate: report.update) }
        }
        report.progress?.clear()
        guard let run = pulled else {
            throw FeedSyncFrontend.interrupted("the next pull continues each feed from where this one stopped")
        }
        let feeds = run.feeds
        guard !feeds.isEmpty || !run.accounts.isEmpty else {
            complain("no feeds to pull yet; subscribe to one with: feedsync add URL")
            throw ExitCode(Exit.usage)
        }
        if interrupted { throw FeedSyncFrontend.interrupted(await PullWords.resumption(of: feeds, in: library)) }
        // Feeds by the names they have now (a first pull finds its feed's title).
        let names =
            talk ? Dictionary(((try? await library.feeds()) ?? feeds).map { ($0.id, $0.name) }) { a, _ in a } : [:]
        let worst = try report.conclude(
            run, started: started, names: names, talk: talk, named: !self.feed.isEmpty, json: json)
        if let worst { throw ExitCode(Exit.code(for: worst)) }
    }

}

/// The options of `pull` people use most, first in its help.
struct PullCommon: ParsableArguments {
    @Option(help: ArgumentHelp("Subscribe to this feed (if new) and pull it; repeat for more feeds.", valueName: "url"))
    var feed: [String] = []

    @Flag(help: "Ask every feed now, even one not due or whose server asked to wait (Retry-After).")
    var force = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Print every feed's line, and every page and retry on stderr.")
    var verbose = false

    @Flag(help: "Print one JSON object for the run: each feed's requests, items, pictures and next due time.")
    var json = false
}
