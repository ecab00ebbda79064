import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",  // named here, not derived from the type's name at every start
        abstract: "Show stored items. Reads only the local store: works offline, and while a pull runs.",
        discussion: """
            Without --feed, all feeds are one timeline, newest first (an item without a date sits \
            where its feed puts it); with --feed, the feed's own order. Unread items are marked. On \
            a terminal, lines fit its width; otherwise each item is one line of tab-separated fields \
            (number, read or unread, date, feed, title, picture), nothing cut.
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Option(name: [.short, .long], help: "The page to show, from 1 to \(ReadingPosition.pages.upperBound).")
    var page = 1

    @Option(name: [.customShort("n"), .long], help: "Items per page, 1 to 500.")
    var perPage = 20

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Show only this feed's items, in its order. \(ArgumentHelp.feed.abstract)", valueName: "feed"),
        completion: .feeds)
    var feed: String?

    @Option(
        help: ArgumentHelp(
            "Show only the feeds in this folder and the folders inside it: its path, or its name.", valueName: "name"))
    var folder: String?

    @Flag(name: [.short, .long], help: "Show only unread items.")
    var unread = false

    @Flag(help: "Show only starred items.")
    var starred = false

    @Flag(help: "Show only the items rules hid (feedsync rule), which every other list leaves out.")
    var hidden = false

    @Option(help: ArgumentHelp("Show only the items of this saved view (feedsync view).", valueName: "name"))
    var view: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Show only items whose title or text has these words (or words starting so).",
            valueName: "text"))
    var search: String?

    @Option(
        help: ArgumentHelp(
            "Show only items from this date on: YYYY-MM-DD, ISO 8601, today, yesterday, or a duration back (12h, 7d).",
            valueName: "date"))
    var since: String?

    @Flag(
        help:
            "Remember this page as where the reader is, which steers picture prefetch, even when the output is not a terminal."
    )
    var recordPosition = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        try check(page, in: ReadingPosition.pages, "--page")
        try check(perPage, in: ReadingPosition.perPages, "--per-page")
        if let search, ListQuery.words(search) == nil {
            throw ValidationError("--search needs a word: letters or digits")
        }
        if let since, DateArgument.parse(since) == nil {
            throw ValidationError(
                "--since \(String(reflecting: since)) is no date: give YYYY-MM-DD, yesterday or a duration like 7d")
        }
    }

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        var chosen: Feed?
        if let feed { chosen = try await library.feed(argument: feed) }
        var folder: String?
        if let name = self.folder { folder = try await library.folder(argument: name) }
        var query = ListQuery(
            feedURL: chosen?.url, folder: folder, unread: unread, search: search.flatMap(ListQuery.words),
            since: since.flatMap { DateArgument.parse($0) }, starred: starred, hidden: hidden)
        if let view { query = try await fail { try await library.query(query, inView: view) } }
        // The reader's position steers picture prefetch: a person reading on a terminal moves it, a
        // script paging through everything does not.
        let (page, perPage, reading) = (page, perPage, recordPosition || (Terminal.isInteractive && !json))
        let listed = try await fail(on: {
            try await library.readerPage(query, page: page, perPage: perPage, recordingPosition: reading)
        })
        if json {
            try Output.line(ItemWords.jsonPage(listed, page: page, perPage: perPage))
        } else if Terminal.isInteractive {
            try Output.fitted(
                ItemWords.text(listed, page: page, pages: listed.pages(perPage: perPage), allFeeds: chosen == nil))
        } else if !listed.items.isEmpty {
            try Output.line(ItemWords.fields(listed).joined(separator: "\n"))
        }
    }

}
