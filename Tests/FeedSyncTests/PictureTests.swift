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

    @Test func badPicturesNeverReachTheCacheAndGoodOnesStillDo() async throws {
        let cli = try CLI()
        let outside = try TempDirectory()
        try await withServer(items: 14, perPage: 20) { server, url in
            let base = await server.baseURL
            var faults = Faults()
            faults.pictures = [
                1: .html, 2: .status(404), 3: .oversize(bytes: 200_000, contentLength: true),
                4: .oversize(bytes: 200_000, contentLength: false), 5: .stall(30), 6: .reset,
                7: .redirect("file://\(outside.path)/stolen"), 8: .redirect("ftp://127.0.0.1/x.png"), 9: .redirectLoop,
                10: .status(503),
            ]
            faults.pictureURLs = [
                11: "../../../etc/passwd",
                12: "\(base)/pictures/..%2f..%2f..%2fetc%2fpasswd",
                13: "\(base)/pictures/../../../etc/passwd",
            ]
            server.setFaults(faults)
            let pull = try await cli.run(
                "pull", "--feed", url, "--timeout", "5", "--max-image-bytes", "100000", "--verbose")
            #expect(pull.status == 0, "a failed picture never fails the pull: \(pull.stderr)")
            #expect(pull.stderr.contains("/pictures/1.png: not an image"), "\(pull.stderr)")

            let listed = try await pictures(cli)
            #expect(listed.count == 14, "every item is stored")
            let cached = listed.filter { $0.status == "cached" }
            #expect(cached.count == 1)
            #expect(cached.first?.url == "\(base)/pictures/14.png")
            let files = PictureFolder(directory: cli.home.path + "/pictures").allFiles()
            #expect(files.count == 1, "nothing but the good picture was written: \(files)")
            #expect(FileManager.default.contents(atPath: cached[0].path!) == DemoServer.png(seed: 14))
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)

            // Failures are retried later with backoff, not on the next run.
            server.clearLog()
            #expect(try await cli.run("pull").status == 0)
            #expect(server.pictureRequests.isEmpty)
            let status = try await cli.run("status", "--json")
            #expect(status.stdout.contains("\"cached\": 1"), "\(status.stdout)")
            #expect(status.stdout.contains("\"failed\": 10"), "\(status.stdout)")
        }
    }

    /// Files that start like pictures and go on as random bytes: an ISO-BMFF `ftyp` box of brand
    /// `avif` and of `heic`, and a PNG signature with no `IHDR`.
    static let lookalikes: [Data] = [
        Data([0, 0, 0, 20]) + Data("ftypavif".utf8) + Data(count: 8),
        Data([0, 0, 0, 20]) + Data("ftypheic".utf8) + Data(count: 8),
        Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
    ]

    @Test func filesThatOnlyStartLikePicturesAreNeverCached() async throws {
        let cli = try CLI()
        let cap = 6 << 20
        try await withServer(items: 4, perPage: 20) { server, url in
            var faults = Faults()
            for (index, header) in Self.lookalikes.enumerated() {
                faults.pictures[index + 1] = .noise(header: header, bytes: cap)
            }
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", url, "--max-image-bytes", String(cap), "--verbose")
            #expect(pull.status == 0, "\(pull.stderr)")
            for number in 1...3 {
                #expect(pull.stderr.contains("/pictures/\(number).png: not a whole"), "\(pull.stderr)")
            }
            let cached = try await pictures(cli).filter { $0.status == "cached" }
            #expect(cached.map(\.url) == ["\(await server.baseURL)/pictures/4.png"], "\(cached)")
        }
    }

    @Test func aPicturesHeaderIsReadWithinAFixedPrefixWhateverTheFilesSize() throws {
        // Checking a look-alike at the default size cap takes about a millisecond here (BENCHMARKS.md);
        // the bound is generous for a loaded machine and a debug build.
        var random = SplitMix(seed: 42)
        let noise = Data((0..<(10 << 20) / 8).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } })
        for header in Self.lookalikes {
            let file = header + noise
            let kind = try #require(ImageKind.sniff(file))
            let started = ContinuousClock.now
            #expect(ImageKind.dimensions(of: file, as: kind) == nil)
            #expect(ContinuousClock.now - started < .milliseconds(200), "\(kind)")
        }
        // Real ISO-BMFF headers still give their size: a still image's `ispe` (after an `mdat`
        // that comes first), and an image sequence's track header.
        func box(_ type: String, _ body: Data) -> Data {
            withUnsafeBytes(of: UInt32(8 + body.count).bigEndian) { Data($0) } + Data(type.utf8) + body
        }
        func be32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
        let ispe = box("ispe", Data(count: 4) + be32(640) + be32(480))
        let still =
            box("ftyp", Data("avif".utf8) + Data(count: 4)) + box("mdat", Data(count: 1000))
            + box("meta", Data(count: 4) + box("hdlr", Data(count: 24)) + box("iprp", box("ipco", ispe)))
        #expect(ImageKind.dimensions(of: still, as: .avif)! == (640, 480))
        let tkhd = box("tkhd", Data(count: 76) + be32(320 << 16) + be32(200 << 16))
        let sequence = box("ftyp", Data("avis".utf8) + Data(count: 4)) + box("moov", box("trak", tkhd))
        #expect(ImageKind.dimensions(of: sequence, as: .avif)! == (320, 200))
        let lying = box("ftyp", Data("avif".utf8) + Data(count: 4)) + be32(0xFFFF_FFF0) + Data("meta".utf8) + ispe
        #expect(ImageKind.dimensions(of: lying, as: .avif) == nil, "a box longer than what holds it")
    }

    /// Batches are recorded every quarter second: kills at random times land before, during and
    /// after them. Nothing is flushed, but no name ever holds part of a picture (a file is named
    /// only once whole) and no row says cached without its whole file.
    @Test func killedMidBatchNoNameHoldsPartOfAPictureAndNoRowSaysCachedWithoutItsFile() async throws {
        let cli = try CLI()
        let whole = Set((1...300).map { DemoServer.png(seed: $0) })
        try await withServer(items: 300, perPage: 20) { server, url in
            try await storeItems(cli, server, url, pictureLatency: 0.02)
            let folder = PictureFolder(directory: cli.home.path + "/pictures")
            for _ in 0..<4 {
                let running = try cli.start(["pull", "--images", "all", "--image-concurrency", "4"])
                try await Task.sleep(nanoseconds: UInt64.random(in: 200_000_000...1_500_000_000))
                running.kill9()
                _ = try await running.wait()
                let files = folder.allFiles()
                #expect(!files.contains { $0.contains(".tmp-") }, "a file being written has no name")
                for file in files {
                    #expect(folder.read(file).map(whole.contains) == true, "\(file) is part of a picture")
                }
                for picture in try await pictures(cli) where picture.status == "cached" {
                    let path = try #require(picture.path)
                    let number = try #require(picture.url.flatMap(seed))
                    #expect(FileManager.default.contents(atPath: path) == DemoServer.png(seed: number))
                }
                // Named and not yet recorded when killed, a file is one gc removes (unknown).
                let check = try await cli.run("gc", "--check")
                #expect(check.stdout.contains("missing files 0, partial 0, damaged 0,"), "\(check.stdout)")
            }
            server.setFaults(Faults())
            #expect(try await cli.run("pull", "--images", "all").status == 0)
            #expect(try await pictures(cli).allSatisfy { $0.status == "cached" })
            #expect(try await cli.run("gc", "--check").status == 0, "the next pull named and recorded them all")
        }
    }

    /// A cached file cut short, overwritten with as many other bytes, or removed, behind
    /// feedsync's back: `list` and `show` do not offer it, it is due again, and the next pull
    /// fetches it again.
    @Test func aPictureChangedBehindFeedsyncsBackIsNotOfferedAndIsFetchedAgain() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { _, url in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            let before = try await cli.listedItems()
            #expect(before.allSatisfy { ($0["image"] as! [String: Any])["status"] as? String == "cached" })
            let paths = before.prefix(3).map { ($0["image"] as! [String: Any])["path"] as! String }
            let numbers = before.prefix(4).map { $0["number"] as! Int }
            try damage(paths)
            let listed = try await cli.listedItems()
            for item in listed.prefix(3) {
                #expect((item["image"] as! [String: Any])["status"] as? String == "pending")
                #expect((item["image"] as! [String: Any])["path"] is NSNull)
            }
            #expect((listed[3]["image"] as! [String: Any])["path"] as? String != nil, "a whole one is offered")
            // show too, once the file is damaged again after being dropped and fetched.
            #expect(try await cli.run("pull").status == 0)
            #expect(try await pictures(cli).allSatisfy { $0.status == "cached" }, "fetched again")
            let path = try #require(try await pictures(cli)[3].path)
            try damage([path])
            let shown = try await json(cli.run("show", String(numbers[3]), "--json"))
            #expect((shown["image"] as! [String: Any])["path"] is NSNull)
            #expect((shown["image"] as! [String: Any])["status"] as? String == "pending")
            #expect(try await cli.run("gc", "--check").status == 0, "dropped: nothing disagrees")
        }
    }

    /// Damages each file a different way: cut short, the same length of other bytes, removed.
    func damage(_ paths: [String]) throws {
        for (index, path) in paths.enumerated() {
            let data = try #require(FileManager.default.contents(atPath: path))
            switch index % 3 {
            case 0: try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))
            case 1: try Data(data.map { $0 ^ 0x5A }).write(to: URL(fileURLWithPath: path))
            default: try FileManager.default.removeItem(atPath: path)
            }
        }
    }

    @Test func overBudgetTheFarthestPicturesGoFirstAndTheWindowStays() async throws {
        let cli = try CLI()
        try await withServer(items: 100, perPage: 10) { server, url in
            try await storeItems(cli, url)
            #expect(try await cli.run("list", "--record-position", "--page", "5", "--per-page", "10").status == 0)
            // 285-byte pictures: the window (rows 30...59) is 30 of them; the budget fits about 35.
            let pull = try await cli.run("pull", "--images", "all", "--prefetch-pages", "1", "--cache-size", "10K")
            #expect(pull.status == 0, "\(pull.stderr)")
            let listed = try await pictures(cli)
            let position = ReadingPosition(feedURL: nil, page: 5, perPage: 10)
            let cachedRows = listed.indices.filter { listed[$0].status == "cached" }
            let evictedRows = listed.indices.filter { listed[$0].status != "cached" }
            #expect(Set(30...59).isSubset(of: cachedRows), "the window is never evicted")
            #expect(cachedRows.count * 285 <= 10 * 1024)
            #expect(!evictedRows.isEmpty)
            let farthestKept = cachedRows.map { PrefetchPlan.distance(ofRow: $0, from: position) }.max()!
            let nearestEvicted = evictedRows.map { PrefetchPlan.distance(ofRow: $0, from: position) }.min()!
            #expect(farthestKept <= nearestEvicted)
            let files = PictureFolder(directory: cli.home.path + "/pictures").allFiles()
            #expect(files.count == cachedRows.count, "evicted files are deleted")
        }
    }

    @Test func withTheCacheFullOfNearerPicturesAPullFetchesNoneItWouldEvictAtOnce() async throws {
        let cli = try CLI()
        // 1 000-byte pictures, a cache of about 100 of them, 600 in the list.
        let server = DemoServer(items: 600, perPage: 20, pictureBytes: 1_000)
        try await server.start()
        let url = await server.feedURL
        let pull = ["pull", "--images", "all", "--prefetch-pages", "1"]  // a window of 40 to 60 rows
        #expect(try await cli.start(pull + ["--feed", url, "--cache-size", "100K"]).wait().status == 0)
        let first = try await pictures(cli)
        let cached = first.indices.filter { first[$0].status == "cached" }
        #expect(cached == Array(0..<cached.count), "the nearest")
        #expect(cached.count * 1_000 <= 100 * 1024)
        // Every later pull used to fetch the other 500 and evict them again.
        #expect(try await cli.run("list", "--record-position", "--page", "1", "--per-page", "20").status == 0)
        server.clearLog()
        #expect(try await cli.start(pull).wait().status == 0)
        #expect(server.pictureRequests.isEmpty, "each would have been the first evicted")
        // A reader who moves gets the pictures around them, in place of the farthest.
        #expect(try await cli.run("list", "--record-position", "--page", "25", "--per-page", "20").status == 0)
        server.clearLog()
        #expect(try await cli.start(pull).wait().status == 0)
        #expect(!server.pictureRequests.isEmpty)
        #expect(try await cli.run("list", "--record-position", "--page", "25", "--per-page", "20").status == 0)
        server.clearLog()
        #expect(try await cli.start(pull).wait().status == 0)
        #expect(server.pictureRequests.isEmpty)
        await server.stop()
        let listed = try await pictures(cli)
        #expect(Set(460..<520).isSubset(of: listed.indices.filter { listed[$0].status == "cached" }), "the window")
    }

    @Test func aCacheWithRoomForMorePicturesGetsAsManyMoreAndNoneToEvict() async throws {
        let cli = try CLI()
        let server = DemoServer(items: 600, perPage: 20, pictureBytes: 1_000)
        try await server.start()
        let url = await server.feedURL
        let pull = ["pull", "--images", "all", "--prefetch-pages", "1"]
        #expect(try await cli.start(pull + ["--feed", url, "--cache-size", "90K"]).wait().status == 0)  // 92 fit
        // Room for 10 more, then for 307 more (more than a plan holds): the rest would be evicted as
        // soon as it was recorded.
        for (size, fit) in [("100K", 102), ("400K", 409)] {
            #expect(try await cli.run("list", "--record-position", "--page", "1", "--per-page", "20").status == 0)
            server.clearLog()
            let result = try await cli.start(pull + ["--cache-size", size, "--verbose"]).wait()
            #expect(!result.stderr.contains("evicted"), "\(result.stderr)")
            let listed = try await pictures(cli)
            #expect(listed.indices.filter { listed[$0].status == "cached" } == Array(0..<fit))
        }
        #expect(server.pictureRequests.count == 307)
        await server.stop()
    }

    @Test func aPictureSeveralRowsShowIsAsNearAsTheNearestOfThem() async throws {
        let cli = try CLI()
        // Rows r and r + 300 show one picture. The reader is on rows 300...319, whose pictures rows
        // 0...19 show too: they are in the window, not 300 rows away.
        let server = DemoServer(items: 600, perPage: 20, distinctPictures: 300, pictureBytes: 1_000)
        try await server.start()
        let url = await server.feedURL
        try await storeItems(cli, url)
        let pull = ["pull", "--images", "all", "--prefetch-pages", "1", "--cache-size", "100K"]
        for _ in 0..<2 {
            #expect(try await cli.run("list", "--record-position", "--page", "16", "--per-page", "20").status == 0)
            server.clearLog()
            #expect(try await cli.start(pull).wait().status == 0)
        }
        #expect(server.pictureRequests.isEmpty, "the second pull fetches nothing it evicted")
        await server.stop()
        let listed = try await pictures(cli)
        #expect(Set(280..<340).isSubset(of: listed.indices.filter { listed[$0].status == "cached" }), "the window")
    }

    @Test func gcRemovesStrayFilesAndForgetsMissingOnes() async throws {
        let cli = try CLI()
        try await withServer(items: 20, perPage: 10) { _, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
        }
        let folder = cli.home.path + "/pictures"
        let files = PictureFolder(directory: folder)
        try FileManager.default.createDirectory(atPath: folder + "/zz", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder + "/zz/stray.png", contents: Data("stray".utf8)))
        #expect(FileManager.default.createFile(atPath: folder + "/.tmp-left-behind", contents: Data()))
        let before = try await pictures(cli)
        let missing = try #require(before.first?.path)
        try FileManager.default.removeItem(atPath: missing)

        let gc = try await cli.run("gc")
        #expect(gc.status == 0, "\(gc.stderr)")
        let after = files.allFiles()
        #expect(!after.contains("zz/stray.png") && !after.contains(".tmp-left-behind"))
        #expect(after.count == 19)
        let listed = try await pictures(cli)
        #expect(listed.first?.status == "pending", "a picture whose file is gone is fetched again later")
        #expect(listed.dropFirst().allSatisfy { $0.status == "cached" })
    }

    @Test func aPictureHasNoNameUntilItIsWholeAndNamed() throws {
        let home = try TempDirectory()
        let files = PictureFolder(directory: home.path + "/pictures")
        let mine = try files.write(Data("mine".utf8), for: "01/1.png")
        #expect(files.allFiles().isEmpty, "a file being written has no name (O_TMPFILE)")
        try files.name(mine, as: "01/1.png")
        #expect(files.read("01/1.png") == Data("mine".utf8) && files.allFiles() == ["01/1.png"])
        // Fetched again: the new copy replaces the old under the same name.
        let again = try files.write(Data("again".utf8), for: "01/1.png")
        try files.name(again, as: "01/1.png")
        #expect(files.read("01/1.png") == Data("again".utf8) && files.allFiles() == ["01/1.png"])
        // One never named leaves nothing.
        _ = try files.write(Data("dropped".utf8), for: "01/2.png")
        #expect(files.allFiles() == ["01/1.png"])
    }

    @Test func aTempFileIsLeftOverOnlyWhenTheProcessThatWroteItHasEnded() async throws {
        let files = PictureFolder(directory: "/nonexistent")
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/bin/true")
        try other.run()
        await ended(other)
        #expect(!files.isLeftover("01/.tmp-\(getpid())-1-1.png"), "this process's is its own")
        #expect(files.isLeftover("02/.tmp-\(other.processIdentifier)-1-2.png"))
        #expect(files.isLeftover("03/.tmp-3.png"), "of no process: an older feedsync's")
        #expect(!files.isLeftover("03/3.png"))
    }

    /// The folder's lock is a `flock` another process (here util-linux's `flock`) holds too: a
    /// writer waits for it to be released.
    @Test func theFolderLockWaitsForAnotherProcessHoldingIt() async throws {
        let home = try TempDirectory()
        let files = PictureFolder(directory: home.path + "/pictures")
        await files.exclusively {}  // makes the folder and its lock file
        let marker = home.path + "/released"
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [home.path + "/pictures/.lock", "-c", "sleep 0.5; touch \(marker)"]
        try holder.run()
        // Until the holder has the lock, `flock -n` takes it.
        for _ in 0..<100 {
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            probe.arguments = ["-n", home.path + "/pictures/.lock", "true"]
            try probe.run()
            await ended(probe)
            if probe.terminationStatus != 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let released = await files.exclusively { FileManager.default.fileExists(atPath: marker) }
        #expect(released, "the body ran only once the other process let go")
        #expect(!files.allFiles().contains(".lock"), "the lock file is not a picture")
        await ended(holder)
    }

    @Test func aPictureThatCannotBeWrittenWaitsForALaterPullAndTheOthersAreCached() async throws {
        let cli = try CLI()
        // Picture 1's folder is a file: its write fails, every other folder is made on first use.
        let folder = cli.home.path + "/pictures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder + "/01", contents: Data("in the way".utf8)))
        try await withServer(items: 20, perPage: 10) { _, url in
            let pull = try await cli.run("pull", "--feed", url, "--verbose")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.stderr.contains("cannot write the picture"), "\(pull.stderr)")
            let listed = try await pictures(cli)
            #expect(listed.filter { $0.status == "cached" }.count == 19)
            #expect(listed.filter { $0.status == "pending" }.count == 1, "a local failure is transient")
            for picture in listed where picture.status == "cached" {
                let path = try #require(picture.path)
                #expect(
                    FileManager.default.contents(atPath: path)
                        == DemoServer.png(seed: try #require(picture.url.flatMap(seed))))
            }
        }
        #expect(!PictureFolder(directory: folder).allFiles().contains { $0.contains(".tmp-") })
    }
}
