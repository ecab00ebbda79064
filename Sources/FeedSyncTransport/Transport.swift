// FeedSyncTransport: an HTTP client over libcurl's multi interface; only this module speaks
// libcurl. Its public API is this file (HTTPRequest, HTTPResponse, TransportError, HTTPClient,
// TransportConfiguration); CurlLoop.swift drives libcurl on its one thread.

import FeedSyncModel
import Foundation

/// One GET request, or a POST of `body`.
public struct HTTPRequest: Sendable {
    public var url: String
    /// Sent as a POST (with a `Content-Type` among `headers`); nil for a GET.
    public var body: Data?
    /// Extra request headers, e.g. `If-None-Match`.
    public var headers: [(name: String, value: String)]
    /// The body is cut off, and the transfer fails with `.tooLarge`, past this many bytes.
    public var maxBodyBytes: Int
    /// A body longer than `spill.above` bytes is written to the file at `spill.path` instead of
    /// being held in memory (see `HTTPResponse.bodyFile`).
    public var spill: (path: String, above: Int)?
    /// Hash the body as it arrives (`HTTPResponse.bodyHash`), so an unchanged document is known
    /// without reading it again.
    public var hashesBody: Bool
    /// Told the body's bytes so far as they arrive, at most every `progressStep` bytes (a long
    /// download on a terminal); on the transfer's thread, so it must return at once.
    public var onProgress: (@Sendable (Int) -> Void)?
    public static let progressStep = 256 << 10

    public init(
        url: String, headers: [(name: String, value: String)] = [], maxBodyBytes: Int = 64 << 20,
        spill: (path: String, above: Int)? = nil, hashesBody: Bool = false, body: Data? = nil
    ) {
        self.url = url
        self.body = body
        self.headers = headers
        self.maxBodyBytes = maxBodyBytes
        self.spill = spill
        self.hashesBody = hashesBody
    }
}

extension HTTPRequest {
    /// The longest URL this client fetches; a longer one is no address a server would take.
    public static let maxURLBytes = 8192

    /// Whether `url` is one this client will fetch (see `problem(with:)`).
    public static func isFetchable(_ url: String) -> Bool {
        problem(with: url) == nil
    }

    /// Why this client will not fetch `url`, or nil when it will: it must be an absolute
    /// `http://` or `https://` URL with a host, a port from 1 to 65535 if any, no white space or
    /// control characters, and at most `maxURLBytes` long.
    public static func problem(with url: String) -> String? {
        guard url.utf8.count <= maxURLBytes else { return "it is longer than \(maxURLBytes) bytes" }
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            return "it holds white space or control characters"
        }
        guard let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return "it is not an http:// or https:// URL" }
        guard let components = URLComponents(string: url) else { return "it is not a well-formed URL" }
        guard components.host?.isEmpty == false else { return "it names no host" }
        if let port = components.port, !(1...65535).contains(port) { return "its port is not between 1 and 65535" }
        return nil
    }
}

/// A complete response, whatever its status.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: Data
    /// The URL the body came from, after redirects.
    public var effectiveURL: String
    /// Set when the body went to the request's spill file; `body` is then empty. The caller
    /// removes the file.
    public var bodyFile: String?
    /// The body's length, in memory or in the file.
    public var bodyBytes: Int
    /// The redirects followed to get here, in order.
    public var redirects: [HTTPRedirect]
    /// With `HTTPRequest.hashesBody`: XXH3 (64 bits) of the body and its length, as text.
    public var bodyHash: String?

    public init(
        status: Int, headers: [String: String], body: Data, effectiveURL: String, bodyFile: String? = nil,
        bodyBytes: Int? = nil, redirects: [HTTPRedirect] = [], bodyHash: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.effectiveURL = effectiveURL
        self.bodyFile = bodyFile
        self.bodyBytes = bodyBytes ?? body.count
        self.redirects = redirects
        self.bodyHash = bodyHash
    }

    /// Where the request's URL has moved for good: the URL reached through the leading 301 and
    /// 308 redirects, nil when the first answer was not one of them.
    public var permanentlyMovedTo: String? {
        redirects.prefix { $0.status == 301 || $0.status == 308 }.last?.url
    }

    /// The `Content-Type` in lower case, and whether it is a web page's: HTML or XHTML, or none said.
    public var contentType: String { (headers["content-type"] ?? "").lowercased() }
    public var isWebPage: Bool {
        contentType.isEmpty || contentType.contains("text/html") || contentType.contains("application/xhtml")
    }

    /// The status says the server may answer better later (timeout, too early, too many
    /// requests, its own failure): worth trying again, not a fault of what was asked for.
    public var isTransientFailure: Bool {
        switch status {
        case 408, 425, 429, 500...599: true
        default: false
        }
    }
}

/// One redirect a transfer followed: its status and the absolute URL it pointed to.
public struct HTTPRedirect: Sendable, Equatable {
    public var status: Int
    public var url: String
    public init(status: Int, url: String) {
        self.status = status
        self.url = url
    }
}

/// Why a transfer produced no response.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public typealias NoAnswer = FeedSyncModel.NoAnswer
    public enum Kind: Sendable, Equatable {
        /// Name resolution failed, the connection was refused or could not be made.
        case unreachable
        /// No progress within the deadline (connect timeout or low-speed limit).
        case timedOut
        /// The connection broke before the whole body arrived.
        case interrupted
        /// The body was larger than the request allowed.
        case tooLarge
        /// A URL, or a redirect, to a scheme other than http and https; or too many redirects.
        case refusedRedirect
        /// The request was cancelled.
        case cancelled
        /// The body could not be written to the request's spill file.
        case localFile
        /// Anything else libcurl reported.
        case other
    }

    public var kind: Kind
    public var url: String
    /// libcurl's own words, for `--verbose` and bug reports.
    public var detail: String
    /// The server sent the status line of its answer (not a redirect's) before the transfer failed.
    public var answered: Bool
    /// How the server gave no answer at all, when it did not: the network's failure or the host's,
    /// never the server's words. nil when it answered, and when it took the connection and the
    /// transfer failed later (a slow server is not a missing one).
    public var noAnswer: NoAnswer?

    public init(kind: Kind, url: String, detail: String, answered: Bool = false, noAnswer: NoAnswer? = nil) {
        self.kind = kind
        self.url = url
        self.detail = detail
        self.answered = answered
        self.noAnswer = answered ? nil : noAnswer
    }

    /// Worth trying again later: the network or the server may recover.
    public var isTransient: Bool {
        switch kind {
        case .unreachable, .timedOut, .interrupted, .other: true
        case .tooLarge, .refusedRedirect, .cancelled, .localFile: false
        }
    }

    public var description: String { "\(url): \(detail)" }
}

/// Settings shared by every transfer of one client.
public struct TransportConfiguration: Sendable {
    public var userAgent: String
    /// Seconds allowed to establish a connection.
    public var connectTimeout: Int
    /// A transfer slower than `lowSpeedBytes` per second for `lowSpeedSeconds` is abandoned.
    public var lowSpeedBytes: Int
    public var lowSpeedSeconds: Int
    /// A hard cap on a whole transfer, in seconds.
    public var totalTimeout: Int
    /// Transfers running at once; more are queued by libcurl.
    public var maxConnections: Int
    /// Connections to one host at once, pages and pictures together; more transfers to it wait.
    public var maxHostConnections: Int

    public init(
        userAgent: String, connectTimeout: Int = 10, lowSpeedBytes: Int = 1,
        lowSpeedSeconds: Int = 20, totalTimeout: Int = 300, maxConnections: Int = 8, maxHostConnections: Int? = nil
    ) {
        self.maxHostConnections = maxHostConnections ?? maxConnections
        self.userAgent = userAgent
        self.connectTimeout = connectTimeout
        self.lowSpeedBytes = lowSpeedBytes
        self.lowSpeedSeconds = lowSpeedSeconds
        self.totalTimeout = totalTimeout
        self.maxConnections = maxConnections
    }
}

/// Transfers started in one lane run at most `limit` at a time. The others wait on the loop
/// thread and start there the moment one of the lane's transfers ends, with no round trip to
/// the caller: a caller can hand over more than the limit and keep every connection busy.
public final class HTTPLane: @unchecked Sendable {
    public let limit: Int
    // Touched only on the loop thread.
    var active = 0
    var waiting: [Transfer] = []

    public init(limit: Int) {
        self.limit = max(1, limit)
    }
}

/// A transfer made with `HTTPClient.start`, for `withdraw`.
public struct HTTPTransferHandle: Sendable {
    let transfer: Transfer
}

/// An HTTP client whose transfers all run on one dedicated thread driving a libcurl multi handle,
/// so connections are reused and HTTP/2 streams multiplexed across concurrent requests.
public final class HTTPClient: Sendable {
    private let loop: CurlLoop

    public init(configuration: TransportConfiguration) {
        loop = CurlLoop(configuration: configuration)
    }

    /// Starts loading libcurl on a thread of its own, for a command that makes a client soon:
    /// libcurl and the thirty libraries it links take 5-7 ms to load, which the command's own
    /// start (the store's open) then hides. A client made meanwhile waits for it. The caller owes
    /// `waitForLoading()` before the process exits.
    public static func preload() {
        Thread.detachNewThread { _ = CurlLoop.loadFailure }
    }

    /// Waits until the loading `preload` started is done. A process must not exit before: its exit
    /// handlers (OpenSSL's cleanup) would run beside libcurl's global init on the loading thread,
    /// which crashed with a double free in 13 of 300 early exits.
    public static func waitForLoading() {
        _ = CurlLoop.loadFailure
    }

    /// Performs a GET. Cancelling the calling task aborts the transfer.
    public func get(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let result: Result<HTTPResponse, TransportError> = await loop.perform(request)
        return try result.get()
    }

    /// Starts a GET and returns at once. `completion` is called once when the transfer ends, on
    /// the client's network thread (at once on the caller's if the client is shut down): it must
    /// be short and must not wait for other work (writing the body to a file is fine, waiting for
    /// the store is not). Saves the task switches of `get` where many small requests run at once.
    /// With a `lane`, the transfer waits for a place in it.
    @discardableResult
    public func start(
        _ request: HTTPRequest, lane: HTTPLane? = nil,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> HTTPTransferHandle {
        HTTPTransferHandle(transfer: loop.start(request, lane: lane, done: completion))
    }

    /// Ends a transfer that is still waiting for a place in its lane: its completion gets
    /// `.cancelled`, and it never reaches the server. One already running, or over, is left alone.
    public func withdraw(_ handle: HTTPTransferHandle) {
        loop.withdraw(handle.transfer)
    }

    /// Stops the event loop; requests still running fail as cancelled.
    public func shutdown() {
        loop.shutdown()
    }

    deinit {
        loop.shutdown()
    }
}
