import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation

/// One sync of one account: carries out what `AccountMachine` decides, against the account's
/// `AccountService` and the store, and records how it ended.
public struct AccountSync: Sendable {
    let store: Store
    let service: any AccountService

    public init(store: Store, service: any AccountService) {
        self.store = store
        self.service = service
    }

    /// What a sync did: articles new to the store, or why it stopped.
    public struct Report: Sendable {
        public var newItems = 0
        public var error: SyncError?
    }

    /// Pages of a walk asked for ahead of the one being committed, once the walk has had a full
    /// page: the server answers several at once (PHP's workers), and each commit overlaps the
    /// next pages' answers. Where the service cannot name the places ahead (a continuation), the
    /// next page is asked as soon as its place is known, before the page is committed. A walk
    /// that finds one page or none asks nothing ahead.
    static let readAhead = 2

    /// A page's answer, by where it is ("since place").
    struct PageAnswer: Sendable {
        let key: String
        let result: Result<AccountPage, SyncError>
    }

    /// The account's service through `client`, with its password and session from the data home;
    /// a new session is kept there.
    public static func service(_ account: Account, home: DataHome, client: HTTPClient) throws(SyncError)
        -> any AccountService
    {
        let path = AccountSecrets.path(in: home, account: account.name)
        let secrets = try AccountSecrets.read(from: path)
        let keep: @Sendable (AccountSecrets) -> Void = { secrets in try? secrets.write(to: path) }
        return service(
            kind: account.kind, client: client, url: account.url, user: account.user, secrets: secrets, keep: keep)
    }

    /// The service of an account of `kind` (`ttrss`, `greader`); `keep` is told each new session.
    public static func service(
        kind: String, client: HTTPClient, url: String, user: String, secrets: AccountSecrets,
        keep: @escaping @Sendable (AccountSecrets) -> Void
    ) -> any AccountService {
        kind == "greader"
            ? GoogleReader(client: client, url: url, user: user, secrets: secrets, keep: keep)
            : TinyTinyRSS(client: client, url: url, user: user, secrets: secrets, keep: keep)
    }

    /// Syncs each account through `client`, one after the other: a report for each. A pull's
    /// accounts, beside its feeds (`PullCoordinator`).
    static func sync(
        _ accounts: [Account], store: Store, home: DataHome, client: HTTPClient, clock: TimeSource,
        onCommit: @escaping @Sendable () -> Void
    ) async -> [PullReport] {
        var reports: [PullReport] = []
        for account in accounts {
            var report = PullReport(url: account.url)
            do {
                let service = try service(account, home: home, client: client)
                let synced = await AccountSync(store: store, service: service).run(
                    account, now: clock.now(), onCommit: onCommit)
                report.requests = service.requests
                report.newItems = synced.newItems
                report.error = synced.error
            } catch {
                report.error = error
            }
            reports.append(report)
        }
        return reports
    }

    /// Syncs `account`; `onCommit` hears each committed page (the prefetcher plans again).
    public func run(_ account: Account, now: Date, onCommit: @Sendable () -> Void = {}) async -> Report {
        // The pages asked ahead run in this group; its end waits for any the walk did not need.
        await withTaskGroup(of: PageAnswer.self) { pages in
            var report = Report()
            var asked: Set<String> = []  // pages started, "since/skip"
            var answered: [String: Result<AccountPage, SyncError>] = [:]
            do {
                var machine = AccountMachine(
                    account: account, queued: try await store.queuedMarks(accountID: account.id),
                    catchUps: try await store.queuedCatchUps(accountID: account.id),
                    newBand: try await store.newHeadBand(accountID: account.id), now: now)
                var action = machine.next(.start)
                while true {
                    try Task.checkCancellation()
                    switch action {
                    case .catchUp(let catchUp):
                        var refused = false
                        do throws(SyncError) {
                            try await service.markAllRead(catchUp.stream, upTo: catchUp.upTo)
                        } catch {
                            guard error.kind == .data else { throw error }
                            refused = true
                        }
                        // Refused (a stream the server no longer has): its items go one by one.
                        if refused {
                            try await store.expandCatchUp(catchUp)
                        } else {
                            try await store.dropCatchUp(catchUp)
                        }
                        action = machine.next(.sent)
                    case .send(let field, let value, let marks):
                        try await service.send(field, value, ids: marks.map(\.remoteID))
                        try await store.dropQueuedMarks(marks)
                        action = machine.next(.sent)
                    case .listSubscriptions:
                        try await store.setAccountFeeds(account.id, url: account.url, try await service.subscriptions())
                        action = machine.next(.subscriptionsListed)
                    case .fetchArticles(let since, let place):
                        /// Asks the page at `place` unless it was asked already; its key.
                        func ask(_ place: String?) -> String {
                            let key = "\(since ?? "") \(place ?? "")"
                            guard asked.insert(key).inserted else { return key }
                            pages.addTask { [service] in
                                do throws(SyncError) {
                                    let page = try await service.articles(newerThan: since, from: place)
                                    return PageAnswer(key: key, result: .success(page))
                                } catch {
                                    return PageAnswer(key: key, result: .failure(error))
                                }
                            }
                            return key
                        }
                        let key = ask(place)
                        let ahead = place != nil || since == nil ? Self.readAhead : 0
                        for later in service.places(after: place, count: ahead) { _ = ask(later) }
                        while answered[key] == nil, let answer = await pages.next() {
                            answered[answer.key] = answer.result
                        }
                        guard let result = answered.removeValue(forKey: key) else { throw CancellationError() }
                        let page = try result.get()
                        // The page after it is asked while this one is committed.
                        if let next = page.next, ahead > 0 { _ = ask(next) }
                        action = machine.next(.articles(page))
                    case .commit(let articles, let band, let cursor):
                        report.newItems += try await store.commitAccountPage(
                            account, articles, band: band, cursor: cursor)
                        onCommit()
                        action = machine.next(.committed)
                    case .fetchCounters:
                        action = machine.next(.counters(try await service.counters()))
                    case .fetchIDs(let state):
                        action = machine.next(.ids(state, try await service.ids(state)))
                    case .applyState(let unread, let starred):
                        let missing = try await store.applyAccountState(
                            accountID: account.id, unread: unread, starred: starred)
                        action = machine.next(.stateApplied(missing: missing))
                    case .fetchMissing(let ids, let band, let cursor):
                        let articles = try await service.articles(ids)
                        let given = Set(articles.map(\.id))
                        report.newItems += try await store.commitAccountPage(
                            account, articles, band: band, cursor: cursor,
                            unavailable: ids.filter { !given.contains($0) })
                        onCommit()
                        action = machine.next(.missingStored)
                    case .finish(let counters, let statePassed):
                        for batch in AccountMachine.batches(try await store.queuedMarks(accountID: account.id)) {
                            try await service.send(batch.field, batch.value, ids: batch.marks.map(\.remoteID))
                            try await store.dropQueuedMarks(batch.marks)
                        }
                        try await store.recordAccountSync(
                            accountID: account.id, at: now, outcome: .ok, error: nil, counters: counters,
                            stateAt: statePassed ? now : nil)
                        return report
                    }
                }
            } catch {
                let failure: SyncError =
                    switch error {
                    case let error as SyncError: error
                    case let error as StoreError: SyncError(.local, error.message)
                    default: SyncError(.transient, "the sync was interrupted; the next pull continues it")
                    }
                report.error = failure
                try? await store.recordAccountSync(
                    accountID: account.id, at: now, outcome: failure.kind.outcome, error: failure.message,
                    counters: nil,
                    stateAt: nil)
                return report
            }
        }
    }
}
