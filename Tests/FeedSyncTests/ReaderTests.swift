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
