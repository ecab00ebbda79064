// FeedSyncDemoServer (with DemoServer+Formats.swift): one generated feed on
// 127.0.0.1, served in every format feedsync reads (paged JSON, JSON Feed, RSS, Atom, WordPress),
// with its pictures and switches for the faults a real server has. Tests, benchmarks and the
// README's demo all use it.

import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

/// Faults the server can be told to produce; change them at any time while it runs.
public struct Faults: Sendable {
    /// How a failing page fails.
    public enum Failure: Sendable, Equatable {
        /// An HTTP status with an empty body, and `Retry-After` when given.
        case status(Int, retryAfter: String? = nil)
        /// `Content-Length` promises the whole page, half is sent, the connection closes.
        case truncate
        /// Half the page is sent chunked, then the connection is dropped without the last chunk.
        case reset
        /// A 200 with a third of the page: not valid JSON, or XML cut off mid-element.
        case malformed
        /// Nothing is sent for this many seconds, then the page.
        case stall(Double)
    }

    /// Added before every response.
    public var latency: Double = 0
    /// The next feed requests fail these ways, one each in turn, whatever page they ask for.
    public var next: [Failure] = []
    /// The next request for each of these pages fails this way, once.
    public var once: [Int: Failure] = [:]
    /// Every request for a page at or after `page` fails this way (a network lost mid-pull).
    public var fromPage: (page: Int, failure: Failure)? = nil
    /// `has_more` is always true; pages past the end repeat the last page.
    public var endless = false
    /// The server ignores `If-None-Match` (some do) and always sends the page.
    public var ignoreValidators = false
    /// WordPress's `X-WP-Total` and `X-WP-TotalPages` count this many items that no longer exist
    /// (a stale cache in front of the site), so the last page seems to have a successor.
    public var staleWordPressTotals = 0
    /// Titles carry terminal escape sequences, control characters and bidi overrides.
    public var hostileTitles = false
    /// Headers added to every feed page that is answered: `Cache-Control`, `Expires`, `Last-Modified`,
    /// `Retry-After`. A 304 gets the caching ones (`Cache-Control`, `Expires`, `Date`, `Vary`).
    public var feedHeaders: [String: String] = [:]
    /// The RSS channel's `<ttl>` (minutes), `<skipHours>` and `<skipDays>`.
    public var ttl: Int?
    public var skipHours: [Int] = []
    public var skipDays: [String] = []

    /// How a picture fails.
    public enum PictureFault: Sendable, Equatable {
        /// An HTML page with status 200 and `Content-Type: image/png`.
        case html
        case status(Int)
        /// A valid image start followed by `bytes` in all, with or without `Content-Length`.
        case oversize(bytes: Int, contentLength: Bool)
        /// Nothing is sent for this many seconds.
        case stall(Double)
        /// Half the picture, then the connection is dropped.
        case reset
        /// 302 to this URL.
        case redirect(String)
        /// 302 to itself, forever.
        case redirectLoop
        /// `header`, then random bytes (seeded by the picture's number) to `bytes` in all: a file
        /// that starts like a picture and is none.
        case noise(header: Data, bytes: Int)
    }

    /// Added before every picture response.
    public var pictureLatency: Double = 0
    /// Faults by picture number (`/pictures/N.png`).
    public var pictures: [Int: PictureFault] = [:]
    /// Item `n`'s `picUrl` replaced by this exact string.
    public var pictureURLs: [Int: String] = [:]
    /// Pictures inside each item's content (HTML in every format that has content), item `n`'s
    /// k-th (from 0) at `/pictures/(articlePicture(n, k)).png`.
    public var articlePictures = 0

    /// How an item's page (`/items/N`, its link) fails.
    public enum ArticleFault: Sendable, Equatable {
        case status(Int)
        /// A 200 that is a picture, not a page.
        case notHTML
        /// A page of this many bytes.
        case oversize(Int)
        /// A page of links with no article in it.
        case noArticle
        /// Nothing is sent for this many seconds, then the page.
        case stall(Double)
    }

    /// Faults by item number (`/items/N`, the page each item links to).
    public var articles: [Int: ArticleFault] = [:]

    /// The number of item `n`'s k-th picture inside the article on its page.
    public static func pagePicture(_ n: Int, _ k: Int) -> Int { 2_000_000 + n * 2 + k }

    /// The number of item `n`'s k-th picture inside its content.
    public static func articlePicture(_ n: Int, _ k: Int) -> Int { 1_000_000 + n * 24 + k }

    /// Fixed answers, by path and query (`/doc/a?page=2`, else `/doc/a`): a document served
    /// exactly as given, headers included, for tests of what a hostile server may send.
    public var documents: [String: Document] = [:]

    /// A fixed answer.
    public struct Document: Sendable, Equatable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }
        public init(status: Int = 200, headers: [String: String] = [:], _ text: String) {
            self.init(status: status, headers: headers, body: Data(text.utf8))
        }
    }

    public init() {}
}

/// The formats the server speaks, each at its own path, all with the same items and pages.
public enum DemoFormat: String, Sendable, CaseIterable {
    /// `/feed?page=N`: `{"page", "total", "has_more", "items"}`.
    case pagedJSON = "paged-json"
    /// `/jsonfeed`: JSON Feed 1.1, `next_url` to the next page (relative).
    case jsonFeed = "jsonfeed"
    /// `/rss`: RSS 2.0, `<atom:link rel="next">`; pictures by enclosure, media:content or an <img>.
    case rss
    /// `/atom`: Atom with RFC 5005 `rel="prev-archive"` links; pictures by `rel="enclosure"`.
    case atom
    /// `/wp-json/wp/v2/posts`: WordPress REST, `X-WP-Total`, `Link`, 400 past the last page.
    case wordpress

    public var path: String {
        switch self {
        case .pagedJSON: "/feed"
        case .jsonFeed: "/jsonfeed"
        case .rss: "/rss"
        case .atom: "/atom"
        case .wordpress: "/wp-json/wp/v2/posts"
        }
    }
}

/// One request the server answered, for tests to assert on.
public struct LoggedRequest: Sendable {
    public var path: String
    /// A request for a page of the feed, in any format.
    public var isFeed: Bool
    public var page: Int?
    public var ifNoneMatch: String?
    /// The request's headers, names in lower case.
    public var headers: [String: String] = [:]
    /// The client's port: one per connection.
    public var clientPort: UInt16?
    public var status: Int
    /// The body's length, when it was sent whole (not streamed).
    public var bytes: Int?
    /// When the request arrived, and when it was answered (after any latency).
    public var receivedAt: Date
    public var at: Date
}

public final class DemoServer: Sendable {
    /// What the server has, and what it has been told to do.
    struct State: Sendable {
        var itemCount: Int
        var perPage: Int
        var distinctPictures: Int
        var pictureBytes: Int
        var faults = Faults()
    }

    private let server: HTTPServer
    private let state: Mutex<State>
    /// Apart from `state`: a page handler holds a copy of `state` while it builds the page, and
    /// with the log inside it every request logged meanwhile copied the whole log.
    private let log: Mutex<[LoggedRequest]> = Mutex([])
    private let runner: Mutex<Task<Void, any Error>?> = Mutex(nil)
    /// Where each request's path is also written, a line each, for a test in another process.
    private let logFile: Mutex<FileHandle?> = Mutex(nil)
    /// Requests being answered now, and the most ever at once.
    private let inFlight = Mutex((now: 0, peak: 0))

    /// - Parameters:
    ///   - items: items in the feed; item `n` is the n-th oldest, and page 1 is the newest.
    ///   - perPage: items per page.
    ///   - distinctPictures: items use pictures `1...distinctPictures` in turn.
    ///   - pictureBytes: the size of each picture (at least a PNG header's).
    public init(
        items: Int = 200, perPage: Int = 20, distinctPictures: Int? = nil, pictureBytes: Int = 289,
        port: UInt16 = 0
    ) {
        state = Mutex(
            State(
                itemCount: items, perPage: perPage, distinctPictures: distinctPictures ?? max(items, 1),
                pictureBytes: pictureBytes))
        server = HTTPServer(address: try! .inet(ip4: "127.0.0.1", port: port), timeout: 120, logger: .disabled)
    }

    /// Starts listening; returns once the port is bound.
    public func start() async throws {
        let server = server
        for format in DemoFormat.allCases {
            await server.appendRoute(HTTPRoute(method: .GET, path: format.path)) { [self] request in
                try await self.counted { try await self.feedPage(request, format: format) }
            }
        }
        await server.appendRoute("GET /pictures/*") { [self] request in
            try await self.counted { try await self.picture(request) }
        }
        await server.appendRoute("GET /redirect") { request in Self.redirect(request) }
        await server.appendRoute("GET /doc/*") { [self] request in await self.counted { self.document(request) } }
        await server.appendRoute("GET /bytes") { request in Self.bytes(request) }
        await server.appendRoute("GET /items/*") { [self] request in
            try await self.counted { try await self.article(request) }
        }
        runner.withLock { $0 = Task { try await server.run() } }
        try await server.waitUntilListening(timeout: 10)
        if case .ip4(_, let port) = await server.listeningAddress { Self.disableNagle(listeningOn: port) }
    }

    /// Sets TCP_NODELAY on the listening socket, which connections accepted from it inherit.
    /// FlyingFox writes a response's head and body separately; with Nagle's algorithm on, the body
    /// of every response after a connection's first waits for the client's delayed ACK (40 ms on
    /// Linux), which made each reused connection a 40 ms-per-request server. FlyingFox does not
    /// expose its socket, so it is found among the process's descriptors by its port.
    private static func disableNagle(listeningOn port: UInt16) {
        for descriptor in Int32(0)..<1024 {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let found = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            var listening: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard found == 0, address.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: address.sin_port) == port,
                getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening == 1
            else { continue }
            var on: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    public func stop() async {
        await server.stop(timeout: 1)
        runner.withLock { $0?.cancel() }
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String {
        get async {
            guard case .ip4(_, let port) = await server.listeningAddress else { return "http://127.0.0.1:0" }
            return "http://127.0.0.1:\(port)"
        }
    }

    /// The feed's URL in the seed format.
    public var feedURL: String {
        get async { await baseURL + DemoFormat.pagedJSON.path }
    }

    /// The feed's URL in `format`.
    public func feedURL(_ format: DemoFormat) async -> String {
        await baseURL + format.path
    }

    public var faults: Faults {
        state.withLock { $0.faults }
    }

    public func setFaults(_ faults: Faults) {
        state.withLock { $0.faults = faults }
    }

    /// Adds `count` new items at the head of the feed.
    public func prepend(_ count: Int) {
        state.withLock { $0.itemCount += count }
    }

    public var itemCount: Int { state.withLock { $0.itemCount } }

    /// Every request answered so far, oldest first.
    public var requests: [LoggedRequest] { log.withLock { $0 } }

    /// Writes each request's path from now on to the file at `path` (created, or appended to), one
    /// line each, as it arrives.
    public func logRequests(to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        logFile.withLock { $0 = handle }
    }

    private func record(_ request: LoggedRequest) {
        log.withLock { $0.append(request) }
        logFile.withLock { $0?.write(Data((request.path + "\n").utf8)) }
    }

    public func clearLog() {
        log.withLock { $0.removeAll() }
        inFlight.withLock { $0.peak = $0.now }
    }

    /// The most feed, picture and document requests answered at once since the log was cleared:
    /// over HTTP/1.1, the most connections busy at once.
    public var peakConcurrentRequests: Int { inFlight.withLock { $0.peak } }

    /// Requests being answered now (a stalled one is logged only when its answer is sent).
    public var requestsInFlight: Int { inFlight.withLock { $0.now } }

    private func counted(_ answer: () async throws -> HTTPResponse) async rethrows -> HTTPResponse {
        inFlight.withLock {
            $0.now += 1
            $0.peak = max($0.peak, $0.now)
        }
        defer { inFlight.withLock { $0.now -= 1 } }
        return try await answer()
    }

    static func logged(_ request: HTTPRequest) -> (headers: [String: String], port: UInt16?) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
        if case .ip4(_, let port)? = request.remoteAddress { return (headers, port) }
        return (headers, nil)
    }

    /// The key `feedsync` stores for item `n`, in the feed's order (newest first).
    public var expectedKeys: [String] {
        let count = itemCount
        return (0..<count).map { "item-\(count - $0)" }
    }

    // MARK: Handlers

    private func feedPage(_ request: HTTPRequest, format: DemoFormat) async throws -> HTTPResponse {
        let received = Date()
        let page = request.query["page"].flatMap(Int.init) ?? 1
        let ifNoneMatch = request.headers[HTTPHeader("If-None-Match")]
        let (snapshot, failure) = state.withLock { state -> (State, Faults.Failure?) in
            var failure: Faults.Failure? = nil
            if !state.faults.next.isEmpty {
                failure = state.faults.next.removeFirst()
            } else if let once = state.faults.once.removeValue(forKey: page) {
                failure = once
            } else if let from = state.faults.fromPage, page >= from.page {
                failure = from.failure
            }
            return (state, failure)
        }
        if snapshot.faults.latency > 0 { try await Task.sleep(nanoseconds: UInt64(snapshot.faults.latency * 1e9)) }

        var served = snapshot
        if format == .wordpress {
            // The server's page size is the most this site hands out; WordPress's default is 10.
            served.perPage = min(served.perPage, request.query["per_page"].flatMap(Int.init) ?? 10)
        }
        let document = Self.document(format, page: page, state: served, baseURL: await baseURL)
        let body = document.body
        let contentType = document.contentType
        let etag = "\"\(format.rawValue)-n\(snapshot.itemCount)-p\(page)\(snapshot.faults.endless ? "-e" : "")\""
        var response: HTTPResponse
        var bytes: Int?
        switch failure {
        case .status(let code, let retryAfter)?:
            var headers: HTTPHeaders = [:]
            if let retryAfter { headers[HTTPHeader("Retry-After")] = retryAfter }
            response = HTTPResponse(statusCode: HTTPStatusCode(code, phrase: "Injected"), headers: headers)
        case .truncate?:
            let half = body.prefix(body.count / 2)
            response = HTTPResponse(
                statusCode: .ok,
                headers: [.contentType: contentType, .contentLength: String(body.count)] as HTTPHeaders,
                body: HTTPBodySequence(from: StreamedBytes(half, thenFail: true), count: body.count))
        case .reset?:
            response = HTTPResponse(
                statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders,
                body: HTTPBodySequence(from: StreamedBytes(body.prefix(body.count / 2), thenFail: true)))
        case .malformed?:
            bytes = body.count / 3
            response = HTTPResponse(
                statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders, body: Data(body.prefix(bytes!)))
        case .stall(let seconds)?:
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            bytes = body.count
            response = HTTPResponse(statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders, body: body)
        case nil:
            if ifNoneMatch == etag, !snapshot.faults.ignoreValidators {
                // With the caching headers a 200 would have had, as RFC 9110 (15.4.5) asks.
                var headers: HTTPHeaders = [HTTPHeader("ETag"): etag]
                for (name, value) in snapshot.faults.feedHeaders
                where ["cache-control", "expires", "date", "vary"].contains(name.lowercased()) {
                    headers[HTTPHeader(name)] = value
                }
                response = HTTPResponse(statusCode: .notModified, headers: headers)
            } else {
                var headers: HTTPHeaders = [.contentType: contentType, HTTPHeader("ETag"): etag]
                for (name, value) in document.headers + snapshot.faults.feedHeaders.map({ ($0, $1) }) {
                    headers[HTTPHeader(name)] = value
                }
                bytes = body.count
                response = HTTPResponse(
                    statusCode: HTTPStatusCode(document.status, phrase: "Feed"), headers: headers, body: body)
            }
        }
        let (headers, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: true, page: page, ifNoneMatch: ifNoneMatch, headers: headers, clientPort: port,
            status: response.statusCode.code, bytes: bytes, receivedAt: received, at: Date())
        record(logged)
        return response
    }

    private func picture(_ request: HTTPRequest) async throws -> HTTPResponse {
        let name = request.path.split(separator: "/").last.map(String.init) ?? ""
        let number = name.hasSuffix(".png") ? Int(name.dropLast(4)) : nil
        let (faults, size) = state.withLock { ($0.faults, $0.pictureBytes) }
        let (sent, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: false, page: nil, ifNoneMatch: nil, headers: sent, clientPort: port,
            status: number == nil ? 404 : 200, bytes: nil, receivedAt: Date(), at: Date())
        record(logged)
        guard let number, request.path == "/pictures/\(name)" else { return HTTPResponse(statusCode: .notFound) }
        if faults.pictureLatency > 0 { try await Task.sleep(nanoseconds: UInt64(faults.pictureLatency * 1e9)) }
        let png = Self.png(seed: number, bytes: size)
        let headers: HTTPHeaders = [.contentType: "image/png"]
        switch faults.pictures[number] {
        case nil:
            return HTTPResponse(statusCode: .ok, headers: headers, body: png)
        case .html?:
            return HTTPResponse(
                statusCode: .ok, headers: headers, body: Data("<!doctype html><html><body>Not found</body></html>".utf8)
            )
        case .status(let code)?:
            return HTTPResponse(statusCode: HTTPStatusCode(code, phrase: "Injected"), headers: headers)
        case .noise(let header, let count)?:
            var random = SplitMix(seed: UInt64(number))
            var body = header
            body.reserveCapacity(count)
            while body.count < count { withUnsafeBytes(of: random.next()) { body.append(contentsOf: $0) } }
            return HTTPResponse(statusCode: .ok, headers: headers, body: body.prefix(count))
        case .oversize(let count, let contentLength)?:
            let body = png + Data(repeating: 0, count: max(0, count - png.count))
            return HTTPResponse(
                statusCode: .ok, headers: headers,
                body: contentLength ? HTTPBodySequence(data: body) : HTTPBodySequence(from: StreamedBytes(body)))
        case .stall(let seconds)?:
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return HTTPResponse(statusCode: .ok, headers: headers, body: png)
        case .reset?:
            return HTTPResponse(
                statusCode: .ok, headers: headers,
                body: HTTPBodySequence(from: StreamedBytes(png.prefix(png.count / 2), thenFail: true), count: png.count)
            )
        case .redirect(let target)?:
            return HTTPResponse(statusCode: .found, headers: [.location: target] as HTTPHeaders)
        case .redirectLoop?:
            return HTTPResponse(statusCode: .found, headers: [.location: request.path] as HTTPHeaders)
        }
    }

    /// Item n's page: menus, share bar and comments around an article of five paragraphs with two
    /// pictures inside, as news sites write them (or its fault).
    private func article(_ request: HTTPRequest) async throws -> HTTPResponse {
        let number = request.path.split(separator: "/").last.flatMap { Int($0) }
        let fault = number.flatMap { n in state.withLock { $0.faults.articles[n] } }
        let (sent, port) = Self.logged(request)
        let status: Int
        switch fault {
        case .status(let code)?: status = code
        case _ where number == nil: status = 404
        default: status = 200
        }
        record(
            LoggedRequest(
                path: request.path, isFeed: false, page: nil, ifNoneMatch: nil, headers: sent, clientPort: port,
                status: status, bytes: nil, receivedAt: Date(), at: Date()))
        guard let number, status == 200 else { return HTTPResponse(statusCode: HTTPStatusCode(status, phrase: "")) }
        if case .stall(let seconds)? = fault { try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
        if case .notHTML? = fault {
            return HTTPResponse(
                statusCode: .ok, headers: [.contentType: "image/png"], body: Self.png(seed: number, bytes: 2000))
        }
        let base = await baseURL
        let paragraphs = (1...5).map { k in
            "<p>Paragraph \(k) of the article of item \(number): the whole story, told at length, with commas, "
                + "details and quotes, as the feed's summary never tells it; it goes on for a while, sentence "
                + "after sentence, so that a reader on the train has something to read.</p>"
        }
        let pictures = (0..<2).map { k in
            "<figure><img src=\"\(base)/pictures/\(Faults.pagePicture(number, k)).png\" alt=\"picture \(k)\">"
                + "<figcaption>Picture \(k) of item \(number)</figcaption></figure>"
        }
        var body: String
        if case .noArticle? = fault {
            body = (1...40).map { "<li><a href=\"/items/\($0)\">Story \($0)</a></li>" }.joined()
            body = "<ul>\(body)</ul>"
        } else {
            body = """
                <nav class="menu"><a href="/">Home</a> <a href="/news">News</a></nav>
                <article><h1>Item \(number)</h1>\(paragraphs[0])\(pictures[0])\(paragraphs[1...2].joined())\
                \(pictures[1])\(paragraphs[3...].joined())</article>
                <div class="share-bar"><a href="/share">Share</a></div>
                <section id="comments"><p>A comment on item \(number), long enough to be scored by a reader view.</p></section>
                """
        }
        var html =
            "<!doctype html><html lang=\"en\"><head><title>Item \(number) | Demo</title></head><body>\(body)</body></html>"
        if case .oversize(let bytes)? = fault {
            html += "<!--" + String(repeating: "x", count: max(0, bytes - html.utf8.count)) + "-->"
        }
        return HTTPResponse(
            statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(html.utf8))
    }

    /// A document of `Faults.documents`, or 404.
    private func document(_ request: HTTPRequest) -> HTTPResponse {
        let documents = state.withLock { $0.faults.documents }
        let query = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let found = documents[request.path + (query.isEmpty ? "" : "?" + query)] ?? documents[request.path]
        let (sent, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: true, page: request.query["page"].flatMap(Int.init),
            ifNoneMatch: sent["if-none-match"], headers: sent, clientPort: port, status: found?.status ?? 404,
            bytes: found?.body.count, receivedAt: Date(), at: Date())
        record(logged)
        guard let found else { return HTTPResponse(statusCode: .notFound) }
        var headers: HTTPHeaders = [:]
        for (name, value) in found.headers { headers[HTTPHeader(name)] = value }
        return HTTPResponse(
            statusCode: HTTPStatusCode(found.status, phrase: "Document"), headers: headers, body: found.body)
    }

    /// `/redirect?to=URL` answers 302 to URL; `/redirect?loop=1` redirects to itself forever.
    static func redirect(_ request: HTTPRequest) -> HTTPResponse {
        let target = request.query["loop"] != nil ? "/redirect?loop=1" : (request.query["to"] ?? "/")
        return HTTPResponse(statusCode: .found, headers: [.location: target] as HTTPHeaders)
    }

    /// `/bytes?count=N` sends N bytes; with `&chunked=1` without a Content-Length.
    static func bytes(_ request: HTTPRequest) -> HTTPResponse {
        let count = request.query["count"].flatMap(Int.init) ?? 0
        let data = Data(repeating: 0x61, count: count)
        let headers: HTTPHeaders = [.contentType: "application/octet-stream"]
        if request.query["chunked"] != nil {
            return HTTPResponse(statusCode: .ok, headers: headers, body: HTTPBodySequence(from: StreamedBytes(data)))
        }
        return HTTPResponse(statusCode: .ok, headers: headers, body: data)
    }

    /// A JSON string literal.
    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    /// A PNG a browser can show, one pixel of a colour of its own, followed by bytes that differ
    /// per picture (decoders stop at its end chunk), `bytes` long (at least the PNG's 72).
    public static func png(seed: Int, bytes size: Int = 289) -> Data {
        var value = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            value = value &* 6_364_136_223_846_793_005 &+ 1
            return UInt8(truncatingIfNeeded: value >> 56)
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        // One scanline: filter 0 and an RGB pixel, in a stored (uncompressed) deflate block.
        let scanline: [UInt8] = [0, next(), next(), next()]
        let adler = scanline.reduce((UInt32(1), UInt32(0))) { sums, byte in
            let a = (sums.0 + UInt32(byte)) % 65_521
            return (a, (sums.1 + a) % 65_521)
        }
        let deflated: [UInt8] = [0x78, 0x01, 0x01, 4, 0, 0xFB, 0xFF] + scanline + bigEndian(adler.1 << 16 | adler.0)
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])
        bytes += chunk("IDAT", deflated)
        bytes += chunk("IEND", [])
        while bytes.count < size { bytes.append(next()) }
        return Data(bytes)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 as PNG's chunks carry it.
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}

/// Yields its bytes in chunks; with `thenFail`, fails instead of ending, so the connection is
/// closed before the promised body is complete.
struct StreamedBytes: AsyncBufferedSequence, AsyncBufferedIteratorProtocol {
    typealias Element = UInt8
    var bytes: ArraySlice<UInt8>
    var thenFail = false

    init(_ bytes: some Sequence<UInt8>, thenFail: Bool = false) {
        self.bytes = ArraySlice(bytes)
        self.thenFail = thenFail
    }

    func makeAsyncIterator() -> StreamedBytes { self }

    mutating func next() async throws -> UInt8? {
        try await nextBuffer(suggested: 1)?.first
    }

    mutating func nextBuffer(suggested count: Int) async throws -> ArraySlice<UInt8>? {
        guard !bytes.isEmpty else {
            if thenFail { throw CancellationError() }
            return nil
        }
        let chunk = bytes.prefix(Swift.max(count, 16_384))
        bytes = bytes.dropFirst(chunk.count)
        return chunk
    }
}
