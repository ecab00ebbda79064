import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPull
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

// The use cases of `account`: an account on an aggregator, synced by every pull beside the local
// feeds (`pull` in FeedSync.swift runs `syncAccounts`).

extension FeedSync {
    /// The account kinds feedsync speaks, as `account add` takes them: Tiny Tiny RSS, and the
    /// Google Reader API (FreshRSS, Miniflux, Inoreader, The Old Reader, BazQux).
    public static let accountKinds = ["ttrss", "greader"]

    /// The API URL of a server of `kind` at `url`: Tiny Tiny RSS's `api/` folder (given or not),
    /// a Google Reader API's base as given (FreshRSS's `…/api/greader.php`, Miniflux's `/`); or
    /// why it is no URL a request can be made for.
    public static func apiURL(_ url: String, kind: String = "ttrss") -> Result<String, SyncError> {
        if let problem = HTTPRequest.problem(with: url) {
            return .failure(SyncError(.usage, "\(String(reflecting: url)) cannot be used: \(problem)"))
        }
        guard var components = URLComponents(string: url), components.query == nil, components.fragment == nil else {
            return .failure(SyncError(.usage, "give the server's address without a query or fragment"))
        }
        var path = components.path
        if kind == "ttrss" {
            if !path.hasSuffix("/") { path += "/" }
            if !path.hasSuffix("/api/") { path += "api/" }
        }
        components.path = path
        return components.string.map { .success($0) } ?? .failure(SyncError(.usage, "\(url) is not a usable URL"))
    }

    /// Logs in to the server of `kind` at `url` (its API URL) as `user`; the secrets to keep
    /// (the password, the session it gives). Wrong password or API access off: `.denied`; a URL
    /// that is not the API: `.data`. Made before the data home is opened, so a refused log-in
    /// leaves nothing behind.
    public static func logIn(
        kind: String, url: String, user: String, password: String, app: (id: String, key: String)? = nil
    ) async throws(SyncError) -> AccountSecrets {
        let client = HTTPClient(configuration: PullSettings().transport(maxConnections: 1))
        defer { client.shutdown() }
        let given = AccountSecrets(password: password, appID: app?.id, appKey: app?.key)
        let kept = Mutex(given)
        let service = AccountSync.service(
            kind: kind, client: client, url: url, user: user, secrets: given,
            keep: { secrets in kept.withLock { $0 = secrets } })
        try await service.logIn()
        return kept.withLock { $0 }
    }

    /// The registered application a server wants beside the user (Inoreader's): `id` as given
    /// (`--app-id`), its key from `FEEDSYNC_APP_KEY`; nil without an id; or why they cannot be used.
    public static func application(_ id: String?, kind: String) -> Result<(id: String, key: String)?, SyncError> {
        guard let id else { return .success(nil) }
        guard kind == "greader" else { return .failure(SyncError(.usage, "--app-id is for a greader account")) }
        guard (1...256).contains(id.count), id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return .failure(SyncError(.usage, "--app-id must be at most 256 printable characters"))
        }
        guard let key = ProcessInfo.processInfo.environment["FEEDSYNC_APP_KEY"], !key.isEmpty, key.utf8.count <= 1024
        else { return .failure(SyncError(.usage, "with --app-id, give the application's key in FEEDSYNC_APP_KEY")) }
        return .success((id, key))
    }

    /// The name an account gets when none is given: user@host.
    public static func accountName(user: String, url: String) -> String {
        "\(user)@\(URLComponents(string: url)?.host ?? "server")"
    }

    /// Keeps an account whose log-in (`logIn`) succeeded: its row, and its password and session
    /// in the data home (mode 0600).
    public func addAccount(
        kind: String, url: String, user: String, name: String, secrets: AccountSecrets
    ) async throws(SyncError) -> Account {
        precondition(lock != nil, "a running pull writes the accounts: open for .writing")
        guard (1...64).contains(name.count), !name.contains("/"), !name.hasPrefix("."),
            name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { throw SyncError(.usage, "an account's name is 1 to 64 characters, with no / and no leading dot") }
        let path = AccountSecrets.path(in: home, account: name)
        let taken = SyncError(
            .usage, "an account named \(String(reflecting: name)) exists; remove it first or give --name")
        do {
            guard try await store.accounts().first(where: { $0.name == name }) == nil else { throw taken }
            try secrets.write(to: path)
            guard let account = try await store.addAccount(name: name, kind: kind, url: url, user: user) else {
                throw taken
            }
            return account
        } catch let error as StoreError {
            AccountSecrets.remove(at: path)
            throw SyncError(.local, error.message)
        } catch {
            throw error as! SyncError
        }
    }

    public func accounts() async throws(StoreError) -> [Account] { try await store.accounts() }

    /// The marks made on the account's items that its server has not accepted yet.
    public func queuedMarks(_ account: Account) async throws(StoreError) -> [QueuedMark] {
        try await store.queuedMarks(accountID: account.id)
    }

    /// Removes the account: its feeds, their items, the pictures only they use, its password file.
    /// The server is not told: its subscriptions stay there.
    public func removeAccount(_ account: Account) async throws(StoreError) {
        precondition(lock != nil, "a running pull writes the accounts: open for .writing")
        try await pictures.removing { () async throws(StoreError) in try await store.removeAccount(id: account.id) }
        AccountSecrets.remove(at: AccountSecrets.path(in: home, account: account.name))
    }

    /// The account named `name`, else a usage error that says how to list them.
    public func account(named name: String) async throws(SyncError) -> Account {
        let accounts: [Account]
        do { accounts = try await store.accounts() } catch { throw SyncError(.local, error.message) }
        guard let account = accounts.first(where: { $0.name == name }) else {
            throw SyncError(.usage, "no account is named \(String(reflecting: name)); feedsync account list lists them")
        }
        return account
    }

    /// The account's service through a client of its own, for a call outside a pull.
    func withService<T>(
        _ account: Account, _ body: (any AccountService) async throws(SyncError) -> T
    ) async throws(SyncError) -> T {
        let client = HTTPClient(configuration: PullSettings().transport(maxConnections: 1))
        defer { client.shutdown() }
        return try await body(try AccountSync.service(account, home: home, client: client))
    }

    /// Subscribes the account to the feed at `url` on its server, has the server fetch it, then
    /// syncs the account, so its items are here as `add`'s are. The feed's number here.
    public func subscribe(_ url: String, account: Account) async throws(SyncError) -> Feed {
        try await subscribe([url], account: account)[0].get()
    }

    /// Subscribes the account to each feed of `urls` on its server in turn (each fetched there
    /// now), then syncs the account once, so their items are here as `add`'s are. For each URL
    /// tried, its feed here or why not; the URLs after one whose failure would be every one's
    /// (the server gone, the account refused) are not tried, and the result is shorter.
    public func subscribe(_ urls: [String], account: Account) async throws(SyncError) -> [Result<Feed, SyncError>] {
        precondition(lock != nil, "a running pull writes the accounts: open for .writing")
        var subscribed: [Result<String, SyncError>] = []
        let syncError = try await withService(account) { service throws(SyncError) -> SyncError? in
            for url in urls {
                do throws(SyncError) {
                    if let problem = HTTPRequest.problem(with: url) {
                        throw SyncError(.usage, "\(String(reflecting: url)) cannot be used: \(problem)")
                    }
                    subscribed.append(.success(try await service.subscribe(url)))
                } catch {
                    subscribed.append(.failure(error))
                    if error.isTheServers { break }
                }
            }
            guard subscribed.contains(where: { (try? $0.get()) != nil }) else { return nil }
            // A full pass, whenever the last was: it lists the feeds, the new ones among them.
            var due = account
            due.stateAt = nil
            return await AccountSync(store: store, service: service).run(due, now: clock.now()).error
        }
        let feeds: [Feed]
        do { feeds = try await store.feeds().filter { $0.accountID == account.id } } catch {
            throw SyncError(.local, error.message)
        }
        return zip(urls, subscribed).map { url, outcome in
            outcome.flatMap { id in
                if let syncError { return .failure(syncError) }
                guard let feed = feeds.first(where: { $0.remoteID == id }) else {
                    return .failure(SyncError(.data, "the server subscribed to \(url) but does not list it"))
                }
                return .success(feed)
            }
        }
    }

    /// Unsubscribes `feed`: an account's on its server first, then here as `remove` does; a local
    /// one here only.
    public func unsubscribe(_ feed: Feed) async throws(SyncError) {
        guard let accountID = feed.accountID, let remoteID = feed.remoteID else {
            do { return try await remove(feed) } catch {
                throw SyncError(error.kind == .locked ? .transient : .local, error.message)
            }
        }
        let account: Account
        do {
            guard let found = try await store.accounts().first(where: { $0.id == accountID }) else { return }
            account = found
        } catch { throw SyncError(.local, error.message) }
        try await withService(account) { service throws(SyncError) in try await service.unsubscribe(remoteID) }
        do { try await remove(feed) } catch { throw SyncError(.local, error.message) }
    }

}
