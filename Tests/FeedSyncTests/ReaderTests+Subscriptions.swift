import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Testing

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

    /// A folder in a stranger's file that no `folder` command could name (too long, a line break)
    /// files nothing: its feeds are added, unfiled.
    @Test func anOPMLFolderNoFolderCommandCouldNameFilesNothing() async throws {
        let cli = try CLI()
        let file = cli.home.path + "/hostile.opml"
        let long = String(repeating: "x", count: 500)
        try """
        <opml version="2.0"><body>
        <outline text="\(long)"><outline text="A" xmlUrl="https://a.example/feed"/></outline>
        <outline text="one&#10;two"><outline text="B" xmlUrl="https://b.example/feed"/></outline>
        <outline text="Fine"><outline text="C" xmlUrl="https://c.example/feed"/></outline>
        </body></opml>
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try await cli.run("import", file)
        #expect(imported.status == 0, "\(imported)")
        #expect(try await feeds(cli).map { $0["folder"] as? String } == [nil, nil, "Fine"])
    }

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
                summary.joined(separator: " ").contains(": 30 new items, 4 requests, 30   pictures")
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
