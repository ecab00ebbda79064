import ArgumentParser
import FeedSyncImages
import FeedSyncKit
import FeedSyncStore
import FeedSyncSync
import Foundation

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Subscribe to a feed and pull it now.",
        discussion: """
            URL may be the feed or a web page that names its feeds (<link rel="alternate">): the \
            first named is taken, the others listed. A feed that fails for good (not found, not a \
            feed) is not subscribed (exit 65); one that cannot be reached now stays subscribed and \
            a later pull fetches it, as the schedule has it (exit 75).
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("The feed's URL, or a web page's that names its feeds.", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("A title of your own for the feed.", valueName: "title"))
    var title: String?

    @Option(
        help: ArgumentHelp(
            "Read it as this format (\(FormatChoice.allValueStrings.joined(separator: ", "))).", valueName: "format"))
    var format: FormatChoice?

    @OptionGroup var pictureOptions: PictureOptions

    func validate() throws {
        try validateFeedURL(url, option: "the URL")
    }

    func run() async throws {
        let library = try homeOptions.open(.writing)
        var settings = FeedSync.PullSettings()
        settings.retry = Pull.retryPolicy()
        settings.pictures = PrefetchOptions(mode: .window, cacheBudget: try pictureOptions.budget(library))
        if try alreadySubscribed(url, library) { return }
        var outcome = try await subscribeAndPull(url, library, settings)
        if case .failed(let error, kept: false) = outcome, format == nil {
            // Not a feed, perhaps a web page that names its feeds.
            let found = (try? await library.discoverFeeds(at: url, settings: settings)) ?? []
            guard let first = found.first else {
                complain("\(error.message); nothing was subscribed")
                throw ExitCode(Exit.dataError)
            }
            var line = "found \(found.count) feed\(found.count == 1 ? "" : "s") on the page; taking \(first)"
            if found.count > 1 { line += " (the others: \(found.dropFirst().joined(separator: ", ")))" }
            try Output.line(Terminal.safe(line))
            if try alreadySubscribed(first, library) { return }
            outcome = try await subscribeAndPull(first, library, settings)
        }
        switch outcome {
        case .pulled(let feed, let report):
            let named = try fail(on: { try library.feed(url: feed.url) }) ?? feed
            try Output.line(
                "added \(named.id) \(Terminal.safe(named.name)): \(report.newItems) item\(report.newItems == 1 ? "" : "s")"
            )
        case .failed(let error, kept: false):
            complain("\(error.message); nothing was subscribed")
            throw ExitCode(Exit.dataError)
        case .failed(let error, _) where error.kind == .transient:
            complain("\(error.message); it stays subscribed")
            throw ExitCode(Exit.tempFail)
        case .failed(let error, _):
            complain(error.message)
            throw ExitCode(Exit.code(for: error.kind))
        }
    }

    /// Says so when `url` (in any spelling) is subscribed already.
    func alreadySubscribed(_ url: String, _ library: FeedSync) throws -> Bool {
        guard let known = try fail(on: { try library.feed(url: url) }) else { return false }
        try Output.line("already subscribed: \(known.id) \(Terminal.safe(known.name))")
        return true
    }

    enum Outcome {
        case pulled(Feed, PullReport)
        /// `kept`: the feed stays subscribed (a transient failure, or pages stored before it).
        case failed(SyncError, kept: Bool)
    }

    /// Subscribes to `url` and pulls it; a first pull that fails for good leaves nothing subscribed.
    func subscribeAndPull(_ url: String, _ library: FeedSync, _ settings: FeedSync.PullSettings) async throws
        -> Outcome
    {
        let feed = try fail(on: { try library.subscribe(url: url, format: format?.setting ?? .keep) })
        if let title { try fail(on: { try library.rename(feed, to: title) }) }
        let talk = Terminal.isInteractive
        // Failures are said once, with what became of the subscription.
        let report = PullReporting(progress: talk ? ProgressLine() : nil, verbose: false, failure: { _, _ in nil })
        let outcome = await library.pull([feed], settings: settings, onUpdate: report.update).first ?? nil
        report.progress?.clear()
        guard let outcome else { throw ExitCode(Exit.tempFail) }
        guard let error = outcome.error else { return .pulled(feed, outcome) }
        let forgotten = try error.kind == .data && fail(on: { try library.forgetIfNeverStored(feed) })
        return .failed(error, kept: !forgotten)
    }
}
