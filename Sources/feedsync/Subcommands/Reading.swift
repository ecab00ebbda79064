import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show an item: title, feed, date, link, picture and its text. Marks it read.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: .item)
    var number: Int64

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let detail = try await library.item(argument: number)
        let rendered = detail.rendered
        if json {
            try Output.line(ItemWords.jsonItem(detail, rendered))
        } else {
            // On a terminal, through the pager when longer than the screen.
            try Pager.show(ItemWords.text(detail, rendered, styled: Terminal.isInteractive))
        }
        _ = try await fail(on: { try await library.mark([number], read: true) })
    }

}

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open an item's link with $BROWSER, else xdg-open; with neither, print it. Marks it read.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: .item)
    var number: Int64

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let detail = try await library.item(argument: number)
        guard let link = detail.item.link, link.hasPrefix("http://") || link.hasPrefix("https://") else {
            complain("item \(number) has no web link to open")
            throw ExitCode(Exit.dataError)
        }
        _ = try await fail(on: { try await library.mark([number], read: true) })
        if !Browser.open(link) { try Output.line(Terminal.safe(link)) }
    }
}

struct Mark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mark",
        abstract: "Mark items read or unread, by number, or all of them (of a feed, before a date); star them, or not.")

    enum State: String, ExpressibleByArgument, CaseIterable {
        case read, unread, starred, unstarred
    }

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: "read, unread, starred or unstarred.")
    var state: State

    @Argument(help: ArgumentHelp("Items' numbers, as list shows them, or ranges of them (60-65).", valueName: "number"))
    var numbers: [String] = []

    @Flag(help: "Every item (with --feed, that feed's; with --before, those older).")
    var all = false

    @Option(help: ArgumentHelp("With --all: only this feed's items.", valueName: "feed"), completion: .feeds)
    var feed: String?

    @Option(help: ArgumentHelp("With --all: only the items of the feeds in this folder.", valueName: "name"))
    var folder: String?

    @Option(help: ArgumentHelp("With --all: only items published before this (2026-01-31, 7d).", valueName: "date"))
    var before: String?

    var items: [Int64] { get throws { try ItemNumbers.parse(numbers) } }

    func validate() throws {
        if all == !numbers.isEmpty { throw ValidationError("give item numbers, or --all") }
        _ = try items
        if all, state == .starred || state == .unstarred { throw ValidationError("stars go on items by number") }
        if !all, feed != nil || folder != nil || before != nil {
            throw ValidationError("--feed, --folder and --before go with --all")
        }
        if feed != nil, folder != nil { throw ValidationError("give --feed or --folder, not both") }
        if let before, DateArgument.parse(before) == nil {
            throw ValidationError(
                "--before \(String(reflecting: before)) is not a date (YYYY-MM-DD) or a duration (7d)")
        }
    }

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let read = state == .read
        if all {
            var chosen: Feed?
            if let feed { chosen = try await library.feed(argument: feed) }
            var path: String?
            if let folder { path = try await library.folder(argument: folder) }
            let changed = try await fail(on: {
                try await library.markAll(
                    read: read, feed: chosen, folder: path, before: before.flatMap { DateArgument.parse($0) })
            })
            try Output.line("\(changed) item\(changed == 1 ? "" : "s") marked \(state.rawValue)")
        } else {
            let numbers = try items
            let missing = try await fail(on: {
                switch state {
                case .read, .unread: try await library.mark(numbers, read: read)
                case .starred, .unstarred: try await library.star(numbers, starred: state == .starred)
                }
            })
            let marked = numbers.count - missing.count
            if marked > 0 || missing.isEmpty {
                try Output.line("\(marked) item\(marked == 1 ? "" : "s") marked \(state.rawValue)")
            }
            if !missing.isEmpty {
                let named = missing.prefix(10).map(String.init).joined(separator: ", ")
                complain(
                    "no item numbered \(named)\(missing.count > 10 ? " and \(missing.count - 10) more" : "")"
                        + (marked > 0 ? "; the others are marked" : ""))
                throw ExitCode(Exit.usage)
            }
        }
    }
}
