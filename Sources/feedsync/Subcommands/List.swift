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
        let query = ListQuery(
            feedURL: chosen?.url, folder: folder, unread: unread, search: search.flatMap(ListQuery.words),
            since: since.flatMap { DateArgument.parse($0) }, starred: starred)
        // The reader's position steers picture prefetch: a person reading on a terminal moves it, a
        // script paging through everything does not.
        let (page, perPage, reading) = (page, perPage, recordPosition || (Terminal.isInteractive && !json))
        let listed = try await fail(on: {
            try await library.readerPage(query, page: page, perPage: perPage, recordingPosition: reading)
        })
        if json {
            try Output.line(jsonPage(listed))
        } else if Terminal.isInteractive {
            try Output.fitted(text(listed, allFeeds: chosen == nil, pages: listed.pages(perPage: perPage)))
        } else if !listed.items.isEmpty {
            try Output.line(fields(listed).joined(separator: "\n"))
        }
    }

    func jsonPage(_ listed: ListedPage) -> String {
        let items = listed.items.map { item in
            "{" + ItemJSON.fields(item, path: item.picturePath, position: item.position) + "}"
        }
        return """
            {"page": \(page), "per_page": \(perPage), "total": \(listed.total), \
            "items": [\(items.joined(separator: ", "))]}
            """
    }

    /// Lines for a person: the number, a star and an unread mark, the time (today's items) or the
    /// date, in the all-feeds view the feed, the title, and a picture's state where it tells
    /// something (not cached yet, failed); a footer with the page.
    func text(_ listed: ListedPage, allFeeds: Bool, pages: Int, now: Date = Date()) -> String {
        var footer = "page \(page) of \(pages) · \(listed.total) item\(listed.total == 1 ? "" : "s")"
        footer += " · " + (listed.lastPullAt.map { "last pull \(relative($0))" } ?? "never pulled")
        guard !listed.items.isEmpty else {
            let hint =
                listed.total > 0
                ? "no items on this page"
                : listed.lastPullAt == nil ? "no items stored yet; run: feedsync add URL" : "no items"
            return hint + "\n" + footer
        }
        let numberWidth = listed.items.map { String($0.number).count }.max() ?? 1
        let dates = listed.items.map { item in
            item.published.flatMap(StoredDate.seconds).map { LocalTime.dateOrTime(seconds: time_t($0), now: now) } ?? ""
        }
        let dateWidth = dates.map(\.count).max() ?? 0
        let marked = listed.items.map { item -> String in
            switch item.imageStatus {
            case .none, .cached: ""
            case .pending, .failed: "[\(item.imageStatus.rawValue)]"
            }
        }
        let statusWidth = marked.contains { !$0.isEmpty } ? 1 + 9 : 0  // " [pending]"
        // The number, the star and unread marks (2), a space and the date, two spaces and the
        // title, the picture's state; in the all-feeds view two spaces and the feed before the
        // title, narrower on a narrow terminal so the title keeps 10 cells where it can.
        let fixed = numberWidth + 2 + 1 + dateWidth + 2 + statusWidth
        let feedWidth =
            allFeeds
            ? max(
                4, min(18, listed.items.map { Terminal.displayWidth(name($0)) }.max() ?? 0, Terminal.width - fixed - 12)
            )
            : 0
        let titleWidth = max(10, Terminal.width - fixed - (allFeeds ? feedWidth + 2 : 0))
        var lines: [String] = []
        for (index, item) in listed.items.enumerated() {
            var line = String(repeating: " ", count: numberWidth - String(item.number).count) + String(item.number)
            line += (item.starred ? "*" : " ") + (item.read ? " " : "•")
            line += " " + dates[index] + String(repeating: " ", count: dateWidth - dates[index].count)
            if allFeeds { line += "  " + padded(Terminal.truncate(name(item), toCells: feedWidth), to: feedWidth) }
            let title = Terminal.truncate(Terminal.safe(title(item)), toCells: titleWidth)
            let status = marked[index]
            line += "  " + (status.isEmpty ? title : padded(title, to: titleWidth) + " " + status)
            lines.append(line)
        }
        return (lines + [footer]).joined(separator: "\n")
    }

    /// Lines for a program: tab-separated fields, none cut or padded (tabs and line breaks in
    /// them are spaces, as everything untrusted is made safe).
    func fields(_ listed: ListedPage) -> [String] {
        listed.items.map { item in
            [
                String(item.number), item.read ? "read" : "unread",
                item.published.flatMap { LocalTime.string($0, time: true) } ?? "",
                name(item), Terminal.safe(title(item)), item.imageStatus == .none ? "" : item.imageStatus.rawValue,
            ].joined(separator: "\t")
        }
    }

    func name(_ item: StoredItem) -> String { Terminal.safe(item.feedName) }
    func title(_ item: StoredItem) -> String { item.title.isEmpty ? (item.link ?? item.key) : item.title }

    func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - Terminal.displayWidth(text)))
    }
}
