// FeedSyncSync: the engine that pulls one feed into the store (this file), the data home, and the
// error type the command line maps to exit codes. The paging rules live in PagingMachine.

import FeedSyncFeed
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

public enum FeedSyncVersion {
    public static let string = "0.1.0"
    public static let projectURL = "https://github.com/feedsync/feedsync"
    /// Names the program, its version and where a publisher can read what it does.
    public static let userAgent = "feedsync/\(string) (+\(projectURL))"
}

/// A failure a user has to hear about, sorted by what the command line should exit with.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Comparable {
        /// Worth trying again later: the network, the server or the lock (exit 75).
        case transient
        /// The server sent something unusable (exit 65).
        case data
        /// The local database or file system failed (exit 74).
        case local
        /// The command was used wrongly (exit 64).
        case usage
    }

    public var kind: Kind
    /// One plain sentence: what failed, where, and what to do.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

extension SyncError.Kind {
    /// How a pull that failed so ended, as the feed records it.
    public var outcome: PullOutcome {
        switch self {
        case .transient: .transient
        case .data: .data
        case .local, .usage: .local
        }
    }
}

/// What happens during a pull, for `--verbose` and progress output.
public enum PullEvent: Sendable {
    case notModified(url: String)
    /// A 200 whose body is the head document read last time: not parsed again.
    case unchanged(url: String)
    /// A page was stored: of its `items`, `new` were added and `refreshed` (stored before) were
    /// rewritten in place; `skipped` entries made no item (nothing usable, or an id or URL over
    /// its limit).
    case page(url: String, number: Int, items: Int, new: Int, refreshed: Int, skipped: Int)
    case retrying(url: String, attempt: Int, delay: Double, reason: String)
    case skipped(url: String, Schedule.Skip)
    case endless(url: String, reason: String)
    /// The server refused a saved link (status 4xx); the walk started again from the head.
    case linkRefused(url: String, status: Int)
    /// A document was not well-formed; its items were read past the damage (`where`: line, column, reason).
    case malformed(url: String, where: String)
}

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

/// What one feed's pull did, whether it succeeded or not.
public struct PullReport: Sendable {
    public var url: String
    /// Requests made, retries included (`requests.count`).
    public var requests: [Request] = []
    public var newItems = 0
    public var refreshedItems = 0
    public var finish: PagingMachine.Finish?
    /// The feed was not asked for, and why.
    public var skipped: Schedule.Skip?
    /// Where the last malformed document of this pull was damaged, if one was.
    public var malformed: String?
    /// When the feed is due again, and why; nil when it was skipped or is gone.
    public var due: Schedule.Due?
    /// The server answered 410 Gone.
    public var gone = false
    /// The feed URL moved there (a permanent redirect seen on two pulls in a row).
    public var movedTo: String?
    /// Why the pull failed; nil when it did not.
    public var error: SyncError?
    /// It failed without any answer from a server (the network gone, or the host): the feed stays
    /// due for the next pull unless that happened too often in a row (`Schedule.afterNoAnswer`).
    public var unanswered = false

    public init(url: String, skipped: Schedule.Skip? = nil) {
        self.url = url
        self.skipped = skipped
    }

    /// One request: its URL, the status answered (nil: no answer, `failure` says why) and the
    /// body's bytes.
    public struct Request: Sendable {
        public var url: String
        public var status: Int?
        public var bytes: Int
        public var failure: String?
    }
}

/// Pulls feeds into the store, one page per transaction.
public final class SyncEngine: Sendable {
    let store: Store
    let client: HTTPClient
    /// Where a document longer than `inMemoryBytes` is written while it arrives.
    let downloadPath: String?

    /// Documents up to this size are read in memory; longer ones go to `downloadPath` and are
    /// read from there in parts of `partSize` items, each committed as it is read.
    static let inMemoryBytes = 4 << 20
    static let partSize = 500
    /// The longest feed document accepted.
    static let maxDocumentBytes = 512 << 20

    public init(store: Store, client: HTTPClient, downloadPath: String? = nil) {
        self.store = store
        self.client = client
        self.downloadPath = downloadPath
    }

    /// Pulls one feed: head check, head walk, gap and backfill, as PagingMachine decides. The
    /// outcome and the time the feed is due again are recorded on the feed whether it succeeds or
    /// not; a failure is in the report's `error`.
    public func pull(_ feed: Feed, options: PullOptions) async -> PullReport {
        // Due times count from the start of the feed's pull, as a timer's slots do.
        let started = options.clock.now()
        var report = PullReport(url: feed.url)
        var head = HeadAnswer()
        var record = PullRecord(outcome: .ok, at: started, failures: feed.failures, unanswered: feed.unanswered)
        do throws(PullFailure) {
            try await walk(feed, options: options, report: &report, head: &head)
            let due =
                report.finish == .budgetSpent
                ? Schedule.Due(at: started, reason: "--max-pages reached; the next pull continues")
                : options.schedule.afterSuccess(
                    now: started, headers: head.headers, document: head.document ?? feed.schedule)
            (record.failures, record.unanswered) = (0, 0)
            record.gone = report.gone
            if !report.gone { report.due = due }
        } catch {
            var failure = error
            record.outcome = failure.error.kind.outcome
            record.retryAfter = failure.nextRetryAt
            let due: Schedule.Due
            if failure.interrupted || failure.error.kind == .local {
                // Not the feed's failure: asked again at the next pull.
                due = Schedule.Due(at: started, reason: failure.interrupted ? "interrupted" : "a local failure")
            } else if failure.unanswered {
                record.unanswered += 1
                report.unanswered = true
                due = options.schedule.afterNoAnswer(now: started, unanswered: record.unanswered)
            } else if failure.status == 429 {
                record.unanswered = 0
                due = options.schedule.afterTooManyRequests(now: started, retryAfter: failure.retryAfter)
            } else {
                (record.failures, record.unanswered) = (record.failures + 1, 0)
                due = options.schedule.afterFailure(
                    now: started, failures: record.failures, retryAfter: failure.retryAfter)
            }
            if failure.savesPlace {
                // Said only as the schedule has it: "the next pull" only when the next pull asks.
                failure.error.message +=
                    due.at <= started
                    ? "; the place is saved, the next pull continues from it"
                    : "; the place is saved; \(due.reason) before a pull continues from it"
            }
            report.error = failure.error
            record.error = failure.error.message
            report.due = due
        }
        record.due = report.due?.at
        record.dueReason = report.due?.reason
        record.malformed = report.malformed
        record.schedule = head.document
        record.askedFeedURL = head.askedFeedURL
        record.redirect = head.redirect
        do {
            report.movedTo = try store.recordPull(feedID: feed.id, record)
        } catch {
            report.error =
                report.error ?? SyncError(.local, "\(error.message); check the disk and the data home's permissions")
        }
        return report
    }

    /// What the answer to the feed's own URL (page 1) said, for its schedule and its address.
    struct HeadAnswer {
        var headers: [String: String] = [:]
        /// What its document says of its schedule; nil when it was not read (304, unchanged).
        var document: FeedSchedule?
        /// The request was for the feed's URL as stored (not a page of it made by its format).
        var askedFeedURL = false
        /// Where its leading 301 and 308 redirects led, if it had any.
        var redirect: String?
    }

    private func walk(
        _ feed: Feed, options: PullOptions, report: inout PullReport, head: inout HeadAnswer
    ) async throws(PullFailure) {
        // The format is found from the first document unless it was chosen or found before.
        var format = feed.format
        var named = (title: feed.title, site: feed.siteURL)
        var machine = PagingMachine(
            feedID: feed.id, cursor: feed.cursor, topBand: try local { try store.topBand(feedID: feed.id) },
            maxPages: options.maxPages, followsLinks: format?.followsLinks ?? false)
        var action = machine.start()
        while true {
            if Task.isCancelled { throw PullFailure.interrupted }
            var page: FeedPage
            let validators: PagingMachine.Validators
            var number = 1
            switch action {
            case .finish(let finish):
                report.finish = finish
                if case .endless(let reason) = finish { options.onEvent(.endless(url: feed.url, reason: reason)) }
                return
            case .revisit(let held, let heldValidators):
                (page, validators) = (held, heldValidators)
            case .fetch(let requested, let link, let conditional):
                number = requested
                let requestFormat = format ?? FeedFormat.guess(fromURL: feed.url)
                let url = link ?? requestFormat?.url(of: feed.url, page: number) ?? feed.url
                var headers: [(name: String, value: String)] = [("Accept", FeedFormat.accept(format))]
                if conditional {
                    if let etag = machine.cursor.etag { headers.append(("If-None-Match", etag)) }
                    if let date = machine.cursor.lastModified { headers.append(("If-Modified-Since", date)) }
                }
                let request = HTTPRequest(
                    url: url, headers: headers, maxBodyBytes: Self.maxDocumentBytes,
                    spill: downloadPath.map { ($0, Self.inMemoryBytes) }, hashesBody: number == 1)
                let response = try await fetch(request, options: options, report: &report)
                defer { if let file = response.bodyFile { try? FileManager.default.removeItem(atPath: file) } }
                let isHead = number == 1 && link == nil
                if isHead {
                    head.headers = response.headers
                    head.askedFeedURL = url == feed.url
                    // Only a URL this client would fetch may become the feed's.
                    head.redirect = response.permanentlyMovedTo.flatMap { HTTPRequest.isFetchable($0) ? $0 : nil }
                }
                switch response.status {
                case 304 where conditional:
                    options.onEvent(.notModified(url: url))
                    action = machine.notModified()
                    continue
                case 200..<300
                where conditional && response.bodyHash != nil && response.bodyHash == machine.cursor.bodyHash:
                    // The same document as last time: nothing to read, but the validators it
                    // came with are the ones to send next.
                    options.onEvent(.unchanged(url: url))
                    try local {
                        try store.recordValidators(
                            feedID: feed.id, etag: response.headers["etag"],
                            lastModified: response.headers["last-modified"])
                    }
                    action = machine.notModified()
                    continue
                case 410 where isHead:
                    // The publisher's decision: the feed is not asked again; its items stay.
                    report.gone = true
                    return
                case 200..<300:
                    let found: FeedFormat
                    let context = DocumentContext(url: response.effectiveURL, headers: response.headers, page: number)
                    let expected = feed.formatChosen ? format : nil
                    do {
                        if let file = response.bodyFile {
                            (found, page) = try await read(
                                file, format: expected, context: context, feedID: feed.id, machine: &machine,
                                onCommit: options.onCommit)
                        } else {
                            (found, page) = try FeedDocument.decode(response.body, format: expected, context: context)
                        }
                    } catch let error as FeedError {
                        // Said only when there are such items: a first pull's first page has none.
                        let kept = feed.cursor.backfillPage != nil || report.newItems > 0
                        throw PullFailure(
                            SyncError(
                                .data,
                                "\(url) sent an unusable page: \(error.reason)"
                                    + (kept ? "; the items stored before are kept" : "")))
                    } catch let failure as PullFailure {
                        throw failure
                    } catch {
                        throw PullFailure(SyncError(.local, "\(error)"))
                    }
                    if isHead { head.document = page.schedule }
                    if let malformed = page.malformed {
                        report.malformed = "\(url): \(malformed)"
                        options.onEvent(.malformed(url: url, where: malformed))
                    }
                    // A link to another scheme (file:, ftp:, …) or no URL at all ends the walk here;
                    // the page's items are stored.
                    if let next = page.next, let problem = HTTPRequest.problem(with: next) {
                        page.next = nil
                        page.hasMore = false
                        page.unfollowed = "the next page's link \(next) is not followed: \(problem)"
                    }
                    let title = page.title ?? named.title
                    let site = page.siteURL ?? named.site
                    if title != named.title || site != named.site {
                        try local { try store.recordFeedNames(feedID: feed.id, title: title, siteURL: site) }
                        named = (title, site)
                    }
                    if found != format {
                        try local { try store.recordFormat(feedID: feed.id, found) }
                        let askedRight = requestFormat == found || found.followsLinks || found == .pagedJSON
                        format = found
                        machine.followsLinks = found.followsLinks
                        // Page 1 of a WordPress site asked for without its paging parameters: ask again.
                        if !askedRight { continue }
                    }
                case _ where FeedDocument.isPastLastPage(status: response.status, body: response.body, format: format):
                    page = FeedPage(items: [], hasMore: false)
                default:
                    if (400..<500).contains(response.status), let instead = machine.rejected() {
                        options.onEvent(.linkRefused(url: url, status: response.status))
                        action = instead
                        continue
                    }
                    throw PullFailure(SyncError(.data, "\(url) answered \(response.status); check the feed URL"))
                }
                validators = .init(
                    etag: response.headers["etag"], lastModified: response.headers["last-modified"],
                    bodyHash: response.bodyHash)
            }
            let bands = try local { try store.bands(feedID: feed.id, keys: page.items.map(\.key)) }
            let step = machine.received(page, validators: validators, bands: bands)
            if let commit = step.commit {
                try local { try store.commit(commit) }
                options.onCommit(step.refreshedCount > 0)
                report.newItems += step.newCount
                report.refreshedItems += step.refreshedCount
                options.onEvent(
                    .page(
                        url: feed.url, number: number, items: step.count, new: step.newCount,
                        refreshed: step.refreshedCount, skipped: page.skipped))
            }
            action = step.next
        }
    }

    /// Reads a long document from its file in parts, committing each part as it is read, so
    /// memory holds a few parts however long the document. Parsing blocks on the file, so it runs
    /// on a thread of its own, at most two parts ahead of the commits. Returns the page without
    /// its items.
    private func read(
        _ file: String, format: FeedFormat?, context: DocumentContext, feedID: Int64, machine: inout PagingMachine,
        onCommit: @Sendable (Bool) -> Void
    ) async throws -> (FeedFormat, FeedPage) {
        guard machine.canReadInParts else {
            return try await onOwnThread {
                var items: [FeedItem] = []
                var (found, page) = try FeedDocument.decode(
                    fileAt: file, format: format, context: context, batch: Self.partSize
                ) { items += $0 }
                page.items = items
                return (found, page)
            }
        }
        struct Stopped: Error {}
        let (parts, sink) = AsyncStream.makeStream(of: [FeedItem].self)
        let room = DispatchSemaphore(value: 2)  // parts parsed and not yet taken
        let stopped = Atomic(false)
        async let parsed = onOwnThread {
            defer { sink.finish() }
            return try FeedDocument.decode(fileAt: file, format: format, context: context, batch: Self.partSize) {
                items in
                room.wait()
                if stopped.load(ordering: .acquiring) { throw Stopped() }
                sink.yield(items)
            }
        }
        do {
            for await items in parts {
                room.signal()
                if Task.isCancelled { throw PullFailure.interrupted }
                let bands = try local { try store.bands(feedID: feedID, keys: items.map(\.key)) }
                let commit = machine.receivedPart(items, bands: bands)
                try local { try store.commit(commit) }
                onCommit(!commit.updatedItems.isEmpty)
            }
        } catch {
            stopped.store(true, ordering: .releasing)
            room.signal()  // a parser waiting for room wakes, sees `stopped` and ends
            _ = try? await parsed
            throw error
        }
        return try await parsed
    }

    /// One request with retries, each logged in `report`. Returns any response that is not a
    /// transient failure, whatever its status.
    private func fetch(
        _ request: HTTPRequest, options: PullOptions, report: inout PullReport
    ) async throws(PullFailure) -> HTTPResponse {
        let policy = options.retry
        var attempt = 1
        while true {
            let reason: String
            var retryAfter: Double? = nil
            var status: Int? = nil
            var answered = true
            do {
                let response = try await client.get(request)
                report.requests.append(.init(url: request.url, status: response.status, bytes: response.bodyBytes))
                guard response.isTransientFailure else { return response }
                reason = "the server answered \(response.status)"
                status = response.status
                retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"], now: options.clock.now())
            } catch {
                if error.kind == .cancelled || Task.isCancelled { throw PullFailure.interrupted }
                report.requests.append(.init(url: request.url, status: nil, bytes: 0, failure: error.detail))
                if error.kind == .localFile { throw PullFailure(SyncError(.local, error.detail)) }
                guard error.isTransient else {
                    throw PullFailure(SyncError(.data, "\(request.url) could not be used: \(error.detail)"))
                }
                reason = error.detail
                answered = error.answered
            }

            if let retryAfter, retryAfter > policy.maxRetryAfter {
                throw PullFailure(
                    SyncError(
                        .transient,
                        "\(request.url): \(reason) and asked to wait \(Int(retryAfter)) s; "
                            + "the place is saved and pulls skip this feed until then"
                    ),
                    nextRetryAt: options.clock.now().addingTimeInterval(retryAfter), status: status,
                    retryAfter: retryAfter)
            }
            guard attempt < policy.maxAttempts else {
                var failure = PullFailure(
                    SyncError(.transient, "\(request.url): \(reason), \(attempt) attempt\(attempt == 1 ? "" : "s")"),
                    status: status,
                    retryAfter: retryAfter)
                failure.unanswered = !answered
                failure.savesPlace = true
                throw failure
            }
            let delay = retryAfter.map { max($0, 0) } ?? policy.backoff(afterAttempt: attempt)
            options.onEvent(.retrying(url: request.url, attempt: attempt, delay: delay, reason: reason))
            do {
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            } catch {
                throw PullFailure.interrupted
            }
            attempt += 1
        }
    }

    private func local<T>(_ body: () throws -> T) throws(PullFailure) -> T {
        do {
            return try body()
        } catch let error as StoreError where error.kind == .locked {
            throw PullFailure(SyncError(.transient, error.message))
        } catch {
            throw PullFailure(SyncError(.local, "\(error); check the disk and the data home's permissions"))
        }
    }
}

/// Runs `body` on a thread of its own and returns what it returns: for work that blocks (reading
/// and parsing a long file), which must not hold a thread of the cooperative pool.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A SyncError on its way out of a pull, with what the feed row should remember.
struct PullFailure: Error {
    var error: SyncError
    /// Not to be asked before then (a `Retry-After` longer than a pull waits).
    var nextRetryAt: Date?
    /// The last status of a request that kept failing, and the `Retry-After` it came with.
    var status: Int?
    var retryAfter: Double?
    var interrupted = false
    /// No server answered the last attempt (no status line): the network's failure, or a dead host.
    var unanswered = false
    /// The message is to end with where the next pull continues, as the schedule has it.
    var savesPlace = false

    init(_ error: SyncError, nextRetryAt: Date? = nil, status: Int? = nil, retryAfter: Double? = nil) {
        self.error = error
        self.nextRetryAt = nextRetryAt
        self.status = status
        self.retryAfter = retryAfter
    }

    /// The pull was cancelled (SIGINT or SIGTERM): stopped between two transactions.
    static let interrupted: PullFailure = {
        var failure = PullFailure(
            SyncError(.transient, "interrupted; the place is saved, the next pull continues from it"))
        failure.interrupted = true
        return failure
    }()
}
