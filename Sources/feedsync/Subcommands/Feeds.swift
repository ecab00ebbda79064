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
            try Output.line(FeedWords.jsonList(summaries, accounts: accounts, teasers: teasers))
        } else {
            try Output.fitted(FeedWords.text(summaries, accounts: accounts))
            if let hint = FeedWords.hint(teasers.sorted()) { try Output.wrapped(hint) }
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
