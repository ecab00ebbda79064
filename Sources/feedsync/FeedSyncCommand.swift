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
            Remove.self, Rename.self, Folder.self, FullText.self, AccountCommand.self, Extract.self,
            Status.self, GC.self, Serve.self,
        ])

    /// As swift-argument-parser's own `main`, messages made safe (`runAsRoot`), and a word that
    /// is no command answered with the nearest.
    static func main() async {
        if let typo = unknownCommand(Array(CommandLine.arguments.dropFirst())) {
            complain(typo)
            Glibc.exit(Exit.usage)
        }
        await runAsRoot()
    }

    /// What to say when the first word is no command (the parser says only "Unexpected argument"):
    /// the nearest command when one is near (`pul`: `pull`), else the list; nil for a command,
    /// an option, or a word a command's arguments may hold after one.
    static func unknownCommand(_ arguments: [String]) -> String? {
        var words = arguments[...]
        while let first = words.first, first == "--home" {  // the one option taken before a command
            words = words.dropFirst(2)
        }
        // `help WORD` asks of a command too.
        if words.first == "help", words.count > 1 { words = words.dropFirst() }
        guard let word = words.first, !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(word) else { return nil }
        func distance(_ a: String, _ b: String) -> Int {
            let (a, b) = (Array(a), Array(b))
            var row = Array(0...b.count)
            for i in 1...max(a.count, 1) where !a.isEmpty {
                var previous = row[0]
                row[0] = i
                for j in 1...max(b.count, 1) where !b.isEmpty {
                    let current = row[j]
                    row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                    previous = current
                }
            }
            return row[b.count]
        }
        let nearest = names.map { ($0, distance(word.lowercased(), $0)) }.min { $0.1 < $1.1 }
        if let (name, far) = nearest, far <= 2 {
            return "unknown command '\(word)'; did you mean 'feedsync \(name)'?"
        }
        return "unknown command '\(word)'; the commands: \(names.joined(separator: ", "))"
    }
}
