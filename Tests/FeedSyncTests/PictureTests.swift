import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization
import Testing

@testable import FeedSyncImages

/// Picture prefetch through the built binary against the demo server: real downloads, real files.
@Suite(.serialized) struct PictureTests {
    /// Pulls the items alone, so a later pull's picture requests can be watched on their own.
    func storeItems(_ cli: CLI, _ url: String) async throws {
        let pull = try await cli.run("pull", "--feed", url, "--images", "none")
        #expect(pull.status == 0, "\(pull.stderr)")
    }

    /// Pulls the items alone, then makes each picture take `pictureLatency` at the server.
    func storeItems(_ cli: CLI, _ server: DemoServer, _ url: String, pictureLatency: Double) async throws {
        try await storeItems(cli, url)
        var faults = Faults()
        faults.pictureLatency = pictureLatency
        server.setFaults(faults)
    }

    /// Each listed item's picture: its URL, status and cached path.
    func pictures(_ cli: CLI) async throws -> [(url: String?, status: String, path: String?)] {
        try await cli.listedItems().map { item in
            let image = item["image"] as! [String: Any]
            return (item["pic_url"] as? String, image["status"] as! String, image["path"] as? String)
        }
    }

    func seed(_ url: String) -> Int? {
        guard url.hasSuffix(".png"), let name = url.split(separator: "/").last else { return nil }
        return Int(name.dropLast(4))
    }

    @Test func theWindowIsFetchedNearestRowsFirst() async throws {
        let cli = try CLI()
        try await withServer(items: 200, perPage: 10) { server, url in
            try await storeItems(cli, url)
            #expect(try await cli.run("list", "--record-position", "--page", "3", "--per-page", "10").status == 0)
            server.clearLog()
            let pull = try await cli.run("pull", "--prefetch-pages", "2", "--image-concurrency", "1")
            #expect(pull.status == 0, "\(pull.stderr)")
            // Page 3 is rows 20...29; the window is one page before to two after: rows 10...49.
            var rows = Array(20...29)
            for distance in 1...20 {
                if 29 + distance <= 49 { rows.append(29 + distance) }
                if 20 - distance >= 10 { rows.append(20 - distance) }
            }
            // Then the feed's own first page, rows 0...9: the feed was never listed on its own.
            rows += 0...9
            #expect(server.pictureRequests == rows.map { "/pictures/\(200 - $0).png" })
        }
    }

    @Test func allPicturesOfALongListComeNearestFirstThoughEachPlanHoldsOnlyTheNearest() async throws {
        let cli = try CLI()
        // 400 distinct pictures, each shown by two of 800 items: more than one plan holds
        // (PicturePrefetcher.planLimit, 256), and each picture shows on rows on both sides of the reader.
        let server = DemoServer(items: 800, perPage: 20, distinctPictures: 400)
        try await server.start()
        try await storeItems(cli, await server.feedURL)
        #expect(try await cli.run("list", "--record-position", "--page", "20").status == 0)
        server.clearLog()
        let pull = try await cli.run("pull", "--images", "all", "--image-concurrency", "1")
        await server.stop()
        #expect(pull.status == 0, "\(pull.stderr)")
        // Row r shows item 800 - r, whose picture is (799 - r) % 400 + 1; each picture is fetched
        // once, at its row nearest to page 20 (rows 380...399), nearest first.
        let position = ReadingPosition(feedURL: nil, page: 20, perPage: 20)
        let everyRow = (0..<800).map {
            PictureJob(id: Int64((799 - $0) % 400 + 1), url: "", row: $0, place: ListPlace(feedID: 1, band: 0, seq: $0))
        }
        var seen = Set<Int64>()
        let expected = PrefetchPlan.order(everyRow, from: position).filter { seen.insert($0.id).inserted }
        #expect(expected.count == 400)
        #expect(server.pictureRequests == expected.map { "/pictures/\($0.id).png" })
        #expect(try await pictures(cli).allSatisfy { $0.status == "cached" })
    }

    @Test func allMeansEveryPictureOfEveryFeedThoughTheLastListReadWasOneFeeds() async throws {
        let cli = try CLI()
        let first = DemoServer(items: 40, perPage: 20)
        let second = DemoServer(items: 40, perPage: 20)
        try await first.start()
        try await second.start()
        for server in [first, second] { try await storeItems(cli, await server.feedURL) }
        #expect(try await cli.run("list", "--feed", "1", "--record-position").status == 0)
        let pull = try await cli.run("pull", "--images", "all", "--force")
        #expect(pull.status == 0, "\(pull.stderr)")
        let listed = try await pictures(cli)
        #expect(
            listed.count == 80 && listed.allSatisfy { $0.status == "cached" },
            "\(listed.filter { $0.status != "cached" })")
        #expect(first.pictureRequests.count == 40 && second.pictureRequests.count == 40, "each picture once")
        await first.stop()
        await second.stop()
    }

    @Test func everyPictureOfAListLongerThanManyPlansIsFetchedOnceWhilePagesFlow() async throws {
        let cli = try CLI()
        // As in benchmark P1: pages and pictures at once, eight downloads and batches of records in
        // flight whenever a plan is made, five plans' worth of pictures.
        let server = DemoServer(items: 1_500, perPage: 30, distinctPictures: 1_300)
        try await server.start()
        let pull = try await cli.run("pull", "--feed", await server.feedURL, "--images", "all")
        await server.stop()
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(server.pictureRequests.sorted() == (1...1_300).map { "/pictures/\($0).png" }.sorted())
        #expect(try await pictures(cli).allSatisfy { $0.status == "cached" })
    }

    // With `--images all` a plan starts reading where the last one found the first due row, or the
    // list's end (PicturePrefetcher.PlanStart). In these two, every picture is cached when the pull
    // starts and each page comes slowly, so plans have moved that start to the end before a page
    // makes a picture due above it.

    @Test func picturesOfPagesLandingAboveWherePlansHadReachedAreFetchedInTheSamePull() async throws {
        let cli = try CLI()
        // The list of all feeds shows A's items, then B's. A is half backfilled: its next pages land
        // between its items and B's, above the list's end.
        try await withServer(items: 60, perPage: 20) { a, urlA in
            try await withServer(items: 40, perPage: 20) { _, urlB in
                #expect(try await cli.run("pull", "--feed", urlA, "--images", "all", "--max-pages", "1").status == 0)
                #expect(try await cli.run("pull", "--feed", urlB, "--images", "all").status == 0)
                var faults = Faults()
                faults.latency = 0.6
                a.setFaults(faults)
                a.clearLog()
                let pull = try await cli.run("pull", "--images", "all")
                #expect(pull.status == 0, "\(pull.stderr)")
                #expect(a.requests.filter { $0.isFeed && $0.page ?? 1 > 1 }.count == 2, "A's two remaining pages")
                #expect(a.pictureRequests.sorted() == (1...40).map { "/pictures/\($0).png" }.sorted())
                #expect(try await pictures(cli).allSatisfy { $0.status == "cached" })
            }
        }
    }

    @Test func aPictureChangedOnAnItemAlreadyStoredIsFetchedInTheSamePull() async throws {
        let cli = try CLI()
        try await withServer(items: 40, perPage: 20) { server, url in
            #expect(try await cli.run("pull", "--feed", url, "--images", "all").status == 0)
            // Page 1 is sent again, with item 40 (row 0) showing another picture: a refresh, no new row.
            var faults = Faults()
            faults.latency = 0.6
            faults.ignoreValidators = true
            faults.pictureURLs[40] = "\(await server.baseURL)/pictures/77.png"
            server.setFaults(faults)
            server.clearLog()
            let pull = try await cli.run("pull", "--force", "--images", "all")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(server.pictureRequests == ["/pictures/77.png"])
            #expect(try await pictures(cli).allSatisfy { $0.status == "cached" })
        }
    }

    /// With 400 items stored (10 a page) and the reader on page 1, starts a pull whose pictures
    /// each take `latency` at the server, `concurrency` at a time, and moves the reader to page 30
    /// once `requests` pictures have been asked for. Returns the pull and when the reader moved.
    func pullWhileTheReaderMoves(
        _ cli: CLI, _ server: DemoServer, _ url: String, latency: Double, concurrency: Int, after requests: Int
    ) async throws -> (pull: RunningCLI, moved: Date) {
        try await storeItems(cli, server, url, pictureLatency: latency)
        #expect(try await cli.run("list", "--record-position", "--page", "1", "--per-page", "10").status == 0)
        server.clearLog()
        let pull = try cli.start(["pull", "--image-concurrency", String(concurrency)])
        for _ in 0..<300 where server.pictureRequests.count < requests {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let moved = Date()
        #expect(try await cli.run("list", "--record-position", "--page", "30", "--per-page", "10").status == 0)
        return (pull, moved)
    }

    // Old window: rows 0...59. New window: rows 280...349 (page 30, one before, five after).
    let newWindow = (280...349).map { "/pictures/\(400 - $0).png" }

    @Test func movingTheReaderDuringAPullRetargetsThePrefetch() async throws {
        let cli = try CLI()
        try await withServer(items: 400, perPage: 10) { server, url in
            let (pull, _) = try await pullWhileTheReaderMoves(cli, server, url, latency: 0.1, concurrency: 1, after: 5)
            let result = try await pull.wait()
            #expect(result.status == 0, "\(result.stderr)")
            let requested = Set(server.pictureRequests)
            let oldFarEnd = (30...59).map { "/pictures/\(400 - $0).png" }
            #expect(requested.isDisjoint(with: oldFarEnd), "queued downloads for the old window were dropped")
            #expect(requested.isSuperset(of: newWindow))
            #expect(server.pictureRequests.count < 5 + 15 + newWindow.count)
        }
    }

    @Test func aReaderWhoMovesOnTakesBackThePicturesStillWaitingForAConnection() async throws {
        let cli = try CLI()
        try await withServer(items: 400, perPage: 10) { server, url in
            // Two pictures at a time, two more handed to the transport and waiting for a connection.
            let (pull, moved) = try await pullWhileTheReaderMoves(
                cli, server, url, latency: 2, concurrency: 2, after: 2)
            try await Task.sleep(nanoseconds: 1_000_000_000)  // the next plan sees the move within 0.5 s
            var faults = Faults()
            faults.pictureLatency = 0
            server.setFaults(faults)
            let result = try await pull.wait()
            #expect(result.status == 0, "\(result.stderr)")
            // The two running when the reader moved finish; the two waiting behind them are taken
            // back and never reach the server. (Rows 0...9 are the first page of a feed never listed
            // on its own, fetched whatever the window.)
            let oldWindow = Set((10...59).map { "/pictures/\(400 - $0).png" })
            let late = server.requests.filter { $0.receivedAt > moved && oldWindow.contains($0.path) }
            #expect(late.isEmpty, "\(late.map(\.path))")
            #expect(Set(server.pictureRequests).isSuperset(of: newWindow))
        }
    }

    @Test func aClientShutDownMidRunEndsThePrefetchAndFailsNoPicture() async throws {
        let cli = try CLI()
        try await withServer(items: 60, perPage: 10) { server, url in
            try await storeItems(cli, server, url, pictureLatency: 0.5)
            let client = HTTPClient(
                configuration: TransportConfiguration(userAgent: "feedsync-tests", maxConnections: 4))
            let configuration = TransportConfiguration(userAgent: "feedsync-tests")
            let prefetcher = PicturePrefetcher(
                cache: PictureCache(store: try cli.openStore(), directory: cli.home.path + "/pictures"),
                idleClient: configuration
            ).begin(client: client, options: PrefetchOptions(mode: .all, concurrency: 2))
            prefetcher.pagingFinished()
            let ended = Mutex(false)
            Task {
                await prefetcher.run()
                ended.withLock { $0 = true }
            }
            for _ in 0..<300 where server.pictureRequests.count < 2 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            client.shutdown()  // two pictures running, two waiting in the lane
            for _ in 0..<250 where !ended.withLock({ $0 }) {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(ended.withLock { $0 }, "the prefetch kept going after its client was shut down")
            // Cut off is not the pictures' fault: none is marked failed, all wait for the next pull.
            let statuses = try await pictures(cli).map(\.status)
            #expect(statuses.count == 60 && !statuses.contains("failed"), "\(statuses)")
        }
    }

    /// A picture the page asks for goes through the running pull's client; when that pull ends
    /// mid-download and shuts its client down, the picture is asked for again through the
    /// prefetcher's own client, and cached: the page is not told there is none.
    @Test func aPictureAskedForNowOutlivesThePullWhoseClientItStartedOn() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { server, url in
            // Two seconds at the server: time enough, on a loaded machine, to end the pull meanwhile.
            try await storeItems(cli, server, url, pictureLatency: 2)
            let store = try cli.openStore()
            let client = HTTPClient(
                configuration: TransportConfiguration(userAgent: "feedsync-tests", maxConnections: 4))
            let prefetcher = PicturePrefetcher(
                cache: PictureCache(store: store, directory: cli.home.path + "/pictures"),
                idleClient: TransportConfiguration(userAgent: "feedsync-tests"))
            let run = prefetcher.begin(client: client, options: PrefetchOptions(mode: .none))
            let job = try #require(try await store.duePicture(ofItem: 1))
            async let cached = prefetcher.fetchNow(job, options: PrefetchOptions())
            for _ in 0..<250 where server.requestsInFlight == 0 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(server.requestsInFlight == 1, "the picture is on its way through the pull's client")
            await run.run()  // the pull ends: its run first, then its client
            client.shutdown()
            #expect(await cached)
            #expect(server.pictureRequests.count == 2, "\(server.pictureRequests)")
            #expect(try await pictures(cli).first { $0.url == job.url }?.status == "cached")
        }
    }

    @Test func picturesStartAsSoonAsPageOneIsCommittedWhilePagesKeepFlowing() async throws {
        let cli = try CLI()
        try await withServer(items: 200, perPage: 10) { server, url in
            var faults = Faults()
            faults.latency = 0.05
            server.setFaults(faults)
            // One at a time, so the server sees the pictures in the order they were started.
            #expect(try await cli.run("pull", "--feed", url, "--image-concurrency", "1").status == 0)
            let log = server.requests
            let firstPicture = try #require(log.firstIndex { $0.path.hasPrefix("/pictures/") })
            let lastPage = try #require(log.lastIndex { $0.path == "/feed" })
            #expect(firstPicture < lastPage, "pictures were downloading before paging finished")
            #expect(log[firstPicture].path == "/pictures/200.png", "row 1's picture first")
        }
    }

    @Test func tenItemsSharingOnePictureMakeOneRequest() async throws {
        let cli = try CLI()
        let server = DemoServer(items: 10, perPage: 20, distinctPictures: 1)
        try await server.start()
        let pull = try await cli.run("pull", "--feed", await server.feedURL)
        await server.stop()
        #expect(pull.status == 0)
        #expect(server.pictureRequests == ["/pictures/1.png"])
        let listed = try await pictures(cli)
        #expect(listed.count == 10)
        #expect(listed.allSatisfy { $0.status == "cached" && $0.path == listed[0].path })
    }

}
