import ArgumentParser
import FeedSyncKit
import FeedSyncStore
import Foundation

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",  // named here, not derived from the type's name at every start
        abstract: "Show stored items. Reads only the local store: works offline, and while a pull runs.")

    @OptionGroup var homeOptions: HomeOptions

    @Option(help: "The page to show, from 1 to \(ReadingPosition.pages.upperBound).")
    var page = 1

    @Option(help: "Items per page, 1 to 500.")
    var perPage = 20

    @Option(help: ArgumentHelp("Show only this feed's items.", valueName: "url"))
    var feed: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        try check(page, in: ReadingPosition.pages, "--page")
        try check(perPage, in: ReadingPosition.perPages, "--per-page")
    }

    func run() async throws {
        let library = try homeOptions.open(.reading)
        if let feed, try fail(on: { try library.feed(url: feed) }) == nil {
            complain("no feed \(feed) is subscribed; add it with: feedsync pull --feed URL")
            throw ExitCode(Exit.usage)
        }
        let listed = try fail(on: { try library.list(feedURL: feed, page: page, perPage: perPage) })
        // The reader's position steers picture prefetch; failing to record it must not hide the list.
        try? library.setReadingPosition(ReadingPosition(feedURL: feed, page: page, perPage: perPage))

        let paths = listed.items.map { item in
            item.imageStatus == .cached ? item.imagePath.map(library.picturePath) : nil
        }
        try Output.line(json ? jsonPage(listed, paths: paths) : text(listed))
    }

    func jsonPage(_ listed: ListedPage, paths: [String?]) -> String {
        let items = zip(listed.items, paths).map { item, path in
            "{" + ItemJSON.fields(item, path: path, position: item.position) + "}"
        }
        return """
            {"page": \(page), "per_page": \(perPage), "total": \(listed.total), \
            "items": [\(items.joined(separator: ", "))]}
            """
    }

    func text(_ listed: ListedPage) -> String {
        let pages = max(1, (listed.total + perPage - 1) / perPage)
        var footer = "page \(page) of \(pages) · \(listed.total) item\(listed.total == 1 ? "" : "s")"
        footer += " · " + (listed.lastPullAt.map { "last pull \(relative($0))" } ?? "never pulled")
        guard !listed.items.isEmpty else {
            let hint =
                listed.total == 0 ? "no items stored yet; run: feedsync pull --feed URL" : "no items on this page"
            return hint + "\n" + footer
        }
        let numberWidth = String(listed.items.last!.position).count
        let statusWidth = 9  // "[pending]"
        let titleWidth = max(10, Terminal.width - numberWidth - statusWidth - 3)
        var lines: [String] = []
        for item in listed.items {
            let number =
                String(repeating: " ", count: numberWidth - String(item.position).count) + String(item.position)
            var title = Terminal.safe(item.title.isEmpty ? (item.link ?? item.key) : item.title)
            title = Terminal.truncate(title, toCells: titleWidth)
            let padding = String(repeating: " ", count: max(0, titleWidth - Terminal.displayWidth(title)))
            let status = item.imageStatus == .none ? "" : "[\(item.imageStatus.rawValue)]"
            lines.append("\(number)  \(title)\(padding) \(status)")
        }
        return (lines + [footer]).joined(separator: "\n")
    }
}

/// An item's fields in `list --json` (and `show --json`): the first seven as they always were, then
/// the item's number, whether it is unread and its feed's name.
enum ItemJSON {
    static func fields(_ item: StoredItem, path: String?, position: Int?) -> String {
        """
        "id": \(JSON.string(item.key)), "title": \(JSON.string(item.title)), \
        "link": \(JSON.string(item.link)), "pic_url": \(JSON.string(item.pictureURL)), \
        "image": {"status": \(JSON.string(item.imageStatus.rawValue)), "path": \(JSON.string(path))}, \
        "published": \(JSON.string(item.published)), "position": \(JSON.number(position)), \
        "number": \(item.number), "unread": \(!item.read), "feed": \(JSON.string(item.feedName))
        """
    }
}
