import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncTransport
import Foundation
import Synchronization
import Testing

@testable import FeedSyncPull
@testable import FeedSyncStore

/// What a pull does with each answer, driven with synthetic answers: no server, no database.
@Suite struct PullMachineTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let url = "http://h/feed"

    func feed(_ configure: (inout Feed) -> Void = { _ in }) -> Feed {
        var feed = Feed(id: 1, url: url, format: nil, formatChosen: false, cursor: FeedCursor())
        configure(&feed)
        return feed
    }

    /// A feed pulled before: its backfill done, validators stored.
    func pulled(_ format: FeedFormat = .pagedJSON, bodyHash: String? = "h1") -> Feed {
        feed {
            $0.format = format
            $0.cursor = FeedCursor(etag: "\"e1\"", lastModified: "Tue, 1 Jan 2030 00:00:00 GMT", bodyHash: bodyHash)
            $0.cursor.backfillPage = 3
            $0.cursor.backfillDone = true
        }
    }

    func machine(_ feed: Feed, maxPages: Int? = nil, topBand: Int? = 0) -> (PullMachine, [PullMachine.Action]) {
        var machine = PullMachine(feed: feed, maxPages: maxPages, schedule: Schedule(), now: now)
        let actions = machine.start(topBand: feed.cursor.backfillPage == nil ? nil : topBand)
        return (machine, actions)
    }

    func response(
        _ status: Int, _ body: String = "", headers: [String: String] = [:], at address: String? = nil,
        hash: String? = nil, redirects: [HTTPRedirect] = []
    ) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: headers, body: Data(body.utf8), effectiveURL: address ?? url,
            redirects: redirects, bodyHash: hash)
    }

    func items(_ keys: String...) -> [FeedItem] {
        keys.map { FeedItem(key: $0, title: $0, link: nil, pictureURL: nil, published: nil, summary: nil) }
    }

    func requested(_ actions: [PullMachine.Action]) -> HTTPRequest? {
        actions.lazy.compactMap { if case .fetch(let request) = $0 { request } else { nil } }.first
    }

    func finish(_ actions: [PullMachine.Action]) -> (record: PullRecord, report: PullReport)? {
        actions.lazy.compactMap { if case .finish(let record, let report) = $0 { (record, report) } else { nil } }.first
    }

    func events(_ actions: [PullMachine.Action]) -> [String] {
        actions.compactMap {
            if case .report(let event) = $0 { "\(event)".prefix { $0 != "(" }.description } else { nil }
        }
    }

    func committed(_ actions: [PullMachine.Action]) -> PageCommit? {
        actions.lazy.compactMap { if case .commit(let commit) = $0 { commit } else { nil } }.first
    }

    @Test func aFirstPullAsksPageOneUnconditionallyForAnyFormatAndHashesIt() throws {
        let (_, actions) = machine(feed())
        let request = try #require(requested(actions))
        #expect(request.url == url && request.hashesBody && request.maxBodyBytes == PullMachine.maxDocumentBytes)
        #expect(request.headers.map(\.name) == ["Accept"] && request.headers[0].value.contains("*/*"))
        let wordpress = try #require(requested(machine(feed { $0.url = "http://h/wp-json/wp/v2/posts" }).1))
        #expect(wordpress.url.contains("page=1") && wordpress.headers[0].value.contains("application/json"))
    }

    @Test func aHeadCheckSendsTheStoredValidatorsExactly() throws {
        let request = try #require(requested(machine(pulled()).1))
        #expect(request.headers.map(\.name) == ["Accept", "If-None-Match", "If-Modified-Since"])
        #expect(request.headers[1].value == "\"e1\"" && request.headers[2].value == "Tue, 1 Jan 2030 00:00:00 GMT")
    }

    @Test func aNotModifiedHeadEndsAPullWhoseBackfillIsDone() throws {
        var (machine, _) = machine(pulled())
        let actions = machine.answered(response(304, headers: ["cache-control": "max-age=3600"]))
        #expect(events(actions) == ["notModified"])
        let (record, report) = try #require(finish(actions))
        #expect(record.outcome == .ok && report.finish == .complete)
        #expect(report.due?.reason == "max-age 60 min" && record.due == now.addingTimeInterval(3300))
        #expect(record.schedule == nil, "a 304 leaves the document's schedule as stored")
    }

    @Test func theSameBodyAgainIsNotReadAndItsNewValidatorsAreKept() throws {
        var (machine, _) = machine(pulled(bodyHash: "h1"))
        let actions = machine.answered(response(200, "{}", headers: ["etag": "\"e2\""], hash: "h1"))
        #expect(events(actions) == ["unchanged"])
        let (record, _) = try #require(finish(actions))
        #expect(record.validators?.etag == "\"e2\"" && record.validators?.lastModified == nil)
    }

    @Test func goneOnTheHeadIsThePublishersDecisionElsewhereAnError() throws {
        var (head, _) = machine(pulled())
        let (record, report) = try #require(finish(head.answered(response(410))))
        #expect(record.gone && report.gone && report.due == nil && report.error == nil)
        // The head unchanged, then page 3 of the backfill answers 410: the history stops there,
        // and the feed is fine.
        var (deep, _) = machine(pulled().with { $0.cursor.backfillDone = false })
        let page4 = try #require(requested(deep.answered(response(304))))
        #expect(page4.url == "http://h/feed?page=3" && page4.headers.count == 1, "not conditional")
        let (deepRecord, deepReport) = try #require(finish(deep.answered(response(410))))
        #expect(!deepRecord.gone && deepReport.error == nil && deepRecord.outcome == .ok)
        #expect(
            deepRecord.history?.stop == "history stops at page 3: http://h/feed?page=3 answered 410; check the feed URL"
        )
        #expect(deepRecord.history?.retryAt.map { $0.timeIntervalSince(deepRecord.at) } == PullMachine.historyRetry)
    }

    @Test func aDocumentIsReadAsItsChosenFormatOnlyAndInPartsOnlyFromAFile() throws {
        var (found, _) = machine(feed())
        guard case .decode(_, let expected, let context, let inParts)? = found.answered(response(200, "{}")).first
        else {
            Issue.record("no decode")
            return
        }
        #expect(expected == nil && !inParts && context.page == 1 && context.url == url)
        var (chosen, _) = machine(feed { ($0.format, $0.formatChosen) = (.rss, true) })
        var spilled = response(200)
        spilled.bodyFile = "/tmp/x"
        guard case .decode(_, let format, _, let parts)? = chosen.answered(spilled).first
        else {
            Issue.record("no decode")
            return
        }
        #expect(format == .rss && parts)
    }

    @Test func theFormatAndNamesFoundRideOnTheFirstCommitThenTheOutcomeOnlyIfNoCommitFollows() throws {
        var (machine, _) = machine(feed())
        let answer = response(200, "{}")
        _ = machine.answered(answer)
        var page = FeedPage(items: items("a", "b"), hasMore: false)
        page.title = "A feed"
        page.siteURL = "http://h/"
        #expect(
            machine.decoded(.jsonFeed, page, from: answer).contains { if case .lookUp = $0 { true } else { false } })
        let first = try #require(committed(machine.known([:])))
        #expect(first.found == PageCommit.Found(title: "A feed", siteURL: "http://h/", format: .jsonFeed))
        let after = machine.committed()
        #expect(events(after) == ["page"])
        let (record, report) = try #require(finish(after))
        #expect(record.found == nil, "written with the page already")
        #expect(report.newItems == 2 && record.outcome == .ok)
    }

    @Test func wordPressPageOneAskedWithoutItsParametersIsAskedAgainWithThem() throws {
        var (machine, _) = machine(feed { $0.url = "http://h/blog" })
        let answer = response(200, "[]", at: "http://h/blog")
        _ = machine.answered(answer)
        let again = machine.decoded(.wordpress, FeedPage(items: items("a"), hasMore: true), from: answer)
        let request = try #require(requested(again))
        #expect(request.url.contains("page=1") && request.url.contains("per_page=100"))
        #expect(request.headers[0].value == "application/json")
        // Asked right, a format found goes on with the page.
        var (json, _) = self.machine(feed())
        _ = json.answered(answer)
        #expect(requested(json.decoded(.pagedJSON, FeedPage(items: items("a")), from: answer)) == nil)
    }

    @Test func aPagePastTheEndEndsTheWalkAndARefusedSavedLinkRestartsIt() throws {
        var (wordpress, _) = machine(
            feed {
                $0.format = .wordpress
                $0.cursor.backfillPage = 3
            })
        _ = wordpress.answered(response(304))  // the head check's answer
        let past = wordpress.answered(response(400, "{\"code\":\"rest_post_invalid_page_number\"}"))
        #expect(past.contains { if case .lookUp(let keys) = $0 { keys.isEmpty } else { false } })

        var (linked, _) = machine(
            feed {
                $0.format = .rss
                $0.cursor.backfillPage = 5
                $0.cursor.backfillURL = "http://h/feed?before=9"
            })
        _ = linked.answered(response(304))
        let refused = linked.answered(response(404))
        #expect(events(refused) == ["linkRefused"])
        #expect(requested(refused)?.url == url, "the walk starts again from the head")
    }

    @Test func anyOtherStatusIsADataErrorThatBacksOff() throws {
        var (machine, _) = machine(pulled())
        let (record, report) = try #require(finish(machine.answered(response(404))))
        #expect(
            report.error?.kind == .data && report.error?.message == "\(url)?page=1 answered 404; check the feed URL")
        #expect(record.failures == 1 && record.outcome == .data && report.due?.reason == "1 failure, waits 15 min")
    }

    @Test func anUnusableDocumentSaysWhetherStoredItemsAreKept() throws {
        var (first, _) = machine(feed())
        _ = first.answered(response(200))
        let firstError = try #require(finish(first.unusable(FeedError("not JSON"))))
        #expect(firstError.report.error?.message == "\(url) sent an unusable page: not JSON")
        var (later, _) = machine(feed { $0.cursor.backfillPage = 2 })
        _ = later.answered(response(200))
        let laterError = try #require(finish(later.unusable(FeedError("not JSON"))))
        #expect(laterError.report.error?.message.hasSuffix("; the items stored before are kept") == true)
    }

    @Test func aMalformedDocumentIsSaidAndANextLinkToAnotherSchemeEndsTheWalk() throws {
        var (machine, _) = machine(feed())
        let answer = response(200)
        _ = machine.answered(answer)
        var page = FeedPage(items: items("a"), hasMore: true, next: "file:///etc/passwd")
        page.malformed = "line 3, column 1: unexpected end"
        let actions = machine.decoded(.rss, page, from: answer)
        #expect(events(actions) == ["malformed"])
        let commit = try #require(committed(machine.known([:])))
        #expect(commit.cursor.backfillDone && commit.cursor.backfillNote?.contains("is not followed") == true)
        let (record, _) = try #require(finish(machine.committed()))
        #expect(record.malformed == "\(url): line 3, column 1: unexpected end")
    }

    @Test func aPermanentRedirectOfTheFeedsOwnURLIsRememberedIfWeWouldFetchIt() throws {
        for (target, kept) in [("http://h/moved", "http://h/moved"), ("ftp://h/moved", nil)] {
            var (machine, _) = machine(pulled(.rss))  // an RSS feed's page 1 is its own URL
            let answer = response(304, redirects: [HTTPRedirect(status: 301, url: target)])
            let (record, _) = try #require(finish(machine.answered(answer)))
            #expect(record.askedFeedURL && record.redirect == kept)
        }
    }

    @Test func theHeadDocumentsScheduleIsKept() throws {
        var (machine, _) = machine(feed())
        let answer = response(200)
        _ = machine.answered(answer)
        var page = FeedPage(items: items("a"), hasMore: false)
        page.schedule = FeedSchedule(ttlMinutes: 120)
        _ = machine.decoded(.rss, page, from: answer)
        _ = machine.known([:])
        let (record, report) = try #require(finish(machine.committed()))
        #expect(record.schedule?.ttlMinutes == 120 && report.due?.reason == "ttl 2 h")
    }

    @Test func aSpentPageBudgetIsDueAtOnce() throws {
        var (machine, _) = machine(feed(), maxPages: 1)
        let answer = response(200)
        _ = machine.answered(answer)
        _ = machine.decoded(.pagedJSON, FeedPage(items: items("a"), hasMore: true), from: answer)
        _ = machine.known([:])
        let (record, report) = try #require(finish(machine.committed()))
        #expect(report.finish == .budgetSpent && record.due == now)
    }

    /// How each failure leaves the feed: (failure, failures before, unanswered before) → the row.
    @Test(arguments: [
        ("no answer", 2, 1, 2, 2, 0.0, true),
        ("no answer, 4th", 0, 3, 0, 4, 675, false),
        ("answered", 1, 3, 2, 0, 1500, false),
        ("429", 1, 2, 1, 0, 675, false),
        ("local", 1, 2, 1, 2, 0, false),
        ("interrupted", 1, 2, 1, 2, 0, true),
    ])
    func aFailureLeavesTheFeedAsTheScheduleSays(
        kind: String, failures: Int, unanswered: Int, failuresAfter: Int, unansweredAfter: Int, wait: Double,
        savedNextPull: Bool
    ) throws {
        var (machine, _) = machine(
            pulled().with {
                $0.failures = failures
                $0.unanswered = unanswered
            })
        var failure = PullFailure(SyncError(.transient, "\(url): it failed, 5 attempts"))
        switch kind {
        case "no answer", "no answer, 4th": (failure.unanswered, failure.savesPlace) = (true, true)
        case "429": failure.status = 429
        case "local": failure = PullFailure(SyncError(.local, "disk full"))
        case "interrupted": failure = .interrupted
        default: failure.savesPlace = true
        }
        let (record, report) = try #require(finish(machine.failed(failure)))
        #expect(record.failures == failuresAfter && record.unanswered == unansweredAfter, "\(kind)")
        #expect(record.due == now.addingTimeInterval(wait), "\(kind): \(String(describing: report.due))")
        #expect(report.unanswered == kind.hasPrefix("no answer"))
        let promises = report.error?.message.hasSuffix("the place is saved, the next pull continues from it") == true
        #expect(promises == savedNextPull, "\(kind): \(report.error?.message ?? "")")
    }
}

extension Feed {
    func with(_ change: (inout Feed) -> Void) -> Feed {
        var feed = self
        change(&feed)
        return feed
    }
}

/// How a run's feeds read the documents they hold in memory: in turns (one `WorkGate` as wide as
/// the machine has cores: at most its width at once, every one read), each on a thread of its own
/// below the pull's priority, so the store's writer comes first.
@Suite struct DocumentReadingTests {
    struct Counts {
        var now = 0
        var most = 0
        var finished: [Int] = []
    }

    final class Counter: Sendable {
        let counts = Mutex(Counts())
    }

    @Test(arguments: [1, 2]) func atMostItsWidthRunAtOnceAndEveryOneRuns(width: Int) async {
        let gate = WorkGate(width: width)
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<6 {
                group.addTask {
                    await gate.run {
                        counter.counts.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        usleep(20_000)
                        counter.counts.withLock {
                            $0.now -= 1
                            $0.finished.append(number)
                        }
                    }
                }
            }
        }
        let result = counter.counts.withLock { $0 }
        #expect(result.most >= 1 && result.most <= width)
        #expect(result.finished.sorted() == Array(0..<6))
    }

    @Test func aDocumentIsReadBelowThePullsPriorityOnAThreadOfItsOwn() async throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let base = getpriority(which, 0)
        let reading = try await onOwnThread(niceness: FeedPuller.readingNiceness) { getpriority(which, 0) }
        #expect(reading == min(19, base + FeedPuller.readingNiceness))
        #expect(try await onOwnThread { getpriority(which, 0) } == base)
        #expect(getpriority(which, 0) == base)
    }
}
