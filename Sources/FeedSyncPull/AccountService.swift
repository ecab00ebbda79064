import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncTransport
import Foundation

/// What an aggregator offers a reader that syncs with it: everything specific to one protocol
/// (Tiny Tiny RSS's JSON API, `TinyTinyRSS`; the Google Reader API of FreshRSS, Miniflux,
/// Inoreader, The Old Reader and BazQux, `GoogleReader`). `AccountSync` drives it. Ids are the
/// server's, as text; a place is where a walk's page starts, the service's own (a count of
/// articles, a continuation), kept between runs.
public protocol AccountService: Sendable {
    /// Logs in (again), keeping the session for the calls that follow.
    func logIn() async throws(SyncError)
    /// Every subscription, with its category's name as its folder.
    func subscriptions() async throws(SyncError) -> [(feed: RemoteFeed, folder: String?)]
    /// A page of the articles newer than `since` (nil: every article), newest first, starting at
    /// `place` (nil: the first page).
    func articles(newerThan since: String?, from place: String?) async throws(SyncError) -> AccountPage
    /// The articles `ids`, newest first (the service asks them in batches; an id the server no
    /// longer has is left out).
    func articles(_ ids: [String]) async throws(SyncError) -> [RemoteArticle]
    /// The places of the `count` pages after the one at `place`, where they can be known before
    /// its answer (pages asked ahead); none where the server names each next page.
    func places(after place: String?, count: Int) -> [String]
    /// Figures that move whenever articles are read or starred anywhere (compared as text); nil
    /// where the server has none, and every sync passes over the states.
    func counters() async throws(SyncError) -> String?
    /// The ids of every unread article, or of every starred one.
    func ids(_ state: RemoteState) async throws(SyncError) -> Set<String>
    /// Sets `field` to `value` on the articles `ids` (the service splits long lists).
    func send(_ field: RemoteState, _ value: Bool, ids: [String]) async throws(SyncError)
    /// Marks the stream `stream` read up to the item time `upTo` (microseconds), nothing later.
    func markAllRead(_ stream: String, upTo: Int64) async throws(SyncError)
    /// Subscribes to the feed at `url` on the server and has the server fetch it now; the
    /// server's id for it.
    func subscribe(_ url: String) async throws(SyncError) -> String
    /// Unsubscribes from the server's feed `id`.
    func unsubscribe(_ id: String) async throws(SyncError)
    /// The requests made so far, each named by what it asked (never by a credential).
    var requests: [PullReport.Request] { get }
}

extension HTTPClient {
    /// An account service's request: the answer whatever its status, told to `log` as a request
    /// named `named` (never by a credential); no answer is a transient error naming `host`.
    func ask(
        _ request: HTTPRequest, named: String, host: String, log: (PullReport.Request) -> Void
    ) async throws(SyncError) -> HTTPResponse {
        do {
            let response = try await get(request)
            log(PullReport.Request(url: named, status: response.status, bytes: response.bodyBytes, failure: nil))
            return response
        } catch {
            log(PullReport.Request(url: named, status: nil, bytes: 0, failure: error.detail))
            throw SyncError(.transient, "\(host) did not answer (\(error.detail)); the account syncs at the next pull")
        }
    }
}

extension Array {
    /// The array in consecutive slices of at most `size` elements: ids a request.
    func batches(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min(count, $0 + size)] }
    }
}

/// A page of a walk through an account's articles: what it held, and where the next starts (nil:
/// this was the last).
public struct AccountPage: Sendable, Equatable {
    public var articles: [RemoteArticle]
    public var next: String?

    public init(_ articles: [RemoteArticle], next: String?) {
        self.articles = articles
        self.next = next
    }
}

public enum RemoteState: String, Sendable {
    case unread, starred
}

/// An account's password and session, kept in the data home's `accounts/` folder (mode 0700), one
/// file a account (mode 0600), never in the database, an argument or output. Files are opened
/// without following links and replaced by rename, so a link planted at the name is neither
/// followed nor written through.
public struct AccountSecrets: Sendable, Equatable {
    public var password: String
    /// Tiny Tiny RSS's session id, a Google Reader server's `Auth`.
    public var session: String?
    /// A Google Reader server's action token (`T=`), as secret as the `Auth` it is made from.
    public var token: String?
    /// The application a server wants named beside the user (Inoreader's `AppId` and `AppKey`).
    public var appID: String?
    public var appKey: String?

    public init(
        password: String, session: String? = nil, token: String? = nil, appID: String? = nil, appKey: String? = nil
    ) {
        self.password = password
        self.session = session
        self.token = token
        self.appID = appID
        self.appKey = appKey
    }

    static let maxBytes = 64 << 10

    public static func path(in home: DataHome, account: String) -> String {
        home.dataDirectory + "/accounts/" + account + ".secret"
    }

    public static func read(from path: String) throws(SyncError) -> AccountSecrets {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw SyncError(
                .local, "cannot read the account's password file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= maxBytes else {
            throw SyncError(.local, "the account's password file \(path) is not a small regular file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        guard Glibc.read(fd, &bytes, bytes.count) == bytes.count,
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String],
            let password = object["password"]
        else { throw SyncError(.local, "the account's password file \(path) cannot be read; add the account again") }
        return AccountSecrets(
            password: password, session: object["session"], token: object["token"], appID: object["app_id"],
            appKey: object["app_key"])
    }

    public func write(to path: String) throws(SyncError) {
        let folder = (path as NSString).deletingLastPathComponent
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw SyncError(.local, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        var object = ["password": password]
        object["session"] = session
        object["token"] = token
        object["app_id"] = appID
        object["app_key"] = appKey
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            throw SyncError(.local, "cannot write the account's password file")
        }
        let temporary = path + ".\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SyncError(.local, "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        let written = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw SyncError(.local, "cannot write \(path): \(reason)")
        }
    }

    public static func remove(at path: String) {
        unlink(path)
    }
}
