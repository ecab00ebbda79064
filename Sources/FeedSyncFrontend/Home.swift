// FeedSyncFrontend: what the executables (feedsync, feedsync-serve, feedsync-read) share
// of talking to a person: this file (--home, exit codes, a failure's sentence), Output (every
// write, wrapped or fitted), Terminal (safe text, widths), Arguments (a feed, a folder, an item,
// a format), Interruption (Ctrl-C, one way), the words of feeds, items and pulls (FeedWords,
// ItemWords, PullWords, PullReporting, RunReport, Progress, Dates), the pager and the text
// layout, Files, Asking, Browser, ServeOptions, ReadOptions (with Program.become). Over FeedSyncKit only.

import ArgumentParser
import FeedSyncKit
import Foundation

/// `--home`, shared by every subcommand.
package struct HomeOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep everything (database, pictures, lock) in this folder. Default: $FEEDSYNC_HOME, else the XDG folders.",
            valueName: "dir"))
    package var home: String?

    package init() {}

    package var dataHome: DataHome { DataHome(override: home) }

    /// Opens the data home (see `FeedSync.Access`); a failure is its message and exit code.
    package func open(_ access: FeedSync.Access) async throws -> FeedSync {
        try await fail(on: { try FeedSync(home: dataHome, access: access) })
    }
}

/// Exit codes, from sysexits.h.
package enum Exit {
    package static let usage: Int32 = 64
    package static let dataError: Int32 = 65
    package static let ioError: Int32 = 74
    package static let tempFail: Int32 = 75
    package static let noPermission: Int32 = 77

    package static func code(for kind: SyncError.Kind) -> Int32 {
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
package func complain(_ message: String) {
    Output.error("feedsync: \(Terminal.safe(message))")
}

/// Runs `body`; a SyncError or StoreError becomes a message on stderr and its exit code.
@discardableResult
package func fail<T>(on body: () async throws -> T) async throws -> T {
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

/// A duration on the command line: minutes, or a number with `s`, `m` or `h` (`900s`, `15m`,
/// `1h`), from 0 to 24 hours.
package enum Interval {
    package static func parse(_ text: String) throws -> Double {
        var digits = text.trimmingCharacters(in: .whitespaces).lowercased()
        var unit = 60.0
        if let last = digits.last, let seconds = ["s": 1.0, "m": 60, "h": 3600][String(last)] {
            unit = seconds
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.count <= 9, let value = Double(digits), value >= 0,
            value * unit <= FeedSync.maxInterval
        else {
            throw ValidationError("\(String(reflecting: text)) is not a duration from 0 to 24h; write e.g. 15m or 1h")
        }
        return value * unit
    }
}

/// `value` within `range`, else a usage error naming the option.
package func check<T: Comparable>(_ value: T, in range: ClosedRange<T>, _ option: String) throws {
    guard range.contains(value) else {
        throw ValidationError("\(option) must be between \(range.lowerBound) and \(range.upperBound)")
    }
}
