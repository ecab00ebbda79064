import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncTransport
import Foundation
import Synchronization

/// Tiny Tiny RSS's JSON API (level 14 and later): POSTs of a JSON body to `.../api/`, a session id
/// from `login` in each, bound by the server to the User-Agent (feedsync's, the same in every
/// request). One session is kept (in the account's secret file, through `keep`) and reused; a call
/// answered `NOT_LOGGED_IN` logs in once more and is asked again, once.
public final class TinyTinyRSS: AccountService {
    let client: HTTPClient
    let url: String
    let user: String
    let password: String
    /// Told each new session, to keep it for the next run.
    let keep: @Sendable (AccountSecrets) -> Void
    private let state: Mutex<State>

    struct State {
        var session: String?
        /// Every request made, for the pull's report (`pull --json`).
        var requests: [PullReport.Request] = []
    }

    /// The requests made so far, each named by its operation.
    public var requests: [PullReport.Request] { state.withLock { $0.requests } }

    /// Articles in one `getHeadlines` answer: a shorter answer is the last.
    public let pageSize = 200
    /// Ids in one `updateArticle` call.
    static let idsPerCall = 200
    /// The most pages one listing of ids reads (200 000 articles).
    static let maxPages = 1000
    /// The most bytes of one answer (200 articles with their content).
    static let maxAnswerBytes = 64 << 20

    public init(
        client: HTTPClient, url: String, user: String, secrets: AccountSecrets,
        keep: @escaping @Sendable (AccountSecrets) -> Void
    ) {
        self.client = client
        self.url = url
        self.user = user
        password = secrets.password
        state = Mutex(State(session: secrets.session))
        self.keep = keep
    }

    public func logIn() async throws(SyncError) {
        let answer = try await post(["op": "login", "user": user, "password": password])
        do {
            let id = try TinyTinyRSSAnswer.session(answer)
            state.withLock { $0.session = id }
            keep(AccountSecrets(password: password, session: id))
        } catch {
            throw Self.failure(error, of: "log in", account: url)
        }
    }

    public func subscriptions() async throws(SyncError) -> [(feed: RemoteFeed, folder: String?)] {
        let names = try await call("getCategories", [:], TinyTinyRSSAnswer.categories)
        let feeds = try await call("getFeeds", ["cat_id": -3], TinyTinyRSSAnswer.feeds)
        return feeds.map { feed in (feed, feed.categoryID.flatMap { names[$0] }) }
    }

    /// A place is the count of articles before the page (the API's `skip`).
    public func articles(newerThan since: String?, from place: String?) async throws(SyncError) -> AccountPage {
        let skip = place.flatMap { Int($0) } ?? 0
        let (articles, skipped) = try await call(
            "getHeadlines",
            [
                "feed_id": -4, "view_mode": "all_articles", "since_id": since.flatMap { Int64($0) } ?? 0, "skip": skip,
                "limit": pageSize,
                "show_content": true, "include_attachments": true,
                // As the feed wrote it (the server's sanitiser drops ports from URLs): stored as any
                // feed's content is, and made safe where it is shown (SafeHTML).
                "sanitize": false,
            ], TinyTinyRSSAnswer.articles)
        let entries = articles.count + skipped
        return AccountPage(articles, next: entries < pageSize ? nil : String(skip + entries))
    }

    public func articles(_ ids: [String]) async throws(SyncError) -> [RemoteArticle] {
        var articles: [RemoteArticle] = []
        for batch in ids.filter({ Int64($0) != nil }).batches(of: Self.idsPerCall) {
            articles += try await call(
                "getArticle", ["article_id": batch.joined(separator: ","), "sanitize": false],
                { data throws(RemoteRefusal) in try TinyTinyRSSAnswer.articles(data).articles })
        }
        return articles
    }

    public func places(after place: String?, count: Int) -> [String] {
        let skip = place.flatMap { Int($0) } ?? 0
        return (0..<count).map { String(skip + ($0 + 1) * pageSize) }
    }

    public func counters() async throws(SyncError) -> String? {
        try await call("getCounters", ["output_mode": "fl"], TinyTinyRSSAnswer.counters)
    }

    public func ids(_ state: RemoteState) async throws(SyncError) -> Set<String> {
        var ids = Set<String>()
        // Two pages at a time: the server answers them at once.
        for first in stride(from: 0, to: Self.maxPages, by: 2) {
            let pages = await withTaskGroup(of: (Int, Result<TinyTinyRSSAnswer.HeadlineIDs, SyncError>).self) { group in
                for page in first..<first + 2 {
                    group.addTask {
                        do throws(SyncError) {
                            return (page, .success(try await self.idsPage(state, page)))
                        } catch {
                            return (page, .failure(error))
                        }
                    }
                }
                var pages: [(Int, Result<TinyTinyRSSAnswer.HeadlineIDs, SyncError>)] = []
                for await page in group { pages.append(page) }
                return pages.sorted { $0.0 < $1.0 }.map(\.1)
            }
            for page in pages {
                let page = try page.get()
                ids.formUnion(page.ids)
                if page.entries < pageSize { return ids }
            }
        }
        return ids
    }

    /// One page of the ids of the articles in `state` (their headlines, without content).
    func idsPage(_ state: RemoteState, _ page: Int) async throws(SyncError) -> TinyTinyRSSAnswer.HeadlineIDs {
        try await call(
            "getHeadlines",
            [
                "feed_id": state == .starred ? -1 : -4, "view_mode": state == .unread ? "unread" : "all_articles",
                "skip": page * pageSize, "limit": pageSize, "show_content": false, "excerpt_length": 0,
            ], TinyTinyRSSAnswer.articleIDs)
    }

    public func send(_ field: RemoteState, _ value: Bool, ids: [String]) async throws(SyncError) {
        for batch in ids.batches(of: Self.idsPerCall) {
            try await call(
                "updateArticle",
                [
                    "article_ids": batch.joined(separator: ","),
                    // field 2 is unread, 0 starred; mode 1 sets, 0 clears.
                    "field": field == .unread ? 2 : 0, "mode": value ? 1 : 0,
                ], TinyTinyRSSAnswer.accepted)
        }
    }

    /// Never asked: `catchupFeed` marks what arrived after too, so `Store.markAll` queues a mark
    /// an article for Tiny Tiny RSS, and no catch-up.
    public func markAllRead(_ stream: String, upTo: Int64) async throws(SyncError) {
        throw SyncError(.local, "Tiny Tiny RSS marks no stream read up to a time")
    }

    public func subscribe(_ feedURL: String) async throws(SyncError) -> String {
        let (code, id) = try await call(
            "subscribeToFeed", ["feed_url": feedURL, "category_id": 0], TinyTinyRSSAnswer.subscription)
        guard let id, code == 0 || code == 1 else {
            let reason =
                switch code {
                case 2: "it is not a URL the server accepts"
                case 3: "the page there names no feed"
                case 4: "the page there names several feeds; give one of them"
                case 5: "the server could not fetch it"
                default: "the server could not read a feed there"
                }
            throw SyncError(.data, "\(Self.host(url)) did not subscribe to \(feedURL): \(reason)")
        }
        // Fetched now, so the next sync brings its articles.
        try await call("updateFeed", ["feed_id": id], TinyTinyRSSAnswer.accepted)
        return String(id)
    }

    public func unsubscribe(_ id: String) async throws(SyncError) {
        guard let number = Int64(id) else { return }
        try await call("unsubscribeFeed", ["feed_id": number], TinyTinyRSSAnswer.accepted)
    }

    /// Calls `op` with the session, logging in first when there is none or the server forgot it.
    func call<T>(
        _ op: String, _ parameters: [String: any Sendable], _ read: (Data) throws(RemoteRefusal) -> T
    ) async throws(SyncError) -> T {
        var loggedIn = false
        if state.withLock({ $0.session }) == nil {
            try await logIn()
            loggedIn = true
        }
        while true {
            var body = parameters
            body["op"] = op
            body["sid"] = state.withLock { $0.session }
            let answer = try await post(body)
            do {
                return try read(answer)
            } catch {
                guard error.code == "NOT_LOGGED_IN", !loggedIn else { throw Self.failure(error, of: op, account: url) }
                try await logIn()
                loggedIn = true
            }
        }
    }

    func post(_ body: [String: any Sendable]) async throws(SyncError) -> Data {
        guard let data = try? JSONSerialization.data(withJSONObject: body) else {
            throw SyncError(.usage, "cannot make a request for \(url)")
        }
        // Named by its operation and where it pages, never by its credentials.
        let place = ["view_mode", "feed_id", "since_id", "skip"].compactMap { key in body[key].map { "\(key)=\($0)" } }
        let named = ([body["op"] as? String ?? ""] + place).joined(separator: " ")
        let response = try await client.ask(
            HTTPRequest(
                url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                maxBodyBytes: Self.maxAnswerBytes, body: data),
            named: named, host: Self.host(url), log: { request in state.withLock { $0.requests.append(request) } })
        guard response.status == 200 else {
            throw SyncError(
                (500...599).contains(response.status) ? .transient : .data,
                "\(Self.host(url)) answered \(response.status) to the API; check the account's URL (feedsync account list)"
            )
        }
        return response.body
    }

    static func host(_ url: String) -> String {
        URLComponents(string: url)?.host ?? "the server"
    }

    /// The sentence for a refusal: the password, API access, or an answer that is not the API's.
    static func failure(_ refusal: RemoteRefusal, of op: String, account url: String) -> SyncError {
        switch refusal.code {
        case "LOGIN_ERROR":
            SyncError(
                .denied, "\(host(url)) refused the user name or password; add the account again with the right one")
        case "API_DISABLED":
            SyncError(
                .denied,
                "\(host(url)) has API access turned off for this user: turn on \"Enable API\" "
                    + "(ENABLE_API_ACCESS) in Tiny Tiny RSS's Preferences, then try again")
        case "NOT_LOGGED_IN":
            SyncError(.denied, "\(host(url)) did not keep the session it had just given; try again later")
        default:
            SyncError(.data, "\(host(url)) gave an unusable answer to \(op): \(refusal.description)")
        }
    }
}
