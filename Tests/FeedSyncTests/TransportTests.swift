import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncTransport
import Foundation
import Synchronization
import Testing

/// Real libcurl against the demo server on 127.0.0.1.
@Suite struct TransportTests {
    /// Generous limits: while the suite's ~300 tests start at once on two cores, this process's
    /// curl loop was measured handling answers the demo server had sent 2-4 s earlier, and 5 s
    /// limits ran out (issue 42). The tests that need a timeout set their own.
    let client = HTTPClient(
        configuration: TransportConfiguration(userAgent: "feedsync-tests", connectTimeout: 30, lowSpeedSeconds: 30))

    func failure(_ request: HTTPRequest) async -> TransportError? {
        do {
            let response = try await client.get(request)
            Issue.record("expected a failure, got \(response.status)")
            return nil
        } catch {
            return error
        }
    }

    @Test func getsStatusBodyAndLowercasedHeaders() async throws {
        try await withServer { _, url in
            let response = try await client.get(HTTPRequest(url: url + "?page=1"))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["etag"] != nil)
            #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("{\"page\": 1"))
        }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x"])
    func refusesRedirectsToOtherSchemes(target: String) async throws {
        try await withServer { server, _ in
            let base = await server.baseURL
            let url = base + "/redirect?to=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let error = await failure(HTTPRequest(url: url))
            #expect(error?.kind == .refusedRedirect)
            #expect(error?.isTransient == false)
        }
    }

    @Test func stopsARedirectLoop() async throws {
        try await withServer { server, _ in
            let error = await failure(HTTPRequest(url: await server.baseURL + "/redirect?loop=1"))
            #expect(error?.kind == .refusedRedirect)
            #expect(server.requests.filter { $0.path == "/redirect" }.count <= 6, "at most 5 redirects followed")
        }
    }

    @Test func followsARedirectToHTTP() async throws {
        try await withServer { server, url in
            let target = (url + "?page=2").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let response = try await client.get(HTTPRequest(url: await server.baseURL + "/redirect?to=" + target))
            #expect(response.status == 200)
            #expect(response.effectiveURL.hasSuffix("/feed?page=2"))
        }
    }

    @Test(arguments: [false, true])
    func capsTheBodyWhileStreaming(chunked: Bool) async throws {
        try await withServer { server, _ in
            let url = await server.baseURL + "/bytes?count=200000" + (chunked ? "&chunked=1" : "")
            let error = await failure(HTTPRequest(url: url, maxBodyBytes: 50_000))
            #expect(error?.kind == .tooLarge)
            let fits = try await client.get(HTTPRequest(url: url, maxBodyBytes: 200_000))
            #expect(fits.body.count == 200_000)
        }
    }

    @Test func aLongBodySpillsToItsFileAndAShortOneStaysInMemory() async throws {
        let folder = try TempDirectory()
        let path = folder.path + "/body"
        try await withServer { server, _ in
            let url = await server.baseURL + "/bytes?count=200000&chunked=1"
            let long = try await client.get(HTTPRequest(url: url, spill: (path, 64 << 10)))
            #expect(long.body.isEmpty && long.bodyFile == path)
            #expect(FileManager.default.contents(atPath: path) == Data(repeating: 0x61, count: 200_000))
            try FileManager.default.removeItem(atPath: path)

            let short = try await client.get(HTTPRequest(url: url, spill: (path, 1 << 20)))
            #expect(short.body.count == 200_000 && short.bodyFile == nil)
            #expect(!FileManager.default.fileExists(atPath: path))

            let capped = await failure(HTTPRequest(url: url, maxBodyBytes: 100_000, spill: (path, 1000)))
            #expect(capped?.kind == .tooLarge)
            #expect(!FileManager.default.fileExists(atPath: path), "a failed transfer leaves no file")
        }
    }

    @Test func aClosedPortIsUnreachableAndTransient() async throws {
        let url = try await withServer { _, url in url }  // the server is stopped on return
        let error = await failure(HTTPRequest(url: url))
        #expect(error?.kind == .unreachable)
        #expect(error?.isTransient == true)
    }

    @Test func cancellingTheTaskAbortsAStalledTransfer() async throws {
        try await withServer { server, url in
            var faults = Faults()
            faults.next = [.stall(30)]
            server.setFaults(faults)
            let task = Task { await failure(HTTPRequest(url: url)) }
            try await Task.sleep(nanoseconds: 300_000_000)
            let started = Date()
            task.cancel()
            let error = await task.value
            #expect(error?.kind == .cancelled)
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }

    @Test func runsManyTransfersAtOnceOnOneLoop() async throws {
        try await withServer { _, url in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for page in 1...30 {
                    group.addTask { try await client.get(HTTPRequest(url: url + "?page=\(page)")).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 30 && statuses.allSatisfy { $0 == 200 })
        }
    }

    @Test func aTransferCarriesNothingOfTheOneBeforeItOnTheSameHandle() async throws {
        try await withServer { server, url in
            // One at a time, so the second and third run on the first's handle, reset.
            let first = try await client.get(
                HTTPRequest(url: url + "?page=1", headers: [("If-None-Match", "\"seen\"")]))
            let second = try await client.get(HTTPRequest(url: url + "?page=2"))
            let capped = await failure(HTTPRequest(url: url + "?page=3", maxBodyBytes: 10))
            let third = try await client.get(HTTPRequest(url: url + "?page=3"))
            #expect(first.status == 200 && second.status == 200 && third.status == 200)
            #expect(capped?.kind == .tooLarge)
            let sent: [String?] = server.requests.filter(\.isFeed).map(\.ifNoneMatch)
            #expect(sent == ["\"seen\"", nil, nil, nil])
        }
    }

    /// Starts `urls` in `lane` with `client.start` and returns their results in the order given.
    func startAll(_ urls: [String], lane: HTTPLane, on client: HTTPClient) async -> [Result<
        HTTPResponse, TransportError
    >] {
        await withTaskGroup(of: (Int, Result<HTTPResponse, TransportError>).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        client.start(HTTPRequest(url: url), lane: lane) { continuation.resume(returning: (index, $0)) }
                    }
                }
            }
            var results = [Result<HTTPResponse, TransportError>?](repeating: nil, count: urls.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    @Test func aLaneRunsAtMostItsLimitAtOnceAndStartsTheRestAsPlacesFree() async throws {
        try await withServer { server, url in
            var faults = Faults()
            faults.latency = 0.2
            server.setFaults(faults)
            let lane = HTTPLane(limit: 2)
            let results = await startAll((1...6).map { url + "?page=\($0)" }, lane: lane, on: client)
            #expect(results.allSatisfy { (try? $0.get().status) == 200 })
            let requests = server.requests.filter(\.isFeed)
            #expect(requests.count == 6)
            // However many wait, no more than two are ever at the server at once.
            let most = requests.map { request in
                requests.filter { $0.receivedAt <= request.receivedAt && $0.at > request.receivedAt }.count
            }.max()
            #expect(most == 2)
        }
    }

    func failureKind(_ result: Result<HTTPResponse, TransportError>) -> TransportError.Kind? {
        if case .failure(let error) = result { error.kind } else { nil }
    }

    /// A server whose first request stalls for 30 s, a client of the test's own (shut down in the
    /// test) and a lane of `laneLimit`: with one, the requests after the first wait in it.
    func withStalledLane(
        laneLimit: Int = 1, hostConnections: Int? = nil,
        _ body: (DemoServer, String, HTTPClient, HTTPLane) async throws -> Void
    ) async throws {
        try await withServer { server, url in
            var faults = Faults()
            faults.next = [.stall(30)]
            server.setFaults(faults)
            let client = HTTPClient(
                configuration: TransportConfiguration(
                    userAgent: "feedsync-tests", connectTimeout: 5, lowSpeedSeconds: 20,
                    maxHostConnections: hostConnections))
            try await body(server, url, client, HTTPLane(limit: laneLimit))
        }
    }

    @Test func shuttingDownEndsTransfersWaitingInALane() async throws {
        try await withStalledLane { server, url, client, lane in
            let started = Date()
            async let results = startAll([url + "?page=1", url + "?page=2", url + "?page=3"], lane: lane, on: client)
            try await Task.sleep(nanoseconds: 300_000_000)
            client.shutdown()
            let ended = await results
            #expect(ended.allSatisfy { failureKind($0) == .cancelled })
            // Well before the 20 s without a byte that would end them otherwise, with room for a
            // machine whose cores are busy.
            #expect(Date().timeIntervalSince(started) < 15)
            #expect(server.requests.filter(\.isFeed).count <= 1)  // the two waiting never went out
        }
    }

    @Test func aWithdrawnTransferThatWaitsForAConnectionToItsHostNeverGoesOut() async throws {
        // One connection to the host: libcurl holds page 2 back while page 1 stalls.
        try await withStalledLane(laneLimit: 4, hostConnections: 1) { server, url, client, lane in
            defer { client.shutdown() }
            let ended = Mutex<[String: TransportError.Kind?]>([:])
            client.start(HTTPRequest(url: url + "?page=1"), lane: lane) { result in
                ended.withLock { $0["running"] = failureKind(result) }
            }
            let held = client.start(HTTPRequest(url: url + "?page=2"), lane: lane) { result in
                ended.withLock { $0["held"] = failureKind(result) }
            }
            // Page 1 is at the server (stalled) before page 2 is taken back.
            for _ in 0..<200 where server.peakConcurrentRequests == 0 { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .milliseconds(200))
            client.withdraw(held)
            for _ in 0..<200 where ended.withLock({ $0["held"] }) == nil {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(ended.withLock { $0 }.count == 1 && ended.withLock { $0["held"] } == .cancelled)
            #expect(server.peakConcurrentRequests == 1 && !server.requests.contains { $0.page == 2 })
        }
    }

    @Test func aWithdrawnTransferThatWaitsInItsLaneNeverGoesOutAndARunningOneGoesOn() async throws {
        try await withStalledLane { server, url, client, lane in
            let ended = Mutex<[String: TransportError.Kind?]>([:])
            let running = client.start(HTTPRequest(url: url + "?page=1"), lane: lane) { result in
                ended.withLock { $0["running"] = failureKind(result) }
            }
            let waiting = client.start(HTTPRequest(url: url + "?page=2"), lane: lane) { result in
                ended.withLock { $0["waiting"] = failureKind(result) }
            }
            try await Task.sleep(nanoseconds: 300_000_000)
            client.withdraw(waiting)
            client.withdraw(running)
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(ended.withLock { $0 }.count == 1)  // the running one is still stalled at the server
            #expect(ended.withLock { $0["waiting"] } == .cancelled)
            client.shutdown()
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(ended.withLock { $0["running"] } == .cancelled)
            #expect(!server.requests.contains { $0.page == 2 })  // the stalled page 1 is logged only when answered
        }
    }
}
