import ArgumentParser
import FeedSyncStore
import FeedSyncSync
import FeedSyncTransport
import Foundation

/// `--home`, shared by every subcommand.
struct HomeOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Keep everything (database, pictures, lock) in this folder. Default: $FEEDSYNC_HOME, else the XDG folders.",
        valueName: "dir"))
    var home: String?

    var dataHome: DataHome { DataHome(override: home) }

    /// Creates the data home if needed and opens its store with one connection, for commands
    /// that read (and note the reading position) and exit.
    func openStore() throws -> (DataHome, Store) {
        let dataHome = dataHome
        try fail(on: { try dataHome.prepare() })
        let store = try fail(on: { try Store(path: dataHome.databasePath, connections: .single) })
        return (dataHome, store)
    }

    /// Like `openStore`, for commands that write the cache: first takes the pull lock (exit 75 if
    /// a pull holds it). Keep the lock alive as long as the work.
    func lockAndOpenStore() throws -> (DataHome, PullLock, Store) {
        let dataHome = dataHome
        try fail(on: { try dataHome.prepare() })
        let lock = try fail(on: { try PullLock(path: dataHome.lockPath) })
        let store = try fail(on: { try Store(path: dataHome.databasePath) })
        return (dataHome, lock, store)
    }
}

/// Exit codes, from sysexits.h.
enum Exit {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let ioError: Int32 = 74
    static let tempFail: Int32 = 75

    static func code(for kind: SyncError.Kind) -> Int32 {
        switch kind {
        case .transient: tempFail
        case .data: dataError
        case .local: ioError
        case .usage: usage
        }
    }
}

/// Prints one plain sentence to stderr.
func complain(_ message: String) {
    FileHandle.standardError.write(Data("feedsync: \(Terminal.safe(message))\n".utf8))
}

/// Runs `body`; a SyncError or StoreError becomes a message on stderr and its exit code.
@discardableResult
func fail<T>(on body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SyncError {
        complain(error.message)
        throw ExitCode(Exit.code(for: error.kind))
    } catch let error as StoreError {
        complain("\(error.message); check the disk and the data home's permissions")
        throw ExitCode(Exit.ioError)
    }
}

/// `http://` or `https://` with a host, else a usage error.
func validateFeedURL(_ url: String) throws {
    guard HTTPRequest.isFetchable(url) else {
        throw ValidationError("--feed must be an http:// or https:// URL, got \(String(reflecting: url))")
    }
}

/// "just now", "2 min ago", "3 h ago", "4 days ago".
func relative(_ date: Date, now: Date = Date()) -> String {
    let seconds = Int(now.timeIntervalSince(date))
    switch seconds {
    case ..<60: return "just now"
    case ..<3600: return "\(seconds / 60) min ago"
    case ..<86400: return "\(seconds / 3600) h ago"
    default: return "\(seconds / 86400) days ago"
    }
}

/// ISO 8601 UTC, second precision.
func iso(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}
