import ArgumentParser
import FeedSyncFrontend
import Foundation

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: ReadOptions.abstract, discussion: ReadOptions.discussion)

    @OptionGroup var options: ReadOptions

    /// The reader is `feedsync-read`, installed beside this program, which this process becomes
    /// (`FeedSyncCommand.main`, before parsing; this command's options are for the help, the man
    /// page and the completions): the terminal reader's modules live there, as the page's live in
    /// `feedsync-serve`.
    static func becomeReader() -> Never {
        do { try Program.become("feedsync-read", to: "reads in the terminal") } catch { Glibc.exit(Exit.ioError) }
    }

    func run() async throws { Self.becomeReader() }
}
