import Foundation

/// Where feedsync reads the time for everything that depends on it (due times, backoff across
/// pulls, `Retry-After`, picture retries): the system's clock, or a test's, so a test can run a
/// day of timer runs in seconds. `FeedSync` takes one and hands it to everything below it.
public struct TimeSource: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = TimeSource { Date() }
}
