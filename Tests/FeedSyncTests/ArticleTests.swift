import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import Testing

/// Whole articles, end to end: a feed whose items link to pages (`/items/N` on the demo server),
/// pulled with `--full-text`.
@Suite struct ArticleTests {
    /// Each listed item's `show --json`, by the item's number on the demo server.
    static func shown(_ cli: CLI) async throws -> [Int: [String: Any]] {
        var shown: [Int: [String: Any]] = [:]
        for item in try await cli.listedItems() {
            let link = try #require(item["link"] as? String)
            let n = try #require(Int(link.split(separator: "/").last ?? ""))
            shown[n] = try json(try await cli.run("show", String(item["number"] as! Int), "--json"))
        }
        return shown
    }

    @Test func aFullTextFeedHasEveryArticleStoredWithItsPicturesAndReadsOffline() async throws {
        let cli = try CLI()
        try await withServer(items: 12, perPage: 12) { server, url in
            let added = try await cli.run("add", url, "--full-text")
            #expect(added.status == 0, "\(added.stderr)")
            #expect(try await cli.run("pull", "--force", "--images", "all").status == 0)
            #expect(server.requests.filter { $0.path.hasPrefix("/items/") }.count == 12, "each page once")
        }
        // The server is gone: every article reads whole, with its pictures.
        let shown = try await Self.shown(cli)
        #expect(shown.count == 12)
        for (n, item) in shown {
            #expect(item["content_source"] as? String == "page", "item \(n)")
            let text = item["text"] as? String ?? ""
            #expect(text.contains("Paragraph 5 of the article of item \(n)"), "item \(n): \(text.prefix(200))")
            #expect(!text.contains("A comment on item"), "item \(n): the page's comments are not the article")
            let pictures = item["pictures"] as? [[String: Any]] ?? []
            #expect(pictures.count == 2 && pictures.allSatisfy { $0["status"] as? String == "cached" }, "item \(n)")
        }
        // Searched too: words only the pages hold.
        let found = try await cli.listedItems("--search", "train sentence")
        #expect(found.count == 12)
        let plain = try await cli.run("show", String(try #require(shown.first?.value["number"] as? Int)))
        #expect(plain.stdout.contains("article: from the page"), "\(plain.stdout)")
        #expect(plain.stdout.contains("Summary: Summary of item"), "the feed's own summary says something else")
    }

    @Test func extractPrintsAPagesArticleSafeAndSaysWhenThereIsNone() async throws {
        let cli = try CLI()
        let paragraph = "The council met on Tuesday, and after a long debate, it voted to keep the library open."
        let page = cli.home.path + "/page.html"
        try """
        <html><head><meta property="og:title" content="Library saved"><meta name="author" content="Ann Writer"></head>
        <body><nav><a href="/">Home</a></nav><article>
        <p>\(String(repeating: paragraph + " ", count: 4))</p><p onclick="x()">\(paragraph) <script>alert(1)</script></p>
        <img src="pictures/one.jpg" alt="one"><p>\(String(repeating: paragraph + " ", count: 3))</p>
        </article></body></html>
        """.write(toFile: page, atomically: false, encoding: .utf8)
        let printed = try await cli.run("extract", page, "--url", "https://town.example/news/library.html", "--json")
        #expect(printed.status == 0, "\(printed.stderr)")
        let article = try json(printed)
        #expect(article["title"] as? String == "Library saved")
        #expect(article["byline"] as? String == "Ann Writer")
        #expect(article["pictures"] as? [String] == ["https://town.example/news/pictures/one.jpg"])
        let content = try #require(article["content"] as? String)
        #expect(
            content.contains("<img src=\"https://town.example/news/pictures/one.jpg\" loading=\"lazy\" alt=\"one\">"))
        #expect(!content.contains("onclick") && !content.contains("alert") && !content.contains("Home"), "\(content)")
        #expect((article["text"] as? String)?.hasPrefix(paragraph) == true)

        // A front page of links is printed all the same, and said not to read as an article.
        let links = (1...30).map { "<li><a href=\"/story/\($0)\">Story number \($0) of the day</a></li>" }
        let front = cli.home.path + "/front.html"
        try "<html><body><ul>\(links.joined())</ul></body></html>".write(
            toFile: front, atomically: false, encoding: .utf8)
        let listed = try await cli.run("extract", front)
        #expect(listed.status == 0 && listed.stdout.contains("Story number 30 of the day"), "\(listed)")
        #expect(
            listed.stderr.split(separator: "\n").count == 1 && listed.stderr.contains("does not read as an article"),
            "\(listed.stderr)")
        #expect(try json(try await cli.run("extract", front, "--json"))["readerable"] as? Bool == false)

        let empty = cli.home.path + "/empty.html"
        try "<html><head><title>Nothing</title><script>render()</script></head><body></body></html>"
            .write(toFile: empty, atomically: false, encoding: .utf8)
        let none = try await cli.run("extract", empty)
        #expect(none.status == 65)
        #expect(none.stdout.isEmpty)
        #expect(
            none.stderr.split(separator: "\n").count == 1 && none.stderr.contains("holds no article"), "\(none.stderr)")
    }

    @Test func aPageWithoutAnArticleLeavesTheFeedsTextAReasonAndTheFeedHealthy() async throws {
        let cli = try CLI()
        try await withServer(items: 6, perPage: 6) { server, url in
            var faults = Faults()
            faults.articles = [1: .status(404), 2: .notHTML, 3: .oversize(3 << 20), 4: .noArticle]
            server.setFaults(faults)
            let added = try await cli.run("add", url, "--full-text")
            #expect(added.status == 0, "the feed is fine: \(added.stderr)")
            let shown = try await Self.shown(cli)
            let reasons = [1: "answered 404", 2: "not HTML", 3: "larger than 2 MB", 4: "no article"]
            for (n, reason) in reasons {
                #expect(shown[n]?["content_source"] as? String == "feed")
                let error = shown[n]?["article_error"] as? String ?? ""
                #expect(error.contains(reason), "item \(n): \(error)")
            }
            #expect(
                shown[5]?["content_source"] as? String == "page" && shown[6]?["content_source"] as? String == "page")
            let status = try await cli.run("status", "--json")
            #expect(status.stdout.contains("\"last_outcome\": \"ok\""), "\(status.stdout)")
            // A page that is not HTML is not asked again; the others wait for their backoff.
            server.clearLog()
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(server.requests.filter { $0.path.hasPrefix("/items/") }.isEmpty, "none due yet")
        }
    }

    @Test func aPullAsksAHostForAtMostTwentyPagesAndTheNextPullTheRest() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 30) { server, url in
            // Each page held a while, so they overlap: four are asked for at once, two connections.
            var faults = Faults()
            faults.articles = Dictionary(uniqueKeysWithValues: (1...30).map { ($0, .stall(0.1)) })
            server.setFaults(faults)
            #expect(try await cli.run("add", url, "--full-text").status == 0)
            #expect(server.requests.filter { $0.path.hasPrefix("/items/") }.count == 20)
            #expect(server.peakConcurrentRequests == 2)
            #expect(Set(server.requests.compactMap(\.clientPort)).count <= 2)
            let waiting = try await cli.run("status")
            #expect(waiting.stdout.contains("articles:      20 stored, 10 waiting"), "\(waiting.stdout)")
            server.clearLog()
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(server.requests.filter { $0.path.hasPrefix("/items/") }.count == 10)
            // The reader's page and the newest first: the first pull took items 30 to 11.
            #expect(Set(server.requests.compactMap { Int($0.path.split(separator: "/").last ?? "") }) == Set(1...10))
        }
    }

    @Test func killedMidArticleNoArticleIsHalfStored() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, url in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            let feeds = try await feeds(cli)
            #expect(try await cli.run("full-text", String(feeds[0]["number"] as! Int), "on").status == 0)
            var faults = Faults()
            for n in 1...10 { faults.articles[n] = .stall(0.15) }
            server.setFaults(faults)
            let running = try cli.start(["pull", "--force", "--images", "none"])
            try await Task.sleep(nanoseconds: 500_000_000)
            running.kill9()
            _ = try await running.wait()
            let store = try cli.openStore()
            #expect(try await store.integrityCheck() == ["ok"])
            let shown = try await Self.shown(cli)
            let stored = shown.values.filter { $0["content_source"] as? String == "page" }
            #expect(stored.count < 10, "killed before the end")
            for item in stored {
                #expect((item["text"] as? String ?? "").contains("Paragraph 5"), "whole or absent")
            }
            server.setFaults(Faults())
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 0)
            #expect(try await Self.shown(cli).values.allSatisfy { $0["content_source"] as? String == "page" })
        }
    }

    @Test func aFeedOfSummariesIsPointedOutWithTheCommandThatFetchesItsArticles() async throws {
        let cli = try CLI()
        try await withServer(items: 5, perPage: 5) { _, url in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            let listed = try await cli.run("feeds")
            #expect(
                listed.stdout.contains(
                    "hint: feed 1 publishes summaries only; feedsync full-text 1 on fetches each item's whole article"),
                "\(listed.stdout)")
            #expect(try await cli.run("status").stdout.contains("summaries only; feedsync full-text 1 on"))
            #expect(try await cli.run("full-text", "1", "on").status == 0)
            #expect(!(try await cli.run("feeds").stdout.contains("hint:")))
        }
    }
}
