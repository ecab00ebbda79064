import ArgumentParser
import FeedSyncFeed
import FeedSyncKit
import FeedSyncStore
import FeedSyncSync
import FeedSyncTransport
import Foundation

/// `--home`, shared by every subcommand.
struct HomeOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep everything (database, pictures, lock) in this folder. Default: $FEEDSYNC_HOME, else the XDG folders.",
            valueName: "dir"))
    var home: String?

    var dataHome: DataHome { DataHome(override: home) }

    /// Opens the data home (see `FeedSync.Access`); a failure is its message and exit code.
    func open(_ access: FeedSync.Access) async throws -> FeedSync {
        try await fail(on: { try FeedSync(home: dataHome, access: access) })
    }
}

/// Exit codes, from sysexits.h.
enum Exit {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let ioError: Int32 = 74
    static let tempFail: Int32 = 75
    static let noPermission: Int32 = 77

    static func code(for kind: SyncError.Kind) -> Int32 {
        switch kind {
        case .transient: tempFail
        case .data: dataError
        case .local: ioError
        case .usage: usage
        case .denied: noPermission
        }
    }
}

/// Prints one plain sentence to stderr.
func complain(_ message: String) {
    Output.error("feedsync: \(Terminal.safe(message))")
}

/// Runs `body`; a SyncError or StoreError becomes a message on stderr and its exit code.
@discardableResult
func fail<T>(on body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw said(error)
    }
}

/// Says a SyncError or StoreError on stderr and gives its exit code; other errors pass.
private func said(_ error: any Error) -> any Error {
    switch error {
    case let error as SyncError:
        complain(error.message)
        return ExitCode(Exit.code(for: error.kind))
    case let error as StoreError:
        switch error.kind {
        case .failure: complain("\(error.message); check the disk and the data home's permissions")
        case .locked, .newer: complain(error.message)
        }
        return ExitCode(error.kind == .locked ? Exit.tempFail : Exit.ioError)
    default:
        return error
    }
}

extension ArgumentHelp {
    /// An argument that names a feed (`FeedSync.feed(argument:)` reads it).
    static var feed: ArgumentHelp {
        ArgumentHelp("A feed: its number (from feeds), its URL, or a unique part of its title.", valueName: "feed")
    }

    /// An argument that names an item (`FeedSync.item(argument:)` reads it).
    static var item: ArgumentHelp { ArgumentHelp("The item's number, as list shows it.", valueName: "number") }
}

extension CompletionKind {
    /// The subscribed feeds' numbers and titles, for the shells' completion of an argument that
    /// takes a feed (read from the store the command line's --home, else the default, names).
    static var feeds: CompletionKind {
        .custom { words, _, prefix in
            let home = words.firstIndex(of: "--home").flatMap { words.indices.contains($0 + 1) ? words[$0 + 1] : nil }
            guard let library = try? FeedSync(home: DataHome(override: home), access: .reading),
                let feeds = try? await library.feeds()
            else { return [] }
            let names = feeds.map { String($0.id) } + feeds.map { Terminal.safe($0.name) }
            return names.filter { $0.hasPrefix(prefix) }
        }
    }
}

extension FeedSync {
    /// The feed `name` names on the command line (its number, URL, title or a unique part of its
    /// title), else a usage error that says what it matched.
    func feed(argument name: String) async throws -> Feed {
        switch try await fail(on: { try await feed(named: name) }) {
        case .found(let feed): return feed
        case .none:
            complain("no subscribed feed is \(String(reflecting: name)); feedsync feeds lists them")
        case .ambiguous(let feeds):
            let names = feeds.prefix(5).map { "\($0.id) \($0.name)" }.joined(separator: ", ")
            complain("\(String(reflecting: name)) names \(feeds.count) feeds (\(names)); give its number")
        }
        throw ExitCode(Exit.usage)
    }

    /// The folder `name` names on the command line: a folder's path (`Tech/Swift`, letter case
    /// aside: it and the folders inside it), else the name of one folder wherever it is (`Swift`);
    /// else a usage error that names the folders there are.
    func folder(argument name: String) async throws -> String {
        let paths = Set(try await fail(on: { try await feeds() }).compactMap(\.folder))
        // Every folder, the ones that hold only folders too.
        let folders = Set(
            paths.flatMap { path in
                let parts = path.split(separator: "/")
                return parts.indices.map { parts[...$0].joined(separator: "/") }
            })
        if let exact = folders.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) { return exact }
        let named = folders.filter {
            ($0.split(separator: "/").last.map(String.init) ?? $0).caseInsensitiveCompare(name) == .orderedSame
        }
        if named.count == 1, let only = named.first { return only }
        if named.isEmpty {
            complain(
                folders.isEmpty
                    ? "no folder is \(String(reflecting: name)): no feed is in a folder (import an OPML file's)"
                    : "no folder is \(String(reflecting: name)); the folders: \(folders.sorted().joined(separator: ", "))"
            )
        } else {
            complain(
                "\(String(reflecting: name)) names \(named.count) folders "
                    + "(\(named.sorted().joined(separator: ", "))); give its path")
        }
        throw ExitCode(Exit.usage)
    }
}

/// A URL the transport will fetch (`HTTPRequest.problem(with:)`), else a usage error: a feed
/// subscribed with a URL no request can be made for would stay subscribed, failing every pull.
func validateFeedURL(_ url: String, option: String = "--feed") throws {
    if let problem = HTTPRequest.problem(with: url) {
        throw ValidationError("\(option) \(String(reflecting: url)) cannot be used: \(problem)")
    }
}

/// A duration on the command line: minutes, or a number with `s`, `m` or `h` (`900s`, `15m`,
/// `1h`), from 0 to 24 hours.
enum Interval {
    static func parse(_ text: String) throws -> Double {
        var digits = text.trimmingCharacters(in: .whitespaces).lowercased()
        var unit = 60.0
        if let last = digits.last, let seconds = ["s": 1.0, "m": 60, "h": 3600][String(last)] {
            unit = seconds
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.count <= 9, let value = Double(digits), value >= 0,
            value * unit <= Schedule.maxInterval
        else {
            throw ValidationError("\(String(reflecting: text)) is not a duration from 0 to 24h; write e.g. 15m or 1h")
        }
        return value * unit
    }
}

/// `value` within `range`, else a usage error naming the option.
func check<T: Comparable>(_ value: T, in range: ClosedRange<T>, _ option: String) throws {
    guard range.contains(value) else {
        throw ValidationError("\(option) must be between \(range.lowerBound) and \(range.upperBound)")
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
    // FeedDate's own writer: an ISO8601DateFormatter made per call cost 80 µs, which `feeds --json`
    // paid per feed.
    FeedDate.format(Int64(date.timeIntervalSince1970.rounded(.down)))
}
