// FeedSyncSync: the engine that pulls one feed into the store (this file), the data home, and the
// error type the command line maps to exit codes. The paging rules live in PagingMachine.

import FeedSyncFeed
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

public enum FeedSyncVersion {
    public static let string = "0.1.0"
    public static let userAgent = "feedsync/\(string)"
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

/// What happens during a pull, for `--verbose` and progress output.
public enum PullEvent: Sendable {
    case notModified(url: String)
    /// A page was stored: of its `items`, `new` were added and `refreshed` (stored before) were
    /// rewritten in place; `skipped` entries made no item (nothing usable, or an id or URL over
    /// its limit).
    case page(url: String, number: Int, items: Int, new: Int, refreshed: Int, skipped: Int)
    case retrying(url: String, attempt: Int, delay: Double, reason: String)
    case skipped(url: String, until: Date)
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
    /// What happens, for the user (`--verbose`, the progress line).
    public var onEvent: @Sendable (PullEvent) -> Void
    /// Called after each transaction that stored items (a page, or a part of a long one), for the
    /// work that follows the store (the picture prefetch); `refreshed`: it rewrote items stored
    /// before.
    public var onCommit: @Sendable (_ refreshed: Bool) -> Void

    public init(
        maxPages: Int? = nil, retry: RetryPolicy = RetryPolicy(),
        onEvent: @escaping @Sendable (PullEvent) -> Void = { _ in },
        onCommit: @escaping @Sendable (_ refreshed: Bool) -> Void = { _ in }
    ) {
        self.maxPages = maxPages
        self.retry = retry
        self.onEvent = onEvent
        self.onCommit = onCommit
    }
}

/// What one feed's pull did.
public struct PullReport: Sendable {
    public var url: String
    public var pages: Int
    public var newItems: Int
    public var finish: PagingMachine.Finish?
    /// The feed was skipped: a server asked us to wait until then.
    public var skippedUntil: Date?
    /// Where the last malformed document of this pull was damaged, if one was.
    public var malformed: String?
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
    /// outcome is recorded on the feed whether it succeeds or not.
    public func pull(_ feed: Feed, options: PullOptions) async throws(SyncError) -> PullReport {
        let started = Date()
        if let until = feed.nextRetryAt, until > started {
            options.onEvent(.skipped(url: feed.url, until: until))
            return PullReport(url: feed.url, pages: 0, newItems: 0, finish: nil, skippedUntil: until)
        }
        var report = PullReport(url: feed.url, pages: 0, newItems: 0, finish: nil, skippedUntil: nil)
        do throws(PullFailure) {
            try await walk(feed, options: options, report: &report)
            try record(feed, .ok, error: nil, at: started, nextRetryAt: nil, malformed: report.malformed)
            return report
        } catch {
            let failure = error
            let outcome: PullOutcome =
                switch failure.error.kind {
                case .transient: .transient
                case .data: .data
                case .local, .usage: .local
                }
            try? record(
                feed, outcome, error: failure.error.message, at: started, nextRetryAt: failure.nextRetryAt,
                malformed: report.malformed)
            throw failure.error
        }
    }

    private func record(
        _ feed: Feed, _ outcome: PullOutcome, error: String?, at: Date, nextRetryAt: Date?, malformed: String?
    ) throws(PullFailure) {
        do {
            try store.recordOutcome(
                feedID: feed.id, outcome, error: error, at: at, nextRetryAt: nextRetryAt, malformed: malformed)
        } catch {
            throw PullFailure(SyncError(.local, "\(error.message); check the disk and the data home's permissions"))
        }
    }

    private func walk(_ feed: Feed, options: PullOptions, report: inout PullReport) async throws(PullFailure) {
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
                    spill: downloadPath.map { ($0, Self.inMemoryBytes) })
                let response = try await fetch(request, options: options)
                defer { if let file = response.bodyFile { try? FileManager.default.removeItem(atPath: file) } }
                report.pages += 1
                switch response.status {
                case 304 where conditional:
                    options.onEvent(.notModified(url: url))
                    action = machine.notModified()
                    continue
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
                validators = .init(etag: response.headers["etag"], lastModified: response.headers["last-modified"])
            }
            let bands = try local { try store.bands(feedID: feed.id, keys: page.items.map(\.key)) }
            let step = machine.received(page, validators: validators, bands: bands)
            if let commit = step.commit {
                try local { try store.commit(commit) }
                options.onCommit(step.refreshedCount > 0)
                report.newItems += step.newCount
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

    /// One request with retries. Returns any response that is not a transient failure, whatever
    /// its status.
    private func fetch(_ request: HTTPRequest, options: PullOptions) async throws(PullFailure) -> HTTPResponse {
        let policy = options.retry
        var attempt = 1
        while true {
            let reason: String
            var retryAfter: Double? = nil
            do {
                let response = try await client.get(request)
                guard response.isTransientFailure else { return response }
                reason = "the server answered \(response.status)"
                retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"])
            } catch {
                if error.kind == .cancelled || Task.isCancelled { throw PullFailure.interrupted }
                if error.kind == .localFile { throw PullFailure(SyncError(.local, error.detail)) }
                guard error.isTransient else {
                    throw PullFailure(SyncError(.data, "\(request.url) could not be used: \(error.detail)"))
                }
                reason = error.detail
            }

            if let retryAfter, retryAfter > policy.maxRetryAfter {
                throw PullFailure(
                    SyncError(
                        .transient,
                        "\(request.url): \(reason) and asked to wait \(Int(retryAfter)) s; "
                            + "the place is saved and pulls skip this feed until then"
                    ),
                    nextRetryAt: Date().addingTimeInterval(retryAfter))
            }
            guard attempt < policy.maxAttempts else {
                throw PullFailure(
                    SyncError(
                        .transient,
                        "\(request.url): \(reason), \(attempt) attempts; "
                            + "the place is saved, the next pull continues from it"
                    ))
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
    var nextRetryAt: Date?
    init(_ error: SyncError, nextRetryAt: Date? = nil) {
        self.error = error
        self.nextRetryAt = nextRetryAt
    }

    /// The pull was cancelled (SIGINT or SIGTERM): stopped between two transactions.
    static let interrupted = PullFailure(
        SyncError(.transient, "interrupted; the place is saved, the next pull continues from it"))
}
