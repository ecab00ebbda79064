import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Testing

/// The everyday reader commands (feeds, rename, remove, show, open, mark) through the built binary
/// against the demo server.
@Suite(.serialized) struct ReaderTests {
    @Test func feedsShowsTitlesAndCountsAndMarksChangeUnread() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(.rss)
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            // Another spelling of the same URL is the same feed, never a second subscription.
            let shouted = url.replacingOccurrences(of: "http://127.0.0.1", with: "HTTP://127.0.0.1")
            #expect(try await cli.run("pull", "--feed", shouted).status == 0)
        }
        var listed = try await feeds(cli)
        #expect(listed.count == 1)
        #expect(listed[0]["number"] as? Int == 1 && listed[0]["title"] as? String == "feedsync demo")
        #expect(listed[0]["items"] as? Int == 95 && listed[0]["unread"] as? Int == 95)
        #expect(listed[0]["outcome"] as? String == "ok" && listed[0]["last_pull"] is String)
        #expect(listed[0]["folder"] is NSNull)

        let page = try json(try await cli.run("list", "--json"))
        let first = (page["items"] as! [[String: Any]])[0]
        #expect(first["unread"] as? Bool == true && first["feed"] as? String == "feedsync demo")
        let number = try #require(first["number"] as? Int)

        let shown = try await cli.run("show", String(number))
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.hasPrefix("Item 95\nfeedsync demo · "), "\(shown.stdout)")
        #expect(shown.stdout.contains("Summary of item 95."))
        listed = try await feeds(cli)
        #expect(listed[0]["unread"] as? Int == 94, "show marks the item read")
        let again = try json(try await cli.run("list", "--json"))
        #expect((again["items"] as! [[String: Any]])[0]["number"] as? Int == number, "numbers stay")
        #expect((again["items"] as! [[String: Any]])[0]["unread"] as? Bool == false)

        #expect(try await cli.run("mark", "unread", String(number)).status == 0)
        #expect(try await feeds(cli)[0]["unread"] as? Int == 95)
        let all = try await cli.run("mark", "read", "--all", "--feed", "demo")
        #expect(all.status == 0 && all.stdout == "95 items marked read\n", "\(all)")
        #expect(try await feeds(cli)[0]["unread"] as? Int == 0)
        #expect(try await cli.run("mark", "unread", "--all", "--before", "2000-01-01").stdout.hasPrefix("0 items"))
        let missing = try await cli.run("mark", "read", "999999")
        #expect(missing.status == 64 && missing.stderr.contains("999999"))

        #expect(try await cli.run("rename", "demo", "My demo").status == 0)
        let text = try await cli.run("feeds")
        #expect(
            text.stdout.hasPrefix("1  My demo  95 items  0 unread  just now, ok  http://127.0.0.1:"), "\(text.stdout)")
        #expect(try await cli.run("rename", "1", "").status == 0)
        #expect(try await feeds(cli)[0]["title"] as? String == "feedsync demo", "an empty title gives back its own")
        let nothing = try await cli.run("rename", "no such feed", "x")
        #expect(nothing.status == 64 && nothing.stderr.contains("feedsync feeds lists them"))
    }

    @Test func showRendersContentWithNumberedLinksAndOpenUsesTheBrowser() async throws {
        let cli = try CLI()
        let rss = """
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
            <title>Links &amp; more</title><link>https://example.com/</link>
            <item><title>Read me</title><link>https://example.com/read</link><guid>r1</guid>
            <description>Short.</description>
            <content:encoded><![CDATA[<p>First <a href="/one">link</a> here.</p><script>evil()</script>
            <ul><li>a</li><li>b <a href="https://two.example/">two</a></li></ul><p>Line<br>break \u{1B}[31m</p>]]>
            </content:encoded></item></channel></rss>
            """
        try await withServer { server, _ async throws -> Void in
            var faults = Faults()
            faults.documents["/doc/feed"] = .init(headers: ["Content-Type": "application/rss+xml"], rss)
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", await server.baseURL + "/doc/feed").status == 0)
        }
        let shown = try await cli.run("show", "1")
        #expect(
            shown.stdout.hasSuffix(
                """
                First link [1] here.

                • a
                • b two [2]

                Line
                break [31m

                [1] https://example.com/one
                [2] https://two.example/

                """), "\(shown.stdout)")
        #expect(!shown.stdout.contains("evil") && !shown.stdout.contains("\u{1B}"), "no script, no escape sequence")
        let detail = try json(try await cli.run("show", "1", "--json"))
        #expect(detail["number"] as? Int == 1 && detail["feed"] as? String == "Links & more")
        #expect((detail["content_html"] as? String)?.contains("<a href=\"/one\">") == true)
        #expect((detail["text"] as? String)?.hasPrefix("First link [1] here.") == true)

        // $BROWSER gets the link as one argument; with no browser at all, the link is printed.
        let record = cli.outside.path + "/opened"
        let script = cli.outside.path + "/browser.sh"
        try "#!/bin/sh\nprintf '%s' \"$1\" > \(record)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        // Run by sh, not executed itself: a child another test starts meanwhile can inherit the
        // script's descriptor while it is written, and executing it then fails (ETXTBSY).
        let browsing = try CLI(environment: ["BROWSER": "/bin/sh " + script, "FEEDSYNC_HOME": cli.home.path])
        #expect(try await browsing.run("open", "1").status == 0)
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "https://example.com/read")
        let bare = try CLI(environment: ["BROWSER": "", "PATH": "/nonexistent", "FEEDSYNC_HOME": cli.home.path])
        let printed = try await bare.run("open", "1")
        #expect(printed.status == 0 && printed.stdout == "https://example.com/read\n", "\(printed)")
    }

    @Test func removeTakesTheFeedItsItemsAndPicturesAndWaitsForAPull() async throws {
        let cli = try CLI()
        try await withServer { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            var faults = Faults()
            faults.latency = 30
            server.setFaults(faults)
            server.clearLog()
            let pulling = try cli.start(["pull", "--force"])
            // Once the server has the pull's first request, the pull holds the lock.
            for _ in 0..<200 where server.requests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            let busy = try await cli.run("remove", "--yes", "1")
            #expect(busy.status == 75, "a running pull holds the lock: \(busy)")
            pulling.kill9()
            _ = try await pulling.wait()
        }
        let pictures = cli.home.path + "/pictures"
        #expect(try !FileManager.default.contentsOfDirectory(atPath: pictures).isEmpty)
        let removed = try await cli.run("remove", "--yes", "1")
        #expect(removed.status == 0 && removed.stdout.hasPrefix("removed 1 "), "\(removed)")
        #expect(try await feeds(cli).isEmpty)
        #expect(try await cli.listedKeys().isEmpty)
        let left = try FileManager.default.subpathsOfDirectory(atPath: pictures).filter { path in
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: pictures + "/" + path, isDirectory: &folder)
                && !folder.boolValue && path != ".lock"
        }
        #expect(left.isEmpty, "no picture file is left: \(left)")
        #expect(try await cli.run("remove", "--yes", "1").status == 64)
    }
}

/// `list`'s views: one timeline of all feeds, the filters, and what it prints where.
@Suite(.serialized) struct ListTests {
    /// An RSS document of `items` (title, date or nil, description).
    static func rss(_ title: String, _ items: [(String, String?, String)]) -> String {
        let entries = items.map { item in
            "<item><title>\(item.0)</title><guid>\(title)-\(item.0)</guid>"
                + (item.1.map { "<pubDate>\($0)</pubDate>" } ?? "") + "<description>\(item.2)</description></item>"
        }
        return "<rss version=\"2.0\"><channel><title>\(title)</title>\(entries.joined())</channel></rss>"
    }

    func serve(_ server: DemoServer, _ documents: [String: String]) {
        var faults = Faults()
        for (path, text) in documents {
            faults.documents[path] = .init(headers: ["Content-Type": "application/rss+xml"], body: Data(text.utf8))
        }
        server.setFaults(faults)
    }

    func titles(_ cli: CLI, _ arguments: String...) async throws -> [String] {
        let result = try await cli.start(["list", "--json", "--per-page", "100"] + arguments).wait()
        let page = try json(result)
        return try #require(page["items"] as? [[String: Any]], "\(result)").map { $0["title"] as! String }
    }

    @Test func allFeedsAreOneTimelineNewestFirstAndAnUndatedItemKeepsItsFeedsOrder() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            serve(
                server,
                [
                    "/doc/a": Self.rss(
                        "A",
                        [
                            ("a-future", "Fri, 01 Jan 2100 00:00:00 GMT", "from the future"),
                            ("a-jan3", "Wed, 03 Jan 2024 10:00:00 GMT", "x"), ("a-undated", nil, "x"),
                            ("a-jan1", "Mon, 01 Jan 2024 10:00:00 GMT", "x"),
                        ]),
                    "/doc/b": Self.rss(
                        "B",
                        [
                            ("b-jan2", "Tue, 02 Jan 2024 10:00:00 GMT", "x"),
                            ("b-dec31", "Sun, 31 Dec 2023 10:00:00 GMT", "x"),
                        ]),
                    "/doc/c": Self.rss("C", [("c-first", nil, "x"), ("c-second", nil, "x")]),
                ])
            for path in ["/doc/a", "/doc/b", "/doc/c"] {
                let pull = try await cli.run("pull", "--feed", server.baseURL + path, "--images", "none")
                #expect(pull.status == 0, "\(pull.stderr)")
            }
        }
        let timeline = try await titles(cli)
        // A date in the future counts as the time the item was stored; an undated feed's items
        // count from when they were stored, in the feed's order; an undated item within a dated
        // feed follows the item above it.
        #expect(Array(timeline.suffix(5)) == ["a-jan3", "a-undated", "b-jan2", "a-jan1", "b-dec31"], "\(timeline)")
        #expect(Set(timeline.prefix(3)) == ["a-future", "c-first", "c-second"], "\(timeline)")
        #expect(timeline.firstIndex(of: "c-first")! < timeline.firstIndex(of: "c-second")!)
        // One feed's view keeps the feed's order.
        #expect(try await titles(cli, "--feed", "A") == ["a-future", "a-jan3", "a-undated", "a-jan1"])
        // Page by page the timeline is the same, each item once.
        var paged: [String] = []
        for page in 1...4 {
            let result = try await cli.run("list", "--json", "--per-page", "2", "--page", String(page))
            let object = try json(result)
            #expect(object["total"] as? Int == 8)
            paged += (object["items"] as! [[String: Any]]).map { $0["title"] as! String }
        }
        #expect(paged == timeline)
        #expect(try await titles(cli, "--since", "2024-01-02T12:00:00Z") == Array(timeline.prefix(5)))
        #expect(try await titles(cli, "--since", "2024-01-02T10:00:00Z") == Array(timeline.prefix(6)))
    }

    @Test func searchFindsWordsByTheirStartInTitleAndTextCJKIncluded() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            serve(
                server,
                [
                    "/doc/s": Self.rss(
                        "S",
                        [
                            ("Swift on Linux", "Wed, 03 Jan 2024 10:00:00 GMT", "A compiler story."),
                            (
                                "Gardening", "Tue, 02 Jan 2024 10:00:00 GMT",
                                "&lt;p&gt;Tomatoes and &lt;b&gt;swiftlets&lt;/b&gt;&lt;/p&gt;"
                            ),
                            ("東京の天気", "Mon, 01 Jan 2024 10:00:00 GMT", "今日は晴れです"),
                            ("Café crème", "Sun, 31 Dec 2023 10:00:00 GMT", "naïve résumé"),
                        ])
                ])
            #expect(try await cli.run("pull", "--feed", server.baseURL + "/doc/s", "--images", "none").status == 0)
        }
        #expect(try await titles(cli, "--search", "swi") == ["Swift on Linux", "Gardening"])
        #expect(try await titles(cli, "--search", "swift linux") == ["Swift on Linux"])
        #expect(try await titles(cli, "--search", "tomato") == ["Gardening"])
        #expect(try await titles(cli, "--search", "京") == ["東京の天気"])
        #expect(try await titles(cli, "--search", "晴れ") == ["東京の天気"])
        #expect(try await titles(cli, "--search", "東京の雨").isEmpty)
        #expect(try await titles(cli, "--search", "cafe resume") == ["Café crème"])
        // Nothing in the text is FTS5 syntax.
        #expect(try await titles(cli, "--search", "\"swift\" OR NEAR(*").isEmpty)
        let empty = try await cli.run("list", "--search", "?!")
        #expect(empty.status == 64 && empty.stderr.contains("--search"))
    }

    @Test func aPullKilledMidIndexingLeavesEveryStoredItemFindableAfterTheNextPull() async throws {
        // A document over 4 MiB, read and committed in parts: items and their index rows go in together.
        let cli = try CLI()
        let count = 20_000
        let filler = "&lt;p&gt;" + String(repeating: "grove ", count: 40) + "&lt;/p&gt;"
        let items = (1...count).map { ("Orchard note \($0)", nil as String?, "pear\($0) &amp;amp; plum" + filler) }
        func found(_ word: String) async throws -> Int {
            try await json(cli.run("list", "--json", "--per-page", "1", "--search", word))["total"] as! Int
        }
        try await withServer { server, _ async throws -> Void in
            serve(server, ["/doc/long": Self.rss("L", items)])
            let running = try await cli.start(["pull", "--feed", server.baseURL + "/doc/long", "--images", "none"])
            let store = try cli.openStore()
            var stored = 0
            for _ in 0..<3000 where stored == 0 {
                try await Task.sleep(nanoseconds: 10_000_000)
                stored = try await store.list(ListQuery(), page: 1, perPage: 1).total
            }
            running.kill9()
            _ = try await running.wait()
            stored = try await store.list(ListQuery(), page: 1, perPage: 1).total
            #expect(stored > 0 && stored < count, "killed mid-pull, after a part: \(stored) stored")
            #expect(try await found("plum") == stored, "every stored item is in the index, and nothing more")
            #expect(try await found("pear1") >= 1)
            #expect(try await cli.run("pull").status == 0)
        }
        #expect(try await found("plum") == count)
        #expect(try await found("pear\(count)") == 1)
        #expect(try await found("orchard") == count)
    }

    @Test func unreadCountsAndTheUnreadViewFollowPullsAndMarks() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            #expect(try await cli.run("mark", "read", "--all").status == 0)
            server.prepend(5)
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 0)
        }
        let unread = try await titles(cli, "--unread")
        #expect(unread == (31...35).reversed().map { "Item \($0)" }, "\(unread)")
        let result = try await cli.run("list", "--unread", "--json", "--per-page", "2")
        let page = try json(result)
        #expect(page["total"] as? Int == 5)
        #expect(try await cli.run("mark", "read", "1").status == 0)  // an old item: no change
        #expect(try await titles(cli, "--unread").count == 5)
    }

    @Test func aPipeGetsWholeLinesATerminalFittedOnesAndOnlyATerminalMovesTheReader() async throws {
        let cli = try CLI()
        let long = String(repeating: "word ", count: 60) + "end"
        try await withServer { server, _ async throws -> Void in
            serve(
                server, ["/doc/l": Self.rss("L", [(long, "Wed, 03 Jan 2024 10:00:00 GMT", "x"), ("short", nil, "x")])])
            #expect(try await cli.run("pull", "--feed", server.baseURL + "/doc/l", "--images", "none").status == 0)
        }
        let piped = try await cli.run("list")
        let lines = piped.stdout.split(separator: "\n")
        #expect(lines.count == 2, "no footer in a pipe: \(piped.stdout)")
        #expect(lines[0].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)[4] == long)
        #expect(try await cli.openStore().latestReadingPosition() == nil, "a pipe records no position")

        let shown = try await cli.start(["list"], terminalColumns: 60).wait()
        let screen = shown.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        #expect(screen.count == 3 && screen[2].hasPrefix("page 1 of 1 · 2 items"), "\(shown.stdout)")
        #expect(screen.allSatisfy { $0.count <= 60 } && screen[0].hasSuffix("…"), "\(screen)")
        #expect(screen[1].contains(" • ") && screen[1].hasSuffix("short"), "unread is marked")
        #expect(
            try await cli.openStore().latestReadingPosition() == ReadingPosition(feedURL: nil, page: 1, perPage: 20))
        // A page past the end is no place to be.
        _ = try await cli.start(["list", "--page", "7"], terminalColumns: 60).wait()
        #expect(try await cli.openStore().latestReadingPosition()?.page == 1)
        _ = try await cli.run("list", "--per-page", "1", "--page", "2", "--record-position")
        #expect(
            try await cli.openStore().latestReadingPosition() == ReadingPosition(feedURL: nil, page: 2, perPage: 1))
    }
}

/// An item's identity across pulls.
@Suite(.serialized) struct IdentityTests {
    static func story(picture: String, later: Bool = false) -> String {
        """
        <rss version="2.0"><channel><title>News</title>
        \(later ? "<item><title>Later</title><link>https://news.example/2026/later</link></item>" : "")
        <item><title>The story</title><link>https://news.example/2026/story</link>
        <enclosure url="\(picture)" type="image/jpeg" length="1"/></item>
        <item><title>Another</title><link>https://news.example/2026/another</link></item>
        </channel></rss>
        """
    }

    @Test func aStoryWhosePictureURLChangesStaysOneItemAndAnOldKeyGainsNoDuplicate() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            func serve(_ picture: String, later: Bool = false) {
                var faults = Faults()
                faults.documents["/doc/news"] = .init(
                    headers: ["Content-Type": "application/rss+xml"],
                    body: Data(Self.story(picture: picture, later: later).utf8))
                server.setFaults(faults)
            }
            let url = await server.baseURL + "/doc/news"
            let story = "https://news.example/2026/story"
            serve("https://cdn.example/story.jpg?w=600")
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            // The CDN renames the picture: the same story, not a new one.
            serve("https://cdn.example/story.jpg?w=640&v=2")
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 0)
            var keys = try await cli.listedKeys()
            #expect(keys.sorted() == ["https://news.example/2026/another", story], "\(keys)")
            // A store written by the rule before (link and picture), the item read there; then
            // the feed has a new item.
            try cli.execute(
                "UPDATE item SET key = key || '#https://cdn.example/story.jpg?w=640&v=2', read = 1 WHERE key = '\(story)'"
            )
            serve("https://cdn.example/story.jpg?w=640&v=2", later: true)
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 0)
            keys = try await cli.listedKeys()
            #expect(
                keys.sorted() == ["https://news.example/2026/another", "https://news.example/2026/later", story],
                "\(keys)")
            let items = try await cli.listedItems()
            #expect(items.first { $0["id"] as? String == story }?["unread"] as? Bool == false, "its read state kept")
        }
    }
}

/// A pull on a terminal shows what it is waiting for.
@Suite(.serialized) struct ProgressTests {
    @Test func aSlowFeedIsNamedOnTheTerminalAtOnceAndNothingOfItReachesAPipe() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, url async throws -> Void in
            var faults = Faults()
            faults.latency = 3  // no byte for 3 s
            server.setFaults(faults)
            let pulled = try await cli.start(["pull", "--feed", url, "--images", "none"], terminalColumns: 120).wait()
            #expect(pulled.status == 0, "\(pulled)")
            let segments = pulled.stdout.replacingOccurrences(of: "\u{1B}[K", with: "")
                .split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { !$0.isEmpty }
            #expect(
                segments.first?.hasPrefix("fetching 127.0.0.1 · pages 0") == true,
                "named before its answer: \(segments)")
            #expect(pulled.stdout.contains("\u{1B}[K"), "the line is cleared")
            let piped = try await cli.run("pull", "--force", "--images", "none")
            #expect(!piped.stdout.contains("fetching") && !piped.stderr.contains("fetching"), "\(piped)")
        }
    }
}

/// What `list` prints on a terminal fits it: measured in cells, as the terminal draws them.
@Suite(.serialized) struct FittingTests {
    /// Cells `text` takes on a terminal: 2 for CJK and full-width forms, 0 for combining marks.
    static func cells(_ text: Substring) -> Int {
        text.unicodeScalars.reduce(0) { sum, scalar in
            switch scalar.value {
            case 0x0300...0x036F: sum
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3,
                0xF900...0xFAFF, 0xFF00...0xFF60, 0xFFE0...0xFFE6:
                sum + 2
            default: sum + 1
            }
        }
    }

    @Test func listOnANarrowTerminalPrintsNoLineWiderThanIt() async throws {
        let cli = try CLI()
        let titles = [
            "東京の天気予報は晴れのち曇り、夕方から雨が降るでしょう", "Cafe\u{301} de\u{301}ja\u{300} vu, with a title long enough to be cut",
            "Short", "한국어 제목도 두 칸씩 차지합니다 그리고 꽤 깁니다",
        ]
        let items = titles.enumerated().map { index, title in
            "<item><title>\(title)</title><guid>f\(index)</guid><pubDate>Wed, 03 Jan 2024 10:0\(index):00 GMT</pubDate>"
                + "<enclosure url=\"https://pictures.example/\(index).png\" type=\"image/png\"/></item>"
        }
        let document =
            "<rss version=\"2.0\"><channel><title>A feed with a rather long name</title>"
            + items.joined() + "</channel></rss>"
        try await withServer { server, _ async throws -> Void in
            var faults = Faults()
            faults.documents["/doc/wide"] = .init(
                headers: ["Content-Type": "application/rss+xml"], body: Data(document.utf8))
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", server.baseURL + "/doc/wide", "--images", "none").status == 0)
        }
        for columns in [60, 100, 30] {
            let shown = try await cli.start(["list"], terminalColumns: columns).wait()
            let lines = shown.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
            #expect(lines.count == 5, "\(shown.stdout)")
            for line in lines {
                #expect(Self.cells(line) <= columns, "\(columns) columns: \(line) takes \(Self.cells(line))")
            }
            #expect(lines.prefix(4).allSatisfy { $0.hasSuffix("[pending]") } || columns < 40, "\(lines)")
        }
        // `feeds` and `status` too; `feeds` in aligned columns.
        try await withServer(items: 12) { _, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
        }
        for arguments in [["feeds"], ["status"]] {
            let shown = try await cli.start(arguments, terminalColumns: 60).wait()
            let lines = shown.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
            #expect(lines.allSatisfy { Self.cells($0) <= 60 }, "\(arguments): \(lines)")
        }
        // The feeds' lines (a hint may follow them).
        let feeds = try await cli.run("feeds").stdout.split(separator: "\n").filter { $0.contains(" items") }
        #expect(
            Set(feeds.map { $0.distance(from: $0.startIndex, to: $0.range(of: " items")!.lowerBound) }).count == 1,
            "the counts line up: \(feeds)")
    }
}

/// `add`: a feed, a web page that names feeds, and what a failure leaves subscribed.
@Suite(.serialized) struct AddTests {
    func feedURLs(_ cli: CLI) async throws -> [String] {
        try await feeds(cli).map { $0["url"] as! String }
    }

    @Test func aWebPageGivesItsFirstFeedAndNamesTheOthers() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let base = await server.baseURL
            var faults = Faults()
            faults.documents["/doc/feed1"] = .init(
                headers: ["Content-Type": "application/rss+xml"], ListTests.rss("First", [("one", nil, "x")]))
            faults.documents["/doc/page"] = .init(
                headers: ["Content-Type": "text/html"],
                """
                <!DOCTYPE html><html><head><title>A site</title><base href="/doc/">
                <link rel="stylesheet" href="/style.css"><link rel="alternate" type="text/html" href="/other">
                <LINK REL="Alternate" TYPE="application/rss+xml" href="feed1">
                <link rel="alternate" type="application/atom+xml" href="http://127.0.0.1:1/atom">
                <link rel="alternate" type="application/feed+json; charset=utf-8" href="/doc/feed.json">
                <link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
                </head><body><p>unclosed <div><table></body>
                """)
            faults.documents["/doc/plain"] = .init(headers: ["Content-Type": "text/html"], "<html><p>no feeds</p>")
            server.setFaults(faults)

            let added = try await cli.run("add", base + "/doc/page", "--title", "Mine")
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.contains("found 3 feeds on the page; taking \(base)/doc/feed1"), "\(added)")
            #expect(added.stdout.contains("http://127.0.0.1:1/atom, \(base)/doc/feed.json"))
            #expect(added.stdout.contains("added 1 Mine: 1 item"))
            #expect(try await feedURLs(cli) == ["\(base)/doc/feed1"])
            let again = try await cli.run("add", base + "/doc/feed1")
            #expect(again.status == 0 && again.stdout.contains("already subscribed: 1 Mine"))

            let plain = try await cli.run("add", base + "/doc/plain")
            #expect(plain.status == 65 && plain.stderr.contains("nothing was subscribed"), "\(plain)")
            let missing = try await cli.run("add", base + "/doc/missing")
            #expect(missing.status == 65 && missing.stderr.contains("404"), "\(missing)")
            // pull --feed keeps the same rule for a feed it subscribes; a feed subscribed before stays.
            let pulled = try await cli.run("pull", "--feed", base + "/doc/gone")
            #expect(pulled.status == 65 && pulled.stderr.hasSuffix("; nothing was subscribed\n"), "\(pulled)")
            #expect(try await feedURLs(cli) == ["\(base)/doc/feed1"])
            server.setFaults(Faults())
            #expect(try await cli.run("pull", "--feed", base + "/doc/feed1").status == 65)
            #expect(try await feedURLs(cli) == ["\(base)/doc/feed1"])
        }
        // No server there: nothing kept (a mistyped address), unless asked to keep it for the next pull.
        let offline = try await cli.run("add", "http://127.0.0.1:1/feed")
        #expect(offline.status == 75 && offline.stderr.contains("so nothing was subscribed"), "\(offline)")
        #expect(try await feedURLs(cli).last != "http://127.0.0.1:1/feed")
        let kept = try await cli.run("add", "--keep", "http://127.0.0.1:1/feed")
        #expect(
            kept.status == 75 && kept.stderr.contains("the next pull continues from it; it stays subscribed"),
            "no answer: the next pull asks it: \(kept)")
        #expect(try await feedURLs(cli).last == "http://127.0.0.1:1/feed")
    }
}

/// OPML: folders, odd outlines, invalid entries, idempotence, and the way back out.
@Suite(.serialized) struct OPMLTests {
    static let subscriptions = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- written by another reader -->
        <opml version="1.0">
          <head><title>My feeds</title></head>
          <body>
            <outline text="Top" type="rss" xmlUrl="https://top.example/feed" htmlUrl="https://top.example/"/>
            <outline title="News">
              <outline text="World &amp; more" type="rss" xmlUrl="https://news.example/world.xml"/>
              <outline text="Tech">
                <outline TITLE="Gadgets" XMLURL="HTTPS://Gadgets.Example:443/rss"/>
                <outline text="Broken" type="rss" xmlUrl="ftp://files.example/feed"/>
              </outline>
              <outline text="Empty folder"/>
            </outline>
            <outline text="No URL" type="rss"/>
            <outline text="Twice" type="rss" xmlUrl="https://news.example/world.xml"/>
          </body>
        </opml>
        """

    @Test func importKeepsFoldersReportsBadOutlinesByLineAndExportRoundTrips() async throws {
        let cli = try CLI()
        let file = cli.home.path + "/subscriptions.opml"
        try Self.subscriptions.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try await cli.run("import", file)
        #expect(imported.status == 65, "an invalid outline makes it 65: \(imported)")
        #expect(imported.stdout == "3 added, 1 already subscribed, 2 invalid; the next pull fetches them\n")
        #expect(imported.stderr.contains("line 11: xmlUrl \"ftp://files.example/feed\" cannot be used"), "\(imported)")
        #expect(imported.stderr.contains("line 15: a feed outline without xmlUrl"))
        let listed = try await feeds(cli)
        #expect(
            listed.map { $0["url"] as! String } == [
                "https://top.example/feed", "https://news.example/world.xml", "https://gadgets.example/rss",
            ])
        #expect(listed.map { $0["title"] as! String } == ["Top", "World & more", "Gadgets"])
        #expect(listed.map { $0["folder"] as? String } == [nil, "News", "News/Tech"])
        // The shells' completion of a feed argument offers the feeds' numbers and titles.
        let offered = try await cli.run(
            "---completion", "remove", "--", "positional@0", "2", "0", "feedsync", "remove", "")
        #expect(
            offered.stdout.split(separator: "\n") == ["1", "2", "3", "Top", "World & more", "Gadgets"], "\(offered)")

        // Again, from standard input: nothing new.
        let again = try await cli.start(["import", "-"], input: file).wait()
        #expect(again.stdout == "0 added, 4 already subscribed, 2 invalid\n", "\(again)")
        #expect(try await feeds(cli).count == 3)

        // Out and into another home: the same feeds, titles and folders, and the same file again.
        let exported = try await cli.run("export")
        #expect(exported.status == 0 && exported.stdout.contains("<outline text=\"Tech\" title=\"Tech\">"))
        #expect(exported.stdout.contains("text=\"World &amp; more\""))
        let copy = cli.home.path + "/exported.opml"
        #expect(try await cli.run("export", copy).status == 0)
        let other = try CLI()
        let read = try await other.run("import", copy)
        #expect(read.status == 0 && read.stdout.hasPrefix("3 added, 0 already"), "\(read)")
        let copied = try await feeds(other)
        #expect(copied.map { $0["folder"] as? String } == listed.map { $0["folder"] as? String })
        #expect(copied.map { $0["title"] as? String } == listed.map { $0["title"] as? String })
        #expect(copied.map { $0["url"] as? String } == listed.map { $0["url"] as? String })

        // A file that is not OPML subscribes nothing; a link planted at the export's name is not followed.
        try "<rss/>".write(toFile: file, atomically: true, encoding: .utf8)
        let notOPML = try await cli.run("import", file)
        #expect(notOPML.status == 65 && notOPML.stderr.contains("not an OPML file"))
        let target = cli.home.path + "/target"
        try "keep".write(toFile: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: cli.home.path + "/link.opml", withDestinationPath: target)
        #expect(try await cli.run("export", cli.home.path + "/link.opml").status == 74)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
    }

    @Test func exportWritesEachFolderOnceWithItsSubfoldersInside() throws {
        let entries = ["News/Tech", "News-x", nil, "News", "News/Tech"].enumerated().map { index, folder in
            OPML.Entry(url: "https://f.example/\(index)", title: "F\(index)", siteURL: nil, folder: folder, line: 0)
        }
        let written = OPML.write(entries, title: "t")
        #expect(written.components(separatedBy: "text=\"News\"").count == 2, "\(written)")
        let read = try OPML.read(Data(written.utf8)).entries
        #expect(read.map(\.url) == [2, 3, 0, 4, 1].map { "https://f.example/\($0)" })
        #expect(read.map(\.folder) == [nil, "News", "News/Tech", "News/Tech", "News-x"])
    }

    @Test func listByFolderTakesTheFoldersInsideIt() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let base = await server.baseURL
            var faults = Faults()
            for name in ["a", "b", "c"] {
                faults.documents["/doc/\(name)"] = .init(
                    headers: ["Content-Type": "application/rss+xml"],
                    ListTests.rss(name, [("\(name)-item", "Mon, 01 Jan 2024 10:00:00 GMT", "x")]))
            }
            server.setFaults(faults)
            let opml = cli.home.path + "/f.opml"
            try """
            <opml version="2.0"><body>
            <outline text="News"><outline text="A" xmlUrl="\(base)/doc/a"/>
              <outline text="Deep"><outline text="B" xmlUrl="\(base)/doc/b"/></outline></outline>
            <outline text="Newsletters"><outline text="C" xmlUrl="\(base)/doc/c"/></outline>
            </body></opml>
            """.write(toFile: opml, atomically: true, encoding: .utf8)
            #expect(try await cli.run("import", opml).status == 0)
            #expect(try await cli.run("pull", "--images", "none").status == 0)
        }
        func titles(_ folder: String) async throws -> Set<String> {
            let page = try await json(cli.run("list", "--folder", folder, "--json"))
            return Set((page["items"] as! [[String: Any]]).map { $0["title"] as! String })
        }
        #expect(try await titles("News") == ["a-item", "b-item"], "a folder and the folders inside it")
        #expect(try await titles("news/deep") == ["b-item"], "a path, letter case aside")
        #expect(try await titles("Deep") == ["b-item"], "a folder by its name alone")
        let unknown = try await cli.run("list", "--folder", "Sport")
        #expect(unknown.status == 64, "\(unknown)")
        #expect(
            unknown.stderr.contains("no folder is \"Sport\"; the folders: News, News/Deep, Newsletters"),
            "\(unknown.stderr)")
    }
}

/// What a pull shows on a terminal, and `status` in words.
@Suite(.serialized) struct PullOutputTests {
    @Test func theProgressLineFitsTheTerminalShowsRetriesAndTheSummaryCountsPictures() async throws {
        let cli = try CLI(environment: ["FEEDSYNC_RETRY_BASE_DELAY": "1"])
        try await withServer(items: 30, perPage: 10) { server, url async throws -> Void in
            var faults = Faults()
            faults.next = [.status(503)]
            server.setFaults(faults)
            let pulled = try await cli.start(["pull", "--feed", url], terminalColumns: 50).wait()
            #expect(pulled.status == 0, "\(pulled)")
            let segments = pulled.stdout.replacingOccurrences(of: "\u{1B}[K", with: "")
                .replacingOccurrences(of: "\r\n", with: "\n").split(whereSeparator: { $0 == "\r" || $0 == "\n" })
            let progress = segments.filter { $0.contains("pages ") }
            #expect(!progress.isEmpty && progress.allSatisfy { $0.count < 50 }, "\(segments)")
            #expect(
                segments.contains { $0.hasPrefix("127.0.0.1: retry 1 in ") && $0.contains(" s · fetching 127.0.0.1 ") },
                "\(segments)")
            // The 503 is a request made too; the summary wraps at the terminal's 50 columns.
            let summary = segments.suffix(3)
            #expect(
                summary.joined(separator: " ").contains(": 30 new items, 4   requests, 30 pictures")
                    && summary.allSatisfy { $0.count <= 50 }, "\(segments)")
            // On a wide terminal the whole summary.
            server.setFaults(Faults())
            let wide = try await cli.start(["pull", "--feed", url, "--force"], terminalColumns: 200).wait()
            #expect(wide.stdout.contains(": 0 new items, 1 request; due "), "\(wide.stdout)")
        }
        let status = try await cli.run("status")
        #expect(status.stdout.contains("just now, ok") && status.stdout.contains("KB cached)"), "\(status.stdout)")
    }
}
