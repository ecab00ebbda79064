import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncImages
import FeedSyncKit
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncPull
import FeedSyncStore
import Foundation
import GRDB
import Synchronization
import Testing

/// A clock a test moves by hand: the library reads it for due times, backoff and `Retry-After`.
final class TestClock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date) { time = Mutex(start) }
    var now: Date { time.withLock { $0 } }
    func set(_ date: Date) { time.withLock { $0 = date } }
    func advance(_ seconds: Double) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var source: TimeSource { TimeSource { [self] in now } }
}

/// The product over time: the library with a simulated clock through many timer runs, real
/// transfers to the demo server, a real store. Hours pass in seconds.
@Suite(.serialized) struct TimerTests {
    let start = Date(timeIntervalSince1970: 1_795_000_500)  // a Wednesday, 11:15 UTC

    func settings(attempts: Int = 1, timeout: Int = 20) -> FeedSync.PullSettings {
        var settings = FeedSync.PullSettings()
        settings.pictures = PrefetchOptions(mode: .none)
        settings.feeds.retry.maxAttempts = attempts
        settings.feeds.retry.baseDelay = 0.05
        settings.timeout = timeout
        return settings
    }

    /// The shipped timer (every 15 minutes, up to 2 minutes late at random) over 4 hours: a feed
    /// with no caching headers is asked at all 16 runs, one with `max-age=3600` at every fourth.
    @Test(arguments: [7, 42]) func theTimersSixteenRunsAskEachFeedWhenItIsDue(seed: UInt64) async throws {
        let home = try TempDirectory()
        let clock = TestClock(start)
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing, clock: clock.source)
        let plain = DemoServer(items: 10, perPage: 10)
        let hourly = DemoServer(items: 10, perPage: 10)
        try await plain.start()
        try await hourly.start()
        var faults = Faults()
        faults.feedHeaders = ["Cache-Control": "max-age=3600"]
        hourly.setFaults(faults)
        _ = try await library.subscribe(url: await plain.feedURL)
        _ = try await library.subscribe(url: await hourly.feedURL)
        var random = SplitMix(seed: seed)
        var asked: [String: [Int]] = [:]
        for run in 0..<16 {
            clock.set(start.addingTimeInterval(Double(run) * 900 + Double(random.next() % 121)))
            let feeds = try await library.feeds()
            let reports = await library.pull(feeds, settings: settings())
            for (feed, report) in zip(feeds, reports) where report?.skipped == nil {
                #expect(report?.error == nil, "\(String(describing: report?.error))")
                asked[feed.url, default: []].append(run)
            }
        }
        #expect(asked[await plain.feedURL] == Array(0..<16))
        #expect(asked[await hourly.feedURL] == [0, 4, 8, 12])
        #expect(plain.feedRequests.count == 16 && hourly.feedRequests.count == 4, "each ask is one request")
        await plain.stop()
        await hourly.stop()
    }

    /// The network goes away in the middle of a backfill (page 4 never answers): the feed stays
    /// due, and the next pull a minute later continues at page 4 and completes, asking nothing
    /// before the cut but page 1.
    @Test func aBackfillTheNetworkCutOffResumesAtTheVeryNextPull() async throws {
        let home = try TempDirectory()
        let clock = TestClock(start)
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing, clock: clock.source)
        try await withServer(items: 100, perPage: 10) { server, url in
            let feed = try await library.subscribe(url: url)
            var faults = Faults()
            faults.fromPage = (4, .stall(8))  // no status line before the client gives up
            server.setFaults(faults)
            // 4 s: pages 1 to 3 answer within it on a machine whose cores are busy.
            let cut = try #require(await library.pull([feed], settings: settings(timeout: 4)).first ?? nil)
            // The head answered: the feed is fine, its history continues at the next pull.
            #expect(cut.error == nil && !cut.unanswered, "\(String(describing: cut.error))")
            #expect(cut.due?.at == clock.now, "due at once: \(String(describing: cut.due))")
            #expect(cut.history?.hasPrefix("history stops at page 4: ") == true, "\(String(describing: cut.history))")
            #expect(try await library.list(ListQuery(feedURL: nil), page: 1, perPage: 10).total == 30)
            let stored = try #require(try await library.feeds().first)
            #expect(stored.unanswered == 0 && stored.failures == 0 && stored.historyStop != nil)

            server.setFaults(Faults())
            // The stalled page 4 the client gave up on is logged when its stall ends: not in the next log.
            // Under load the server may not even have read that request yet when the client gives up,
            // so wait for it to be logged, not only for nothing to be in flight.
            for _ in 0..<400 where !server.requestedPages.contains(4) || server.requestsInFlight > 0 {
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            server.clearLog()
            clock.advance(60)
            let resumed = try #require(await library.pull(try await library.feeds(), settings: settings()).first ?? nil)
            #expect(resumed.skipped == nil && resumed.error == nil, "\(String(describing: resumed.error))")
            #expect(server.requestedPages == [1, 4, 5, 6, 7, 8, 9, 10])
            #expect(try await library.list(ListQuery(feedURL: nil), page: 1, perPage: 10).total == 100)
            #expect(try await library.feeds().first?.historyStop == nil)
        }
    }

    /// The store writes down the library's time, not the machine's: when a feed was added, when
    /// each item was stored (and so where an item dated after that stands in the timeline), when a
    /// failed picture is tried again, when the reader last moved.
    @Test func theStoreStampsWhatItWritesWithTheLibrarysClock() async throws {
        let home = try TempDirectory()
        let past = Date(timeIntervalSince1970: 1_500_000_000)  // before the demo feed's dates
        let clock = TestClock(past)
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing, clock: clock.source)
        try await withServer(items: 10, perPage: 10) { server, url in
            var faults = Faults()
            faults.pictures[1] = .status(404)
            server.setFaults(faults)
            let feed = try await library.subscribe(url: url)
            var settings = settings()
            settings.pictures = PrefetchOptions(mode: .all)
            let report = try #require(await library.pull([feed], settings: settings).first ?? nil)
            #expect(report.error == nil, "\(String(describing: report.error))")
            try await library.setReadingPosition(ReadingPosition(feedURL: nil, page: 1, perPage: 10))
            // Items dated after the clock's now stand at the time they were stored: before `past + 1`.
            #expect(try await library.markAll(read: true, feed: nil, before: past.addingTimeInterval(1)) == 10)
            let times = try DatabaseQueue(path: DataHome(override: home.path).databasePath).read { db in
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT (SELECT added_at FROM feed) AS added, (SELECT min(stored_at) FROM item) AS first,
                            (SELECT max(stored_at) FROM item) AS last,
                            (SELECT next_attempt_at FROM picture WHERE status != 'cached') AS retry,
                            (SELECT updated_at FROM reading_position) AS moved
                        """)
            }
            let at = past.timeIntervalSince1970
            #expect(times?["added"] == at && times?["first"] == at && times?["last"] == at && times?["moved"] == at)
            let retry = try #require(times?["retry"] as Double?)
            // A 404 is tried again three days from the clock's now.
            #expect(retry == at + PrefetchMachine.retryDelay(permanent: true, attempts: 0))
        }
    }

    /// A host that never answers is asked at each of the next three pulls, then backs off as a
    /// failing server does: 15 minutes from the fourth, 30 from the fifth; while another feed's
    /// server answers in the same runs (alone, a run cannot tell a dead host from no network).
    @Test func aDeadHostBacksOffFromItsFourthUnansweredPull() async throws {
        let home = try TempDirectory()
        let clock = TestClock(start)
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing, clock: clock.source)
        // Nothing listens on port 1: every connection is refused.
        _ = try await library.subscribe(url: "http://127.0.0.1:1/feed.json")
        // Alone, every run is offline: nothing changes.
        for _ in 0..<5 {
            let report = try #require(await library.pull(try await library.feeds(), settings: settings()).first ?? nil)
            #expect(report.offline && report.unanswered)
            clock.advance(900)
        }
        #expect(try await library.feeds().first?.unanswered == 0)
        let healthy = DemoServer(items: 10, perPage: 10)
        try await healthy.start()
        _ = try await library.subscribe(url: await healthy.feedURL)
        var waits: [Double?] = []
        for _ in 0..<6 {
            let report = try #require(await library.pull(try await library.feeds(), settings: settings()).first ?? nil)
            waits.append(report.skipped == nil ? report.due.map { $0.at.timeIntervalSince(clock.now) } : nil)
            clock.advance(900)
        }
        // Asked at once three times; the fourth waits 15 min and the fifth 30 (each less the
        // timer's tolerance): the run after it does not ask.
        #expect(
            waits == [0, 0, 0, 900 - Schedule.tolerance(of: 900), 1800 - Schedule.tolerance(of: 1800), nil], "\(waits)")
        let feed = try #require(try await library.feeds().first)
        #expect(feed.unanswered == 5 && feed.dueReason == "no answer 5 times in a row, waits 30 min")
        await healthy.stop()
    }

    /// The built binary driven through Debian's `faketime` wrapper (a bare `LD_PRELOAD` of
    /// libfaketime breaks Swift's argument parsing): a plain pull 10 minutes after the first
    /// skips the feed, one 12 minutes after asks it (15 minutes, less the timer's tolerance).
    @Test func theBinaryUnderFaketimeAsksAFeedOnlyOnceItIsDue() async throws {
        let cli = try CLI()
        func at(_ minutes: Double, _ arguments: String...) async throws -> RunResult {
            let time = FeedDate.format(Int64(start.timeIntervalSince1970 + minutes * 60))
            let stamp = time.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
            return try await cli.run(wrappedBy: ["/usr/bin/faketime", "-f", "@" + stamp], arguments)
        }
        try await withServer(items: 10, perPage: 10) { server, url in
            #expect(try await at(0, "pull", "--feed", url, "--images", "none").status == 0)
            let feed = try #require(try await cli.openStore().feeds().first)
            #expect(abs(feed.lastPullAt!.timeIntervalSince(start)) < 60, "the store has the faked time")
            server.clearLog()
            #expect(try await at(10, "pull").status == 0)
            #expect(server.feedRequests.isEmpty, "not due yet")
            #expect(try await at(12, "pull").status == 0)
            #expect(server.feedRequests.count == 1, "due: asked")
        }
    }
}
