import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Subscribe to a feed and pull it now.",
        discussion: """
            URL may be the feed or a web page that names its feeds (<link rel="alternate">): the \
            first named is taken, the others listed. Without a scheme (example.com/feed) it is tried \
            as https://, then as http:// when nothing answers there. A feed that fails for good (not \
            found, not a feed) is not subscribed (exit 65), nor one whose host does not exist or \
            refused the connection (exit 75; --keep keeps it); one whose server failed or stopped \
            answering stays subscribed and a later pull fetches it, as the schedule has it (exit 75).
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Argument(
        help: ArgumentHelp(
            "The feed's URL, or a web page's that names its feeds; without a scheme, https:// or http://.",
            valueName: "url"))
    var url: String

    @Flag(help: "Keep the subscription even when its host does not exist or refuses, for a later pull.")
    var keep = false

    @Option(help: ArgumentHelp("A title of your own for the feed.", valueName: "title"))
    var title: String?

    @Option(
        help: ArgumentHelp(
            "Read it as this format (\(FormatChoice.allValueStrings.joined(separator: ", "))).", valueName: "format"))
    var format: FormatChoice?

    @OptionGroup var pictureOptions: PictureOptions

    @Flag(help: "Fetch each item's page and keep its whole article (for feeds that publish teasers).")
    var fullText = false

    @Option(
        help: ArgumentHelp(
            "Subscribe on this account's server instead (account list names them); its next sync brings the items.",
            valueName: "name"))
    var account: String?

    func validate() throws {
        try validateFeedURL(FeedSync.hasScheme(url) ? url : "https://" + url, option: "the URL")
    }

    func run() async throws {
        let library = try await homeOptions.open(.writing)
        if let account {
            let feed = try await fail {
                try await library.subscribe(url, account: try await library.account(named: account))
            }
            try Output.line("added \(feed.id) \(Terminal.safe(feed.name)) on account \(Terminal.safe(account))")
            return
        }
        var settings = FeedSync.PullSettings()
        settings.pictures = PrefetchOptions(mode: .window)
        settings.cacheSize = pictureOptions.cacheSize
        // Failures are said once, below, with what became of the subscription.
        let report = PullReporting(
            progress: Terminal.isInteractive ? ProgressLine() : nil, verbose: false, failure: { _, _ in nil })
        let before = Set(try await fail { try await library.feeds() }.map(\.id))
        let chosen = settings
        let (added, interrupted) = try await fail {
            try await interruptible {
                try await library.add(
                    url, title: title, format: format?.setting ?? .keep, fullText: fullText, keep: keep,
                    settings: chosen, onUpdate: report.update)
            }
        }
        report.progress?.clear()
        guard let (outcome, discovered) = added, !interrupted else {
            throw FeedSyncFrontend.interrupted(await Self.kept(library, besides: before))
        }
        if let first = discovered.first {
            var line = "found \(discovered.count) feed\(discovered.count == 1 ? "" : "s") on the page; taking \(first)"
            if discovered.count > 1 { line += " (the others: \(discovered.dropFirst().joined(separator: ", ")))" }
            try Output.line(Terminal.safe(line))
        }
        switch outcome {
        case .already(let known):
            try Output.line("already subscribed: \(known.id) \(Terminal.safe(known.name))")
        case .added(let feed, let report):
            try Output.line(
                "added \(feed.id) \(Terminal.safe(feed.name)): \(report.newItems) item\(report.newItems == 1 ? "" : "s")"
            )
        case .failed(let error, kept: false):
            complain(error.message)  // it says nothing was subscribed
            throw ExitCode(Exit.code(for: error.kind))
        case .failed(let error, _) where error.kind == .transient:
            complain("\(error.message); it stays subscribed")
            throw ExitCode(Exit.tempFail)
        case .failed(let error, _):
            complain(error.message)
            throw ExitCode(Exit.code(for: error.kind))
        }
    }

    /// What an interrupted `add` kept: the feed it subscribed (not in `before`), and how far it got.
    static func kept(_ library: FeedSync, besides before: Set<Int64>) async -> String {
        guard let summaries = try? await library.feedSummaries(),
            let new = summaries.first(where: { !before.contains($0.feed.id) })
        else { return "nothing was subscribed" }
        let feed = new.feed
        return
            "\(feed.id) \(Terminal.safe(feed.name)) stays subscribed with \(new.items) item\(new.items == 1 ? "" : "s") "
            + "so far; the next pull continues it (feedsync remove \(feed.id) takes it away)"
    }
}
