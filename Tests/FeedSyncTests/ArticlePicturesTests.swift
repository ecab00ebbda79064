import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncImages
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// Which pictures an item's content shows: the parser's byte scan and the reading page's tree
/// must pick the same ones, by the same rules.
@Suite struct ArticlePictureChoiceTests {
    let content = """
        <p>Intro <img src="a.png" alt="A"></p>
        <!-- <img src="commented.png"> -->
        <img src="https://t.example/pixel.gif" width="1" height="1">
        <img src="data:image/png;base64,iVBORw0KGgo=">
        <img src="small.jpg" srcset="small.jpg 400w, medium.jpg 800w, large.jpg 1600w" width="400">
        <img srcset="one.jpg, two.jpg 2x">
        <picture><source type="image/jxl" srcset="x.jxl"><source type="image/webp" srcset="y.webp 1x, z.webp 2x">\
        <img src="fallback.jpg" alt="P"></picture>
        <img src="a.png">
        <img src="cid:part1">
        <img src="b.png?x=1&amp;y=2">
        """

    @Test func onePicturePerImageOrPictureElementResolvedAndChosenForAColumn() {
        let found = ArticlePictures.find(in: Array(content.utf8), base: "https://site.example/posts/1")
        #expect(
            found.map(\.source) == ["a.png", "medium.jpg", "one.jpg", "y.webp", "b.png?x=1&y=2"],
            "pixel, data:, cid:, the commented-out one and the second a.png are left out")
        #expect(found.first?.url == "https://site.example/posts/a.png")
        #expect(found.last?.url == "https://site.example/posts/b.png?x=1&y=2")
    }

    @Test func srcsetCandidatesAsBrowsersSplitThem() {
        #expect(ArticlePictures.best("a.jpg 300w, b.jpg 900w, c.jpg 2000w") == "b.jpg")
        #expect(ArticlePictures.best("a.jpg 300w, b.jpg 600w") == "b.jpg", "none wide enough: the widest")
        #expect(ArticlePictures.best("a.jpg 2x, b.jpg 1.5x") == "b.jpg")
        #expect(
            ArticlePictures.best("https://c.example/i,w_800.jpg 1x, https://c.example/i,w_1600.jpg 2x")
                == "https://c.example/i,w_800.jpg", "a comma inside a URL is the URL's")
        #expect(ArticlePictures.best(" , ") == nil)
    }

    @Test func atMost24PicturesAnItem() {
        let many = (0..<40).map { "<img src=\"/p\($0).png\">" }.joined()
        #expect(ArticlePictures.find(in: Array(many.utf8), base: "https://s.example/").count == 24)
    }

    @Test func theReadingPageChoosesWhatTheParserFound() throws {
        var asked: [String] = []
        _ = try SafeHTML.clean(content, base: "https://site.example/posts/1") { source, url in
            if url?.hasPrefix("http") == true { asked.append(source) }
            return nil
        }
        let found = ArticlePictures.find(in: Array(content.utf8), base: "https://site.example/posts/1")
        #expect(Array(Set(asked)).sorted() == found.map(\.source).sorted())
    }
}

/// Pictures inside articles, end to end: the built binary, the demo server, the real cache.
@Suite(.serialized) struct ArticlePicturesTests {
    /// An RSS document of `count` items, item n's content showing: a relative picture, a srcset, a
    /// 1×1 pixel, a `data:` URI, a picture that is missing (404) and one too large, and one every
    /// item shares.
    static func document(count: Int) -> String {
        let items = (1...count).map { n in
            let content = """
                <p>Story \(n)</p><img src="/pictures/\(1000 + n).png" alt="first of \(n)">\
                <img srcset="/pictures/\(2000 + n).png 400w, /pictures/\(3000 + n).png 900w">\
                <img src="/pictures/9.png" width="1" height="1"><img src="data:image/png;base64,iVBORw0KGgo=">\
                <img src="/pictures/\(4000 + n).png" alt="gone"><img src="/pictures/\(5000 + n).png" alt="huge">\
                <img src="/pictures/7777.png" alt="shared">
                """
            return "<item><title>Story \(n)</title><guid>s\(n)</guid><link>https://site.example/s/\(n)</link>"
                + "<content:encoded><![CDATA[\(content)]]></content:encoded></item>"
        }
        return """
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Stories\
            </title>\(items.reversed().joined())</channel></rss>
            """
    }

    static func serve(_ server: DemoServer, count: Int, pictureLatency: Double = 0) {
        var faults = Faults()
        faults.documents["/doc/stories"] = .init(
            headers: ["Content-Type": "application/rss+xml"], body: Data(document(count: count).utf8))
        for n in 1...count {
            faults.pictures[4000 + n] = .status(404)
            faults.pictures[5000 + n] = .oversize(bytes: 300_000, contentLength: true)
        }
        faults.pictureLatency = pictureLatency
        server.setFaults(faults)
    }

    /// `show N --json`'s pictures.
    func pictures(_ cli: CLI, _ number: Int) async throws -> [(url: String, status: String, path: String?)] {
        let item = try await json(cli.run("show", String(number), "--json"))
        return (item["pictures"] as! [[String: Any]]).map {
            ($0["url"] as! String, $0["status"] as! String, $0["path"] as? String)
        }
    }

    func seed(_ url: String) -> Int { Int(url.split(separator: "/").last!.dropLast(4))! }

    @Test func theWindowsArticlePicturesAreCachedAndCheckedTheRestWait() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, count: 30)
            let url = await server.baseURL + "/doc/stories"
            // The window is the first page of 20 rows: stories 30 down to 11.
            let pull = try await cli.run(
                "pull", "--feed", url, "--prefetch-pages", "0", "--max-image-bytes", "100K", "--json")
            #expect(pull.status == 0, "\(pull.stderr)")
            // One count of pictures: what the pull downloaded is what status finds cached.
            let pulled = try #require((try json(pull)["feeds"] as? [[String: Any]])?.first)
            let status = try #require((try await json(cli.run("status", "--json"))["feeds"] as? [[String: Any]])?.first)
            let counts = try #require(status["pictures"] as? [String: Int])
            #expect(pulled["pictures"] as? Int == 41, "20 rows' own, 20 from srcsets and the shared one")
            #expect(counts["cached"] == 41 && counts["pending"] == 40 && counts["failed"] == 40, "\(counts)")
            #expect(pulled["pictures_failed"] as? Int == counts["failed"])
            let base = await server.baseURL
            for number in 1...30 {
                let listed = try await pictures(cli, number)
                let story = 31 - number  // stored newest first
                #expect(
                    listed.map(\.url)
                        == [1000, 3000, 4000, 5000].map { "\(base)/pictures/\($0 + story).png" }
                        + ["\(base)/pictures/7777.png"],
                    "the pixel and the data: URI are no pictures; the srcset's 900w candidate is chosen")
                if number <= 20 {
                    #expect(listed.map(\.status) == ["cached", "cached", "failed", "failed", "cached"])
                    for picture in listed where picture.status == "cached" {
                        let path = try #require(picture.path)
                        #expect(FileManager.default.contents(atPath: path) == DemoServer.png(seed: seed(picture.url)))
                    }
                } else {
                    #expect(
                        listed.map(\.status) == ["pending", "pending", "pending", "pending", "cached"],
                        "outside the window, but for the picture every story shows")
                }
            }
            let shown = try await cli.run("show", "1")
            #expect(shown.stdout.contains("pictures: 3 of 5 cached"), "\(shown.stdout)")
            // The reading page gets each cached picture by its item's number, and its place in the
            // article; one not cached is not found.
            let served = try await ServeTests().serve(cli)
            defer { served.process.kill9() }
            let own = try await served.curl("/pictures/1")
            #expect(own.status == 200 && own.headers.lowercased().contains("content-type: image/png"), "\(own.headers)")
            #expect(try await served.curl("/pictures/25").status == 404, "outside the window: not cached")
            let content = try await served.curl("/content/1").body
            let inside = content.matches(of: try Regex(#"/pictures/1/(\d+)"#)).map { String(content[$0.range]) }
            #expect(inside.count == 3, "\(content)")
            for path in inside { #expect(try await served.curl(path).status == 200, "\(path)") }
            #expect(try await served.curl("/pictures/1/99").status == 404)
            // One request for the picture every story shows; none sent a Referer.
            let requests = server.requests.filter { !$0.isFeed }
            #expect(requests.filter { $0.path == "/pictures/7777.png" }.count == 1)
            #expect(!requests.contains { $0.headers["referer"] != nil })
            // `--article-pictures none`: a wider window fetches the rows' own pictures (a story's
            // is its first), not those inside the articles.
            let none = try await cli.run("pull", "--force", "--prefetch-pages", "1", "--article-pictures", "none")
            #expect(none.status == 0)
            let after = try await pictures(cli, 21).map(\.status)
            #expect(after == ["cached", "pending", "pending", "pending", "cached"], "\(none.stderr)")
        }
    }

    @Test func gcKeepsThemAndRemoveTakesThemAway() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, count: 5)
            let url = await server.baseURL + "/doc/stories"
            #expect(try await cli.run("pull", "--feed", url, "--max-image-bytes", "100K").status == 0)
            let folder = PictureFolder(directory: cli.home.path + "/pictures")
            let cachedFiles = Set(folder.allFiles())
            #expect(cachedFiles.count == 11, "two of each story's own and the shared one")
            #expect(try await cli.run("gc").status == 0)
            #expect(Set(folder.allFiles()) == cachedFiles)
            #expect(try await pictures(cli, 1).filter { $0.status == "cached" }.count == 3)
            #expect(try await cli.run("remove", "--yes", "1").status == 0)
            #expect(folder.allFiles().isEmpty)
        }
    }

    @Test func overBudgetThePicturesFarthestFromTheReaderGoFirstArticlesIncluded() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, count: 30)
            let url = await server.baseURL + "/doc/stories"
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            let folder = cli.home.path + "/pictures"
            func cachedBytes() throws -> Int {
                try PictureFolder(directory: folder).allFiles().reduce(0) { sum, file in
                    sum + (try FileManager.default.attributesOfItem(atPath: folder + "/" + file)[.size] as! Int)
                }
            }
            // 289-byte pictures, a budget of about 21: the window of 5 rows shows 11, every row
            // its own, 30 more.
            for page in [1, 4] {
                let listed = try await cli.run("list", "--record-position", "--page", String(page), "--per-page", "5")
                #expect(listed.status == 0)
                let pull = try await cli.run(
                    "pull", "--force", "--images", "all", "--prefetch-pages", "0", "--max-image-bytes", "100K",
                    "--cache-size", "6K")
                #expect(pull.status == 0, "\(pull.stderr)")
                let window = (page - 1) * 5 + 1...page * 5
                for number in window {
                    #expect(
                        try await pictures(cli, number).filter { $0.status == "cached" }.count == 3,
                        "the window's articles are whole (page \(page), item \(number))")
                }
                #expect(try cachedBytes() <= 6 * 1024, "within the budget")
                #expect(
                    try await pictures(cli, page == 1 ? 30 : 1)[1].status == "pending",
                    "the farthest article's own pictures are not kept (page \(page))")
            }
        }
    }

    @Test func killedMidDownloadNoPartialPictureIsLeft() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            Self.serve(server, count: 30, pictureLatency: 0.05)
            let url = await server.baseURL + "/doc/stories"
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            for _ in 0..<3 {
                let running = try cli.start(
                    ["pull", "--force", "--image-concurrency", "2", "--max-image-bytes", "100K"])
                try await Task.sleep(nanoseconds: UInt64.random(in: 300_000_000...900_000_000))
                running.kill9()
                _ = try await running.wait()
                for number in 1...20 {
                    for picture in try await pictures(cli, number) where picture.status == "cached" {
                        #expect(
                            FileManager.default.contents(atPath: try #require(picture.path))
                                == DemoServer.png(seed: seed(picture.url)))
                    }
                }
            }
            Self.serve(server, count: 30)
            #expect(try await cli.run("pull", "--force", "--max-image-bytes", "100K").status == 0)
            let files = PictureFolder(directory: cli.home.path + "/pictures").allFiles()
            #expect(!files.contains { $0.contains(".tmp-") })
            #expect(try await pictures(cli, 20).filter { $0.status == "cached" }.count == 3)
        }
    }
}
