import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncTransport
import Foundation
import Synchronization

/// The Google Reader API as FreshRSS, Miniflux, Inoreader, The Old Reader and BazQux speak it
/// (`../shared/greader/README.md` has what each answers). One way through that serves them all:
/// ids first (`stream/items/ids`, following `continuation` to its end, whatever it holds), then
/// contents in batches (`stream/items/contents`: Miniflux has no `stream/contents`); item ids in
/// the long form; `output=json` on every call; the `Auth` in the Authorization header of every
/// request and the action token `T` in every POST's body (FreshRSS reads the one, Miniflux the
/// other); one tag an `edit-tag` (FreshRSS keeps only the last of several). The `Auth` and token
/// are kept (through `keep`) and reused; a call refused with 401 logs in once more and is asked
/// again, once.
public final class GoogleReader: AccountService {
    let client: HTTPClient
    /// The API's base, without a trailing slash: its paths follow it.
    let base: String
    let user: String
    let password: String
    /// Inoreader's registered application, sent with every request.
    let app: (id: String, key: String)?
    let keep: @Sendable (AccountSecrets) -> Void
    private let state: Mutex<State>

    struct State {
        var auth: String?
        var token: String?
        var requests: [PullReport.Request] = []
    }

    /// Ids in one `stream/items/ids` page of a walk; each page's contents are committed together.
    static let idsPerPage = 1000
    /// Ids asked in one page of a listing of states: FreshRSS gives as many as asked, Miniflux at
    /// most 10 000 and The Old Reader 1 000, and the continuation goes on from there.
    static let idsPerListing = 100_000
    /// Ids in one `stream/items/contents` or `edit-tag` request.
    static let idsPerCall = 250
    /// The most pages one listing of ids reads.
    static let maxPages = 1000
    static let maxAnswerBytes = 64 << 20
    static let readingList = "user/-/state/com.google/reading-list"
    static let read = "user/-/state/com.google/read"
    static let starred = "user/-/state/com.google/starred"

    public init(
        client: HTTPClient, url: String, user: String, secrets: AccountSecrets,
        keep: @escaping @Sendable (AccountSecrets) -> Void
    ) {
        self.client = client
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.user = user
        password = secrets.password
        app = secrets.appID.flatMap { id in secrets.appKey.map { (id, $0) } }
        state = Mutex(State(auth: secrets.session, token: secrets.token))
        self.keep = keep
    }

    public var requests: [PullReport.Request] { state.withLock { $0.requests } }

    public func logIn() async throws(SyncError) {
        let response = try await send(
            "accounts/ClientLogin", named: "ClientLogin", form: [("Email", user), ("Passwd", password)], auth: nil)
        if String(decoding: response.body.prefix(256), as: UTF8.self).contains("AppId required") {
            throw SyncError(
                .denied,
                "\(host) wants a registered application beside the user: add the account with --app-id and its "
                    + "key in FEEDSYNC_APP_KEY")
        }
        guard response.status != 401, response.status != 403 else {
            throw SyncError(
                .denied, "\(host) refused the user name or password; add the account again with the right one")
        }
        guard response.status == 200, let auth = try? GoogleReaderAnswer.auth(response.body) else {
            throw SyncError(
                .data, "\(base) is not a Google Reader API (its log-in answered \(response.status)); check the URL")
        }
        state.withLock {
            $0.auth = auth
            $0.token = nil
        }
        keep(secrets(auth: auth, token: nil))
    }

    public func subscriptions() async throws(SyncError) -> [(feed: RemoteFeed, folder: String?)] {
        try await call("subscription/list", GoogleReaderAnswer.subscriptions).map { subscription in
            (
                RemoteFeed(
                    id: subscription.streamID, title: subscription.title, url: subscription.url, categoryID: nil),
                subscription.labels.first
            )
        }
    }

    /// A place is the continuation the server gave after the page before. A walk of what is
    /// newer ends at the first id not newer than `since`: streams come newest first.
    public func articles(newerThan since: String?, from place: String?) async throws(SyncError) -> AccountPage {
        var query = [("s", Self.readingList), ("n", String(Self.idsPerPage))]
        if let place { query.append(("c", place)) }
        let page = try await call("stream/items/ids", query: query, GoogleReaderAnswer.itemIDs)
        var ids = page.elements
        // A continuation that names this page again would walk it for ever.
        var next = page.continuation == place ? nil : page.continuation
        if let since, let old = ids.firstIndex(where: { !RemoteID.isNewer($0, than: since) }) {
            ids.removeSubrange(old...)
            next = nil
        }
        if ids.isEmpty, page.skipped == 0 { next = nil }
        return AccountPage(try await articles(ids), next: next)
    }

    /// The items `ids` (long form), asked in batches two at a time, in the order of `ids`.
    public func articles(_ ids: [String]) async throws(SyncError) -> [RemoteArticle] {
        let batches = ids.batches(of: Self.idsPerCall)
        var found: [String: RemoteArticle] = [:]
        for first in stride(from: 0, to: batches.count, by: 2) {
            let answers = await withTaskGroup(of: Result<[RemoteArticle], SyncError>.self) { group in
                for batch in batches[first..<min(batches.count, first + 2)] {
                    group.addTask {
                        do throws(SyncError) {
                            return .success(
                                try await self.call(
                                    "stream/items/contents", form: batch.map { ("i", $0) }, GoogleReaderAnswer.items
                                ).elements)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var answers: [Result<[RemoteArticle], SyncError>] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
            for answer in answers {
                for article in try answer.get() { found[article.id] = article }
            }
        }
        return ids.compactMap { found[$0] }
    }

    public func places(after place: String?, count: Int) -> [String] { [] }

    /// None: `unread-count` misses stars and Miniflux does not answer it; each sync lists the states.
    public func counters() async throws(SyncError) -> String? { nil }

    public func ids(_ state: RemoteState) async throws(SyncError) -> Set<String> {
        let query =
            state == .unread
            ? [("s", Self.readingList), ("xt", Self.read)] : [("s", Self.starred)]
        var ids = Set<String>()
        var place: String?
        for _ in 0..<Self.maxPages {
            var asked = query + [("n", String(Self.idsPerListing))]
            if let place { asked.append(("c", place)) }
            let page = try await call("stream/items/ids", query: asked, GoogleReaderAnswer.itemIDs)
            ids.formUnion(page.elements)
            guard let next = page.continuation, page.elements.count + page.skipped > 0, next != place else {
                return ids
            }
            place = next
        }
        // A part of the ids would mark the rest read here: none is taken.
        throw SyncError(.data, "\(host) listed more than \(Self.maxPages) pages of \(state.rawValue) ids")
    }

    public func send(_ field: RemoteState, _ value: Bool, ids: [String]) async throws(SyncError) {
        // unread true: the read tag removed; starred true: the starred tag added.
        let tag = field == .unread ? Self.read : Self.starred
        let adds = field == .unread ? !value : value
        for batch in ids.batches(of: Self.idsPerCall) {
            try await call(
                "edit-tag", form: batch.map { ("i", $0) } + [(adds ? "a" : "r", tag)], GoogleReaderAnswer.accepted)
        }
    }

    /// `ts` is compared with the items' `timestampUsec` (FreshRSS: their ids), inclusive.
    public func markAllRead(_ stream: String, upTo: Int64) async throws(SyncError) {
        try await call(
            "mark-all-as-read", form: [("s", stream), ("ts", String(upTo))], GoogleReaderAnswer.accepted)
    }

    public func subscribe(_ url: String) async throws(SyncError) -> String {
        let added = try await call("subscription/quickadd", form: [("quickadd", url)], GoogleReaderAnswer.quickadd)
        guard let stream = added.streamID else {
            throw SyncError(
                .data, "\(host) did not subscribe to \(url): \(added.error ?? "the server could not read a feed there")"
            )
        }
        return stream
    }

    public func unsubscribe(_ id: String) async throws(SyncError) {
        try await call(
            "subscription/edit", form: [("ac", "unsubscribe"), ("s", id)], GoogleReaderAnswer.accepted)
    }

    var host: String { URLComponents(string: base)?.host ?? "the server" }

    /// Asks `path` (after `reader/api/0/`) with the `Auth`, a POST of `form` and the token when
    /// `form` is given; logs in first when there is no `Auth`, and once more when refused.
    @discardableResult
    func call<T>(
        _ path: String, query: [(String, String)] = [], form: [(String, String)]? = nil,
        _ read: (Data) throws(RemoteRefusal) -> T
    ) async throws(SyncError) -> T {
        var loggedIn = false
        if auth == nil {
            try await logIn()
            loggedIn = true
        }
        let named = ([path] + query.filter { $0.0 != "n" }.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
        let url = "reader/api/0/" + path + "?" + Self.encoded(query + [("output", "json")])
        while true {
            // A POST carries the token; none given (the Auth refused) is a refusal too.
            var response: HTTPResponse?
            if let form {
                if let token = try await token() {
                    response = try await send(url, named: named, form: form + [("T", token)], auth: auth)
                }
            } else {
                response = try await send(url, named: named, form: nil, auth: auth)
            }
            guard let response, response.status != 401 else {
                guard !loggedIn else {
                    throw SyncError(.denied, "\(host) refused the account's log-in; add the account again")
                }
                try await logIn()
                loggedIn = true
                continue
            }
            guard response.status == 200 else {
                throw SyncError(
                    (500...599).contains(response.status) ? .transient : .data,
                    "\(host) answered \(response.status) to \(path); check the account's URL (feedsync account list)")
            }
            do {
                return try read(response.body)
            } catch {
                throw SyncError(.data, "\(host) gave an unusable answer to \(path): \(error.description)")
            }
        }
    }

    /// The `Auth` the last log-in gave (or the one it started with).
    var auth: String? { state.withLock { $0.auth } }

    /// The action token, asked once and kept; nil when the `Auth` was refused (a log-in is due).
    func token() async throws(SyncError) -> String? {
        if let token = state.withLock({ $0.token }) { return token }
        let response = try await send("reader/api/0/token?output=json", named: "token", form: nil, auth: auth)
        if response.status == 401 { return nil }
        guard response.status == 200, let token = try? GoogleReaderAnswer.actionToken(response.body) else {
            throw SyncError(.data, "\(host) gave no action token (status \(response.status))")
        }
        let auth = state.withLock {
            $0.token = token
            return $0.auth
        }
        keep(secrets(auth: auth, token: token))
        return token
    }

    func secrets(auth: String?, token: String?) -> AccountSecrets {
        AccountSecrets(password: password, session: auth, token: token, appID: app?.id, appKey: app?.key)
    }

    /// One request, logged by `named` (never by a credential); whatever its status.
    func send(_ path: String, named: String, form: [(String, String)]?, auth: String?) async throws(SyncError)
        -> HTTPResponse
    {
        var headers = [("Accept", "application/json")]
        if let auth { headers.append(("Authorization", "GoogleLogin auth=" + auth)) }
        if let app { headers += [("AppId", app.id), ("AppKey", app.key)] }
        if form != nil { headers.append(("Content-Type", "application/x-www-form-urlencoded")) }
        return try await client.ask(
            HTTPRequest(
                url: base + "/" + path, headers: headers, maxBodyBytes: Self.maxAnswerBytes,
                body: form.map { Data(Self.encoded($0).utf8) }),
            named: named, host: host, log: { request in state.withLock { $0.requests.append(request) } })
    }

    /// `pairs` as a query or form body: every byte but letters, digits and `-._~` percent-encoded.
    static func encoded(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
