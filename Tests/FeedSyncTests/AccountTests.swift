import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncStore

/// An account on a real Tiny Tiny RSS (Debian's, `scripts/ttrss`): paged into the store like a
/// feed, marks queued offline and handed back, marks made elsewhere brought down, the password
/// kept to the data home. One test at a time: the server's feed proxy is one for all.
@Suite(.serialized) struct AccountTests {
    /// Adds the account; the output.
    static func add(_ user: TinyTinyRSSUser) async throws {
        let added = try await user.cli.run("account", "add", "ttrss", user.url, "--user", user.name)
        try #require(added.status == 0, "\(added.stderr)")
    }

    /// `pull --json`'s report of the one account.
    static func pulled(_ user: TinyTinyRSSUser) async throws -> [String: Any] { try await pulledAccount(user.cli) }

    /// The item numbers of the account's articles by their server ids.
    static func numbers(_ user: TinyTinyRSSUser) async throws -> [Int64: Int64] {
        var numbers: [Int64: Int64] = [:]
        for item in try await user.cli.listedItems() {
            numbers[Int64(item["id"] as! String)!] = Int64(item["number"] as! Int)
        }
        return numbers
    }

    @Test func aThousandArticlesArePagedIntoTheStoreOnceWithTheServersFeedsAndFolders() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(
            feeds: [("Alpha", "News"), ("Beta", "News"), ("Gamma", "Tech"), ("Delta", nil)], articles: 1000)
        try await Self.add(user)
        let first = try await Self.pulled(user)
        #expect(first["new_items"] as? Int == 1000)
        let pages = operations(first).filter { $0.contains("view_mode=all_articles feed_id=-4 since_id=0") }
        // 1000 articles, 200 a page, and the empty page after; two more asked ahead at most, each once.
        #expect((6...8).contains(pages.count) && Set(pages).count == pages.count, "\(pages)")
        let keys = try await user.cli.listedKeys()
        #expect(keys.count == 1000 && Set(keys).count == 1000, "each article once")
        let listed = try await feeds(user.cli)
        let folders = Dictionary(uniqueKeysWithValues: listed.map { ($0["title"] as! String, $0["folder"] as? String) })
        #expect(folders == ["Alpha": "News", "Beta": "News", "Gamma": "Tech", "Delta": nil])
        #expect(listed.allSatisfy { $0["items"] as? Int == 250 })
        // Nothing changed on the server: the articles above the last id, the counters.
        let again = try await Self.pulled(user)
        #expect(operations(again).count <= 3, "\(operations(again))")
        #expect(again["new_items"] as? Int == 0)
        // New articles come down above the others, once.
        try await user.sql(
            """
            INSERT INTO ttrss_entries (title, guid, link, updated, content, content_hash, date_entered, date_updated)
                VALUES ('Late news', '\(user.name)-late', 'http://example.com/late', now(), '<p>Late.</p>', '', now(), now());
            INSERT INTO ttrss_user_entries (ref_id, uuid, feed_id, owner_uid, tag_cache, label_cache)
                SELECT e.id, '', f.id, f.owner_uid, '', '' FROM ttrss_entries e, ttrss_feeds f
                WHERE e.guid = '\(user.name)-late' AND f.title = 'Gamma'
                    AND f.owner_uid = (SELECT id FROM ttrss_users WHERE login = '\(user.name)');
            """)
        #expect(try await Self.pulled(user)["new_items"] as? Int == 1)
        let items = try await user.cli.listedItems()
        #expect(items.first?["title"] as? String == "Late news" && items.count == 1001)
    }

    @Test func killedMidSyncTheNextPullGoesOnFromTheLastCommittedPage() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("One", nil), ("Two", "Folder")], articles: 3000)
        try await Self.add(user)
        let running = try user.cli.start(["pull"])
        let store = try user.cli.openStore()
        var committed = 0
        for _ in 0..<600 {
            committed = try await store.accounts().first?.cursor.backfillPlace.flatMap { Int($0) } ?? 0
            if committed >= 400 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        running.kill9()
        _ = try await running.wait()
        let account = try #require(try await store.accounts().first)
        try #require(!account.cursor.backfillDone, "killed before the walk ended")
        let skip = try #require(account.cursor.backfillPlace.flatMap { Int($0) })
        #expect(skip >= 400 && skip % 200 == 0)
        let resumed = try await Self.pulled(user)
        // Pages are asked two ahead, and logged as they are answered: the first asked is the lowest.
        let walked = operations(resumed).filter { $0.contains("since_id=0 ") }
        let skips = walked.compactMap { $0.split(separator: "=").last.flatMap { Int($0) } }
        #expect(skips.min() == skip, "goes on at \(skip), no committed page again: \(walked)")
        let keys = try await user.cli.listedKeys()
        #expect(keys.count == 3000 && Set(keys).count == 3000)
    }

    @Test func marksMadeOfflineReachTheServerAndMarksMadeElsewhereComeDown() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", "News")], articles: 40)
        // The account's server is a door of its own, which the test closes as the network goes.
        let door = try await user.openDoor()
        let added = try await user.cli.run("account", "add", "ttrss", door.url, "--user", user.name)
        try #require(added.status == 0, "\(added.stderr)")
        _ = try await Self.pulled(user)
        let numbers = try await Self.numbers(user)
        let ids = numbers.keys.sorted()
        let (readHere, starHere) = (Array(ids[0..<10]), Array(ids[10..<12]))

        // Offline: the marks are made at once and wait.
        try await user.closeDoor(port: door.port)
        #expect(try await user.cli.run(["mark", "read"] + readHere.map { String(numbers[$0]!) }).status == 0)
        #expect(try await user.cli.run(["mark", "starred"] + starHere.map { String(numbers[$0]!) }).status == 0)
        let offline = try await user.cli.run("pull")
        #expect(offline.status == 75, "\(offline.stderr)")
        let store = try user.cli.openStore()
        let accountID = try #require(try await store.accounts().first?.id)
        #expect(try await store.queuedMarks(accountID: accountID).count == 12, "the queue is kept")
        _ = try await user.openDoor(port: door.port)

        _ = try await Self.pulled(user)
        #expect(try await store.queuedMarks(accountID: accountID).isEmpty)
        let unread = try await user.articles(where: "unread")
        #expect(unread.isDisjoint(with: readHere) && unread.count == 30)
        #expect(try await user.articles(where: "marked") == Set(starHere))

        // Another device reads five, and one more that is marked unread here before the next sync.
        let elsewhere = Array(ids[20..<25])
        try await user.api([
            "op": "updateArticle", "article_ids": (elsewhere + [ids[30]]).map(String.init).joined(separator: ","),
            "field": 2, "mode": 0,
        ])
        #expect(try await user.cli.run("mark", "unread", String(numbers[ids[30]]!)).status == 0)
        _ = try await Self.pulled(user)
        let items = Dictionary(
            uniqueKeysWithValues: try await user.cli.listedItems().map {
                (Int64($0["id"] as! String)!, $0["unread"] as! Bool)
            })
        #expect(elsewhere.allSatisfy { items[$0] == false }, "read elsewhere, read here")
        #expect(items[ids[30]] == true, "marked unread here after the server's read: it stays unread")
        #expect(try await user.articles(where: "unread").contains(ids[30]), "and the server hears it")
        try await user.closeDoor(port: door.port)
    }

    @Test func whatARuleMarksOnArrivalOrAtOnceIsMarkedOnTheServerToo() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", "News")], articles: 30)
        try await Self.add(user)
        // Before the first sync: applied as the articles arrive, in the page's transaction.
        #expect(try await user.cli.run("rule", "add", "read", #"title ~ "^article [0-9]*3$""#).status == 0)
        #expect(try await user.cli.run("rule", "add", "star", "title = 'Article 7'").status == 0)
        _ = try await Self.pulled(user)
        let threes = try await Set([3, 13, 23].asyncMap { try await user.articleID($0) })
        #expect(try await user.articles(where: "NOT unread") == threes, "a read rule's marks reach the server")
        #expect(try await user.articles(where: "marked") == [try await user.articleID(7)])
        // Added later: applied to what is stored at once, and queued for the server as well.
        let added = try await user.cli.run("rule", "add", "read", "title ~ '^article 1.$'")
        #expect(added.stdout.contains("marked read 9 stored items"), "\(added)")  // 13 was read already
        _ = try await Self.pulled(user)
        let tens = try await Set((10...19).asyncMap { try await user.articleID($0) })
        #expect(try await user.articles(where: "NOT unread") == threes.union(tens))
        let store = try user.cli.openStore()
        let accountID = try #require(try await store.accounts().first?.id)
        #expect(try await store.queuedMarks(accountID: accountID).isEmpty)
    }

    @Test func anUnreadArticleNoWalkMetIsFetchedByIdInTheNextPassOverStates() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", nil)], articles: 5)
        try await Self.add(user)
        _ = try await Self.pulled(user)
        // One article lost here (no walk will meet it again: it is below the newest id).
        let keys = try await user.cli.listedKeys()
        let lost = try #require(keys.last)
        try await user.cli.openStore().write { db in
            try db.execute(sql: "DELETE FROM item WHERE key = ?", arguments: [lost])
        }
        // Another device stars one: the counters move, and the pass over states names the lost one.
        _ = try await user.api(["op": "updateArticle", "article_ids": keys[0], "field": 0, "mode": 1])
        let pulled = try await Self.pulled(user)
        #expect(pulled["new_items"] as? Int == 1 && operations(pulled).contains("getArticle"), "\(pulled)")
        #expect(Set(try await user.cli.listedKeys()) == Set(keys))
    }

    @Test func aWrongPasswordExits77AndKeepsNothing() async throws {
        let user = try await TinyTinyRSSUser()
        let cli = try CLI(environment: ["FEEDSYNC_PASSWORD": "not the password"])
        let refused = try await cli.run("account", "add", "ttrss", user.url, "--user", user.name)
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("refused the user name or password"), "\(refused.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: cli.home.path).filter { !$0.hasPrefix(".") }
        #expect(left.isEmpty, "nothing kept: \(left)")
        // API access off for the user: the sentence names the preference.
        try await user.sql(
            """
            UPDATE ttrss_user_prefs SET value = 'false' WHERE pref_name = 'ENABLE_API_ACCESS'
                AND owner_uid = (SELECT id FROM ttrss_users WHERE login = '\(user.name)');
            """)
        let disabled = try await user.cli.run("account", "add", "ttrss", user.url, "--user", user.name)
        #expect(disabled.status == 77)
        #expect(disabled.stderr.contains("ENABLE_API_ACCESS"), "\(disabled.stderr)")
    }

    @Test func thePasswordIsInNoArgumentOutputOrFileButItsOwn() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", nil)], articles: 5)
        try await Self.add(user)
        var said = ""
        // While a pull runs, no process on the machine has the password among its arguments.
        let running = try user.cli.start(["pull", "--verbose"])
        var arguments: [String] = []
        while running.process.isRunning {
            for pid in try FileManager.default.contentsOfDirectory(atPath: "/proc") where Int(pid) != nil {
                if let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") {
                    arguments.append(String(decoding: line, as: UTF8.self))
                }
            }
        }
        let pulled = try await running.wait()
        said += pulled.stdout + pulled.stderr
        #expect(!arguments.isEmpty && !arguments.contains { $0.contains(user.passwordMark) })
        for arguments in [["pull", "--json"], ["status"], ["account", "list"], ["feeds"]] {
            let run = try await user.cli.run(arguments)
            said += run.stdout + run.stderr
        }
        #expect(!said.contains(user.passwordMark))
        #expect(try FileManager.default.subpathsOfDirectory(atPath: user.cli.outside.path).isEmpty, "nothing outside")
        let secret = try FileManager.default.subpathsOfDirectory(atPath: user.cli.home.path)
        let holding = try secret.filter { path in
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: user.cli.home.path + "/" + path, isDirectory: &isFolder)
            guard !isFolder.boolValue else { return false }
            let data = try Data(contentsOf: URL(fileURLWithPath: user.cli.home.path + "/" + path))
            return data.range(of: Data(user.passwordMark.utf8)) != nil
        }
        try #require(holding.count == 1 && holding[0].hasPrefix("accounts/"), "\(holding)")
        var info = stat()
        #expect(stat(user.cli.home.path + "/" + holding[0], &info) == 0 && info.st_mode & 0o777 == 0o600)
        // Removing the account takes its items, feeds and password.
        #expect(try await user.cli.run("account", "remove", "\(user.name)@127.0.0.1").status == 0)
        #expect(try await user.cli.listedKeys().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: user.cli.home.path + "/" + holding[0]))
    }

    @Test func feedsAreSubscribedAndUnsubscribedOnTheServer() async throws {
        let user = try await TinyTinyRSSUser()
        try await Self.add(user)
        // tt-rss fetches feeds through this server as a proxy (it fetches no loopback URL itself).
        let rss = """
            <?xml version="1.0"?><rss version="2.0"><channel><title>Proxied</title><link>http://example.com/</link>
            <item><title>First</title><link>http://example.com/1</link><guid>p-1</guid></item>
            <item><title>Second</title><link>http://example.com/2</link><guid>p-2</guid></item>
            </channel></rss>
            """
        let server = try RawServer(
            answer: Data(
                ("HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nContent-Length: \(rss.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n" + rss).utf8))
        defer { server.stop() }
        try await TinyTinyRSSUser.script(user.cli, ["proxy", String(server.port)])
        let url = "http://[::1]/\(user.name).xml"
        let added = try await user.cli.run("add", url, "--account", "\(user.name)@127.0.0.1")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(
            try await user.sql(
                "SELECT count(*) FROM ttrss_feeds f JOIN ttrss_users u ON u.id = f.owner_uid WHERE u.login = '\(user.name)';"
            ).hasPrefix("1"))
        let titles = try await user.cli.listedItems().map { $0["title"] as? String }
        #expect(Set(titles) == ["First", "Second"], "the server fetched it, the sync brought its items")
        let listed = try await feeds(user.cli)
        #expect(listed.count == 1 && listed[0]["source_url"] as? String == url)
        let number = String(listed[0]["number"] as! Int)
        #expect(try await user.cli.run("remove", "--yes", number).status == 0)
        #expect(
            try await user.sql(
                "SELECT count(*) FROM ttrss_feeds f JOIN ttrss_users u ON u.id = f.owner_uid WHERE u.login = '\(user.name)';"
            ).hasPrefix("0"))
        #expect(try await feeds(user.cli).isEmpty)
        // An OPML file's feeds, subscribed there.
        let opml = user.cli.home.path + "/.subscriptions.opml"
        try Data(
            """
            <?xml version="1.0"?><opml version="2.0"><body>
            <outline type="rss" text="One" xmlUrl="http://[::1]/\(user.name)-one.xml"/>
            <outline type="rss" text="Two" xmlUrl="http://[::1]/\(user.name)-two.xml"/>
            </body></opml>
            """.utf8
        ).write(to: URL(fileURLWithPath: opml))
        let imported = try await user.cli.run("import", opml, "--account", "\(user.name)@127.0.0.1")
        #expect(imported.status == 0 && imported.stdout.contains("2 subscribed on account"), "\(imported)")
        #expect(
            try await user.sql(
                "SELECT count(*) FROM ttrss_feeds f JOIN ttrss_users u ON u.id = f.owner_uid WHERE u.login = '\(user.name)';"
            ).hasPrefix("2"))
        #expect(try await feeds(user.cli).count == 2)
    }

    @Test func aSessionTheServerForgotIsReplacedByOneMoreLogIn() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", nil)], articles: 3)
        try await Self.add(user)
        _ = try await Self.pulled(user)
        try await user.sql("DELETE FROM ttrss_sessions;")
        let again = try await Self.pulled(user)
        #expect(operations(again).filter { $0 == "login" }.count == 1, "\(operations(again))")
        #expect(again["outcome"] as? String == "ok")
        // The new session is kept for the next run: no log-in then.
        #expect(!operations(try await Self.pulled(user)).contains("login"))
    }

    @Test func aServerThatIsNotTheAPIGetsOneSentenceAndNothingIsKept() async throws {
        let html = "<html><body>Welcome</body></html>"
        let server = try RawServer(
            answer: Data(
                ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: \(html.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n" + html).utf8))
        defer { server.stop() }
        let cli = try CLI(environment: ["FEEDSYNC_PASSWORD": "x"])
        let refused = try await cli.run("account", "add", "ttrss", "http://127.0.0.1:\(server.port)/", "--user", "me")
        #expect(refused.status == 65)
        #expect(
            refused.stderr
                == "feedsync: 127.0.0.1 gave an unusable answer to log in: the answer is not the API's JSON (the "
                + "document is not valid JSON (unexpected character at byte 0; it starts with "
                + "\"<html><body>Welcome</body></html>\"))\n")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cli.home.path).filter { !$0.hasPrefix(".") }.isEmpty)
        // Nobody listening: the offline rule's exit, at once.
        let closed = try await cli.run("account", "add", "ttrss", "http://127.0.0.1:9/", "--user", "me")
        #expect(closed.status == 75, "\(closed.stderr)")
    }

    @Test func theAccountsPicturesAreFetchedAsAFeedsAreAndShownOffline() async throws {
        let user = try await TinyTinyRSSUser()
        try await user.seed(feeds: [("Daily", nil)], articles: 6)
        try await withServer(items: 1) { server, _ in
            let base = await server.baseURL
            // Each article shows a picture of the test's server in its content.
            try await user.sql(
                """
                UPDATE ttrss_entries SET content = '<p>Look <img src="\(base)/pictures/'
                    || split_part(guid, '-', 2) || '.png"></p>' WHERE guid LIKE '\(user.name)-%';
                """)
            try await Self.add(user)
            let pull = try await user.cli.run("pull", "--images", "all")
            #expect(pull.status == 0, "\(pull.stderr)")
            let items = try await user.cli.listedItems()
            #expect(items.count == 6)
            for item in items {
                let image = try #require(item["image"] as? [String: Any])
                #expect(image["status"] as? String == "cached", "\(item)")
                #expect((image["path"] as? String).map { FileManager.default.fileExists(atPath: $0) } == true)
            }
            #expect(server.pictureRequests.count == 6, "each picture once")
        }
        // Offline, it reads whole: the text and the picture's copy.
        let number = try #require(try await user.cli.listedItems().first?["number"] as? Int)
        let shown = try await user.cli.run("show", String(number), "--json")
        let detail = try json(shown)
        #expect((detail["text"] as? String)?.contains("Look") == true)
        #expect((detail["image"] as? [String: Any])?["status"] as? String == "cached")
    }
}
