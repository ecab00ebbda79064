import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncTransport
import Foundation

/// What an aggregator offers a reader that syncs with it: everything specific to one protocol
/// (Tiny Tiny RSS's JSON API now; the Google Reader API of FreshRSS and Miniflux would be one more
/// type beside `TinyTinyRSS`). `AccountSync` drives it.
public protocol AccountService: Sendable {
    /// Articles one `articles` answer holds at most: a shorter answer is the last.
    var pageSize: Int { get }
    /// Logs in (again), keeping the session for the calls that follow.
    func logIn() async throws(SyncError)
    /// Every subscription, with its category's name as its folder.
    func subscriptions() async throws(SyncError) -> [(feed: RemoteFeed, folder: String?)]
    /// A page of articles above id `since` (0: all), newest first, after the first `skip`.
    func articles(above since: Int64, skip: Int) async throws(SyncError) -> [RemoteArticle]
    /// Figures that move whenever articles are read or starred anywhere (compared as text).
    func counters() async throws(SyncError) -> String
    /// The ids of every unread article, or of every starred one.
    func ids(_ state: RemoteState) async throws(SyncError) -> Set<Int64>
    /// Sets `field` to `value` on the articles `ids` (the service splits long lists).
    func send(_ field: RemoteState, _ value: Bool, ids: [Int64]) async throws(SyncError)
    /// Subscribes to the feed at `url` on the server and has the server fetch it now; the
    /// server's id for it.
    func subscribe(_ url: String) async throws(SyncError) -> Int64
    /// Unsubscribes from the server's feed `id`.
    func unsubscribe(_ id: Int64) async throws(SyncError)
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
    public var session: String?

    public init(password: String, session: String? = nil) {
        self.password = password
        self.session = session
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
        return AccountSecrets(password: password, session: object["session"])
    }

    public func write(to path: String) throws(SyncError) {
        let folder = (path as NSString).deletingLastPathComponent
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw SyncError(.local, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        var object = ["password": password]
        object["session"] = session
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
