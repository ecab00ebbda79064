import Foundation

/// Where a pull's schedule reads the time (which feeds are due, due times, backoff across pulls,
/// `Retry-After`): the system's clock, or a test's, so a test can run a day of timer runs in
/// seconds. `FeedSync` takes one and hands it to the pull. Picture retry times do not read it yet.
public struct TimeSource: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = TimeSource { Date() }
}
