import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization
import Testing

@testable import FeedSyncImages

// What reaches the picture cache and what it keeps: bad pictures refused, a kill mid-batch, the
// budget, gc, the folder's lock.

extension PictureTests {
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
            // 10 s without a byte: the stalled picture's 30 s fail, and the in-process server
            // answers the feed in time though the whole suite keeps both cores busy.
            let pull = try await cli.run(
                "pull", "--feed", url, "--timeout", "10", "--max-image-bytes", "100000", "--verbose")
            #expect(pull.status == 0, "a failed picture never fails the pull: \(pull.stderr)")
            #expect(pull.stderr.contains("/pictures/1.png: not an image"), "\(pull.stderr)")

            let listed = try await pictures(cli)
            #expect(listed.count == 14, "every item is stored")
            let cached = listed.filter { $0.status == "cached" }
            #expect(cached.count == 1)
            #expect(cached.first?.url == "\(base)/pictures/14.png")
            let files = PictureFolder(directory: cli.home.path + "/pictures").allFiles()
            #expect(files.count == 1, "nothing but the good picture was written: \(files)")
            let path = try #require(cached.first?.path)
            #expect(FileManager.default.contents(atPath: path) == DemoServer.png(seed: 14))
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
