import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import Foundation
import GRDB
import GRDBSQLite
import Testing

/// What a damaged disk, a planted link, another program or a careless user may do to a data home
/// or a command line, against the built binary. The invariants are HostileTests.expectSound's.
@Suite struct HostileLocalTests {
    static let goodItems = HostileTests.goodItems

    /// A data home holding a pulled feed of `goodItems` items with pictures; its URL.
    func pulled(_ cli: CLI, _ server: DemoServer, images: String = "none") async throws -> String {
        let url = await server.feedURL
        let pull = try await cli.run("pull", "--feed", url, "--images", images)
        try #require(pull.status == 0, "\(pull.stderr)")
        return url
    }

    /// Runs SQL on the store as another program would.
    // MARK: Links planted in the data home

    /// A folder outside the data home holding a file `canary` that says "keep": what a planted
    /// link points at.
    func planted() throws -> (TempDirectory, String) {
        let target = try TempDirectory()
        let canary = target.path + "/canary"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: canary))
        return (target, canary)
    }

    @Test(arguments: ["pictures", "pictures/01"])
    func aLinkedPictureFolderIsNeverWrittenThrough(_ link: String) async throws {
        let cli = try CLI()
        let (target, canary) = try planted()
        if link != "pictures" {
            try FileManager.default.createDirectory(
                atPath: cli.home.path + "/pictures", withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: cli.home.path + "/" + link, withDestinationPath: target.path)
        try await withServer(items: Self.goodItems, perPage: 10) { server, url in
            let pull = try await cli.start(["pull", "--feed", url]).wait()
            try await HostileTests.expectSound(cli, pull, status: 74, good: url)
            #expect(pull.stderr.contains("symbolic link"), "\(pull.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: target.path) == ["canary"])
            let cached = try await cli.listedItems().filter {
                ($0["image"] as! [String: Any])["status"] as? String == "cached"
            }
            #expect(cached.count == (link == "pictures" ? 0 : Self.goodItems - 1), "other pictures are cached")
        }
        #expect(try String(contentsOfFile: canary, encoding: .utf8) == "keep")
        withExtendedLifetime(target) {}
    }

    @Test func aLinkedDownloadFileIsNeverWrittenThrough() async throws {
        let cli = try CLI()
        let (target, canary) = try planted()
        try FileManager.default.createSymbolicLink(
            atPath: cli.home.path + "/download-0.part", withDestinationPath: canary)
        // One RSS document of 20 000 items is longer than 4 MiB: it goes to the download file. The
        // test's server makes it before its first byte: on a loaded machine, longer than 20 s.
        try await withServer(items: 20_000, perPage: 20_000) { server, _ in
            let url = await server.feedURL(.rss)
            let pull = try await cli.start(["pull", "--feed", url, "--images", "none", "--timeout", "120"]).wait()
            try await HostileTests.expectSound(cli, pull, status: 0, good: nil)
            #expect(try await cli.openStore().list(ListQuery(feedURL: url), page: 1, perPage: 1).total == 20_000)
        }
        #expect(try String(contentsOfFile: canary, encoding: .utf8) == "keep")
        withExtendedLifetime(target) {}
    }

    @Test func aLinkedLockFileIsRefused() async throws {
        let cli = try CLI()
        let (target, canary) = try planted()
        try FileManager.default.createSymbolicLink(atPath: cli.home.path + "/pull.lock", withDestinationPath: canary)
        let pull = try await cli.run("pull", "--feed", "http://127.0.0.1:9/feed")
        try await HostileTests.expectSound(cli, pull, status: 74, good: nil)
        #expect(try String(contentsOfFile: canary, encoding: .utf8) == "keep")
        withExtendedLifetime(target) {}
    }

    // MARK: A damaged or foreign store

    @Test func textThatIsNotUTF8IsReadWithReplacementCharacters() async throws {
        let cli = try CLI()
        try await withServer(items: Self.goodItems, perPage: 10) { server, _ in
            let url = try await pulled(cli, server)
            try cli.execute(
                """
                UPDATE item SET title = X'FF80C0' WHERE key = 'item-30';
                UPDATE item SET title = 42, link = X'00FF' WHERE key = 'item-29';
                UPDATE feed SET last_error = X'FE', etag = 7;
                """)
            for arguments in [["list"], ["list", "--json"], ["status"], ["status", "--json"]] {
                let result = try await cli.start(arguments).wait()
                try await HostileTests.expectSound(cli, result, status: 0, good: url)
                if arguments == ["list"] { #expect(result.stdout.contains("\u{FFFD}") && result.stdout.contains("42")) }
            }
            #expect(try await cli.run("pull").status == 0)
        }
    }

    @Test func aStoreWrittenByANewerFeedsyncIsNeverTouched() async throws {
        let cli = try CLI()
        try await withServer(items: Self.goodItems, perPage: 10) { server, _ in
            let url = try await pulled(cli, server)
            try cli.execute("INSERT INTO grdb_migrations (identifier) VALUES ('0099_from_the_future')")
            try cli.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            let before = try Data(contentsOf: URL(fileURLWithPath: cli.databasePath))
            for arguments in [["list"], ["status"], ["pull"], ["gc"], ["pull", "--feed", url]] {
                let result = try await cli.start(arguments).wait()
                try await HostileTests.expectSound(cli, result, status: 74, good: nil, storeReadable: false)
                #expect(result.stderr.contains("written by a newer feedsync"), "\(arguments): \(result.stderr)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: cli.databasePath)) == before)
        }
    }

    @Test func aReadOnlyDataHomeCanStillBeRead() async throws {
        let cli = try CLI()
        try await withServer(items: Self.goodItems, perPage: 10) { server, _ in _ = try await pulled(cli, server) }
        let mount = try TempDirectory()
        let readOnly: Bool
        if getuid() == 0 {
            // root writes through permissions: a read-only bind mount is the real thing.
            readOnly =
                run("/bin/mount", "--bind", cli.home.path, mount.path) == 0
                && run("/bin/mount", "-o", "remount,bind,ro", mount.path) == 0
        } else {
            readOnly = chmod(cli.home.path, 0o555) == 0
        }
        defer {
            if getuid() == 0 { _ = run("/bin/umount", mount.path) } else { chmod(cli.home.path, 0o755) }
        }
        try #require(readOnly, "a read-only data home could not be made here")
        let home = getuid() == 0 ? mount.path : cli.home.path
        for arguments in [["list"], ["list", "--json"], ["status"]] {
            let result = try await cli.start(arguments + ["--home", home]).wait()
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains("item-30") || result.stdout.contains("Item 30") || arguments == ["status"])
        }
        let pull = try await cli.start(["pull", "--home", home]).wait()
        #expect(pull.status == 74, "writing needs a writable store: \(pull.stderr)")
    }

    @Test func aStoreLockedByAnotherProcessIsReportedNotWaitedForForever() async throws {
        let cli = try CLI()
        try await withServer(items: Self.goodItems, perPage: 10) { server, _ in
            let url = try await pulled(cli, server)
            // Another program's connection, holding a write transaction open (GRDB would refuse to).
            var other: OpaquePointer?
            try #require(sqlite3_open(cli.databasePath, &other) == SQLITE_OK)
            defer { sqlite3_close(other) }
            try #require(
                sqlite3_exec(other, "BEGIN EXCLUSIVE; INSERT INTO setting VALUES ('held', 'elsewhere')", nil, nil, nil)
                    == SQLITE_OK)
            let started = Date()
            let pull = try await cli.start(["pull", "--feed", url]).wait()
            try await HostileTests.expectSound(cli, pull, status: 75, good: nil, storeReadable: false)
            #expect(pull.stderr.contains("locked by another process"), "\(pull.stderr)")
            #expect(Date().timeIntervalSince(started) < 60)
            #expect(try await cli.run("list").status == 0, "readers are not blocked")
            #expect(sqlite3_exec(other, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
            #expect(try await cli.run("pull").status == 0)
        }
    }

    @Test func numbersOutOfRangeInTheStoreAreClampedOrForgotten() async throws {
        let cli = try CLI()
        try await withServer(items: Self.goodItems, perPage: 10) { server, _ in
            let url = try await pulled(cli, server)
            try cli.execute(
                """
                INSERT OR REPLACE INTO reading_position (scope, page, per_page, updated_at)
                    VALUES ('*', 9223372036854775807, 500, 9e18);
                UPDATE feed SET remote_total = 9223372036854775807, per_page = 9223372036854775807,
                    backfill_page = 9223372036854775807, backfill_total = -9223372036854775807, backfill_done = 0;
                """)
            server.prepend(5)
            for arguments in [
                ["pull", "--force"], ["pull", "--force", "--images", "all"], ["gc"], ["list"], ["status"],
            ] {
                let result = try await cli.start(arguments).wait()
                try await HostileTests.expectSound(cli, result, status: 0, good: nil)
            }
            #expect(
                try await cli.openStore().list(ListQuery(feedURL: url), page: 1, perPage: 1).total == Self.goodItems + 5
            )
        }
    }

    // MARK: Arguments

    @Test(arguments: [
        ["list", "--page", "9223372036854775807"],
        ["list", "--page", "18446744073709551", "--per-page", "500"],
        ["list", "--page", "0"],
        ["pull", "--prefetch-pages", "9223372036854775807"],
        ["gc", "--prefetch-pages", "9223372036854775807"],
        ["gc", "--cache-size", "9223372036854775807"],
        ["pull", "--max-pages", "9223372036854775807"],
        ["pull", "--max-image-bytes", "8G"],
        ["pull", "--timeout", "-1"],
        ["pull", "--feed", "http://127.0.0.1:9/a b"],
        ["pull", "--feed", "http://127.0.0.1:9/\u{1B}[2J"],
        ["pull", "--feed", "http://127.0.0.1:99999/a"],
        ["pull", "--feed", "http:///no-host"],
        ["pull", "--feed", "ftp://127.0.0.1/feed"],
        ["pull", "--images", "\u{1B}[2J\u{1B}]0;pwned\u{7}"],
        ["list", "--feed", "\u{1B}[31m", "--page", "-1"],
    ])
    func argumentsOutOfRangeAreUsageErrors(_ arguments: [String]) async throws {
        let cli = try CLI()
        let result = try await cli.start(arguments).wait()
        #expect(result.status == 64, "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{7}"), "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
        if FileManager.default.fileExists(atPath: cli.databasePath) {
            let store = try cli.openStore()
            #expect(try await store.feeds().isEmpty, "nothing subscribed")
            #expect(try await store.latestReadingPosition() == nil, "nothing recorded")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.outside.path).isEmpty)
    }

    // MARK: Output

    @Test func aFullDiskOnStandardOutputIsExit74() async throws {
        let cli = try CLI()
        for arguments in [["list", "--json"], ["status"], ["status", "--json"], ["--help"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            process.environment = cli.environment
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
            process.standardError = FileHandle.nullDevice
            try process.run()
            await ended(process)
            #expect(process.terminationStatus == 74, "\(arguments)")
        }
    }

    @Test func aBrokenPipeOnStandardErrorWithSIGPIPEIgnoredIsExit74() async throws {
        let cli = try CLI()
        // The reader of stderr is gone before feedsync writes its message; SIGPIPE is ignored, as
        // daemons and some shells leave it.
        let script =
            "trap '' PIPE; (sleep 0.3; exec \"$0\" list --page 0) 2>&1 >/dev/null | true; exit ${PIPESTATUS[0]}"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, CLI.binary]
        process.environment = cli.environment
        try process.run()
        await ended(process)
        #expect(process.terminationStatus == 74)
        #expect(process.terminationReason == .exit, "no trap")
    }

    @Test func passwordsInFeedURLsAreNeverPrinted() async throws {
        let cli = try CLI(retryAttempts: 2)
        let unusable = try await cli.run("pull", "--feed", "http://bob:p#ss/w?rd@127.0.0.1:9/feed")
        #expect(
            unusable.status == 64 && !unusable.stderr.contains("p#ss") && !unusable.stderr.contains("w?rd"),
            "\(unusable.stderr)")
        let url = "http://reader:s3cret@127.0.0.1:9/feed"
        let pull = try await cli.run("pull", "--feed", url, "--verbose")
        #expect(pull.status == 75)
        for result in [pull, try await cli.run("status"), try await cli.run("status", "--json")] {
            #expect(!(result.stdout + result.stderr).contains("s3cret"))
            #expect(
                (result.stdout + result.stderr).contains("reader:***@127.0.0.1"), "\(result.stdout)\(result.stderr)")
        }
    }

    // MARK: Signals

    @Test func aSignalStopsThePicturesToo() async throws {
        let cli = try CLI()
        try await withServer(items: 200, perPage: 50) { server, url in
            var faults = Faults()
            faults.pictureLatency = 0.5  // 200 pictures, 8 at once: 12 s if not stopped
            server.setFaults(faults)
            let running = try cli.start(["pull", "--feed", url, "--images", "all"])
            while server.pictureRequests.count < 8 { try await Task.sleep(nanoseconds: 20_000_000) }
            let signalled = Date()
            kill(running.process.processIdentifier, SIGINT)
            let result = try await running.wait()
            #expect(Date().timeIntervalSince(signalled) < 5, "stopped within a few seconds")
            try await HostileTests.expectSound(cli, result, status: 75, good: nil)
            #expect(result.stderr.contains("interrupted"), "\(result.stderr)")
        }
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalStopsAPullBetweenTransactions(_ signal: Int32) async throws {
        let cli = try CLI()
        try await withServer(items: 200, perPage: 10) { server, url in
            var faults = Faults()
            faults.latency = 0.1
            server.setFaults(faults)
            let running = try cli.start(["pull", "--feed", url, "--images", "none"])
            while server.requestedPages.count < 4 { try await Task.sleep(nanoseconds: 20_000_000) }
            kill(running.process.processIdentifier, signal)
            let result = try await running.wait()
            try await HostileTests.expectSound(cli, result, status: 75, good: nil)
            #expect(result.stderr.contains("interrupted; the next pull continues from page"), "\(result.stderr)")
            let feed = try #require(try await cli.openStore().feed(url: url))
            #expect(feed.lastPullAt != nil && feed.lastOutcome == .transient, "never 'last pull: never' beside items")
            #expect(try await cli.openStore().list(ListQuery(feedURL: url), page: 1, perPage: 1).total >= 30)

            server.setFaults(Faults())
            #expect(try await cli.run("pull", "--images", "none").status == 0)
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }
}

/// Runs a program to its end; its exit status.
private func run(_ path: String, _ arguments: String...) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}
