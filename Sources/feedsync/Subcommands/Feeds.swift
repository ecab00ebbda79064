import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Feeds: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feeds",
        abstract: "List the subscribed feeds: number, title, folder, items, unread, last pull, URL.")

    @OptionGroup var homeOptions: HomeOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let summaries = try await fail(on: { try await library.feedSummaries() })
        let accounts = Dictionary(
            uniqueKeysWithValues: try await fail(on: { try await library.accounts() }).map { ($0.id, $0) })
        let teasers = try await fail { try await library.summaryOnlyFeeds() }
        if json {
            try Output.line(jsonList(summaries, accounts: accounts, teasers: teasers))
        } else {
            try Output.fitted(text(summaries, accounts: accounts))
            if let hint = Self.hint(teasers.sorted()) { try Output.wrapped(hint) }
        }
    }

    /// One line naming the feeds that publish summaries only and the command that fetches more.
    static func hint(_ feeds: [Int64]) -> String? {
        guard let first = feeds.first else { return nil }
        let which =
            feeds.count == 1
            ? "feed \(first) publishes" : "feeds \(feeds.map(String.init).joined(separator: ", ")) publish"
        return "hint: \(which) summaries only; feedsync full-text \(first) on fetches each item's whole article"
    }

    func jsonList(_ summaries: [FeedSummary], accounts: [Int64: Account], teasers: Set<Int64>) -> String {
        let feeds = summaries.map { summary in
            let feed = summary.feed
            let account = feed.accountID.flatMap { accounts[$0] }
            return """
                {"number": \(feed.id), "title": \(JSON.string(feed.name)), "url": \(JSON.string(feed.url)), \
                "account": \(JSON.string(account?.name)), "source_url": \(JSON.string(feed.sourceURL)), \
                "full_text": \(feed.fullText), "summaries_only": \(teasers.contains(feed.id)), \
                "folder": \(JSON.string(feed.folder)), "items": \(summary.items), "unread": \(summary.unread), \
                "last_pull": \(JSON.string(feed.lastPullAt.map(iso))), \
                "outcome": \(JSON.string(feed.lastOutcome?.rawValue)), \
                "due_at": \(JSON.string(feed.dueAt.map(iso))), "due_reason": \(JSON.string(feed.dueReason)), \
                \(nextAttempt(feed)), "gone": \(feed.goneAt != nil)}
                """
        }
        return "{\"feeds\": [\(feeds.joined(separator: ", "))]}"
    }

    /// One line a feed, in aligned columns: number, name, items, unread, the last pull, and the
    /// URL last (where a terminal too narrow cuts it), when it is not the name.
    func text(_ summaries: [FeedSummary], accounts: [Int64: Account]) -> String {
        guard !summaries.isEmpty else { return "no feeds subscribed; add one with: feedsync add URL" }
        // The folder is a column when a feed is in one.
        let filed = summaries.contains { $0.feed.folder != nil }
        // Each feed's columns with the cells each takes, then its URL; the lines are written into
        // one string, each column padded to its widest.
        let rows = summaries.map { summary -> (columns: [(text: String, cells: Int)], url: String?) in
            let feed = summary.feed
            var pulled: String
            if let account = feed.accountID.flatMap({ accounts[$0] }) {
                let synced =
                    account.lastSyncAt.map { "synced \(relative($0)), \(Feeds.words(account.lastOutcome))" }
                    ?? "not synced yet"
                pulled = "account \(Terminal.safe(account.name)), \(synced)"
            } else {
                pulled = feed.lastPullAt.map { "\(relative($0)), \(Feeds.words(feed))" } ?? "never pulled"
                if feed.goneAt != nil { pulled += ", gone (410), not asked again" }
                if let stop = feed.historyStop { pulled += "; " + Terminal.safe(stop) }
            }
            var columns = [
                String(feed.id), Terminal.truncate(Terminal.safe(feed.name), toCells: 40), "\(summary.items) items",
                "\(summary.unread) unread", pulled,
            ]
            if filed { columns.insert(Terminal.truncate(Terminal.safe(feed.folder ?? "-"), toCells: 24), at: 2) }
            // An account's feed by its own address, not the account's URL it is stored under.
            let url = feed.accountID == nil ? feed.url : feed.sourceURL ?? ""
            return (columns.map { ($0, Terminal.displayWidth($0)) }, feed.name == url ? nil : Terminal.safe(url))
        }
        let widths = rows[0].columns.indices.map { column in rows.lazy.map { $0.columns[column].cells }.max() ?? 0 }
        let rightAligned = [true, false] + (filed ? [false] : []) + [true, true, false]
        // As bytes: String's appends cost a hundred times more a byte here (measured).
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * (widths.reduce(8, +) + 60))
        for (index, row) in rows.enumerated() {
            if index > 0 { out.append(0x0A) }
            for (column, (text, cells)) in row.columns.enumerated() {
                if column > 0 { out += [0x20, 0x20] }
                let pad = repeatElement(UInt8(0x20), count: widths[column] - cells)
                if rightAligned[column] { out += pad }
                out += text.utf8
                if !rightAligned[column] { out += pad }
            }
            if let url = row.url { out += "  \(url)".utf8 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A feed's last pull's outcome in words: what failed, when it did (`failed: it answered 404
    /// Not Found`), cut short.
    static func words(_ feed: Feed) -> String {
        guard feed.lastOutcome == .data || feed.lastOutcome == .transient, let error = feed.lastError else {
            return words(feed.lastOutcome)
        }
        return Terminal.truncate("failed: " + Terminal.safe(Words.failure(error, url: feed.url)), toCells: 60)
    }

    /// A pull's outcome in words.
    static func words(_ outcome: PullOutcome?) -> String {
        switch outcome {
        case .ok?: "ok"
        case .transient?: "failed for now"
        case .data?: "the server sent unusable data"
        case .local?: "a local failure"
        case nil: "never pulled"
        }
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Unsubscribe: the feeds, their items and the pictures no other feed uses go.",
        discussion: """
            Says what it will remove and, on a terminal, asks first; --yes removes without asking, \
            and is needed where there is no terminal to ask on.
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: .feed, completion: .feeds)
    var feeds: [String]

    @Flag(name: [.short, .long], help: "Remove without asking.")
    var yes = false

    func run() async throws {
        // Asked before the pull lock is taken: a question left open must not hold off cron's pulls.
        let reader = try await homeOptions.open(.reading)
        var chosen: [Feed] = []
        for name in feeds {
            let feed = try await reader.feed(argument: name)
            if !chosen.contains(where: { $0.id == feed.id }) { chosen.append(feed) }
        }
        var lines: [String] = []
        for feed in chosen {
            let taken = try await fail(on: { try await reader.removal(of: feed) })
            var line = "\(feed.id) \(Terminal.safe(feed.name)): \(taken.items) item\(taken.items == 1 ? "" : "s")"
            line += ", \(taken.pictures) cached picture\(taken.pictures == 1 ? "" : "s")"
            if taken.bytes > 0 { line += " (\(ByteSize.format(Double(taken.bytes))))" }
            if feed.accountID != nil { line += "; unsubscribed on its account's server too" }
            lines.append(line)
        }
        if !yes {
            guard Terminal.canAsk else {
                complain(
                    "remove asks before it removes, and there is no terminal to ask on; "
                        + "feedsync remove --yes \(feeds.joined(separator: " ")) removes without asking")
                throw ExitCode(Exit.usage)
            }
            try Output.wrapped((["This removes:"] + lines.map { "  " + $0 }).joined(separator: "\n"))
            guard Terminal.ask(chosen.count == 1 ? "Remove it? [y/N] " : "Remove them? [y/N] ") else {
                return try Output.line("nothing removed")
            }
        }
        // For writing: the pull lock, so a running pull (which writes these feeds) makes this exit 75.
        let library = try await homeOptions.open(.writing)
        for (feed, line) in zip(chosen, lines) {
            try await fail(on: { try await library.unsubscribe(feed) })
            try Output.wrapped("removed " + line)
        }
    }
}

struct Rename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Give a feed a title of your own; an empty title gives it back its own.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: .feed, completion: .feeds)
    var feed: String

    @Argument(help: "The new title.")
    var title: String

    func validate() throws {
        if title.unicodeScalars.contains(where: SafeText.isUnsafe) || title.count > FeedSync.titleCharacters {
            throw ValidationError("the title must be one line of at most \(FeedSync.titleCharacters) characters")
        }
    }

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let chosen = try await library.feed(argument: feed)
        try await fail(on: { try await library.rename(chosen, to: title) })
        let renamed = try await fail(on: { try await library.feed(url: chosen.url) }) ?? chosen
        try Output.wrapped(
            "\(chosen.id) is now \(renamed.customTitle == nil ? "titled as its feed titles itself" : "titled"): "
                + Terminal.safe(renamed.name))
    }
}

struct Folder: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folder",
        abstract: "File feeds in a folder (Tech, or Tech/Swift inside Tech), or in none with --none.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(
        help: ArgumentHelp("The feeds, then the folder (its path: Tech/Swift).", valueName: "feed… folder"),
        completion: .feeds)
    var words: [String]

    @Flag(help: "Take the feeds out of their folders.")
    var none = false

    func validate() throws {
        if none {
            guard !words.isEmpty else { throw ValidationError("name the feeds to take out of their folders") }
        } else {
            guard words.count >= 2 else {
                throw ValidationError("give the feeds and then the folder's name (or --none)")
            }
            guard FeedSync.folderPath(words[words.count - 1]) != nil else {
                throw ValidationError(
                    "\(String(reflecting: words[words.count - 1])) is no folder name: one line of at most "
                        + "\(FeedSync.folderCharacters) characters, its levels parted by /, none empty")
            }
        }
    }

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let path = none ? nil : FeedSync.folderPath(words[words.count - 1])
        var chosen: [Feed] = []
        for name in none ? words[...] : words.dropLast() {
            let feed = try await library.feed(argument: name)
            if !chosen.contains(where: { $0.id == feed.id }) { chosen.append(feed) }
        }
        let left = try await fail(on: { try await library.file(chosen, in: path) })
        let filed = chosen.filter { feed in !left.contains { $0.id == feed.id } }
        if !filed.isEmpty {
            let names = filed.map { "\($0.id) \(Terminal.safe($0.name))" }.joined(separator: ", ")
            try Output.wrapped(
                (path.map { "filed in \(Terminal.safe($0)): " } ?? "in no folder now: ") + names)
        }
        if !left.isEmpty {
            complain(
                "\(left.map { String($0.id) }.joined(separator: ", ")) "
                    + "\(left.count == 1 ? "is an account's feed" : "are an account's feeds"), "
                    + "filed as its server files it; change it there")
            throw ExitCode(Exit.usage)
        }
    }
}

struct FullText: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "full-text",
        abstract:
            "Turn on (or off) fetching each item's page for its whole article, for a feed that publishes teasers.",
        discussion: """
            With it on, each pull fetches the page behind every item that has no article yet (the \
            reader's page first, then the newest, at most 20 pages of a host a pull), finds the \
            article in it and stores it beside the feed's text, with its pictures, for reading \
            offline. Off, no page is fetched; the articles stored stay.
            """)

    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: .feed, completion: .feeds)
    var feed: String

    @Argument(help: "on or off.")
    var state: Switch

    func run() async throws {
        let library = try await homeOptions.open(.writing)
        let chosen = try await library.feed(argument: feed)
        try await fail { try await library.setFullText(chosen, state == .on) }
        try Output.line(
            state == .on
                ? "\(chosen.id) \(Terminal.safe(chosen.name)): the next pull fetches each item's page for its article"
                : "\(chosen.id) \(Terminal.safe(chosen.name)): no page is fetched; the articles stored stay")
    }
}
