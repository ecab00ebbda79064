import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

@main
struct FeedSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync",
        abstract: "An offline-first feed sync client: pull from cron, read with no network.",
        discussion: """
            Exit codes: 0 done; 64 usage; 65 the server sent unusable data; 74 local I/O or \
            database failure; 75 temporary failure (offline, server trouble, another pull running), \
            the place is saved and a later pull continues from it (status says when); 77 an account's \
            server refused its password or API access.
            """,
        version: FeedSyncVersion.string,
        subcommands: [
            Add.self, Pull.self, List.self, Import.self, Export.self, Show.self, Open.self, Mark.self, Feeds.self,
            Remove.self, Rename.self, Folder.self, FullText.self, AccountCommand.self, RuleCommand.self,
            ViewCommand.self, Extract.self,
            Status.self, GC.self, Serve.self, Read.self,
        ])

    /// As swift-argument-parser's own `main`, messages made safe (`runAsRoot`), and a word that
    /// is no command answered with the nearest.
    static func main() async {
        // `read` is a program of its own, which parses its arguments itself: it is become before
        // anything is parsed here, so its first frame does not wait for two parses (P14).
        if CommandLine.arguments.dropFirst().first == "read" { Read.becomeReader() }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        if let typo = Asking.unknownCommand(Array(CommandLine.arguments.dropFirst()), names: names) {
            complain(typo)
            Glibc.exit(Exit.usage)
        }
        await runAsRoot()
    }

}
