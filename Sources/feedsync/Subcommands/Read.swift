import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import FeedSyncReader
import Foundation

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read in the terminal: the endless list, its pictures, the items. Never waits for the network.",
        discussion: """
            The list of `list`, newest first, over the whole store, with each item's picture where \
            the terminal can show it (kitty's protocol, iTerm2's, sixel, else half blocks). j and k \
            move, Space and b page, g and G go to the top and the end, Enter reads an item, o opens \
            its link, m marks it read or unread, s stars it, u shows unread items only, / searches, \
            f chooses a feed or folder, r pulls, q goes back and quits, ? shows the keys. Where the \
            cursor rests becomes the reading position, which steers the pictures a pull fetches.
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Read only this feed's items, in its order. \(ArgumentHelp.feed.abstract)", valueName: "feed"),
        completion: .feeds)
    var feed: String?

    @Option(help: ArgumentHelp("Read only the feeds in this folder: its path, or its name.", valueName: "name"))
    var folder: String?

    @Flag(name: [.short, .long], help: "Only unread items.")
    var unread = false

    @Flag(help: "Only starred items.")
    var starred = false

    @Option(name: [.short, .long], help: ArgumentHelp("Only items with these words.", valueName: "text"))
    var search: String?

    @Option(
        help: ArgumentHelp(
            "How pictures are drawn: auto (what the terminal supports), kitty, iterm, sixel, blocks or none.",
            valueName: "way"))
    var pictures = "auto"

    func validate() throws {
        guard pictures == "auto" || PictureProtocol(rawValue: pictures) != nil else {
            throw ValidationError("--pictures takes auto, kitty, iterm, sixel, blocks or none")
        }
        if let search, ListQuery.words(search) == nil {
            throw ValidationError("--search needs a word: letters or digits")
        }
    }

    func run() async throws {
        guard Session.isTerminal else {
            complain("read needs a terminal; for a script or a pipe, use feedsync list")
            throw ExitCode(Exit.usage)
        }
        let library = try await homeOptions.open(.serving)
        var query = ListQuery(unread: unread, search: search.flatMap(ListQuery.words), starred: starred)
        if let feed { query.feedURL = try await library.feed(argument: feed).url }
        if let folder { query.folder = try await library.folder(argument: folder) }
        try await fail {
            try await Session.run(library: library, query: query, pictures: PictureProtocol(rawValue: pictures))
        }
    }
}
