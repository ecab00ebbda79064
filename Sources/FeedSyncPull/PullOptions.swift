import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

public struct PullOptions: Sendable {
    /// Pages each feed may fetch in this run, `nil` for no limit.
    public var maxPages: Int?
    public var retry: RetryPolicy
    /// When each feed is due again.
    public var schedule: Schedule
    /// The time, for due times and `Retry-After`.
    public var clock: TimeSource
    /// What happens, for the user (`--verbose`, the progress line).
    public var onEvent: @Sendable (PullEvent) -> Void
    /// Called after each transaction that stored items (a page, or a part of a long one), for the
    /// work that follows the store (the picture prefetch); `refreshed`: it rewrote items stored
    /// before.
    public var onCommit: @Sendable (_ refreshed: Bool) -> Void
    /// What the run has learnt of the network, shared by its feeds; nil for a pull on its own.
    public var network: RunNetwork?
    /// The turns for reading a document held in memory, shared by every feed pulled with these
    /// options (a run's feeds share one value).
    public var reading = WorkGate(width: ProcessInfo.processInfo.activeProcessorCount)

    public init(
        maxPages: Int? = nil, retry: RetryPolicy = RetryPolicy(), schedule: Schedule = Schedule(),
        clock: TimeSource = .system, onEvent: @escaping @Sendable (PullEvent) -> Void = { _ in },
        onCommit: @escaping @Sendable (_ refreshed: Bool) -> Void = { _ in }
    ) {
        self.maxPages = maxPages
        self.retry = retry
        self.schedule = schedule
        self.clock = clock
        self.onEvent = onEvent
        self.onCommit = onCommit
    }
}
