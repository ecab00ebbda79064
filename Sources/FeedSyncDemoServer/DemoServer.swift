// FeedSyncDemoServer (with DemoServer+Faults, +Handlers and +Formats): one generated feed on
// 127.0.0.1, served in every format feedsync reads (paged JSON, JSON Feed, RSS, Atom, WordPress),
// with its pictures and switches for the faults a real server has. Tests, benchmarks and the
// README's demo all use it.

import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

public final class DemoServer: Sendable {
    /// What the server has, and what it has been told to do.
    struct State: Sendable {
        var itemCount: Int
        var perPage: Int
        var distinctPictures: Int
        var pictureBytes: Int
        var faults = Faults()
    }

    let server: HTTPServer
    let state: Mutex<State>
    /// Apart from `state`: a page handler holds a copy of `state` while it builds the page, and
    /// with the log inside it every request logged meanwhile copied the whole log.
    let log: Mutex<[LoggedRequest]> = Mutex([])
    let runner: Mutex<Task<Void, any Error>?> = Mutex(nil)
    /// Where each request's path is also written, a line each, for a test in another process.
    let logFile: Mutex<FileHandle?> = Mutex(nil)
    /// Requests being answered now, and the most ever at once.
    let inFlight = Mutex((now: 0, peak: 0))

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
    static func disableNagle(listeningOn port: UInt16) {
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

    func record(_ request: LoggedRequest) {
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

    func counted(_ answer: () async throws -> HTTPResponse) async rethrows -> HTTPResponse {
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
