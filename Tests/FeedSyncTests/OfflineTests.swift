import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncPull

/// When the verdict is offline, and what a host that gave no answer costs the rest of a run.
@Suite struct NetworkVerdictTests {
    @Test func offlineOnlyWhenNoServerAnsweredAndThreeHostsOrAllWereSilent() {
        // (hosts in the run, events: "+h" answered, "-h" no answer) → offline
        let cases: [(Int, [String], Bool)] = [
            (10, ["-a", "-b"], false),
            (10, ["-a", "-b", "-c"], true),
            (10, ["-a", "-a", "-a"], false),  // one host, however often
            (2, ["-a", "-b"], true),  // all of them, when fewer than three
            (1, ["-a"], true),
            (10, ["+x", "-a", "-b", "-c"], false),  // a server answered: the network is there
            (10, ["-a", "-b", "-c", "+x"], false),
            (0, [], false),
        ]
        for (hosts, events, offline) in cases {
            var verdict = NetworkVerdict(hosts: hosts)
            for event in events {
                let host = String(event.dropFirst())
                if event.hasPrefix("+") { verdict.heard(from: host) } else { verdict.noAnswer(from: host, .refused) }
            }
            #expect(verdict.offline == offline, "\(hosts) hosts, \(events)")
        }
    }

    @Test func aSilentHostIsNotAskedAgainAndOfflineAsksNothing() {
        var verdict = NetworkVerdict(hosts: 5)
        verdict.heard(from: "ok.example")
        verdict.noAnswer(from: "dead.example", .noSuchHost)
        verdict.stalled("slow.example")
        #expect(verdict.decision(host: "dead.example") == .silentHost)
        #expect(verdict.decision(host: "slow.example") == .silentHost, "one wait for a host that took the connection")
        #expect(verdict.silence(of: "dead.example") == Silence(host: "dead.example", how: .noSuchHost))
        #expect(verdict.decision(host: "ok.example") == .ask)
        #expect(verdict.decision(host: "new.example") == .ask)
        var offline = NetworkVerdict(hosts: 3)
        for host in ["a", "b", "c"] { offline.noAnswer(from: host, .timedOut(seconds: 10)) }
        #expect(offline.decision(host: "d") == .offline)
        var slow = NetworkVerdict(hosts: 1)
        slow.stalled("a")
        #expect(!slow.offline, "a host that took the connection shows the network is there")
        #expect(NetworkVerdict.host(of: "http://127.0.0.1:8080/feed") == "127.0.0.1:8080")
        #expect(NetworkVerdict.host(of: "https://Example.COM/a") == "example.com")
    }
}

@Suite(.serialized) struct OfflineTests {
    /// A port on 127.0.0.1 that nothing listens on (listened on, then let go).
    static func closedPort() throws -> UInt16 { try SilentServer().port }

    /// A server on 127.0.0.1 that accepts connections and never answers a byte, on `port` or
    /// else a free one.
    final class SilentServer: Sendable {
        let port: UInt16
        private let fd: Int32

        init(port: UInt16 = 0) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = fd
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard bound else {
                close(fd)
                throw POSIXError(.EADDRINUSE)
            }
            self.port = UInt16(bigEndian: address.sin_port)
        }

        deinit { close(fd) }
    }

    /// A server on 127.0.0.1 whose queue of connections waiting to be accepted is full: the
    /// kernel drops new connections' first packet, so a client's connect times out.
    final class FullServer: Sendable {
        let port: UInt16
        private let descriptors: [Int32]

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                        && getsockname(listener, $0, &length) == 0
                }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            // Two connections never accepted fill a queue of length 0 (the kernel keeps one more).
            let fillers = (0..<2).map { _ in
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                _ = withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
                }
                return fd
            }
            usleep(200_000)  // the handshakes complete
            port = UInt16(bigEndian: address.sin_port)
            descriptors = [listener] + fillers
        }

        deinit { for descriptor in descriptors { close(descriptor) } }
    }

    /// Subscribes `cli`'s data home to `urls` without pulling them (`import`).
    static func subscribe(_ cli: CLI, _ urls: [String]) async throws {
        let outlines = urls.map { "<outline type=\"rss\" text=\"\($0)\" xmlUrl=\"\($0)\"/>" }.joined()
        let file = cli.home.path + "/feeds.opml"
        try Data("<opml version=\"2.0\"><body>\(outlines)</body></opml>".utf8).write(to: URL(fileURLWithPath: file))
        let imported = try await cli.run("import", file)
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    @Test func anOfflinePullOfTenFeedsEndsInSecondsChangesNothingAndTheNextAsksEveryFeed() async throws {
        let cli = try CLI()
        let port = try Self.closedPort()
        let local = DemoFormat.allCases.map { "http://127.0.0.1:\(port)\($0.path)" }
        let unresolvable = (1...5).map { "http://feedsync-offline-\($0).invalid/feed" }
        try await Self.subscribe(cli, local + unresolvable)
        let started = Date()
        let offline = try await cli.run("pull")
        let took = Date().timeIntervalSince(started)
        #expect(offline.status == 75, "\(offline.stderr)")
        #expect(took < 10, "known offline in seconds (took \(took) s)")
        let lines = offline.stderr.split(separator: "\n")
        // The hosts named are those asked before the run knew it was offline (feeds run four at once).
        #expect(
            lines.count <= 10
                && lines.last?.hasPrefix(
                    "feedsync: offline: no server answered (10 feeds): 127.0.0.1:\(port) (refused), ")
                    == true
                && lines.last?.hasSuffix("; nothing changed; the next pull continues") == true
                && lines.last?.contains(".invalid (no such host)") == true,
            "\(offline.stderr)")
        // Nothing changed: every feed never pulled, due now.
        let feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
        #expect(
            feeds.count == 10 && feeds.allSatisfy { $0["outcome"] is NSNull && $0["due_now"] as? Bool == true },
            "\(feeds)")

        // The local server returns: the next pull asks every one of its feeds.
        let server = DemoServer(items: 20, perPage: 10, port: port)
        try await server.start()
        defer { Task { await server.stop() } }
        let back = try await cli.run("pull")
        #expect(back.status == 75, "the unresolvable ones still fail: \(back.stderr)")
        let asked = Set(server.requests.filter(\.isFeed).map { $0.path })
        #expect(asked == Set(DemoFormat.allCases.map { String($0.path.split(separator: "?")[0]) }), "\(asked)")
        #expect(!back.stderr.contains("offline: no server"), "a server answered")
    }

    @Test func aHostThatNeverAnswersCostsItsTimeoutOnceAndHoldsUpNoOtherFeed() async throws {
        let cli = try CLI()
        let silent = try SilentServer()
        try await withServer(items: 20, perPage: 10) { server, url async throws -> Void in
            let dead = (1...3).map { "http://127.0.0.1:\(silent.port)/feed\($0)" }
            try await Self.subscribe(cli, dead + [url])
            let started = Date()
            let pulled = try await cli.run("pull", "--timeout", "3", "--per-host", "1", "--images", "none")
            let took = Date().timeIntervalSince(started)
            #expect(pulled.status == 75, "\(pulled.stderr)")
            #expect(took < 8, "one wait for the silent host, not one per feed or per retry (took \(took) s)")
            #expect(!pulled.stderr.contains("offline: no server"), "the demo server answered")
            let feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
            #expect(feeds.first { $0["url"] as? String == url }?["items"] as? Int == 20, "\(feeds)")
            #expect(
                feeds.filter { ($0["url"] as? String)?.contains(":\(silent.port)/") == true }.allSatisfy {
                    $0["outcome"] as? String == "transient"
                })
            #expect(server.requests.filter(\.isFeed).count >= 2)
        }
        withExtendedLifetime(silent) {}
    }

    /// How a dead host gives no answer, a feed URL on such a host, and the reason the offline line
    /// names.
    enum DeadHost: String, CaseIterable, Sendable {
        case noSuchHost, refused, timedOut, closed

        func make() throws -> (url: String, host: String, reason: String, keep: AnyObject?) {
            switch self {
            case .noSuchHost:
                return ("http://feedsync-dead.invalid/feed", "feedsync-dead.invalid", "no such host", nil)
            case .refused:
                let port = try OfflineTests.closedPort()
                return ("http://127.0.0.1:\(port)/feed", "127.0.0.1:\(port)", "refused", nil)
            case .timedOut:
                let server = try FullServer()
                return (
                    "http://127.0.0.1:\(server.port)/feed", "127.0.0.1:\(server.port)", "timed out after 2 s", server
                )
            case .closed:
                let server = try RawServer(answer: Data())
                return (server.url, "127.0.0.1:\(server.port)", "closed before answering", server)
            }
        }
    }

    @Test(arguments: DeadHost.allCases)
    func theOfflineLineNamesTheOneHostThatDidNotAnswerAndHow(_ kind: DeadHost) async throws {
        let cli = try CLI()
        let dead = try kind.make()
        defer { (dead.keep as? RawServer)?.stop() }
        try await Self.subscribe(cli, [dead.url])
        let pulled = try await cli.run("pull", "--timeout", "2")
        #expect(pulled.status == 75, "\(pulled.stderr)")
        #expect(
            pulled.stderr.split(separator: "\n").last.map(String.init)
                == "feedsync: offline: \(dead.host) did not answer (\(dead.reason); 1 feed): this server may be down, "
                + "or this machine offline; nothing changed; the next pull continues", "\(pulled.stderr)")
        let report = try json(try await cli.run("pull", "--timeout", "2", "--json"))
        #expect(
            report["unanswered_hosts"] as? [[String: String]] == [["host": dead.host, "reason": dead.reason]],
            "\(report)")
        withExtendedLifetime(dead.keep) {}
    }

    @Test func fourDeadHostsAreThreeNamedAndOneMore() async throws {
        let cli = try CLI()
        let ports = try (0..<4).map { _ in try Self.closedPort() }
        try await Self.subscribe(cli, ports.map { "http://127.0.0.1:\($0)/feed" })
        let pulled = try await cli.run("pull")
        #expect(pulled.status == 75, "\(pulled.stderr)")
        let named = ports.prefix(3).map { "127.0.0.1:\($0) (refused)" }.joined(separator: ", ")
        #expect(
            pulled.stderr.split(separator: "\n").last.map(String.init)
                == "feedsync: offline: no server answered (4 feeds): \(named) and 1 more; nothing changed; "
                + "the next pull continues", "\(pulled.stderr)")
    }

    @Test func aDeadHostBesideAHealthyOneIsTheDeadFeedsFailureNotOffline() async throws {
        let cli = try CLI()
        let port = try Self.closedPort()
        try await withServer(items: 20, perPage: 10) { server, url async throws -> Void in
            let dead = "http://127.0.0.1:\(port)/feed"
            try await Self.subscribe(cli, [dead, url])
            let pulled = try await cli.run("pull", "--images", "none")
            #expect(pulled.status == 75, "\(pulled.stderr)")
            #expect(!pulled.stderr.contains("offline"), "\(pulled.stderr)")
            #expect(pulled.stderr.contains(dead), "the dead feed's own failure is said: \(pulled.stderr)")
            let feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
            #expect(feeds.first { $0["url"] as? String == dead }?["outcome"] as? String == "transient", "\(feeds)")
            #expect(feeds.first { $0["url"] as? String == url }?["items"] as? Int == 20)
        }
    }

    @Test func aServerThatTookTheConnectionAndIsSlowIsNoSignOfBeingOffline() async throws {
        // The cause of a loaded test run's cron pulls judged offline: a loopback server too slow
        // to answer within the timeout had taken the connection, so the network was there.
        let cli = try CLI()
        let silent = try SilentServer()
        let url = "http://127.0.0.1:\(silent.port)/feed"
        try await Self.subscribe(cli, [url])
        let pulled = try await cli.run("pull", "--timeout", "2")
        #expect(pulled.status == 75, "\(pulled.stderr)")
        #expect(!pulled.stderr.contains("offline"), "\(pulled.stderr)")
        #expect(pulled.stderr.contains(url), "the feed's own failure is said: \(pulled.stderr)")
        let feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
        #expect(feeds.first?["outcome"] as? String == "transient", "recorded, not held as offline: \(feeds)")
        withExtendedLifetime(silent) {}
    }

    @Test func aRedirectToADeadHostShowsTheNetworkIsThere() async throws {
        let cli = try CLI()
        let port = try Self.closedPort()
        try await withServer { server, _ in
            let target = "http://127.0.0.1:\(port)/feed".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = await server.baseURL + "/redirect?to=" + target
            try await Self.subscribe(cli, [url])
            let pulled = try await cli.run("pull")
            #expect(pulled.status == 75, "\(pulled.stderr)")
            #expect(!pulled.stderr.contains("offline"), "the redirecting server answered: \(pulled.stderr)")
        }
    }
}
