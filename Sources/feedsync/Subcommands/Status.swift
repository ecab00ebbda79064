import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",  // named here, not derived from the type's name at every start
        abstract: "Show each feed's items, backfill progress, last pull and pictures; each account's sync.")

    @OptionGroup var homeOptions: HomeOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        // An account's feeds are synced with it: they are shown under it, not one by one.
        let feeds = try await fail(on: { try await library.status() }).filter { $0.feed.accountID == nil }
        var accounts: [(account: Account, queued: Int)] = []
        for account in try await fail(on: { try await library.accounts() }) {
            accounts.append((account, try await fail(on: { try await library.queuedMarks(account).count })))
        }
        let articles = try await fail { try await library.articleCounts() }
        let teasers = try await fail { try await library.summaryOnlyFeeds() }
        if json {
            try Output.line(
                "{\"feeds\": [\(feeds.map { FeedWords.jsonFeed($0, articles: articles[$0.feed.id]) }.joined(separator: ", "))], "
                    + "\"accounts\": [\(accounts.map(FeedWords.jsonAccount).joined(separator: ", "))]}")
        } else if feeds.isEmpty, accounts.isEmpty {
            try Output.line("no feeds yet; subscribe with: feedsync add URL")
        } else {
            try Output.wrapped(
                (accounts.map(FeedWords.text)
                    + feeds.map {
                        FeedWords.text($0, articles: articles[$0.feed.id], teaser: teasers.contains($0.feed.id))
                    })
                    .joined(separator: "\n\n"))
        }
    }

}
