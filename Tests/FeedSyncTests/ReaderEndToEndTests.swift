import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncStore

/// `feedsync read`, the built binary in a pseudo-terminal of a known size, its screen read through
/// pyte (a kept terminal emulator): each test makes the store, then runs a scenario of
/// Tests/Terminal/reader.py, which drives the keys and checks the screen and the store. One at a
/// time: each is a terminal, a reader and an emulator, and some time what they see.
@Suite(.serialized) struct ReaderEndToEndTests {
    static let driver = LayoutTests.root.appendingPathComponent("Tests/Terminal/reader.py").path

    /// Runs `scenario` over `cli`'s store; its failure, one line, fails the test.
    static func run(_ scenario: String, _ cli: CLI, _ arguments: [String] = []) async throws {
        let result = try await cli.start(
            ["python3", driver, scenario, "--binary", CLI.binary] + arguments, executable: "/usr/bin/env"
        ).wait()
        #expect(result.status == 0, "\(scenario): \(result.stderr)")
    }

    /// Runs `scenario` over a new store holding the demo feed's `items` items, added.
    static func run(_ scenario: String, afterAdding items: Int, passing arguments: [String]? = nil) async throws {
        let cli = try CLI()
        try await withServer(items: items, perPage: 30) { _, url in
            #expect(try await cli.run("add", url).status == 0)
            try await run(scenario, cli, arguments ?? ["--items", String(items)])
        }
    }

    @Test func theFirstFrameShowsTheNewestRowsAndEachKeyDoesWhatItSaysInTheStoreToo() async throws {
        try await Self.run("basics", afterAdding: 60)
    }

    @Test func onAMillionItemsGShowsTheOldestAndScrollingShowsEachItemOnceInOrder() async throws {
        // In memory (tmpfs) where there is one: a million items' writes would otherwise hold the
        // disk the other tests' stores are written to.
        let cli = try CLI(homeIn: access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : nil)
        let store = try cli.openStore()
        let feed = try await store.subscribe(url: "http://127.0.0.1:9/feed")
        let count = 1_000_000
        // A minute of writes that hold their thread: on one of their own, not the cooperative
        // pool the other tests' in-process servers answer on.
        try await withTaskExecutorPreference(OwnThread.shared) {
            for start in stride(from: 0, to: count, by: 20_000) {
                // Item 1 000 000 the newest: the first page holds the highest numbers.
                let items = (start..<start + 20_000).map { index -> FeedItem in
                    let number = count - index
                    return FeedItem(
                        key: "k\(number)", title: "Item \(number)", link: nil, pictureURL: nil,
                        published: FeedDate.format(1_700_000_000 + Int64(number) * 60), summary: nil)
                }
                try await store.commit(
                    PageCommit(feedID: feed.id, band: 0, newItems: items, updatedItems: [], cursor: FeedCursor()))
            }
        }
        try await Self.run("million", cli, ["--items", String(count)])
    }

    @Test func aPullThatLandsWhileReadingSaysNNewWithoutMovingTheRowsAndAResizeRedraws() async throws {
        let cli = try CLI()
        try await withServer(items: 40, perPage: 40) { server, url in
            #expect(try await cli.run("add", url).status == 0)
            server.prepend(5)
            try await Self.run("fresh", cli, ["--items", "40", "--added", "5"])
        }
    }

    @Test func sigtermSighupAndCrashesGiveTheTerminalBackCookedWithTheMainScreen() async throws {
        try await Self.run("ending", afterAdding: 30)
    }

    @Test func ctrlZStopsTheReaderWithTheTerminalGivenBackAndFgRedrawsWhereItWas() async throws {
        try await Self.run("stopping", afterAdding: 30)
    }

    @Test func insideTmuxAKittyOutsideIsDrawnToThroughItAndAnythingElseGetsHalfBlocks() async throws {
        try await Self.run("inside-tmux", afterAdding: 30)
    }

    @Test func aHostileTitlesEscapeSequencesNeverReachTheTerminal() async throws {
        let cli = try CLI()
        let title =
            #"\u001b]0;pwned\u0007 \u001b[31mred \u009b31m \u001b]8;;http://x/\u0007link \u001b[2J\u001b[H\u001b[31mwiped"#
        let body = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "\(title)", "items": [
              {"id": "1", "title": "\(title)", "content_html": "<p>\(title)</p>", "url": "http://x/1"}]}
            """
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/feed+json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body
        let server = try RawServer(answer: Data(answer.utf8))
        defer { server.stop() }
        #expect(try await cli.run("add", server.url).status == 0)
        try await Self.run("hostile", cli)
    }

    @Test func aRowsThumbnailInEachProtocolDecodesBackToTheCachedPicturesPixelsAtItsCells() async throws {
        try await Self.run("pictures", afterAdding: 30, passing: [])
    }

    @Test func aFlungPastRowHasNoPictureAskedAndTheRowsWhereTheCursorRestsHaveTheirsAtOnce() async throws {
        let cli = try CLI()
        try await withServer(items: 120, perPage: 120) { server, url in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            let log = cli.home.path + "/server.log"
            FileManager.default.createFile(atPath: log, contents: nil)
            try server.logRequests(to: log)
            try await Self.run("fling", cli, ["--log", log])
        }
    }

    @Test func hostilePicturesInTheCacheCostABoundedTimeAndDrawNothing() async throws {
        let cli = try CLI()
        try await withServer(items: 12, perPage: 12) { server, url in
            // What the header check passes: a PNG's and a JPEG's first bytes, then noise; a PNG
            // header claiming 60 000 × 60 000 pixels.
            let png = DemoServer.png(seed: 1).prefix(33)
            var huge = png
            huge.replaceSubrange(16..<24, with: [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60])
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xC0, 0, 17, 8, 0, 64, 0, 64, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
            var faults = Faults()
            faults.pictures = [
                12: .noise(header: png, bytes: 4000), 11: .noise(header: huge, bytes: 4000),
                10: .noise(header: jpeg, bytes: 4000),
            ]
            server.setFaults(faults)
            #expect(try await cli.run("add", url).status == 0)
            let cached = try await cli.listedItems().prefix(3).map {
                ($0["image"] as? [String: Any])?["status"] as? String
            }
            #expect(cached == ["cached", "cached", "cached"], "the header check passed them")
            try await Self.run("hostile-pictures", cli, ["--added", "3"])
        }
    }

    /// Debian's xterm as a VT340 under Xvfb, checked on a screenshot's pixels; `FEEDSYNC_SCREENSHOT`
    /// names a file to keep the screenshot in (the README's).
    @Test func aRealTerminalShowsEachCachedPictureAtItsRowsCells() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 30) { server, _ in
            #expect(try await cli.run("add", await server.feedURL(.rss)).status == 0)
            let screenshot = ProcessInfo.processInfo.environment["FEEDSYNC_SCREENSHOT"].map { ["--screenshot", $0] }
            try await Self.run("xterm", cli, screenshot ?? [])
        }
    }

    @Test func readOnSomethingThatIsNotATerminalExits64WithOneSentence() async throws {
        try await Self.run("not-a-terminal", try CLI())
    }
}
