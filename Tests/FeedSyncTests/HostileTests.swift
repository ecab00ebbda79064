import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncKit
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Testing

/// What a stranger who controls a feed may send, and what a damaged disk or a careless user may
/// do, against the built binary. Every case asserts: no trap, the documented exit code, one line
/// on stderr, nothing unsafe on the terminal, a sound store, the items committed before still
/// there, and nothing written outside the data home.
@Suite struct HostileTests {
    typealias Document = Faults.Document

    /// A hostile document case: the server answers `documents` (paths under `/doc/`), the binary
    /// pulls `feed` after pulling a good feed of `goodItems` items, and must exit `status`.
    struct DocumentCase: Sendable, CustomStringConvertible {
        var description: String
        var documents: [String: Document]
        var feed = "/doc/feed"
        var status: Int32
        /// A phrase stderr must hold.
        var says: String?
        var arguments: [String] = ["--images", "none"]
        /// Further checks, given the binary and the hostile feed's URL.
        var then: (@Sendable (CLI, String) async throws -> Void)?
    }

    static let goodItems = 30

    // MARK: Documents

    static func rss(_ items: String, channel: String = "", prolog: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>\(prolog)
        <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">\
        <channel><title>t</title>\(channel)\(items)</channel></rss>
        """
    }

    static func items(_ range: ClosedRange<Int>) -> String {
        range.map { "<item><guid>g\($0)</guid><title>Item \($0)</title><link>http://example.com/\($0)</link></item>" }
            .joined()
    }

    static func json(_ object: String) -> Document {
        Document(headers: ["Content-Type": "application/json"], object)
    }

    static func xml(_ text: String, headers: [String: String] = [:]) -> Document {
        Document(headers: headers.merging(["Content-Type": "application/rss+xml"]) { old, _ in old }, text)
    }

    /// An RSS document declaring a 100 KB entity and using it `references` times in one title.
    static func entityBomb(references: Int) -> Document {
        xml(
            rss(
                "<item><guid>b</guid><title>\(String(repeating: "&e;", count: references))</title></item>",
                prolog: "<!DOCTYPE rss [<!ENTITY e \"\(String(repeating: "A", count: 100_000))\">]>"))
    }

    /// A camera's JPEG: 70 KB of metadata, then the frame header with its size (800 × 600).
    static let cameraJPEG: Data = {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF]
        bytes += [UInt8](repeating: 0, count: 0xFFFD)
        bytes += [0xFF, 0xE1, 0x10, 0x02]
        bytes += [UInt8](repeating: 0, count: 0x1000)
        bytes += [0, 0]  // stray bytes between segments, which decoders skip
        bytes += [0xFF, 0xC0, 0, 17, 8, 0x02, 0x58, 0x03, 0x20, 3]
        bytes += [UInt8](repeating: 0, count: 9)
        bytes += [0xFF, 0xD9]
        return Data(bytes)
    }()

    static let billionLaughs: Document = {
        var entities = "<!ENTITY l0 \"lol\">"
        for level in 1...9 {
            entities += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
        }
        return xml(rss("<item><guid>x</guid><title>&l9;</title></item>", prolog: "<!DOCTYPE rss [\(entities)]>"))
    }()

    static let documentCases: [DocumentCase] = [
        // XML
        DocumentCase(description: "billion laughs", documents: ["/doc/feed": billionLaughs], status: 65),
        DocumentCase(
            description: "a 100 KB entity referenced 100 000 times in one title",
            documents: ["/doc/feed": entityBomb(references: 100_000)], status: 65, says: "entities expand",
            then: { _, _ in
                var usage = rusage()
                getrusage(Int32(RUSAGE_CHILDREN.rawValue), &usage)
                #expect(usage.ru_maxrss < 300_000, "peak RSS of every run so far, in KB")
            }),
        DocumentCase(
            description: "a 100 KB entity referenced 10 000 times",
            documents: ["/doc/feed": entityBomb(references: 10_000)],
            status: 65, says: "entities expand"),
        DocumentCase(
            description: "an entity expanded within the limits makes a title that is cut",
            documents: ["/doc/feed": entityBomb(references: 100)], status: 0,
            then: { cli, url in
                let titles = try await cli.listedItems("--feed", url).map { $0["title"] as! String }
                #expect(titles.count == 1 && titles[0].count <= 1000 && titles[0].hasSuffix("…"))
            }),
        DocumentCase(
            description: "an external entity naming a local file",
            documents: [
                "/doc/feed": xml(
                    rss(
                        "<item><guid>x</guid><title>&x;</title></item>" + items(1...2),
                        prolog: "<!DOCTYPE rss [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"))
            ],
            status: 0,
            then: { cli, url in
                let titles = try await cli.listedItems("--feed", url).map { $0["title"] as! String }
                #expect(!titles.contains { $0.contains("root:") })
            }),
        DocumentCase(
            description: "an external DTD is never fetched",
            documents: [
                "/doc/feed": xml(rss(items(1...3), prolog: "<!DOCTYPE rss SYSTEM \"http://127.0.0.1:9/evil.dtd\">"))
            ],
            status: 0),
        DocumentCase(
            description: "mismatched tags are read past, and status says where",
            documents: ["/doc/feed": xml(rss("<item><guid>m</guid><title>a</guid></item>" + items(1...2)))], status: 0,
            then: { cli, url async throws in
                #expect(try await cli.listedItems("--feed", url).count == 3)
                #expect(try await cli.run("status").stdout.contains("malformed:"))
            }),
        DocumentCase(
            description: "a document cut inside its only item",
            documents: ["/doc/feed": xml("<rss><channel><item><guid>c</guid><title>cut he")], status: 65,
            says: "not well-formed at line 1"),
        DocumentCase(
            description: "elements nested 100 000 deep, around no item",
            documents: ["/doc/feed": xml(rss(String(repeating: "<a>", count: 100_000)))], status: 0,
            then: { cli, url async throws in #expect(try await cli.listedItems("--feed", url).isEmpty) }),
        DocumentCase(
            description: "NUL bytes and other control characters are dropped",
            documents: ["/doc/feed": xml(rss(items(1...2)).replacingOccurrences(of: "Item 1", with: "It\u{0}e\u{8}m"))],
            status: 0,
            then: { cli, url async throws in
                #expect(try await cli.listedItems("--feed", url).map { $0["title"] as! String } == ["Item", "Item 2"])
            }),
        DocumentCase(
            description: "a title of 3 MB is cut, its item kept",
            documents: [
                "/doc/feed": xml(
                    rss("<item><guid>long</guid><title>\(String(repeating: "word ", count: 600_000))</title></item>"))
            ],
            status: 0,
            then: { cli, url in
                let titles = try await cli.listedItems("--feed", url).map { $0["title"] as! String }
                #expect(titles.count == 1 && titles[0].count <= 1000)
            }),
        DocumentCase(
            description: "an id of 5 KB and a link of 10 KB skip their items, the others are stored",
            documents: [
                "/doc/feed": xml(
                    rss(
                        "<item><guid>\(String(repeating: "i", count: 5000))</guid><title>a</title></item>"
                            + "<item><guid>b</guid>"
                            + "<link>http://example.com/\(String(repeating: "l", count: 10_000))</link></item>"
                            + items(1...3)))
            ],
            status: 0, says: "2 skipped", arguments: ["--images", "none", "--verbose"],
            then: { cli, url async throws in
                #expect(try await cli.listedItems("--feed", url).map { $0["id"] as! String } == ["g1", "g2", "g3"])
            }),
        DocumentCase(
            // XML cannot hold C0 controls such as ESC at all (JSON's case below has them); C1 ones it can.
            description: "C1 controls and bidi overrides in titles",
            documents: ["/doc/feed": xml(rss("<item><guid>e</guid><title>a&#x9B;2J&#x85;b&#x202E;c</title></item>"))],
            status: 0,
            then: { cli, url in
                let list = try await cli.run("list", "--feed", url)
                #expect(list.status == 0 && list.stdout.contains("a") && !list.stdout.contains("\u{1B}"))
            }),
        DocumentCase(
            description: "an Atom next link made a file: URL by xml:base",
            documents: [
                "/doc/feed": Document(
                    headers: ["Content-Type": "application/atom+xml"],
                    """
                    <feed xmlns="http://www.w3.org/2005/Atom" xml:base="file:///etc/"><title>t</title>
                    <link rel="next" href="passwd"/><entry><id>a1</id><title>A</title></entry></feed>
                    """)
            ],
            status: 0,
            then: { cli, url in try await expectBackfillEnded(cli, url, keys: ["a1"]) }),
        DocumentCase(
            description: "an HTTP Link header pointing at ftp:",
            documents: [
                "/doc/feed": xml(rss(items(1...2)), headers: ["Link": "<ftp://127.0.0.1/older>; rel=\"next\""])
            ],
            status: 0,
            then: { cli, url in try await expectBackfillEnded(cli, url, keys: ["g1", "g2"]) }),
        // JSON
        DocumentCase(
            description: "a JSON Feed next_url of file:///etc/passwd",
            documents: [
                "/doc/feed": json(
                    """
                    {"version": "https://jsonfeed.org/version/1.1", "title": "t", "next_url": "file:///etc/passwd",
                     "items": [{"id": "j1", "title": "J"}]}
                    """)
            ],
            status: 0,
            then: { cli, url in try await expectBackfillEnded(cli, url, keys: ["j1"]) }),
        DocumentCase(
            description: "JSON nested 100 000 deep",
            documents: ["/doc/feed": json(String(repeating: "[", count: 100_000))],
            status: 65),
        DocumentCase(
            description: "a total of 2^63 - 1",
            documents: [
                "/doc/feed": json(
                    #"{"page": 1, "total": 9223372036854775807, "has_more": true, "items": [{"id": "a"}]}"#)
            ],
            status: 65, says: "\"total\""),
        DocumentCase(
            description: "a total of 1e400",
            documents: ["/doc/feed": json(#"{"page": 1, "total": 1e400, "has_more": true, "items": [{"id": "a"}]}"#)],
            status: 65, says: "\"total\""),
        DocumentCase(
            description: "a page past 2^63 and a total that is a string of 30 digits",
            documents: [
                "/doc/feed": json(
                    #"{"page": 99999999999999999999, "total": "123456789012345678901234567890", "#
                        + #""items": [{"id": "a"}]}"#
                )
            ],
            status: 65, says: "\"total\""),
        DocumentCase(
            description: "escapes and a NUL inside JSON strings",
            documents: ["/doc/feed": json(#"{"items": [{"id": "a\u0000b", "title": "x\u001b[31mred\u0007\u202e"}]}"#)],
            status: 0,
            then: { cli, url in
                let list = try await cli.run("list", "--feed", url)
                #expect(list.status == 0 && !list.stdout.contains("\u{1B}") && !list.stdout.contains("\u{7}"))
            }),
        DocumentCase(
            description: "dates far in the future or past, and numbers that are no dates",
            documents: [
                "/doc/feed": json(
                    """
                    {"items": [{"id": "d1", "published": 1e300}, {"id": "d2", "published": -5},
                     {"id": "d3", "published": "99999-12-31T23:59:59Z"}, \
                    {"id": "d4", "published": "0000-01-01T00:00:00-23:59"},
                     {"id": "d5", "published": "Mon, 32 Dec 99999999999999999999 99:99:99 +9999"},
                     {"id": "d6", "published": "9999-12-31T23:59:59-23:59"}]}
                    """)
            ],
            status: 0,
            then: { cli, url in
                let dates = try await cli.listedItems("--feed", url).map { $0["published"] as? String }
                #expect(dates == [nil, nil, nil, nil, nil, nil], "no date out of the years 1000 to 9999 is stored")
            }),
        DocumentCase(
            description: "truncated JSON", documents: ["/doc/feed": json(#"{"items": [{"id": "a", "title": "#)],
            status: 65),
        DocumentCase(
            description: "JSON that is not UTF-8",
            documents: [
                "/doc/feed": Document(
                    headers: ["Content-Type": "application/json"],
                    body: Data([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]))
            ],
            status: 65),
        DocumentCase(
            description: "a JSON id of 5 KB is skipped, the others stored",
            documents: [
                "/doc/feed": json(#"{"items": [{"id": "\#(String(repeating: "x", count: 5000))"}, {"id": "ok"}]}"#)
            ],
            status: 0,
            then: { cli, url async throws in
                #expect(try await cli.listedItems("--feed", url).map { $0["id"] as! String } == ["ok"])
            }),
        DocumentCase(
            description: "X-WP-Total of 2^63 - 1",
            documents: [
                "/doc/feed": Document(
                    headers: [
                        "Content-Type": "application/json", "X-WP-Total": "9223372036854775807", "X-WP-TotalPages": "1",
                    ],
                    #"[{"id": 1, "guid": {"rendered": "p1"}, "title": {"rendered": "P"}}]"#)
            ],
            status: 65, says: "X-WP-Total"),
        DocumentCase(
            description: "X-WP-TotalPages of 1e400",
            documents: [
                "/doc/feed": Document(
                    headers: ["Content-Type": "application/json", "X-WP-Total": "5", "X-WP-TotalPages": "1e400"],
                    #"[{"id": 1, "guid": {"rendered": "p1"}, "title": {"rendered": "P"}}]"#)
            ],
            status: 65, says: "X-WP-TotalPages"),
        // HTTP
        DocumentCase(
            description: "Retry-After of 2^63 - 1 on a 503",
            documents: ["/doc/feed": Document(status: 503, headers: ["Retry-After": "9223372036854775807"])],
            status: 75, then: { cli, url in try await expectRetryWithinADay(cli, url) }),
        DocumentCase(
            description: "Retry-After of a 30-digit number on a 429",
            documents: ["/doc/feed": Document(status: 429, headers: ["Retry-After": "123456789012345678901234567890"])],
            status: 75, then: { cli, url in try await expectRetryWithinADay(cli, url) }),
        DocumentCase(
            description: "Retry-After of 1e400 is no answer: backoff, then exit 75",
            documents: ["/doc/feed": Document(status: 503, headers: ["Retry-After": "1e400"])], status: 75),
        DocumentCase(
            description: "Retry-After as a date in the year 9999",
            documents: ["/doc/feed": Document(status: 503, headers: ["Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"])],
            status: 75, then: { cli, url in try await expectRetryWithinADay(cli, url) }),
        DocumentCase(
            description: "a redirect to file:///etc/passwd",
            documents: ["/doc/feed": Document(status: 302, headers: ["Location": "file:///etc/passwd"])], status: 65),
        DocumentCase(
            description: "a redirect to itself, forever",
            documents: ["/doc/feed": Document(status: 302, headers: ["Location": "/doc/feed"])], status: 65),
        DocumentCase(description: "status 999", documents: ["/doc/feed": Document(status: 999, "?")], status: 65),
        DocumentCase(
            description: "an HTML page instead of a feed",
            documents: [
                "/doc/feed": Document(
                    headers: ["Content-Type": "text/html"], "<!doctype html><html><body>hi</body></html>")
            ],
            status: 65, says: "web page"),
        DocumentCase(description: "an empty 200", documents: ["/doc/feed": Document()], status: 65),
        // Pictures
        DocumentCase(
            description: "pictures that start like images and are not",
            documents: [
                "/doc/feed": json(
                    #"{"items": [{"id": "p1", "picUrl": "/doc/html.png"}, {"id": "p2", "picUrl": "/doc/short.jpg"}, "#
                        + #"{"id": "p3", "picUrl": "/doc/zero.gif"}, {"id": "p4", "picUrl": "/doc/good.png"}, "#
                        + #"{"id": "p5", "picUrl": "/doc/exif.jpg"}, "#
                        + #"{"id": "p6", "picUrl": "data:image/png;base64,\#(String(repeating: "A", count: 9000))"}]}"#
                ),
                "/doc/exif.jpg": Document(body: cameraJPEG),
                "/doc/html.png": Document(
                    body: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                        + Data("<html><body>not found</body></html>".utf8)),
                "/doc/short.jpg": Document(body: Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8)),
                "/doc/zero.gif": Document(body: Data("GIF89a".utf8) + Data([0, 0, 0, 0, 0, 0, 0])),
                "/doc/good.png": Document(body: DemoServer.png(seed: 4)),
            ],
            status: 0, arguments: ["--images", "all"],
            then: { cli, url in
                let statuses = try await cli.listedItems("--feed", url).map {
                    ($0["image"] as! [String: Any])["status"] as! String
                }
                #expect(
                    statuses == ["failed", "failed", "failed", "cached", "cached", "none"],
                    "a data: URI over 8 KB is dropped, its item kept")
            }),
    ]

    @Test(arguments: documentCases)
    func hostileDocument(_ hostile: DocumentCase) async throws {
        let cli = try CLI(retryAttempts: 3)
        try await withServer(items: Self.goodItems, perPage: 10) { server, good in
            try #require(try await cli.run("pull", "--feed", good, "--images", "none").status == 0)
            var faults = server.faults
            faults.documents = hostile.documents
            server.setFaults(faults)
            let url = await server.baseURL + hostile.feed
            let result = try await cli.start(["pull", "--feed", url] + hostile.arguments).wait()
            try await Self.expectSound(cli, result, status: hostile.status, good: good)
            if let says = hostile.says { #expect(result.stderr.contains(says), "\(result.stderr)") }
            try await hostile.then?(cli, url)
        }
    }

    /// The two modules keep one range each (neither may import the other): they must agree, or a
    /// total the decoder accepts would be forgotten when the store reads it back.
    @Test func theStoreAcceptsTheCountsTheDecodersAccept() {
        #expect(FeedCursor.totals == FeedLimits.totals)
    }

    /// A JSON string as `--json` writes it: text of any script as it is, what a terminal would obey
    /// as `\uXXXX`, parsed back to the same text.
    @Test func jsonStringsEscapeOnlyWhatATerminalWouldObey() throws {
        let text = "plain \"quoted\" back\\slash\ttab\nline\r é 中文 😀 \u{1B}[31m \u{7F} \u{85} \u{202E} \u{2028} end"
        let literal = JSON.string(text)
        #expect(
            literal
                == #""plain \"quoted\" back\\slash\ttab\nline\r é 中文 😀 \u001b[31m \u007f \u0085 \u202e \u2028 end""#)
        let parsed = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed)
        #expect(parsed as? String == text)
    }

    /// A URL's password never leaves feedsync, wherever it is in a text; what only looks like one stays.
    @Test func passwordsInTextAreHidden() {
        #expect(
            Redact.passwords(in: "see https://bob:p#ss@host/x and http://a.example/@me, mail@x, ftp://u:pw@h")
                == "see https://bob:***@host/x and http://a.example/@me, mail@x, ftp://u:***@h")
        #expect(Redact.passwords(in: "no address: x@y, a://") == "no address: x@y, a://")
        #expect(Redact.passwords(in: "") == "")
    }

    // MARK: Broken HTTP

    @Test(arguments: [
        ("headers cut mid-line, then FIN", Data("HTTP/1.1 200 OK\r\nContent-Ty".utf8), false),
        ("headers cut mid-line, then a reset", Data("HTTP/1.1 200 OK\r\nContent-Ty".utf8), true),
        (
            "a Content-Length longer than the body",
            Data("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"items\": [".utf8), false
        ),
        ("a status line and nothing else", Data("HTTP/1.1 200 OK\r\n".utf8), false),
    ])
    func brokenResponsesAreTransient(_ name: String, _ answer: Data, _ reset: Bool) async throws {
        let cli = try CLI(retryAttempts: 2)
        let server = try RawServer(answer: answer, reset: reset)
        defer { server.stop() }
        let result = try await cli.start(["pull", "--feed", server.url]).wait()
        try await Self.expectSound(cli, result, status: 75, good: nil)
    }

    @Test func aServerThatDoesNotSpeakHTTPIsUnusable() async throws {
        let cli = try CLI(retryAttempts: 2)
        let server = try RawServer(answer: Data("SSH-2.0-OpenSSH_9.2\r\n\u{1B}[2J".utf8))
        defer { server.stop() }
        let result = try await cli.start(["pull", "--feed", server.url]).wait()
        #expect([65, 75].contains(result.status), "\(result.stderr)")
        try await Self.expectSound(cli, result, status: result.status, good: nil)
    }

    // MARK: Checks

    /// The invariants of every case.
    static func expectSound(
        _ cli: CLI, _ result: RunResult, status: Int32, good: String?, storeReadable: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(result.status == status, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        if status != 0 {
            #expect(
                result.stderr.hasSuffix("\n") && result.stderr.filter { $0 == "\n" }.count == 1,
                "one line: \(result.stderr)", sourceLocation: sourceLocation)
        }
        let unsafe = (result.stdout + result.stderr).unicodeScalars.filter {
            // Tabs separate list's fields when its output is not a terminal, and are harmless on one.
            $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" || (0x7F...0x9F).contains($0.value)
                || $0.value == 0x202E
        }
        #expect(unsafe.isEmpty, "nothing unsafe reaches the terminal", sourceLocation: sourceLocation)
        if storeReadable, FileManager.default.fileExists(atPath: cli.databasePath) {
            let store = try cli.openStore()
            #expect(try await store.integrityCheck() == ["ok"], sourceLocation: sourceLocation)
            if let good {
                #expect(
                    try await store.list(ListQuery(feedURL: good), page: 1, perPage: 1).total == goodItems,
                    "what was committed before is kept", sourceLocation: sourceLocation)
            }
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cli.outside.path).isEmpty,
            "nothing written outside the data home", sourceLocation: sourceLocation)
    }

    /// The page's items are stored, the backfill is over, and `status` says why.
    static func expectBackfillEnded(_ cli: CLI, _ url: String, keys: [String]) async throws {
        #expect(try await cli.listedItems("--feed", url).map { $0["id"] as! String } == keys)
        let status = try await cli.run("status", "--json")
        let feeds = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])[
            "feeds"]
        let feed = try #require((feeds as? [[String: Any]])?.first { $0["url"] as? String == url })
        let backfill = try #require(feed["backfill"] as? [String: Any])
        #expect(backfill["done"] as? Bool == true)
        #expect((backfill["note"] as? String)?.contains("not followed") == true, "\(backfill)")
        let text = try await cli.run("status")
        #expect(text.stdout.contains("ended: the next page's link"), "\(text.stdout)")
    }

    /// The feed is skipped until a time no more than a day away.
    static func expectRetryWithinADay(_ cli: CLI, _ url: String) async throws {
        let feed = try #require(try await cli.openStore().feed(url: url))
        let next = try #require(feed.nextRetryAt)
        #expect(next.timeIntervalSinceNow <= 86_400 + 60 && next.timeIntervalSinceNow > 0)
    }
}
