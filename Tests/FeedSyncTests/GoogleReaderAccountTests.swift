import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncStore

/// An account on a Google Reader API server (our own, `GoogleReaderServer`, answering as FreshRSS
/// does in ../shared/greader/ and, switched, as Miniflux, The Old Reader and BazQux do), synced
/// by the built binary as a Tiny Tiny RSS account is (`AccountTests`).
@Suite struct GoogleReaderAccountTests {
    static let password = "api 'pass' \"word\" ;"

    /// A CLI whose password (and Inoreader's application key) is the server's, and the server started.
    static func started(_ server: GoogleReaderServer) async throws -> CLI {
        try await server.start()
        return try CLI(
            retryAttempts: 2,
            environment: ["FEEDSYNC_PASSWORD": server.password, "FEEDSYNC_APP_KEY": GoogleReaderServer.app.key])
    }

    static func add(_ cli: CLI, _ server: GoogleReaderServer) async throws {
        let app = server.dialect == .inoreader ? ["--app-id", GoogleReaderServer.app.id] : []
        let added = try await cli.run(["account", "add", "greader", server.baseURL, "--user", server.user] + app)
        try #require(added.status == 0, "\(added.stderr)")
    }

    static let dialects: [GoogleReaderServer.Dialect] = [.freshRSS, .miniflux, .oldReader, .bazQux, .inoreader]

    /// The item numbers here by the server's numbers.
    static func numbers(_ cli: CLI) async throws -> [Int: Int] {
        var numbers: [Int: Int] = [:]
        for item in try await cli.listedItems() {
            let id = item["id"] as! String
            numbers[Int(id.dropFirst("tag:google.com,2005:reader/item/".count), radix: 16)!] = item["number"] as? Int
        }
        return numbers
    }

    @Test(arguments: Self.dialects)
    func aThousandItemsComeDownOnceWithFeedsAndFoldersAndAnUnchangedSyncCostsThreeRequests(
        dialect: GoogleReaderServer.Dialect
    ) async throws {
        let server = GoogleReaderServer(dialect: dialect, feeds: 4, labels: 2, items: 1000)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        let first = try await pulledAccount(cli)
        #expect(first["new_items"] as? Int == 1000, "\(operations(first))")
        let keys = try await cli.listedKeys()
        #expect(keys.count == 1000 && Set(keys).count == 1000, "each item once")
        let listed = try await feeds(cli)
        let folders = Dictionary(uniqueKeysWithValues: listed.map { ($0["title"] as! String, $0["folder"] as? String) })
        #expect(folders == ["Feed 1": "Label 1", "Feed 2": "Label 2", "Feed 3": "Label 1", "Feed 4": "Label 2"])
        #expect(listed.allSatisfy { $0["items"] as? Int == 250 })
        let again = try await pulledAccount(cli)
        #expect(again["new_items"] as? Int == 0)
        // The newer ids, the unread ids, the starred ids; The Old Reader's 1 000 ids a page take
        // the unread ones two.
        #expect(operations(again).count <= (dialect == .oldReader ? 4 : 3), "\(operations(again))")
        server.add(2, feed: 3)
        #expect(try await pulledAccount(cli)["new_items"] as? Int == 2)
        let newest = try await cli.listedItems().prefix(2).map { $0["title"] as? String }
        #expect(Set(newest) == ["New 1", "New 2"])
    }

    @Test func aWalkEndsOnlyWhereNoContinuationFollowsAShortPageIncluded() async throws {
        // 1 999 items: a page of 1 000, a short one of 999 that FreshRSS gives a continuation
        // (n - 1 after a continuation), then its empty page without one.
        let server = GoogleReaderServer(items: 1999)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        #expect(try await pulledAccount(cli)["new_items"] as? Int == 1999)
        let walked = server.log.filter { $0.hasPrefix("GET stream/items/ids") && $0.contains("reading-list") }
        #expect(
            walked.filter { !$0.contains("xt=") }.count == 4, "three pages and the walk of what is newer: \(walked)")
    }

    @Test func killedMidSyncTheNextPullGoesOnFromTheCommittedContinuation() async throws {
        let server = GoogleReaderServer(items: 6000)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        let running = try cli.start(["pull"])
        let store = try cli.openStore()
        var place: String?
        for _ in 0..<1000 {
            place = try await store.accounts().first?.cursor.backfillPlace
            if place != nil { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        running.kill9()
        _ = try await running.wait()
        let account = try #require(try await store.accounts().first)
        try #require(!account.cursor.backfillDone, "killed before the walk ended")
        let committed = try #require(account.cursor.backfillPlace)
        let before = server.log.count
        _ = try await pulledAccount(cli)
        let walked = server.log.dropFirst(before).filter { $0.hasPrefix("GET stream/items/ids") && !$0.contains("xt=") }
        #expect(walked.first?.contains("c=\(committed)") == true, "goes on at \(committed): \(walked)")
        let keys = try await cli.listedKeys()
        #expect(keys.count == 6000 && Set(keys).count == 6000)
    }

    @Test(arguments: Self.dialects)
    func marksGoUpWhenTheServerIsBackAndMarksMadeElsewhereComeDown(dialect: GoogleReaderServer.Dialect) async throws {
        let server = GoogleReaderServer(dialect: dialect, feeds: 1, labels: 0, items: 40)
        let cli = try await Self.started(server)
        try await Self.add(cli, server)
        _ = try await pulledAccount(cli)
        let numbers = try await Self.numbers(cli)
        let ids = numbers.keys.sorted()
        let (readHere, starHere) = (Array(ids[0..<10]), Array(ids[10..<12]))
        // The server gone: marks are made at once and wait.
        await server.stop()
        let port = UInt16(try #require(URLComponents(string: server.baseURL)?.port))
        #expect(try await cli.run(["mark", "read"] + readHere.map { String(numbers[$0]!) }).status == 0)
        // Read and starred on the same items: two requests (FreshRSS keeps only the last a=).
        #expect(
            try await cli.run(["mark", "starred"] + (starHere + readHere[0...0]).map { String(numbers[$0]!) }).status
                == 0)
        #expect(try await cli.run("pull").status == 75)
        let store = try cli.openStore()
        let accountID = try #require(try await store.accounts().first?.id)
        #expect(try await store.queuedMarks(accountID: accountID).count == 13, "the queue is kept")
        try await server.start(port: port)
        defer { Task { await server.stop() } }
        _ = try await pulledAccount(cli)
        #expect(try await store.queuedMarks(accountID: accountID).isEmpty)
        let state = Dictionary(uniqueKeysWithValues: server.items.map { ($0.number, $0) })
        #expect(readHere.allSatisfy { state[$0]!.read } && state.values.filter(\.read).count == 10)
        #expect(Set(state.values.filter(\.starred).map(\.number)) == Set(starHere + readHere[0...0]))
        // Another device reads five and one more, which is marked unread here before the next sync.
        let elsewhere = Array(ids[20..<25])
        server.mark(Set(elsewhere + [ids[30]]), read: true)
        server.mark([ids[11]], starred: false)
        #expect(try await cli.run("mark", "unread", String(numbers[ids[30]]!)).status == 0)
        _ = try await pulledAccount(cli)
        let items = Dictionary(
            uniqueKeysWithValues: try await cli.listedItems().map { ($0["number"] as! Int, $0) })
        #expect(elsewhere.allSatisfy { items[numbers[$0]!]?["unread"] as? Bool == false }, "read elsewhere, read here")
        #expect(items[numbers[ids[30]]!]?["unread"] as? Bool == true, "the later mark here wins")
        #expect(server.items.first { $0.number == ids[30] }?.read == false, "and the server hears it")
        #expect(items[numbers[ids[11]]!]?["starred"] as? Bool == false, "unstarred elsewhere")
    }

    @Test func markingAFeedOrFolderReadIsOneCatchUpThatMarksNothingThatArrivedAfter() async throws {
        let server = GoogleReaderServer(feeds: 4, labels: 2, items: 400)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        _ = try await pulledAccount(cli)
        server.add(2, feed: 1)  // on the server, not here yet
        let one = try #require(try await feeds(cli).first { $0["title"] as? String == "Feed 1" }?["number"] as? Int)
        #expect(try await cli.run("mark", "read", "--all", "--feed", String(one)).status == 0)
        #expect(try await cli.run("mark", "read", "--all", "--folder", "Label 2").status == 0)
        // One item of the folder marked unread again here: it goes up after the catch-up.
        let kept = try #require(
            try await cli.listedItems().first { $0["feed"] as? String == "Feed 2" }?["number"] as? Int)
        #expect(try await cli.run("mark", "unread", String(kept)).status == 0)
        let store = try cli.openStore()
        let accountID = try #require(try await store.accounts().first?.id)
        #expect(
            try await store.queuedCatchUps(accountID: accountID).map(\.stream).sorted() == [
                "feed/1", "user/-/label/Label 2",
            ])
        let pulled = try await pulledAccount(cli)
        let asked = operations(pulled)
        #expect(
            asked.filter { $0 == "mark-all-as-read" }.count == 2 && asked.filter { $0 == "edit-tag" }.count == 1,
            "\(asked)")
        #expect(try await store.queuedCatchUps(accountID: accountID).isEmpty)
        let unreadThere = Set(server.items.filter { !$0.read }.map(\.title))
        // Feed 1's 100 and Label 2's 200 read but the one marked unread; Feed 3's 100 and the 2 new unread.
        #expect(unreadThere.count == 103 && unreadThere.isSuperset(of: ["New 1", "New 2"]), "\(unreadThere.count)")
        let here = try await cli.listedItems()
        #expect(here.filter { $0["unread"] as? Bool == true }.count == 103)
        // A feed unsubscribed elsewhere before its catch-up goes up: refused, it becomes a mark an item.
        let three = try #require(try await feeds(cli).first { $0["title"] as? String == "Feed 3" }?["number"] as? Int)
        #expect(try await cli.run("mark", "read", "--all", "--feed", String(three)).status == 0)
        server.unsubscribe(feed: 3)
        let refused = try await pulledAccount(cli)
        #expect(refused["outcome"] as? String == "ok", "\(refused)")
        #expect(try await store.queuedCatchUps(accountID: accountID).isEmpty)
        #expect(operations(refused).filter { $0 == "edit-tag" }.count >= 1, "\(operations(refused))")
        #expect(
            try await store.queuedMarks(accountID: accountID).isEmpty,
            "Feed 3's items, one by one, sent at the sync's end (the server takes unknown ids)")
    }

    @Test func anUnreadItemNoWalkMetIsFetchedByIdAndOneRemovedHereIsNot() async throws {
        // Miniflux orders by publication: an item fetched now with an old date is below where the
        // walk of what is newer stops, and only the unread ids name it.
        let server = GoogleReaderServer(dialect: .miniflux, feeds: 1, labels: 0, items: 30)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        _ = try await pulledAccount(cli)
        server.add(1, feed: 1, published: 1_600_000_000)
        let pulled = try await pulledAccount(cli)
        #expect(pulled["new_items"] as? Int == 1, "\(operations(pulled))")
        #expect(try await cli.listedItems().contains { $0["title"] as? String == "New 1" })
        // Read, then removed here as old, it stays removed when another device marks it unread.
        let late = try #require(
            try await cli.listedItems().first { $0["title"] as? String == "New 1" }?["number"] as? Int)
        #expect(try await cli.run("mark", "read", String(late)).status == 0)
        _ = try await pulledAccount(cli)
        #expect(try await cli.run("gc", "--older-than", "2000d").status == 0)
        #expect(try await cli.listedItems().count == 30)
        server.mark(Set(server.items.filter { $0.title == "New 1" }.map(\.number)), read: false)
        let again = try await pulledAccount(cli)
        #expect(again["new_items"] as? Int == 0 && !operations(again).contains("stream/items/contents"))
        #expect(try await cli.listedItems().count == 30)
    }

    @Test func inoreaderWithoutItsApplicationGetsOneSentenceNamingWhatToGive() async throws {
        let server = GoogleReaderServer(dialect: .inoreader, items: 3)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        let refused = try await cli.run("account", "add", "greader", server.baseURL, "--user", server.user)
        #expect(refused.status == 77 && refused.stderr.contains("--app-id"), "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        try await Self.add(cli, server)
        // The key is the account's secret, in its file alone.
        #expect(!(try await cli.run("account", "list").stdout.contains(GoogleReaderServer.app.key)))
        #expect(try await pulledAccount(cli)["new_items"] as? Int == 3)
    }

    @Test func aWrongPasswordExits77KeepingNothingAndAForgottenAuthCostsOneLogIn() async throws {
        let server = GoogleReaderServer(items: 5)
        try await server.start()
        defer { Task { await server.stop() } }
        let wrong = try CLI(environment: ["FEEDSYNC_PASSWORD": "not it"])
        let refused = try await wrong.run("account", "add", "greader", server.baseURL, "--user", server.user)
        #expect(refused.status == 77 && refused.stderr.contains("refused the user name or password"), "\(refused)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: wrong.home.path).filter { !$0.hasPrefix(".") }.isEmpty)
        let elsewhere = try #require(server.baseURL.components(separatedBy: "/api/").first) + "/elsewhere"
        let notTheAPI = try await wrong.run("account", "add", "greader", elsewhere, "--user", "me")
        #expect(notTheAPI.status == 65 && notTheAPI.stderr.contains("is not a Google Reader API"), "\(notTheAPI)")

        let cli = try CLI(environment: ["FEEDSYNC_PASSWORD": server.password])
        try await Self.add(cli, server)
        _ = try await pulledAccount(cli)
        server.forgetSessions()
        let again = try await pulledAccount(cli)
        #expect(again["outcome"] as? String == "ok")
        #expect(operations(again).filter { $0 == "ClientLogin" }.count == 1, "\(operations(again))")
        #expect(!operations(try await pulledAccount(cli)).contains("ClientLogin"), "the new Auth kept")
        // Forgotten again, with a mark to send first: the token's request is refused too, and one
        // log-in gives both.
        server.forgetSessions()
        #expect(try await cli.run("mark", "read", "1").status == 0)
        let marked = try await pulledAccount(cli)
        #expect(marked["outcome"] as? String == "ok", "\(marked)")
        #expect(operations(marked).filter { $0 == "ClientLogin" }.count == 1, "\(operations(marked))")
        // The password and the Auth are in no process's arguments, no output, no file but the
        // account's own, mode 0600.
        let running = try cli.start(["pull", "--verbose"])
        var arguments: [String] = []
        while running.process.isRunning {
            for pid in try FileManager.default.contentsOfDirectory(atPath: "/proc") where Int(pid) != nil {
                if let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") {
                    arguments.append(String(decoding: line, as: UTF8.self))
                }
            }
        }
        var said = try await running.wait().stderr
        let secrets = [server.password, server.auth, server.token]
        #expect(!arguments.isEmpty && !arguments.contains { line in secrets.contains { line.contains($0) } })
        for arguments in [["pull", "--json", "--verbose"], ["status"], ["account", "list"], ["feeds"]] {
            let run = try await cli.run(arguments)
            said += run.stdout + run.stderr
        }
        #expect(!secrets.contains { said.contains($0) })
        let files = try FileManager.default.subpathsOfDirectory(atPath: cli.home.path).filter { path in
            let data = FileManager.default.contents(atPath: cli.home.path + "/" + path) ?? Data()
            return secrets.contains { data.range(of: Data($0.utf8)) != nil }
        }
        try #require(files.count == 1 && files[0].hasPrefix("accounts/"), "\(files)")
        var info = stat()
        #expect(stat(cli.home.path + "/" + files[0], &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func feedsAreSubscribedUnsubscribedAndImportedOnTheServer() async throws {
        let server = GoogleReaderServer(feeds: 1, labels: 0, items: 3)
        let cli = try await Self.started(server)
        defer { Task { await server.stop() } }
        try await Self.add(cli, server)
        let account = "\(server.user)@127.0.0.1"
        server.offer("http://feeds.example/new.xml", title: "Brand New", items: 4)
        let added = try await cli.run("add", "http://feeds.example/new.xml", "--account", account)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(server.feedTitles == ["Brand New", "Feed 1"])
        #expect(try await cli.listedItems().count == 7, "the server fetched it, the sync brought its items")
        let missing = try await cli.run("add", "http://feeds.example/missing.xml", "--account", account)
        #expect(missing.status != 0 && missing.stderr.contains("did not subscribe"), "\(missing.stderr)")
        let listed = try await feeds(cli)
        let number = try #require(listed.first { $0["title"] as? String == "Brand New" }?["number"] as? Int)
        #expect(try await cli.run("remove", "--yes", String(number)).status == 0)
        #expect(server.feedTitles == ["Feed 1"])
        #expect(try await feeds(cli).count == 1)
        server.offer("http://feeds.example/one.xml", title: "One", items: 1)
        server.offer("http://feeds.example/two.xml", title: "Two", items: 1)
        let opml = cli.home.path + "/.subscriptions.opml"
        try Data(
            """
            <?xml version="1.0"?><opml version="2.0"><body>
            <outline type="rss" text="One" xmlUrl="http://feeds.example/one.xml"/>
            <outline type="rss" text="Two" xmlUrl="http://feeds.example/two.xml"/>
            </body></opml>
            """.utf8
        ).write(to: URL(fileURLWithPath: opml))
        let imported = try await cli.run("import", opml, "--account", account)
        #expect(imported.status == 0 && imported.stdout.contains("2 subscribed on account"), "\(imported)")
        #expect(server.feedTitles == ["Feed 1", "One", "Two"])
    }

    @Test func theAccountsPicturesAndWholeArticlesAreFetchedAsAFeedsAreAndShownOffline() async throws {
        let server = GoogleReaderServer(feeds: 1, labels: 0, items: 6)
        let cli = try await Self.started(server)
        try await Self.add(cli, server)
        let pull = try await cli.run("pull", "--images", "all")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await cli.run("full-text", "1", "on").status == 0)
        #expect(try await cli.run("pull", "--images", "none").status == 0)
        await server.stop()
        let items = try await cli.listedItems()
        #expect(items.count == 6)
        for item in items {
            let image = try #require(item["image"] as? [String: Any])
            #expect(image["status"] as? String == "cached", "\(item)")
        }
        let shown = try json(try await cli.run("show", String(items[0]["number"] as! Int), "--json"))
        #expect(shown["content_source"] as? String == "page", "\(shown)")
        #expect((shown["text"] as? String)?.contains("Paragraph 5 of the whole article") == true)
        #expect(shown["author"] as? String == "Author 1")
    }
}
