import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation

/// Decides everything one feed's pull does with each answer: what to ask (URL, `Accept`,
/// validators), what an answer means (304, the same body again, 410 Gone, a format found, the
/// WordPress page 1 asked again with its paging parameters, a page past the end, a refused saved
/// link, a failure), what is written with each page (the cursor `PagingMachine` keeps, the
/// feed's names and format) and the outcome: the feed row's record and when it is due again
/// (`Schedule`). It does no I/O: `FeedPuller` performs the actions it returns and hands back
/// what happened, so every rule is unit-tested with synthetic answers (`PullMachineTests`).
public struct PullMachine: Sendable {
    public enum Action: Sendable {
        /// Ask for this document (the engine retries a transient failure by `RetryPolicy`); then
        /// `answered` or `failed`.
        case fetch(HTTPRequest)
        /// Read this answer's document as `expected` (nil: find the format); in parts, each
        /// handed to `part` and committed, when `inParts` and it was written to a file. Then
        /// `decoded`, `unusable` or `failed`.
        case decode(HTTPResponse, expected: FeedFormat?, context: DocumentContext, inParts: Bool)
        /// Find where the store holds these keys (`Store.bands`); then `known`.
        case lookUp([String])
        /// Write this in one transaction (`Store.commit`); then `committed`.
        case commit(PageCommit)
        /// Tell the user.
        case report(PullEvent)
        /// The pull is over: write `record` on the feed row (`Store.recordPull`) and return `report`.
        case finish(record: PullRecord, report: PullReport)
    }

    let feed: Feed
    let schedule: Schedule
    /// When the feed's pull started: due times count from it.
    let started: Date
    var paging: PagingMachine
    /// The feed's format: chosen, found before, or found in this pull's first document.
    var format: FeedFormat?
    /// The feed's title and site as its documents name them.
    var names: (title: String?, site: String?)
    /// A format or names found that no commit has written yet.
    var feedChanged = false
    var report: PullReport
    /// What the answer to the feed's own URL (page 1) said, for its schedule and its address.
    var head = HeadAnswer()
    /// The request in flight.
    var asked = Asked(number: 1, link: nil, conditional: false, format: nil, url: "")
    /// A page waiting for its keys' bands, and its validators.
    var pending: (page: FeedPage, validators: PagingMachine.Validators, number: Int)?
    var step: PagingMachine.Step?

    struct HeadAnswer {
        var headers: [String: String] = [:]
        /// What its document says of its schedule; nil when it was not read (304, unchanged).
        var document: FeedSchedule?
        /// The request was for the feed's URL as stored (not a page of it made by its format).
        var askedFeedURL = false
        /// Where its leading 301 and 308 redirects led, if it had any.
        var redirect: String?
        /// Validators of a head answer that brought the same document again, to keep.
        var validators: PagingMachine.Validators?
    }

    struct Asked {
        var number: Int
        var link: String?
        var conditional: Bool
        /// The format the request was made for.
        var format: FeedFormat?
        var url: String
        var isHead: Bool { number == 1 && link == nil }
    }

    /// The longest feed document accepted.
    public static let maxDocumentBytes = 512 << 20

    /// - Parameters:
    ///   - now: when the feed's pull starts; its due times count from then.
    public init(feed: Feed, maxPages: Int?, schedule: Schedule, now: Date) {
        self.feed = feed
        self.schedule = schedule
        started = now
        format = feed.format
        names = (feed.title, feed.siteURL)
        report = PullReport(url: feed.url)
        paging = PagingMachine(
            feedID: feed.id, cursor: feed.cursor, topBand: nil, maxPages: maxPages,
            followsLinks: feed.format?.followsLinks ?? false)
        paging.historyPaused = feed.historyRetryAt.map { $0 > now } ?? false
    }

    /// The first thing to do; `topBand`: the lowest band number of the feed's items, nil when it
    /// has none.
    public mutating func start(topBand: Int?) -> [Action] {
        paging.topBand = topBand
        return next(paging.start())
    }

    /// What `paging` wants next, as actions.
    private mutating func next(_ action: PagingMachine.Action) -> [Action] {
        switch action {
        case .finish(let finish):
            report.finish = finish
            var actions: [Action] = []
            if case .endless(let reason) = finish { actions.append(.report(.endless(url: feed.url, reason: reason))) }
            return actions + [succeeded()]
        case .revisit(let page, let validators):
            pending = (page, validators, 1)
            return [.lookUp(Self.keysToLookUp(page.items))]
        case .fetch(let number, let link, let conditional):
            let requestFormat = format ?? FeedFormat.guess(fromURL: feed.url)
            let url = link ?? requestFormat?.url(of: feed.url, page: number) ?? feed.url
            asked = Asked(number: number, link: link, conditional: conditional, format: requestFormat, url: url)
            var headers: [(name: String, value: String)] = [("Accept", FeedFormat.accept(format))]
            if conditional {
                if let etag = paging.cursor.etag { headers.append(("If-None-Match", etag)) }
                if let date = paging.cursor.lastModified { headers.append(("If-Modified-Since", date)) }
            }
            return [
                .fetch(
                    HTTPRequest(
                        url: url, headers: headers, maxBodyBytes: Self.maxDocumentBytes, hashesBody: number == 1))
            ]
        }
    }

    /// The server answered (any status but a transient failure, which the engine retried).
    public mutating func answered(_ response: HTTPResponse) -> [Action] {
        if asked.isHead {
            head.headers = response.headers
            head.askedFeedURL = asked.url == feed.url
            // Only a URL this client would fetch may become the feed's.
            head.redirect = response.permanentlyMovedTo.flatMap { HTTPRequest.isFetchable($0) ? $0 : nil }
        }
        switch response.status {
        case 304 where asked.conditional:
            return [.report(.notModified(url: asked.url))] + next(paging.notModified())
        case 200..<300
        where asked.conditional && response.bodyHash != nil && response.bodyHash == paging.cursor.bodyHash:
            // The same document as last time: nothing to read, but the validators it came with
            // are the ones to send next.
            head.validators = .init(etag: response.headers["etag"], lastModified: response.headers["last-modified"])
            return [.report(.unchanged(url: asked.url))] + next(paging.notModified())
        case 410 where asked.isHead:
            // The publisher's decision: the feed is not asked again; its items stay.
            report.gone = true
            return [succeeded()]
        case 200..<300:
            let context = DocumentContext(url: response.effectiveURL, headers: response.headers, page: asked.number)
            return [
                .decode(
                    response, expected: feed.formatChosen ? format : nil, context: context,
                    inParts: response.bodyFile != nil && paging.canReadInParts)
            ]
        case _ where FeedDocument.isPastLastPage(status: response.status, body: response.body, format: format):
            return received(FeedPage(items: [], hasMore: false), response)
        case 400..<500:
            guard let instead = paging.rejected() else { fallthrough }
            return [.report(.linkRefused(url: asked.url, status: response.status))] + next(instead)
        default:
            return failed(SyncError(.data, "\(asked.url) answered \(response.status); check the feed URL"))
        }
    }

    /// Part of a long document, read before its end: placed and committed as `PagingMachine`
    /// places them.
    public mutating func part(_ items: [FeedItem], bands: [String: Int]) -> PageCommit {
        withFeedFields(paging.receivedPart(items, bands: Self.bands(bands, of: items)))
    }

    /// The answer's document was read as `found` (its items, or none when they came in parts).
    public mutating func decoded(_ found: FeedFormat, _ page: FeedPage, from response: HTTPResponse) -> [Action] {
        var page = page
        var actions: [Action] = []
        if asked.isHead { head.document = page.schedule }
        if let malformed = page.malformed {
            report.malformed = "\(asked.url): \(malformed)"
            actions.append(.report(.malformed(url: asked.url, where: malformed)))
        }
        // A link to another scheme (file:, ftp:, …) or no URL at all ends the walk here; the
        // page's items are stored.
        if let next = page.next, let problem = HTTPRequest.problem(with: next) {
            page.next = nil
            page.hasMore = false
            page.unfollowed = "the next page's link \(next) is not followed: \(problem)"
        }
        let title = page.title ?? names.title
        let site = page.siteURL ?? names.site
        if title != names.title || site != names.site {
            names = (title, site)
            feedChanged = true
        }
        if found != format {
            let askedRight = asked.format == found || found.followsLinks || found == .pagedJSON
            format = found
            feedChanged = true
            paging.followsLinks = found.followsLinks
            // Page 1 of a WordPress site asked for without its paging parameters: ask again.
            if !askedRight { return actions + next(.fetch(page: asked.number, url: asked.link, conditional: false)) }
        }
        return actions + received(page, response)
    }

    /// The answer's document could not be read.
    public mutating func unusable(_ error: FeedError) -> [Action] {
        // Said only when there are such items: a first pull's first page has none.
        let kept = feed.cursor.backfillPage != nil || report.newItems > 0
        var failure = PullFailure(
            SyncError(
                .data,
                "\(asked.url) sent an unusable page: \(error.reason)"
                    + (kept ? "; the items stored before are kept" : "")))
        failure.wholeFeed = error.wrongFormat
        return failed(failure)
    }

    private mutating func received(_ page: FeedPage, _ response: HTTPResponse) -> [Action] {
        let validators = PagingMachine.Validators(
            etag: response.headers["etag"], lastModified: response.headers["last-modified"],
            bodyHash: response.bodyHash)
        pending = (page, validators, asked.number)
        return [.lookUp(Self.keysToLookUp(page.items))]
    }

    /// The keys to look for in the store for `items`: each item's, and its former key if any.
    static func keysToLookUp(_ items: [FeedItem]) -> [String] {
        items.map(\.key) + items.compactMap(\.formerKey)
    }

    /// Where the store holds `items`' keys, an item stored under its former key counted as stored
    /// under its key (the commit moves it there).
    static func bands(_ bands: [String: Int], of items: [FeedItem]) -> [String: Int] {
        var bands = bands
        for item in items where bands[item.key] == nil {
            if let former = item.formerKey, let band = bands[former] { bands[item.key] = band }
        }
        return bands
    }

    /// Where the store holds the pending page's keys.
    public mutating func known(_ bands: [String: Int]) -> [Action] {
        guard let (page, validators, _) = pending else { preconditionFailure("no page waits for its keys") }
        let step = paging.received(page, validators: validators, bands: Self.bands(bands, of: page.items))
        guard let commit = step.commit else {
            pending = nil
            return next(step.next)
        }
        self.step = step
        return [.commit(withFeedFields(commit))]
    }

    /// The page was written.
    public mutating func committed() -> [Action] {
        guard let step, let (page, _, number) = pending else { preconditionFailure("no page was committed") }
        report.newItems += step.newCount
        report.refreshedItems += step.refreshedCount
        let event = PullEvent.page(
            url: feed.url, number: number, items: step.count, new: step.newCount, refreshed: step.refreshedCount,
            skipped: page.skipped)
        (self.step, pending) = (nil, nil)
        return [.report(event)] + next(step.next)
    }

    /// A commit carries what was found of the feed since the last: the feed row is written once
    /// per commit.
    private mutating func withFeedFields(_ commit: PageCommit) -> PageCommit {
        var commit = commit
        if feedChanged {
            commit.found = PageCommit.Found(title: names.title, siteURL: names.site, format: format)
            feedChanged = false
        }
        return commit
    }

    /// The walk ended well (its history perhaps cut short: `history`): when the feed is due again.
    private mutating func succeeded(history: (stop: String, retryAt: Date)? = nil) -> Action {
        var record = PullRecord(outcome: .ok, at: started)
        if !report.gone {
            report.due =
                report.finish == .budgetSpent
                ? Schedule.Due(at: started, reason: "--max-pages reached; the next pull continues")
                : schedule.afterSuccess(now: started, headers: head.headers, document: head.document ?? feed.schedule)
        }
        if let history {
            record.history = (history.stop, history.retryAt)
            report.history = history.stop
            if let due = report.due, history.retryAt < due.at {
                report.due = Schedule.Due(
                    at: max(history.retryAt, started), reason: "the history continues at the next pull")
            }
        } else if feed.historyStop != nil, !paging.historyPaused {
            record.history = (nil, nil)  // its history went on
        }
        record.gone = report.gone
        return finish(record)
    }

    /// A page of the feed's history (past the first, in the backfill) failed: what was committed
    /// stays, the head is healthy, and the history is tried again on its own: at the next pull
    /// when the network cut it off or the server was busy, after the server's `Retry-After`, or
    /// in a day when the page was refused or broken.
    private mutating func historyFailed(_ failure: PullFailure) -> Action {
        let retryAt =
            failure.nextRetryAt
            ?? (failure.error.kind == .transient ? started : started.addingTimeInterval(Self.historyRetry))
        return succeeded(history: ("history stops at page \(asked.number): \(failure.error.message)", retryAt))
    }

    /// How long a refused or broken page of history waits before it is asked again.
    static let historyRetry: TimeInterval = 24 * 3600

    /// The pull failed: the error, and when the feed is asked again.
    public mutating func failed(_ failure: PullFailure) -> [Action] {
        if !asked.isHead, paging.phase == .backfill, !failure.interrupted, !failure.wholeFeed,
            failure.error.kind != .local
        {
            return [historyFailed(failure)]
        }
        var record = PullRecord(outcome: failure.error.kind.outcome, at: started)
        (record.failures, record.unanswered) = (feed.failures, feed.unanswered)
        record.retryAfter = failure.nextRetryAt
        let due: Schedule.Due
        if failure.interrupted || failure.error.kind == .local {
            // Not the feed's failure: asked again at the next pull.
            due = Schedule.Due(at: started, reason: failure.interrupted ? "interrupted" : "a local failure")
        } else if failure.unanswered {
            record.unanswered += 1
            report.unanswered = true
            report.silence = failure.silence
            due = schedule.afterNoAnswer(now: started, unanswered: record.unanswered)
        } else if failure.status == 429 {
            record.unanswered = 0
            due = schedule.afterTooManyRequests(now: started, retryAfter: failure.retryAfter)
        } else {
            (record.failures, record.unanswered) = (record.failures + 1, 0)
            due = schedule.afterFailure(now: started, failures: record.failures, retryAfter: failure.retryAfter)
        }
        var error = failure.error
        if failure.savesPlace {
            // Said only as the schedule has it: "the next pull" only when the next pull asks.
            error.message +=
                due.at <= started
                ? "; the place is saved, the next pull continues from it"
                : "; the place is saved; \(due.reason) before a pull continues from it"
        }
        report.error = error
        record.error = error.message
        report.due = due
        return [finish(record)]
    }

    private mutating func failed(_ error: SyncError) -> [Action] {
        failed(PullFailure(error))
    }

    private func finish(_ record: PullRecord) -> Action {
        var record = record
        record.due = report.due?.at
        record.dueReason = report.due?.reason
        record.malformed = report.malformed
        record.schedule = head.document
        record.askedFeedURL = head.askedFeedURL
        record.redirect = head.redirect
        record.validators = head.validators.map { (etag: $0.etag, lastModified: $0.lastModified) }
        if feedChanged { record.found = PageCommit.Found(title: names.title, siteURL: names.site, format: format) }
        return .finish(record: record, report: report)
    }
}

/// A SyncError on its way out of a pull, with what the feed row should remember.
public struct PullFailure: Error, Sendable {
    public var error: SyncError
    /// Not to be asked before then (a `Retry-After` longer than a pull waits).
    public var nextRetryAt: Date?
    /// The last status of a request that kept failing, and the `Retry-After` it came with.
    public var status: Int?
    public var retryAfter: Double?
    public var interrupted = false
    /// No server answered the last attempt (no status line): the network's failure, or a dead host.
    public var unanswered = false
    /// The host gave no answer, and how: a name, a connection or a byte never came.
    public var silence: Silence?
    /// The message is to end with where the next pull continues, as the schedule has it.
    public var savesPlace = false
    /// The feed's failure whatever page showed it (a format chosen wrongly), not its history's.
    public var wholeFeed = false

    public init(_ error: SyncError, nextRetryAt: Date? = nil, status: Int? = nil, retryAfter: Double? = nil) {
        self.error = error
        self.nextRetryAt = nextRetryAt
        self.status = status
        self.retryAfter = retryAfter
    }

    /// Not asked, as if unanswered: the run has found the network (or the host) not answering.
    static func unanswered(_ message: String) -> PullFailure {
        var failure = PullFailure(SyncError(.transient, message))
        failure.unanswered = true
        failure.savesPlace = true
        return failure
    }

    /// The pull was cancelled (SIGINT or SIGTERM): stopped between two transactions.
    public static let interrupted: PullFailure = {
        var failure = PullFailure(
            SyncError(.transient, "interrupted; the place is saved, the next pull continues from it"))
        failure.interrupted = true
        return failure
    }()
}
