import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Subscribe to the feeds of an OPML file (from another reader); fetches nothing.",
        discussion: """
            Nested outlines become folders. Feeds already subscribed stay as they are, but for \
            one in no folder, which is filed in the file's; importing again adds nothing. Outlines whose URL cannot be used are listed with their \
            line, and make the exit status 65; the others are imported all the same.
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("The OPML file; - reads standard input.", valueName: "file"))
    var file: String

    @Option(
        help: ArgumentHelp(
            "Subscribe on this account's server instead (each feed fetched there now).", valueName: "name"))
    var account: String?

    /// The largest file read: a subscription list of 100 000 feeds is a few megabytes.
    static let maxBytes = 64 << 20

    func run() async throws {
        let data = try Files.read(file, maxBytes: Self.maxBytes, what: "subscription list")
        let entries: [Subscription]
        let missing: [Int]
        do {
            (entries, missing) = try FeedSync.readSubscriptions(data)
        } catch {
            complain("\(file): \(error.reason); nothing was subscribed")
            throw ExitCode(Exit.dataError)
        }
        if let account {
            try await importOnServer(entries, missing: missing, account: account)
            return
        }
        let library = try await homeOptions.open(.reading)
        // One transaction: an interrupt stops it whole, or comes after it.
        let (imported, _) = try await fail(on: { try await interruptible { try await library.importFeeds(entries) } })
        guard let report = imported else { throw interrupted("nothing was subscribed") }
        for (entry, reason) in report.invalid { complain("\(file), line \(entry.line): \(reason)") }
        for line in missing { complain("\(file), line \(line): a feed outline without xmlUrl") }
        let invalid = report.invalid.count + missing.count
        var filed = ""
        if !report.filed.isEmpty {
            let folders = Set(report.filed.compactMap(\.folder)).sorted().map(Terminal.safe)
            filed = " (\(report.filed.count) of them filed in \(folders.joined(separator: ", ")), as the file has them)"
        }
        try Output.wrapped(
            "\(report.added.count) added, \(report.already.count) already subscribed\(filed), \(invalid) invalid"
                + (report.added.isEmpty ? "" : "; the next pull fetches them"))
        if invalid > 0 { throw ExitCode(Exit.dataError) }
    }

    /// Subscribes the account to each feed on its server, then syncs it once, saying which failed.
    func importOnServer(_ entries: [Subscription], missing: [Int], account name: String) async throws {
        let library = try await homeOptions.open(.writing)
        let account = try await fail { try await library.account(named: name) }
        for line in missing { complain("\(file), line \(line): a feed outline without xmlUrl") }
        let urls = entries.map(\.url)
        let (subscribed, wasInterrupted) = try await fail {
            try await interruptible { try await library.subscribe(urls, account: account) }
        }
        guard let outcomes = subscribed else { throw interrupted("nothing was subscribed") }
        if wasInterrupted {
            let done = outcomes.filter { (try? $0.get()) != nil }.count
            throw interrupted(
                "\(done) of the file's \(entries.count) feeds subscribed on account \(Terminal.safe(name)); "
                    + "importing the file again adds the others")
        }
        var added = 0
        var failed = missing.count
        for (entry, outcome) in zip(entries, outcomes) {
            guard case .failure(let error) = outcome else {
                added += 1
                continue
            }
            complain("\(file), line \(entry.line): \(error.message)")
            // The server gone or refusing the account: what follows was not tried, or not synced.
            if error.isTheServers { throw ExitCode(Exit.code(for: error.kind)) }
            failed += 1
        }
        try Output.line("\(added) subscribed on account \(Terminal.safe(name)), \(failed) not")
        if failed > 0 { throw ExitCode(Exit.dataError) }
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the subscriptions as OPML 2.0, folders and titles included.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(
        help: ArgumentHelp("The file to write (replaced); - or nothing writes standard output.", valueName: "file"))
    var file: String?

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let feeds = try await fail(on: { try await library.exportedFeeds() })
        let document = FeedSync.opml(feeds, title: "feedsync subscriptions")
        guard let file, file != "-" else { return try Output.write(document) }
        try Files.write(document, to: file)
        let folders = Set(feeds.compactMap(\.folder)).count
        try Output.wrapped(
            "wrote \(feeds.count) feed\(feeds.count == 1 ? "" : "s")"
                + (folders > 0 ? " in \(folders) folder\(folders == 1 ? "" : "s")" : "") + " to \(Terminal.safe(file))")
    }
}
