import ArgumentParser
import FeedSyncSync
import Foundation

@main
struct FeedSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync",
        abstract: "An offline-first feed sync client: pull from cron, read with no network.",
        discussion: """
            Exit codes: 0 done; 64 usage; 65 the server sent unusable data; 74 local I/O or \
            database failure; 75 temporary failure (offline, server trouble, another pull running), \
            the place is saved and a later pull continues from it (status says when).
            """,
        version: FeedSyncVersion.string,
        subcommands: [
            Add.self, Pull.self, List.self, Import.self, Export.self, Show.self, Open.self, Mark.self, Feeds.self,
            Remove.self, Rename.self,
            Status.self, GC.self, Serve.self,
        ])

    /// As swift-argument-parser's own `main`, but its messages (which echo the arguments given)
    /// are made safe for a terminal like every other message, and written with a checked write.
    static func main() async {
        do {
            var command = try await asyncParseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                let safe = message.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { Terminal.safe(String($0)) }.joined(separator: "\n")
                if code == .success {
                    if (try? Output.line(safe)) == nil { Glibc.exit(Exit.ioError) }
                } else {
                    Output.error(safe)
                }
            }
            Glibc.exit(code.rawValue)
        }
    }
}
