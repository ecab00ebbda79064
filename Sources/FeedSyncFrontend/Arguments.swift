import ArgumentParser
import FeedSyncKit
import Foundation

// The arguments every front end takes alike: a feed, a folder, an item, a format, a feed's URL,
// each read by one rule and refused with one sentence (exit 64).

extension ArgumentHelp {
    /// An argument that names a feed (`FeedSync.feed(argument:)` reads it).
    package static var feed: ArgumentHelp {
        ArgumentHelp("A feed: its number (from feeds), its URL, or a unique part of its title.", valueName: "feed")
    }

    /// An argument that names an item (`FeedSync.item(argument:)` reads it).
    package static var item: ArgumentHelp { ArgumentHelp("The item's number, as list shows it.", valueName: "number") }
}

extension CompletionKind {
    /// The subscribed feeds' numbers and titles, for the shells' completion of an argument that
    /// takes a feed (read from the store the command line's --home, else the default, names).
    package static var feeds: CompletionKind {
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
    package func feed(argument name: String) async throws -> Feed {
        switch try await fail(on: { try await feed(named: name) }) {
        case .found(let feed): return feed
        case .none:
            complain("no subscribed feed is \(String(reflecting: name)); feedsync feeds lists them")
        case .noNumber(let numbers?):
            let range =
                numbers.lowerBound == numbers.upperBound
                ? "\(numbers.lowerBound) is the only one"
                : "they run from \(numbers.lowerBound) to \(numbers.upperBound)"
            complain("no feed is numbered \(name): \(range) (feedsync feeds lists them)")
        case .noNumber(nil):
            complain("no feed is numbered \(name): no feed is subscribed; add one with: feedsync add URL")
        case .ambiguous(let feeds):
            let names = feeds.prefix(5).map { "\($0.id) \($0.name)" }.joined(separator: ", ")
            complain("\(String(reflecting: name)) names \(feeds.count) feeds (\(names)); give its number")
        }
        throw ExitCode(Exit.usage)
    }

    /// The folder `name` names on the command line: a folder's path (`Tech/Swift`, letter case
    /// aside: it and the folders inside it), else the name of one folder wherever it is (`Swift`);
    /// else a usage error that names the folders there are.
    package func folder(argument name: String) async throws -> String {
        switch try await fail(on: { try await folder(named: name) }) {
        case .found(let folder): return folder
        case .none(let folders):
            complain(
                folders.isEmpty
                    ? "no folder is \(String(reflecting: name)): no feed is in a folder (import an OPML file's)"
                    : "no folder is \(String(reflecting: name)); the folders: \(folders.joined(separator: ", "))")
        case .ambiguous(let named):
            complain(
                "\(String(reflecting: name)) names \(named.count) folders (\(named.joined(separator: ", "))); give its path"
            )
        }
        throw ExitCode(Exit.usage)
    }
}

/// A URL the transport will fetch (`FeedSync.problem(with:)`), else a usage error: a feed
/// subscribed with a URL no request can be made for would stay subscribed, failing every pull.
package func validateFeedURL(_ url: String, option: String = "--feed") throws {
    if let problem = FeedSync.problem(with: url) {
        throw ValidationError("\(option) \(String(reflecting: url)) cannot be used: \(problem)")
    }
}

/// `--format`: one of the formats, or `auto` to have the documents say again.
package enum FormatChoice: ExpressibleByArgument, Equatable {
    case format(FeedFormat)
    case auto

    package init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let format = FeedFormat(rawValue: argument) {
            self = .format(format)
        } else {
            return nil
        }
    }

    package static var allValueStrings: [String] { FeedFormat.allCases.map(\.rawValue) + ["auto"] }

    /// What the store does with the feed's format.
    package var setting: FormatSetting {
        switch self {
        case .auto: .found
        case .format(let format): .chosen(format)
        }
    }
}

extension FeedSync {
    /// The item numbered `number` as a reader is shown it (`readerItem`), else a usage error.
    package func item(argument number: Int64) async throws -> ItemDetail {
        guard let detail = try await fail(on: { try await readerItem(number: number) }) else {
            complain("no item is numbered \(number); feedsync list shows the numbers")
            throw ExitCode(Exit.usage)
        }
        return detail
    }
}

/// Items named by number, as `mark` takes them: numbers and ranges (`60-65`), at most `limit`.
package enum ItemNumbers {
    /// The most numbers one command may give, in ranges or one by one.
    package static let limit: Int64 = 100_000

    /// `words` as item numbers, each range in full.
    package static func parse(_ words: [String]) throws -> [Int64] {
        var given: Int64 = 0
        return try words.flatMap { word -> [Int64] in
            let ends = word.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count), ends.allSatisfy({ FeedSync.isNumber(String($0)) }),
                let first = Int64(ends[0]), let last = Int64(ends[ends.count - 1]), first <= last
            else {
                throw ValidationError("\(String(reflecting: word)) is no item number or range of them (60 or 60-65)")
            }
            given += last - first + 1
            guard given <= limit else { throw ValidationError("more than \(limit) items named; give smaller ranges") }
            return Array(first...last)
        }
    }
}
