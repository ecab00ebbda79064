import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Testing

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
