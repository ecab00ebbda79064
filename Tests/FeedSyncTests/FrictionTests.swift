import FeedSyncDemoServer
import FeedSyncKit
import FeedSyncModel
import Foundation
import Testing

/// What a new user trips on, through the built binary (on a pseudo-terminal of a known width
/// where a point is about terminals): safe selectors, enclosures, `list`'s dates and marks,
/// messages that wrap, folders, a careful `add`, a calm pull, Ctrl-C, `show`'s pager and layout,
/// and the small ones.
@Suite(.serialized) struct FrictionTests {
    /// A failure's words for a feed whose URL is not ASCII: the URL cut off whole, by characters.
    @Test func theFailureOfAFeedWhoseURLIsNotASCIIIsSaidWithoutTheURL() {
        let url = "https://例え.jp/フィード"
        #expect(Words.failure("\(url): answered 404", url: url) == "answered 404 Not Found")
        #expect(Words.failure("\(url) answered 410", url: url) == "it answered 410 Gone")
    }

    /// A feed document served at `path` of the demo server.
    static func serve(_ server: DemoServer, _ path: String, _ body: String, type: String = "application/rss+xml") {
        var faults = server.faults
        faults.documents[path] = .init(headers: ["Content-Type": type], body)
        server.setFaults(faults)
    }

    static func rss(_ title: String, items: Int, extra: (Int) -> String = { _ in "" }) -> String {
        let entries = (1...items).map { n in
            "<item><title>\(title) \(n)</title><guid>\(title)-\(n)</guid><link>https://example.com/\(n)</link>"
                + "<pubDate>Mon, 0\(1 + n % 9) Jun 2025 10:00:00 GMT</pubDate><description>Text \(n).</description>"
                + extra(n) + "</item>"
        }
        return """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>\
            <title>\(title)</title>\(entries.joined())</channel></rss>
            """
    }

    static func format(_ date: Date, _ pattern: String, utc: Bool) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        if utc { formatter.timeZone = TimeZone(identifier: "UTC") }
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }

    /// What a terminal shows of `text` (`script`'s CR LF as LF), its progress line's redraws apart.
    static func screen(_ text: String) -> [String] {
        text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\u{1B}[K", with: "")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in String(line.split(separator: "\r", omittingEmptySubsequences: false).last ?? "") }
    }

    @Test func aBareNumberIsAFeedNumberOnlyAndRemoveSaysWhatGoesAndAsks() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            #expect(try await cli.run("pull", "--feed", await server.feedURL(.rss)).status == 0)
            Self.serve(server, "/doc/x20", Self.rss("Courier 2026", items: 25))
            #expect(try await cli.run("pull", "--feed", await server.baseURL + "/doc/x20").status == 0)
        }
        #expect(try await feeds(cli).count == 2)
        // No feed 20, 0 or 2026: a number is never matched against titles and URLs.
        for number in ["20", "0", "2026"] {
            let removed = try await cli.run("remove", "--yes", number)
            #expect(removed.status == 64, "\(removed)")
            #expect(removed.stderr.contains("no feed is numbered \(number): they run from 1 to 2"), "\(removed)")
        }
        #expect(try await feeds(cli).count == 2, "nothing removed")
        // Without a terminal to ask on, only with --yes.
        let unasked = try await cli.run("remove", "Courier")
        #expect(unasked.status == 64 && unasked.stderr.contains("feedsync remove --yes Courier"), "\(unasked)")
        #expect(try await feeds(cli).count == 2)
        // On a terminal it says what goes and asks.
        let answers = cli.outside.path + "/answers"
        try "n\n".write(toFile: answers, atomically: true, encoding: .utf8)
        let declined = try await cli.start(["remove", "Courier"], terminalColumns: 100, input: answers).wait()
        #expect(declined.status == 0, "\(declined)")
        #expect(declined.stdout.contains("This removes:") && declined.stdout.contains("2 Courier 2026: 25 items"))
        #expect(declined.stdout.contains("Remove it? [y/N]") && declined.stdout.contains("nothing removed"))
        #expect(try await feeds(cli).count == 2)
        try "y\n".write(toFile: answers, atomically: true, encoding: .utf8)
        let accepted = try await cli.start(["remove", "Courier"], terminalColumns: 100, input: answers).wait()
        #expect(accepted.status == 0 && accepted.stdout.contains("removed 2 Courier 2026: 25 items"), "\(accepted)")
        #expect(try await feeds(cli).map { $0["number"] as? Int } == [1])
        let unknown = try await cli.run("list", "--feed", "7")
        #expect(unknown.status == 64 && unknown.stderr.contains("no feed is numbered 7: 1 is the only one"))
        let yes = try await cli.run("remove", "-y", "1")
        #expect(yes.status == 0 && yes.stdout.hasPrefix("removed 1 feedsync demo: 95 items, "), "\(yes)")
        #expect(try await feeds(cli).isEmpty)
    }

    @Test func aPodcastsEnclosuresAreShownListedAndPlayedOnThePage() async throws {
        let cli = try CLI()
        let podcast = Self.rss("Pod", items: 3) { n in
            "<enclosure url=\"/audio/e\(n).mp3\" length=\"24117248\" type=\"audio/mpeg\"/>"
                + "<itunes:duration>42:0\(n)</itunes:duration>"
        }
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, "/doc/pod", podcast)
            #expect(try await cli.run("pull", "--feed", await server.baseURL + "/doc/pod").status == 0)
            let base = await server.baseURL
            let shown = try await cli.run("show", "1")
            #expect(
                shown.stdout.contains("enclosure: \(base)/audio/e1.mp3 (audio/mpeg · 23.0 MB · 42:01)"),
                "\(shown.stdout)")
            let detail = try json(try await cli.run("show", "1", "--json"))
            let files = try #require(detail["enclosures"] as? [[String: Any]])
            #expect(files.count == 1 && files[0]["url"] as? String == "\(base)/audio/e1.mp3")
            #expect(files[0]["type"] as? String == "audio/mpeg" && files[0]["length"] as? Int == 24_117_248)
            #expect(files[0]["duration"] as? Int == 2521)
            let listed = try await cli.listedItems()
            #expect(listed.allSatisfy { ($0["enclosures"] as? [[String: Any]])?.count == 1 }, "\(listed)")
            // Three short items with web links, but sound: not a feed of summaries.
            #expect(try await feeds(cli)[0]["summaries_only"] as? Bool == false)

            // The reading page: a link, and a player that asks for nothing until played, whose
            // server the frame's policy allows for media only.
            let served = try await ServeTests().serve(cli)
            defer { served.process.kill9() }
            let content = try await served.curl("/content/1")
            #expect(content.body.contains("<a href=\"\(base)/audio/e1.mp3\""), "\(content.body)")
            #expect(content.body.contains("<audio controls preload=\"none\" src=\"\(base)/audio/e1.mp3\">"))
            let policy = content.headers.split(separator: "\r\n").first {
                $0.lowercased().hasPrefix("content-security")
            }
            #expect(policy?.hasSuffix("; media-src \(base)") == true, "\(content.headers)")
            #expect(policy?.contains("default-src 'none'") == true)
        }
    }

    @Test func listOnATerminalShowsTodaysTimesOnlyTellingPictureMarksAndTakesShortOptions() async throws {
        let cli = try CLI()
        let now = Date()
        let today = Self.format(now.addingTimeInterval(-60), "EEE, dd MMM yyyy HH:mm:ss 'GMT'", utc: true)
        let feed = """
            <rss version="2.0"><channel><title>Days</title>
            <item><title>Today</title><guid>a</guid><link>https://example.com/a</link><pubDate>\(today)</pubDate>
              <enclosure url="https://127.0.0.1:1/never.png" type="image/png"/></item>
            <item><title>Old</title><guid>b</guid><link>https://example.com/b</link>\
            <pubDate>Mon, 02 Jun 2025 10:00:00 GMT</pubDate></item>
            </channel></rss>
            """
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, "/doc/days", feed)
            #expect(
                try await cli.run("pull", "--feed", await server.baseURL + "/doc/days", "--images", "none").status == 0)
        }
        let shown = try await cli.start(["list", "-n", "5", "-p", "1"], terminalColumns: 80).wait()
        let lines = Self.screen(shown.stdout)
        let time = Self.format(now.addingTimeInterval(-60), "HH:mm", utc: false)
        #expect(lines[0].hasPrefix("1 • \(time)       Days  Today") && lines[0].hasSuffix("[pending]"), "\(lines)")
        #expect(lines[1].hasPrefix("2 • 2025-06-02  Days  Old") && !lines[1].contains("["), "\(lines)")
        // Short options: -u unread, -s search, -f feed.
        #expect(try await cli.run("mark", "read", "1-1").stdout == "1 item marked read\n")
        let unread = try await cli.start(["list", "-u", "-f", "1", "-s", "old"], terminalColumns: 80).wait()
        #expect(Self.screen(unread.stdout).first?.contains("Old") == true, "\(unread.stdout)")
        // Ranges and relative dates.
        let ranged = try await cli.run("mark", "unread", "1-2")
        #expect(ranged.stdout == "2 items marked unread\n", "\(ranged)")
        let reversed = try await cli.run("mark", "read", "2-1")
        #expect(reversed.status == 64 && reversed.stderr.contains("no item number or range"), "\(reversed)")
        let recent = try await cli.listedItems("--since", "yesterday")
        #expect(recent.map { $0["title"] as? String } == ["Today"])
        #expect(try await cli.listedItems("--since", "2h").count == 1)
        #expect(try await cli.run("mark", "read", "--all", "--before", "yesterday").stdout == "1 item marked read\n")
        // At most 100 000 numbers however they are given, checked before anything is marked.
        let many = try await cli.run("mark", "read", "1-60000", "60001-100001")
        #expect(many.status == 64 && many.stderr.contains("more than 100000 items named"), "\(many)")
        let most = try await cli.run("mark", "read", "1-100000")
        #expect(most.stderr.hasSuffix("and 99988 more; the others are marked\n"), "\(most)")
    }

    @Test func messagesWrapAtTheTerminalsWidthAndOnlyListRowsAreCut() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
        }
        let status = try await cli.start(["status"], terminalColumns: 50).wait()
        let lines = Self.screen(status.stdout)
        #expect(lines.allSatisfy { $0.count <= 50 }, "\(lines)")
        let joined = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(
            joined.contains("summaries only; feedsync full-text 1 on fetches each item's whole article"), "\(lines)")
        // Wrapped under the value, not the label.
        let wrapped = try #require(lines.firstIndex { $0.hasPrefix("  articles:") })
        #expect(lines[wrapped + 1].hasPrefix(String(repeating: " ", count: 17)), "\(lines)")
        let nothing = try await cli.start(["pull"], terminalColumns: 60).wait()
        let said = Self.screen(nothing.stdout).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(said.contains("feedsync pull --force asks now"), "\(nothing.stdout)")
        #expect(Self.screen(nothing.stdout).allSatisfy { $0.count <= 60 })
    }

    @Test func foldersAreFiledByImportAndByFolderAndShownByFeedsAndThePage() async throws {
        let cli = try CLI()
        let a = "http://127.0.0.1:9/a.xml"
        let b = "http://127.0.0.1:9/b.xml"
        let plain = cli.outside.path + "/plain.opml"
        try """
        <opml version="2.0"><body><outline type="rss" text="A" xmlUrl="\(a)"/>\
        <outline type="rss" text="B" xmlUrl="\(b)"/></body></opml>
        """.write(toFile: plain, atomically: true, encoding: .utf8)
        #expect(try await cli.run("import", plain).stdout.hasPrefix("2 added"))
        // The same feeds in folders: filed there, as they were in none.
        let filed = cli.outside.path + "/filed.opml"
        try """
        <opml version="2.0"><body><outline text="Tech"><outline type="rss" text="A" xmlUrl="\(a)"/>\
        <outline type="rss" text="B" xmlUrl="\(b)"/></outline></body></opml>
        """.write(toFile: filed, atomically: true, encoding: .utf8)
        let imported = try await cli.run("import", filed)
        #expect(imported.stdout.hasPrefix("0 added, 2 already subscribed (2 of them filed in Tech"), "\(imported)")
        #expect(try await feeds(cli).map { $0["folder"] as? String } == ["Tech", "Tech"])
        let listed = try await cli.run("list", "--folder", "Tech")
        #expect(listed.status == 0, "\(listed)")
        // `folder` moves them, and --none takes them out.
        let moved = try await cli.run("folder", "2", "News/World")
        #expect(moved.status == 0 && moved.stdout == "filed in News/World: 2 B\n", "\(moved)")
        let table = try await cli.start(["feeds"], terminalColumns: 160).wait()
        let rows = Self.screen(table.stdout)
        #expect(rows[0].contains("  Tech  ") && rows[1].contains("  News/World  "), "\(rows)")
        #expect(try await cli.run("folder", "1", "--none").stdout == "in no folder now: 1 A\n")
        #expect(try await feeds(cli).map { $0["folder"] as? String } == [nil, "News/World"])
        let bad = try await cli.run("folder", "1", "a//b")
        #expect(bad.status == 64 && bad.stderr.contains("no folder name"), "\(bad)")
        let served = try await ServeTests().serve(cli)
        defer { served.process.kill9() }
        let api = try await served.curl("/api/feeds")
        #expect(api.body.contains("\"folder\": \"News/World\", \"unread\": 0"), "\(api.body)")
    }

    @Test func addTriesHTTPSThenHTTPAndKeepsNothingWhereNoServerIs() async throws {
        let cli = try CLI()
        let closed = try ServeTests.portNoConnectionTakes()
        try await withServer(items: 10, perPage: 10) { server, url async throws -> Void in
            let bare = String(url.dropFirst("http://".count))
            let added = try await cli.run("add", bare)
            #expect(added.status == 0 && added.stdout == "added 1 \(Feed.host(url)): 10 items\n", "\(added)")
            #expect(try await feeds(cli)[0]["url"] as? String == url, "https:// did not answer: http://")
            // A port nothing listens on: nothing kept, and the way to keep it said.
            let refused = try await cli.run("add", "http://127.0.0.1:\(closed)/feed.xml")
            #expect(refused.status == 75, "\(refused)")
            #expect(refused.stderr.contains("did not answer (refused), so nothing was subscribed"), "\(refused)")
            #expect(refused.stderr.contains("feedsync add --keep http://127.0.0.1:\(closed)/feed.xml"))
            #expect(try await feeds(cli).count == 1)
            let kept = try await cli.run("add", "--keep", "http://127.0.0.1:\(closed)/feed.xml")
            #expect(kept.status == 75 && kept.stderr.contains("it stays subscribed"), "\(kept)")
            #expect(try await feeds(cli).count == 2)
            // A server that answered with trouble: kept for a later pull.
            var faults = Faults()
            faults.documents["/doc/busy"] = .init(status: 503, headers: [:], "")
            server.setFaults(faults)
            let busy = try await cli.run("add", await server.baseURL + "/doc/busy")
            #expect(busy.status == 75 && busy.stderr.contains("it stays subscribed"), "\(busy)")
            #expect(try await feeds(cli).count == 3)
        }
    }

    @Test func aPullSaysOneLineAFeedWithNewsOrTroubleAndOneForTheRun() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, url async throws -> Void in
            Self.serve(server, "/doc/quiet", Self.rss("Quiet", items: 2))
            Self.serve(server, "/doc/gone", Self.rss("Soon gone", items: 2))
            for feed in [url, await server.baseURL + "/doc/quiet", await server.baseURL + "/doc/gone"] {
                #expect(try await cli.run("pull", "--feed", feed, "--images", "none").status == 0)
            }
            var faults = server.faults
            faults.documents["/doc/gone"] = nil  // a 404 now
            server.setFaults(faults)
            let pulled = try await cli.start(["pull", "--force", "--images", "none"], terminalColumns: 200).wait()
            #expect(pulled.status == 65, "\(pulled)")
            // The failure (said on standard error, the terminal's too) names the feed by number and
            // title, the status by its name, and the fix; the run's line follows. Nothing of the
            // two feeds without news.
            let lines = Self.screen(pulled.stdout).filter { !$0.isEmpty }
            #expect(
                lines == [
                    "feedsync: 3 Soon gone: it answered 404 Not Found; if it moved, feedsync remove 3 and add its new address",
                    "3 feeds asked, no new items, 1 failed; next due " + (lines.last?.suffix(5) ?? ""),
                ], "\(lines)")
            let verbose = try await cli.start(
                ["pull", "--force", "--images", "none", "--verbose"], terminalColumns: 200
            )
            .wait()
            #expect(Self.screen(verbose.stdout).filter { $0.contains(": 0 new items, 1 request") }.count == 2)
            let table = try await cli.run("feeds")
            #expect(table.stdout.contains("failed: it answered 404 Not Found"), "\(table.stdout)")
        }
    }

    @Test func theProgressLineNamesTheFeedAndCountsEveryByte() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, _ async throws -> Void in
            let url = await server.feedURL(.rss)
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            var faults = Faults()
            faults.latency = 2  // long enough for the line to be drawn
            server.setFaults(faults)
            let pulled = try await cli.start(["pull", "--force", "--images", "none"], terminalColumns: 200).wait()
            let drawn = pulled.stdout.split(separator: "\r").map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
            #expect(drawn.contains { $0.hasPrefix("fetching feedsync demo · pages 0") }, "\(drawn)")
            #expect(!drawn.contains { $0.contains(" · 0 B · ") && $0.contains("pages 1") }, "a page's bytes count")
        }
    }

    /// The process `script` runs for a test's terminal: the child whose signals are the command's.
    static func child(of script: RunningCLI) async throws -> pid_t {
        let parent = script.process.processIdentifier
        for _ in 0..<200 {
            let listed = (try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8)) ?? ""
            if let pid = listed.split(separator: " ").first.flatMap({ pid_t($0) }) { return pid }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CancellationError()
    }

    @Test func ctrlCSaysWhatWasKeptAndExits75InEveryLongCommand() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url async throws -> Void in
            var faults = Faults()
            faults.once = [2: .stall(30)]
            faults.articles = [1: .stall(30)]
            server.setFaults(faults)
            let base = await server.baseURL
            for (arguments, kept) in [
                (
                    ["add", url],
                    "1 \(Feed.host(url)) stays subscribed with 10 items so far; the next pull continues it"
                ),
                (["pull", "--force"], "the next pull continues from page 2"),
                (["extract", base + "/items/1"], "nothing was fetched"),
            ] {
                let running = try cli.start(arguments, terminalColumns: 120)
                try await Task.sleep(for: .milliseconds(1500))  // into the stalled page
                kill(try await Self.child(of: running), SIGINT)
                let ended = try await running.wait()
                #expect(ended.status == 75, "\(arguments): \(ended)")
                #expect(ended.stdout.contains("interrupted; \(kept)"), "\(arguments): \(ended.stdout)")
                // The progress line was cleared before the sentence.
                if let sentence = ended.stdout.range(of: "feedsync: interrupted"),
                    sentence.lowerBound > ended.stdout.startIndex
                {
                    #expect(ended.stdout[..<sentence.lowerBound].hasSuffix("\u{1B}[K"), "\(arguments): \(ended.stdout)")
                }
                var again = server.faults
                again.once = [2: .stall(30)]
                server.setFaults(again)
            }
        }
    }

    @Test func ctrlCWhileGCWaitsForThePictureFolderEndsItTheSameWay() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { _, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
        }
        // Another writer holds the picture folder's lock: gc waits for it.
        let lock = open(cli.home.path + "/pictures/.lock", O_RDWR | O_CREAT, 0o644)
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
        let running = try cli.start(["gc"], terminalColumns: 120)
        try await Task.sleep(for: .milliseconds(1000))
        kill(try await Self.child(of: running), SIGINT)
        try await Task.sleep(for: .milliseconds(300))
        close(lock)
        let ended = try await running.wait()
        #expect(ended.status == 75, "\(ended)")
        #expect(ended.stdout.contains("interrupted; what was tidied stays tidied"), "\(ended.stdout)")
        #expect(try await cli.run("gc", "--check").status == 0)
    }

    @Test func showPagesALongItemAndWritesHeadingsQuotesListsAndCodeAsText() async throws {
        let cli = try CLI(environment: ["LINES": "12"])
        let html = """
            <h2>A heading</h2><p>First paragraph.</p><blockquote><p>A quote that is long enough to wrap \
            at forty columns, surely.</p></blockquote><ol><li>one</li><li>two</li></ol>\
            <ul><li>dot</li></ul><pre>let x = 1
              indented()</pre><p>Last.</p>
            """
        let feed = """
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Doc</title>
            <item><title>Laid out</title><guid>l</guid><content:encoded><![CDATA[\(html)]]></content:encoded></item>
            </channel></rss>
            """
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, "/doc/laid", feed)
            #expect(try await cli.run("pull", "--feed", await server.baseURL + "/doc/laid").status == 0)
        }
        let piped = try await cli.run("show", "1")
        let body = piped.stdout.components(separatedBy: "\n\n").dropFirst().joined(separator: "\n\n")
        #expect(
            body == """
                A heading

                First paragraph.

                │ A quote that is long enough to wrap at forty columns, surely.

                1. one
                2. two

                • dot

                    let x = 1
                      indented()

                Last.

                """, "\(piped.stdout)")
        // On a terminal shorter than the item: through $PAGER, with the heading in bold.
        let paged = cli.outside.path + "/paged"
        let pager = try CLI(environment: [
            "LINES": "12", "PAGER": "cat > \(paged); echo \"${FEEDSYNC_PASSWORD:-none}\" > \(paged)-secret",
            "FEEDSYNC_HOME": cli.home.path, "FEEDSYNC_PASSWORD": "s3cret",
        ])
        let shown = try await pager.start(["show", "1"], terminalColumns: 40).wait()
        #expect(shown.status == 0, "\(shown)")
        let secret = try String(contentsOfFile: paged + "-secret", encoding: .utf8)
        #expect(secret == "none\n", "the pager gets no password")
        let through = try String(contentsOfFile: paged, encoding: .utf8)
        #expect(through.contains("\u{1B}[1mA heading\u{1B}[22m") && !shown.stdout.contains("First paragraph"))
        #expect(through.contains("│ A quote that is long enough to wrap at\n│ forty columns, surely."), "\(through)")
        // Ctrl-C while the pager runs reaches the whole group, as a terminal's does: it is the
        // pager's (its trap runs), and feedsync, which ignores it meanwhile, ends as the pager ends.
        let script = cli.outside.path + "/interrupted-pager"
        try Data(
            "#!/bin/sh\ntrap 'echo trapped >> \(paged)-int' INT\ncat > /dev/null\nkill -INT 0\necho done >> \(paged)-int\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let interrupting = try CLI(environment: ["LINES": "12", "PAGER": script, "FEEDSYNC_HOME": cli.home.path])
        let interrupted = try await interrupting.start(["show", "1"], terminalColumns: 40).wait()
        #expect(interrupted.status == 0, "\(interrupted)")
        #expect(try String(contentsOfFile: paged + "-int", encoding: .utf8) == "trapped\ndone\n")
        // Short enough for the screen: printed.
        let tall = try CLI(environment: ["LINES": "80", "PAGER": "cat > \(paged)-no", "FEEDSYNC_HOME": cli.home.path])
        let printed = try await tall.start(["show", "1"], terminalColumns: 40).wait()
        #expect(printed.stdout.contains("First paragraph") && !FileManager.default.fileExists(atPath: paged + "-no"))
    }

    @Test func silenceIsNotSuccessHelpIsNearAndOldReadItemsCanGo() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            #expect(try await cli.run("rename", "1", "Mine").stdout == "1 is now titled: Mine\n")
            let exported = cli.outside.path + "/out.opml"
            #expect(try await cli.run("export", exported).stdout == "wrote 1 feed to \(exported)\n")
            #expect(try await cli.run("gc").stdout.hasPrefix("removed 0 temp files"))
            let help = try await cli.run("help", "lsit")
            #expect(help.status == 64 && help.stderr.contains("did you mean 'feedsync list'?"), "\(help)")
            let pullHelp = try await cli.run("pull", "--help").stdout.components(separatedBy: "\n")
            #expect(pullHelp[2].hasPrefix("USAGE: feedsync pull [--feed <url> ...]"), "\(pullHelp)")
            let first = pullHelp.firstIndex { $0.hasPrefix("  --") } ?? 0
            #expect(
                pullHelp[first...].filter { $0.hasPrefix("  --") }.prefix(5).map { String($0.split(separator: " ")[0]) }
                    == ["--feed", "--force", "--quiet", "--verbose", "--json"], "\(pullHelp)")

            // The demo's items are from 2023: those read and not starred go, the others stay.
            #expect(try await cli.run("mark", "read", "1-20").status == 0)
            #expect(try await cli.run("mark", "starred", "2").status == 0)
            let picturesBefore = try await cli.listedItems().filter {
                ($0["image"] as? [String: Any])?["path"] is String
            }
            let tidied = try await cli.run("gc", "--older-than", "90d")
            #expect(tidied.status == 0, "\(tidied)")
            #expect(tidied.stdout.hasPrefix("removed 19 read, unstarred items older than 90d\n"), "\(tidied.stdout)")
            let left = try await cli.listedItems()
            #expect(left.count == 11 && left.map { $0["position"] as? Int } == Array(1...11), "the list closes up")
            #expect(
                left.contains { $0["number"] as? Int == 2 } && left.filter { $0["unread"] as? Bool == true }.count == 10
            )
            #expect(picturesBefore.count == 30)
            let files = FileManager.default.enumerator(atPath: cli.home.path + "/pictures")?.allObjects.count ?? 0
            #expect(try await cli.run("gc", "--check").status == 0, "the cache and the store agree")
            // A later pull that meets them again in the feed does not bring them back.
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(try await cli.listedItems().count == 11)
            #expect(try await cli.run("status").stdout.contains("items stored:  11"))
            #expect(files > 0)
        }
    }
}
