import ArgumentParser
import FeedSyncSync

@main
struct FeedSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync",
        abstract: "An offline-first feed sync client: pull from cron, read with no network.",
        discussion: """
            Exit codes: 0 done; 64 usage; 65 the server sent unusable data; 74 local I/O or \
            database failure; 75 temporary failure (offline, server trouble, another pull running), \
            the place is saved and the next pull continues from it.
            """,
        version: FeedSyncVersion.string,
        subcommands: [Pull.self, List.self, Status.self, GC.self])
}
