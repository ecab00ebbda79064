import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import FeedSyncReader

/// `feedsync read`, which `feedsync` becomes once it has checked the arguments (see its `Read`).
@main
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync read", abstract: ReadOptions.abstract, discussion: ReadOptions.discussion)

    @OptionGroup var options: ReadOptions

    static func main() async { await runAsRoot() }

    func run() async throws {
        guard Session.isTerminal else {
            complain("read needs a terminal; for a script or a pipe, use feedsync list")
            throw ExitCode(Exit.usage)
        }
        let library = try await options.homeOptions.open(.serving)
        let query = try await options.query(in: library)
        try await fail {
            try await Session.run(library: library, query: query, pictures: PictureProtocol(rawValue: options.pictures))
        }
    }
}
