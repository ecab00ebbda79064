import ArgumentParser
import FeedSyncFrontend

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: ServeOptions.abstract, discussion: ServeOptions.discussion)

    @OptionGroup var options: ServeOptions

    /// The page is served by `feedsync-serve`, installed beside this program, which this process
    /// becomes with the same arguments: the web server's modules live there, so that no other
    /// command pays for them at its start (BENCHMARKS.md, P5).
    func run() async throws { try Program.become("feedsync-serve", to: "serves the page") }
}
