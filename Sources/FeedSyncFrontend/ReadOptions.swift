import ArgumentParser
import FeedSyncKit
import Foundation

/// `feedsync read`'s options: `feedsync` becomes `feedsync-read` with its arguments before
/// parsing anything (`Program.become`), which parses and checks them and reads; `feedsync` knows
/// them for its help, the man page and the completions.
package struct ReadOptions: ParsableArguments {
    package static let abstract =
        "Read in the terminal: the endless list, its pictures, the items. Never waits for the network."
    package static let discussion = """
        The list of `list`, newest first, over the whole store, with each item's picture where \
        the terminal can show it (kitty's protocol, iTerm2's, sixel, else half blocks). j and k \
        move, Space and b page, g and G go to the top and the end, Enter reads an item, o opens \
        its link, m marks it read or unread, s stars it, u shows unread items only, / searches, \
        f chooses a feed or folder, r pulls, q goes back and quits, ? shows the keys. Where the \
        cursor rests becomes the reading position, which steers the pictures a pull fetches.
        """
    /// The ways `--pictures` takes.
    package static let ways = ["auto", "kitty", "iterm", "sixel", "blocks", "none"]

    @OptionGroup package var homeOptions: HomeOptions

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Read only this feed's items, in its order. \(ArgumentHelp.feed.abstract)", valueName: "feed"),
        completion: .feeds)
    package var feed: String?

    @Option(help: ArgumentHelp("Read only the feeds in this folder: its path, or its name.", valueName: "name"))
    package var folder: String?

    @Flag(name: [.short, .long], help: "Only unread items.")
    package var unread = false

    @Flag(help: "Only starred items.")
    package var starred = false

    @Option(name: [.short, .long], help: ArgumentHelp("Only items with these words.", valueName: "text"))
    package var search: String?

    @Option(
        help: ArgumentHelp(
            "How pictures are drawn: auto (what the terminal supports), kitty, iterm, sixel, blocks or none.",
            valueName: "way"))
    package var pictures = "auto"

    package init() {}

    package func validate() throws {
        guard Self.ways.contains(pictures) else {
            throw ValidationError("--pictures takes auto, kitty, iterm, sixel, blocks or none")
        }
        if let search, ListQuery.words(search) == nil {
            throw ValidationError("--search needs a word: letters or digits")
        }
    }

    /// The list these options choose, its feed and folder found in `library`.
    package func query(in library: FeedSync) async throws -> ListQuery {
        var query = ListQuery(unread: unread, search: search.flatMap(ListQuery.words), starred: starred)
        if let feed { query.feedURL = try await library.feed(argument: feed).url }
        if let folder { query.folder = try await library.folder(argument: folder) }
        return query
    }
}

/// A program of feedsync's installed beside the running one.
package enum Program {
    /// Becomes `name`, from this program's folder, with this command's arguments (`feedsync
    /// COMMAND ARGUMENTS`: those after COMMAND), to do `what`; returns only when it cannot.
    package static func become(_ name: String, to what: String) throws -> Never {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        let program = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path
        // The new program keeps this thread's blocked signals: none, as when it starts by itself,
        // so that SIGINT and SIGTERM reach it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        let arguments = ([program] + CommandLine.arguments.dropFirst(2)).map { strdup($0) } + [nil]
        execv(program, arguments)
        complain(
            "cannot start \(program) (\(String(cString: strerror(errno)))), which \(what); "
                + "install it beside feedsync (scripts/install)")
        throw ExitCode(Exit.ioError)
    }
}
