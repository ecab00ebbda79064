// FeedSyncModel: the values every layer of feedsync passes to another: what the store keeps and
// gives back (feeds, items, pictures, accounts, articles), what a pull reports, the errors a front
// end turns into sentences and exit codes, the data home. It depends on nothing but Foundation and
// does no I/O but `DataHome.prepare`; FeedSyncKit re-exports it, so a front end names these and
// nothing below Kit. Its files: Model.swift (the version, the clock), Feeds.swift, Items.swift,
// Pictures.swift, Accounts.swift, Articles.swift, Rules.swift (rules, views, conditions), Pull.swift,
// Errors.swift, DataHome.swift.

import Foundation

public enum FeedSyncVersion {
    public static let string = "0.1.0"
    public static let projectURL = "https://github.com/feedsync/feedsync"
    /// Names the program, its version and where a publisher can read what it does.
    public static let userAgent = "feedsync/\(string) (+\(projectURL))"
}

/// Where a pull's schedule reads the time (which feeds are due, due times, backoff across pulls,
/// `Retry-After`): the system's clock, or a test's, so a test can run a day of timer runs in
/// seconds. `FeedSync` takes one and hands it to the pull and the store, which stamps its records with it.
public struct TimeSource: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = TimeSource { Date() }
}

extension Comparable {
    /// The value, or the nearest bound of `range` when it lies outside.
    public func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
