import ArgumentParser
import FeedSyncFrontend

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: ReadOptions.abstract, discussion: ReadOptions.discussion)

    @OptionGroup var options: ReadOptions

    /// The reader is `feedsync-read`, installed beside this program, which this process becomes:
    /// the terminal reader's modules live there, as the page's live in `feedsync-serve`.
    func run() async throws { try Program.become("feedsync-read", to: "reads in the terminal") }
}
