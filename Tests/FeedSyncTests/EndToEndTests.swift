import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import Foundation
import Testing

/// The built `feedsync` binary against the demo feed server on 127.0.0.1, with a real SQLite file
/// in a temp folder. Serialized: several of these kill processes or count requests.
@Suite(.serialized) struct EndToEndTests {
    @Test func fullPullThenOfflineListEqualsTheServersItemsInOrder() async throws {
        let cli = try CLI()
        let expected = try await withServer { server, url in
            let pull = try await cli.run("pull", "--feed", url)
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.stdout.isEmpty, "stdout is quiet when it is not a terminal")
            return server.expectedKeys
        }
        // The server is gone: list reads only the store.
        #expect(try await cli.listedKeys() == expected)
        let page3 = try await cli.run("list", "--page", "3", "--per-page", "20")
        #expect(page3.status == 0)
        // Not a terminal: one line of tab-separated fields per item. 95 items, newest first:
        // position 41 is item 55, the 55th stored, numbered 41 (numbers go as items are stored).
        let lines = page3.stdout.split(separator: "\n")
        #expect(lines.count == 20)
        let fields = lines[0].split(separator: "\t", omittingEmptySubsequences: false)
        #expect(fields.count == 6 && fields[1] == "unread" && fields[4] == "Item 55" && fields[5] == "cached")
        #expect(fields[3].hasPrefix("127.0.0.1:"), "an untitled feed is named by its host")
        let json = try await cli.run("list", "--page", "3", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(object["page"] as? Int == 3 && object["per_page"] as? Int == 20 && object["total"] as? Int == 95)
        let first = (object["items"] as! [[String: Any]])[0]
        #expect(first["id"] as? String == "item-55")
        #expect(first["position"] as? Int == 41)
        // Pictures of the default window (page 1 and five after it) were prefetched.
        let image = try #require(first["image"] as? [String: Any])
        #expect(image["status"] as? String == "cached")
        let path = try #require(image["path"] as? String)
        #expect(path.hasPrefix(cli.home.path + "/pictures/"))
        #expect(FileManager.default.contents(atPath: path) == DemoServer.png(seed: 55))
        let past = try await cli.run("list", "--page", "99", "--json")
        #expect(past.status == 0 && past.stdout.contains("\"items\": []"))
    }

    @Test func networkLostAtPage4KeepsPages1To3AndTheNextPullResumesWithoutRefetching() async throws {
        let cli = try CLI()
        try await withServer { server, url in
            var faults = Faults()
            faults.fromPage = (4, .reset)
            server.setFaults(faults)
            // Page 1 answered: the feed is fine; its history stops at page 4 until the next pull.
            let lost = try await cli.run("pull", "--feed", url)
            #expect(lost.status == 0, "\(lost.stderr)")
            #expect(try await cli.listedKeys() == Array(server.expectedKeys.prefix(30)))
            let status = try await cli.run("status")
            #expect(status.stdout.contains("history:       history stops at page 4: "), "\(status.stdout)")
            #expect(status.stdout.contains("page=4") && status.stdout.contains("next pull:     at the next pull"))
            #expect(try await cli.run("feeds").stdout.contains("just now, ok; history stops at page 4"))

            server.setFaults(Faults())
            server.clearLog()
            let resumed = try await cli.run("pull")
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(server.requestedPages == [1, 4, 5, 6, 7, 8, 9, 10], "page 1 is the head check (304)")
            #expect(server.feedRequests.first?.status == 304)
            #expect(try await cli.listedKeys() == server.expectedKeys)
            #expect(!(try await cli.run("status").stdout.contains("history:")), "the history went on")
        }
    }

    @Test func aServerThatIsDownExits75AndKeepsEverything() async throws {
        let cli = try CLI(retryAttempts: 2)
        let url = try await withServer { server, url in
            let pull = try await cli.run("pull", "--feed", url, "--max-pages", "2")
            #expect(pull.status == 0)
            return url
        }
        // The only feed's server gone: for all the run can tell, the machine is offline.
        let down = try await cli.run("pull")
        #expect(down.status == 75, "\(down.stderr)")
        #expect(down.stderr.contains("did not answer (refused; 1 feed): this server may be down"), "\(down.stderr)")
        #expect(try await cli.listedKeys().count == 20)
        let status = try await cli.run("status", "--json")
        #expect(status.stdout.contains("\"last_outcome\": \"ok\""), "nothing changed: \(status.stdout)")
        _ = url
    }

    @Test func itemsPrependedBetweenRunsAppearOnTopAndOnlyTheNewHeadIsFetched() async throws {
        let cli = try CLI()
        try await withServer { server, url in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            server.prepend(15)
            server.clearLog()
            let pull = try await cli.run("pull", "--force")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(server.requestedPages == [1, 2])
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func anUnchangedFeedCostsExactlyOneRequest() async throws {
        let cli = try CLI()
        try await withServer { server, url in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            server.clearLog()
            let pull = try await cli.run("pull", "--force")
            #expect(pull.status == 0)
            #expect(server.feedRequests.map(\.status) == [304])
            #expect(server.feedRequests.first?.ifNoneMatch != nil)
        }
    }

    @Test func aServerIgnoringValidatorsStillCostsOnePageWhenNothingIsNew() async throws {
        let cli = try CLI()
        try await withServer { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            var faults = Faults()
            faults.ignoreValidators = true
            server.setFaults(faults)
            server.clearLog()
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(server.feedRequests.map(\.status) == [200], "page 1 overlaps what is stored: the head walk stops")
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func aDeadNextPageLinkIsTheHistorysNotTheFeedsAndNewItemsStillCome() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url in
            var faults = Faults()
            faults.fromPage = (2, .status(404))
            server.setFaults(faults)
            let first = try await cli.run("pull", "--feed", url, "--images", "none")
            #expect(first.status == 0, "\(first.stderr)")
            var feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
            #expect(
                feeds[0]["outcome"] as? String == "ok" && feeds[0]["due_reason"] as? String == "minimum interval 15 min"
            )
            #expect(try await cli.run("status").stdout.contains("history stops at page 2: \(url)?page=2 answered 404"))
            // New items at the head: the next run brings them, and says the history once.
            server.prepend(3)
            let next = try await cli.run("pull", "--force", "--images", "none")
            #expect(next.status == 0, "\(next.stderr)")
            #expect(try await cli.listedKeys().prefix(3) == server.expectedKeys.prefix(3))
            feeds = try await json(cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
            #expect(feeds[0]["outcome"] as? String == "ok")
            let status = try await cli.run("status").stdout
            #expect(status.components(separatedBy: "history stops").count == 2, "once: \(status)")
        }
    }

    @Test func serverErrorsAreRetriedAndRetryAfterIsHonoured() async throws {
        let cli = try CLI(retryAttempts: 5)
        try await withServer { server, url in
            var faults = Faults()
            faults.next = [.status(500), .status(503), .status(429, retryAfter: "1")]
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", url)
            #expect(pull.status == 0, "\(pull.stderr)")
            let log = server.feedRequests
            #expect(log.prefix(4).map(\.status) == [500, 503, 429, 200])
            let waited = log[3].at.timeIntervalSince(log[2].at)
            #expect(waited >= 0.95, "Retry-After: 1 was honoured (waited \(waited) s)")
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func aLongRetryAfterSavesThePlaceAndLaterPullsWait() async throws {
        let cli = try CLI()
        try await withServer { server, url in
            var faults = Faults()
            faults.fromPage = (3, .status(503, retryAfter: "3600"))
            server.setFaults(faults)
            // Page 3 asks to wait an hour: the history waits that long, the head does not.
            let pull = try await cli.run("pull", "--feed", url)
            #expect(pull.status == 0, "\(pull.stderr)")
            let status = try await cli.run("status", "--json")
            let feed = (try json(status)["feeds"] as! [[String: Any]])[0]
            let backfill = feed["backfill"] as! [String: Any]
            #expect((backfill["stopped"] as? String)?.contains("3600") == true, "\(status.stdout)")
            let retry = try #require(
                (backfill["retry_at"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
            #expect(abs(retry.timeIntervalSinceNow - 3600) < 120)
            #expect(feed["due_reason"] as? String == "minimum interval 15 min", "the head's own schedule")
            server.clearLog()
            let forced = try await cli.run("pull", "--force")
            #expect(forced.status == 0)
            #expect(server.requestedPages == [1, 3], "--force asks the history too: \(server.requestedPages)")
            #expect(try await cli.listedKeys().count == 20)
        }
    }

    @Test(arguments: [Faults.Failure.truncate, .reset])
    func aBrokenPageFailsTheRunKeepsEarlierPagesAndALaterPullRecovers(failure: Faults.Failure) async throws {
        let cli = try CLI(retryAttempts: 2)
        try await withServer { server, url in
            var faults = Faults()
            faults.fromPage = (3, failure)
            server.setFaults(faults)
            // Cut off: the head is fine, the history continues at the next pull.
            let broken = try await cli.run("pull", "--feed", url)
            #expect(broken.status == 0, "\(broken.stderr)")
            #expect(try await cli.listedKeys() == Array(server.expectedKeys.prefix(20)))
            server.setFaults(Faults())
            #expect(try await cli.run("pull").status == 0)
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func aMalformedPageExits65NamingTheURLAndKeepsEarlierPages() async throws {
        let cli = try CLI()
        try await withServer { server, url in
            var faults = Faults()
            faults.fromPage = (3, .malformed)
            server.setFaults(faults)
            // A broken page of history: the feed is fine; that page is asked again in a day.
            let bad = try await cli.run("pull", "--feed", url)
            #expect(bad.status == 0, "\(bad.stderr)")
            let status = try await cli.run("status").stdout
            #expect(
                status.contains("history stops at page 3: \(url)?page=3") && status.contains("not valid JSON"),
                "\(status)")
            #expect(status.contains("tried again from "), "\(status)")
            #expect(try await cli.listedKeys() == Array(server.expectedKeys.prefix(20)))
            server.setFaults(Faults())
            server.clearLog()
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            #expect(server.requestedPages == [1], "the head only, the history waits: \(server.requestedPages)")
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func aFeedWhoseHasMoreNeverEndsIsStopped() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url in
            var faults = Faults()
            faults.endless = true
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", url, "--verbose")
            #expect(pull.status == 0)
            #expect(pull.stderr.contains("endless"), "\(pull.stderr)")
            #expect(server.requestedPages == [1, 2, 3, 4], "the repeated last page gives it away")
            #expect(try await cli.listedKeys() == server.expectedKeys)
            server.clearLog()
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(server.feedRequests.count == 1, "the backfill is not repeated")
        }
    }

    @Test func killedAtRandomMomentsTheStoreStaysSoundAndTheNextPullCompletes() async throws {
        let cli = try CLI()
        try await withServer(items: 600, perPage: 10) { server, url in
            var faults = Faults()
            // 60 pages take six seconds, more than the five runs before their kills add up to
            // (at most 3.5 s): every kill lands mid-pull, however fast the rest of a pull gets.
            faults.latency = 0.1
            server.setFaults(faults)
            var subscribed = false
            for _ in 0..<5 {
                // A kill that lands before the subscription is committed (a start slowed by load)
                // leaves nothing subscribed: the next run subscribes again.
                let running = try cli.start(subscribed ? ["pull"] : ["pull", "--feed", url])
                try await Task.sleep(nanoseconds: UInt64.random(in: 100_000_000...700_000_000))
                running.kill9()
                _ = try await running.wait()
                #expect(running.process.terminationReason == .uncaughtSignal)
                let store = try cli.openStore()
                #expect(try await store.integrityCheck() == ["ok"])
                subscribed = try await !store.feeds().isEmpty
                let keys = try await cli.listedKeys()
                #expect(Set(keys).count == keys.count, "no duplicates")
                #expect(keys == Array(server.expectedKeys.prefix(keys.count)), "a prefix of the feed, in order")
                #expect(keys.count < 600, "killed before the end")
            }
            server.setFaults(Faults())
            let final = try await cli.run(subscribed ? ["pull"] : ["pull", "--feed", url])
            #expect(final.status == 0, "\(final.stderr)")
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func aSecondPullExits75AtOnceWhileListKeepsAnswering() async throws {
        let cli = try CLI()
        try await withServer(items: 100, perPage: 10) { server, url in
            var faults = Faults()
            faults.latency = 0.2
            server.setFaults(faults)
            let first = try cli.start(["pull", "--feed", url])
            // Wait until the first pull is inside its run (it has asked for a page).
            for _ in 0..<200 where server.feedRequests.isEmpty {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            let started = Date()
            let second = try await cli.run("pull")
            let took = Date().timeIntervalSince(started)
            #expect(second.status == 75)
            #expect(second.stderr.contains("another pull is running"), "\(second.stderr)")
            #expect(took < 5, "exits at once (took \(took) s)")
            let list = try await cli.run("list", "--json")
            #expect(list.status == 0, "list is never blocked: \(list.stderr)")
            let done = try await first.wait()
            #expect(done.status == 0, "\(done.stderr)")
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func usageErrorsExit64WithAHint() async throws {
        let cli = try CLI()
        let typo = try await cli.run("pul")
        #expect(
            typo.status == 64 && typo.stderr == "feedsync: unknown command 'pul'; did you mean 'feedsync pull'?\n",
            "\(typo.stderr)")
        let far = try await cli.run("zzzz")
        #expect(far.status == 64 && far.stderr.contains("the commands: add, pull, list"), "\(far.stderr)")
        let none = try await cli.run("pull")
        #expect(none.status == 64)
        #expect(none.stderr.contains("feedsync add URL"))
        #expect(try await cli.run("list", "--per-page", "501").status == 64)
        #expect(try await cli.run("list", "--page", "0").status == 64)
        #expect(try await cli.run("pull", "--feed", "ftp://example.com/feed").status == 64)
    }

    @Test func localFailuresExit74NamingThePath() async throws {
        let cli = try CLI()
        // The data home is a file, not a folder.
        let blocker = cli.home.path + "/not-a-folder"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        let pull = try await cli.run("pull", "--home", blocker + "/home", "--feed", "http://127.0.0.1:9/feed")
        #expect(pull.status == 74, "\(pull.stderr)")
        #expect(pull.stderr.contains(blocker))
        // The database file is not a database.
        #expect(FileManager.default.createFile(atPath: cli.databasePath, contents: Data(repeating: 7, count: 8192)))
        let list = try await cli.run("list")
        #expect(list.status == 74, "\(list.stderr)")
        #expect(list.stderr.contains("feedsync.sqlite"))
    }

    @Test func aPullThatFailsAtOnceExitsCleanlyWhileLibcurlIsStillLoading() async throws {
        // libcurl loads on a thread of its own while the store opens; a pull that fails before it
        // needs libcurl used to exit beside that load, and crashed (SIGSEGV) in about one run in
        // twenty. 240 runs, four at a time.
        let cli = try CLI()
        let blocker = cli.home.path + "/not-a-folder"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        let statuses = try await withThrowingTaskGroup(of: [Int32].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var statuses: [Int32] = []
                    for _ in 0..<60 {
                        statuses.append(
                            try await cli.run("pull", "--home", blocker + "/home", "--feed", "http://127.0.0.1:9/feed")
                                .status)
                    }
                    return statuses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(statuses.count == 240)
        #expect(statuses.allSatisfy { $0 == 74 }, "\(statuses.filter { $0 != 74 })")
    }

    @Test func feedsArePulledSeveralAtOnceAndAFailedOneStopsNoOther() async throws {
        try await withServer(items: 5, perPage: 10) { server, url in
            let feeds = (1...4).map { "\(url)?feed=\($0)" }
            var faults = Faults()
            // Long enough that all four are asked before the first answer on a machine the rest
            // of the suite keeps busy (with 1 s, the fourth once came after it).
            faults.latency = 3
            server.setFaults(faults)
            let cli = try CLI()
            let pull = try await cli.start(
                ["pull", "--images", "none", "--per-host", "4"] + (feeds + [url + "/nope"]).flatMap { ["--feed", $0] }
            ).wait()
            #expect(pull.status == 65, "the missing feed: \(pull.stderr)")
            let pages = server.requests.filter { $0.path == "/feed" }
            #expect(pages.count == 4)
            #expect(pages.map(\.receivedAt).max()! < pages.map(\.at).min()!, "all four asked before any was answered")
            for feed in feeds {
                #expect(try await cli.openStore().list(ListQuery(feedURL: feed), page: 1, perPage: 10).total == 5)
            }

            faults.latency = 0.2
            server.setFaults(faults)
            server.clearLog()
            let one = try CLI()
            #expect(
                try await one.start(
                    ["pull", "--images", "none", "--feed-concurrency", "1"]
                        + feeds.prefix(3).flatMap { ["--feed", $0] }
                ).wait().status == 0)
            let sequential = server.requests.filter { $0.path == "/feed" }
            #expect(sequential.count == 3)
            #expect(zip(sequential, sequential.dropFirst()).allSatisfy { $1.receivedAt >= $0.at }, "one at a time")
        }
    }

    @Test func aMissingFeedExits65() async throws {
        let cli = try CLI()
        try await withServer { _, url in
            let pull = try await cli.run("pull", "--feed", url + "/nope")
            #expect(pull.status == 65, "\(pull.stderr)")
            #expect(pull.stderr.contains("404"))
        }
    }

    @Test func hostileTitlesNeverReachTheTerminalRaw() async throws {
        let cli = try CLI()
        try await withServer(items: 5) { server, url async throws -> Void in
            var faults = Faults()
            faults.hostileTitles = true
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url).status == 0)
        }
        let text = try await cli.run("list")
        for forbidden in ["\u{1B}", "\u{07}", "\u{202E}", "\r"] {
            #expect(!text.stdout.contains(forbidden))
        }
        #expect(text.stdout.contains("Item 5"))
        let json = try await cli.run("list", "--json")
        #expect(!json.stdout.contains("\u{1B}") && !json.stdout.contains("\u{202E}"))
        #expect(json.stdout.contains("\\u001b") && json.stdout.contains("\\u202e"))
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let title = (object["items"] as! [[String: Any]])[0]["title"] as! String
        #expect(title.hasPrefix("\u{1B}[31mItem 5"), "JSON keeps the exact title, escaped")
    }
}
