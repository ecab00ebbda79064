import FeedSyncDemoServer
import Foundation
import Testing

@testable import FeedSyncSync

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
                if event.hasPrefix("+") { verdict.heard(from: host) } else { verdict.noAnswer(from: host) }
            }
            #expect(verdict.offline == offline, "\(hosts) hosts, \(events)")
        }
    }

    @Test func aSilentHostIsNotAskedAgainAndOfflineAsksNothing() {
        var verdict = NetworkVerdict(hosts: 5)
        verdict.heard(from: "ok.example")
        verdict.noAnswer(from: "dead.example")
        #expect(verdict.decision(host: "dead.example") == .silentHost)
        #expect(verdict.decision(host: "ok.example") == .ask)
        #expect(verdict.decision(host: "new.example") == .ask)
        var offline = NetworkVerdict(hosts: 3)
        for host in ["a", "b", "c"] { offline.noAnswer(from: host) }
        #expect(offline.decision(host: "d") == .offline)
        #expect(NetworkVerdict.host(of: "http://127.0.0.1:8080/feed") == "127.0.0.1:8080")
        #expect(NetworkVerdict.host(of: "https://Example.COM/a") == "example.com")
    }
}

@Suite(.serialized) struct OfflineTests {
    /// A port on 127.0.0.1 that nothing listens on (listened on, then let go).
    static func closedPort() throws -> UInt16 { try SilentServer().port }

    /// A server on 127.0.0.1 that accepts connections and never answers a byte.
    final class SilentServer: Sendable {
        let port: UInt16
        private let fd: Int32

        init() throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = fd
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            port = UInt16(bigEndian: address.sin_port)
        }

        deinit { close(fd) }
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
        #expect(
            lines.count <= 10
                && lines.last
                    == "feedsync: offline: no server answered (10 feeds); nothing changed; the next pull continues",
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
}
