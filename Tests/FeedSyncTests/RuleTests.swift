import FeedSyncDemoServer
import FeedSyncKit
import FeedSyncModel
import Foundation
import GRDB
import Testing

@testable import FeedSyncStore

/// Rules and saved views through the built binary, on a real store, against the demo server
/// (item n is titled `Item n`, newest first).
@Suite(.timeLimit(.minutes(5))) struct RuleTests {
    static func titles(_ items: [[String: Any]]) -> [String] { items.map { $0["title"] as! String } }

    static func number(_ title: String) -> Int { Int(title.split(separator: " ").last!)! }

    @Test func eachActionAppliesToWhatIsStoredAndToWhatArrivesAndAHiddenItemIsInNoListOrCount() async throws {
        let cli = try CLI()
        try await withServer(items: 40, perPage: 10) { server, url in
            #expect(try await cli.run("add", url).status == 0)
            let before = Self.titles(try await cli.listedItems())
            #expect(before.count == 40)

            let hide = try await cli.run("rule", "add", "hide", #"title ~ "7$""#)
            #expect(hide.status == 0 && hide.stdout.contains("it hid 4 stored items"), "\(hide)")
            let read = try await cli.run("rule", "add", "read", #"title ~ "3$" and not starred"#)
            #expect(read.stdout.contains("it marked read 4 stored items"), "\(read)")
            let star = try await cli.run("rule", "add", "star", "title = 'item 5' or title = 'ITEM 45'", "--feed", url)
            #expect(star.stdout.contains("it starred 1 stored item"), "\(star)")

            server.prepend(10)  // items 41 to 50 arrive
            #expect(try await cli.run("pull", "--force").status == 0)
            let listed = try await cli.listedItems()
            let titles = Self.titles(listed)
            #expect(titles.count == 50 - 5, "4 + 1 hidden")
            #expect(!titles.contains { $0.hasSuffix("7") })
            for item in listed {
                let title = item["title"] as! String
                #expect((item["unread"] as! Bool) == !title.hasSuffix("3"), "\(title)")
                #expect((item["starred"] as! Bool) == ["Item 5", "Item 45"].contains(title), "\(title)")
            }
            #expect(
                Self.titles(try await cli.listedItems("--hidden")) == [
                    "Item 47", "Item 37", "Item 27", "Item 17", "Item 7",
                ])
            #expect(Self.titles(try await cli.listedItems("--unread")).count == 45 - 5)
            #expect(try await feeds(cli)[0]["unread"] as? Int == 40, "the feed's count leaves the hidden out")
            let page = try json(try await cli.run("list", "--json", "--per-page", "10", "--page", "5"))
            #expect(page["total"] as? Int == 45 && (page["items"] as! [Any]).count == 5, "the paging closes up")
            let search = try json(try await cli.run("list", "--json", "--search", "item"))
            #expect(search["total"] as? Int == 45, "a search leaves the hidden out")
            // The terminal reader's endless list, as `read` reads it.
            let library = try FeedSync(home: DataHome(override: cli.home.path), access: .reading)
            let rows = try await library.readerRows(ListQuery(), after: nil, limit: 100).map(\.title)
            #expect(rows.count == 45 && !rows.contains { $0.hasSuffix("7") })
            #expect(try await library.total(of: ListQuery()) == 45)
            #expect(try await library.total(of: ListQuery(unread: true)) == 40)

            // Removing the hide rule shows them again, each in its place.
            let removed = try await cli.run("rule", "remove", "1")
            #expect(removed.stdout.contains("5 hidden items are shown again"), "\(removed)")
            #expect(Self.titles(try await cli.listedItems()) == (1...50).reversed().map { "Item \($0)" })
            #expect(try await feeds(cli)[0]["unread"] as? Int == 45)
            #expect(try await cli.listedItems("--hidden").isEmpty)
            let rules = try await cli.run("rule", "list")
            #expect(!rules.stdout.contains("hide") && rules.stdout.contains("read") && rules.stdout.contains("star"))
        }
    }

    @Test func pagesWhoseItemsAreAllHiddenLeaveTheNextPagesTheirPlaces() async throws {
        let cli = try CLI()
        try await withServer(items: 40, perPage: 10) { server, url async throws -> Void in
            // The whole first page (40 to 31), then the whole head of the next pull but item 50.
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "^item (3[1-9]|4[0-9])$""#).status == 0)
            #expect(try await cli.run("add", url).status == 0)
            server.prepend(10)
            #expect(try await cli.run("pull", "--force").status == 0)
            server.prepend(5)
            #expect(try await cli.run("pull", "--force").status == 0)
            let expected = [55, 54, 53, 52, 51, 50] + (1...30).reversed()
            #expect(Self.titles(try await cli.listedItems()) == expected.map { "Item \($0)" })
            #expect(try await cli.listedItems("--hidden").count == 19)
            #expect(try await feeds(cli)[0]["unread"] as? Int == 36)
        }
    }

    @Test func aRemovedHideRuleShowsWhatItHidUnlessAnotherRuleTakesIt() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 30) { _, url async throws -> Void in
            #expect(try await cli.run("add", url).status == 0)
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "5$""#).status == 0)
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "^item 1.$""#).status == 0)
            #expect(Set(Self.titles(try await cli.listedItems("--hidden"))).count == 12)  // 5, 15, 25, 10 to 19
            let first = try await cli.run("rule", "remove", "1")
            #expect(first.stdout.contains("2 hidden items are shown again"), "\(first)")
            let hidden = Set(Self.titles(try await cli.listedItems("--hidden")))
            #expect(hidden == Set((10...19).map { "Item \($0)" }), "item 15 is the other rule's now")
            #expect(try await cli.run("rule", "remove", "2").status == 0)
            #expect(Self.titles(try await cli.listedItems()) == (1...30).reversed().map { "Item \($0)" })
        }
    }

    @Test func gcRemovesHiddenItemsPastTheAgeReadOrNot() async throws {
        let cli = try CLI()
        try await withServer(items: 20, perPage: 20) { _, url async throws -> Void in
            #expect(try await cli.run("add", url).status == 0)
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "[02468]$""#).status == 0)
            #expect(try await cli.run("gc", "--older-than", "1d").status == 0)
            #expect(try await cli.listedItems("--hidden").isEmpty, "the demo's items are from 2023")
            #expect(try await cli.listedItems().count == 10, "unread shown items stay")
        }
    }

    @Test func aLongChainOfTestsIsOneFlatExpression() async throws {
        let cli = try CLI()
        let chain = (1...200).map { "title = x\($0)" }.joined(separator: " or ")  // 3 400 characters
        let tested = try await cli.run("rule", "test", chain)
        #expect(tested.status == 0 && tested.stdout.hasPrefix("0 stored items match"), "\(tested.stderr)")
        let open = try await cli.run("rule", "add", "hide", "title ~ \"open")
        #expect(open.status == 64 && open.stderr.contains("never closed") && !open.stderr.contains("\u{0}"))
    }

    @Test func aMalformedConditionExits64NamingWhereAndChangesNothing() async throws {
        let cli = try CLI()
        for (when, position) in [
            ("title ~ x and", 14), ("titel ~ x", 1), ("(title ~ x", 11), ("age > 3x", 7), ("title ~ \"(\"", 9),
            ("title ~ 'x' )", 13), ("date < 2026-02-30", 8), ("", 1), ("title = \"open", 9),
        ] {
            let result = try await cli.run("rule", "add", "hide", when)
            #expect(result.status == 64, "\(when): \(result)")
            #expect(result.stderr.contains("at character \(position):"), "\(when): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one sentence")
        }
        #expect(try await cli.run("view", "add", "x", "starred or").status == 64)
        #expect(try await cli.run("rule", "list").stdout.hasPrefix("no rules"))
        #expect(try await cli.run("view", "list").stdout.hasPrefix("no views"))
        #expect(try await cli.run("rule", "add", "burn", "starred").status == 64)
        #expect(try await cli.run("rule", "remove", "9").status == 64)
    }

    @Test func killedMidPullEveryCommittedItemHasItsRulesApplied() async throws {
        let cli = try CLI()
        try await withServer(items: 600, perPage: 10) { server, url in
            // Rules on every feed, before there is any.
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "7$""#).stdout.contains("hid 0 stored items"))
            #expect(try await cli.run("rule", "add", "read", #"title ~ "3$""#).status == 0)
            var faults = Faults()
            faults.latency = 0.1
            server.setFaults(faults)
            var subscribed = false
            for _ in 0..<3 {
                let running = try cli.start(subscribed ? ["pull", "--force"] : ["pull", "--feed", url])
                try await Task.sleep(nanoseconds: UInt64.random(in: 300_000_000...900_000_000))
                running.kill9()
                _ = try await running.wait()
                subscribed = try await !feeds(cli).isEmpty
                guard subscribed else { continue }
                let shown = try await cli.listedItems()
                let hidden = Self.titles(try await cli.listedItems("--hidden"))
                #expect(hidden.allSatisfy { $0.hasSuffix("7") })
                for item in shown {
                    let title = item["title"] as! String
                    #expect(!title.hasSuffix("7"), "\(title) was stored without its rule")
                    #expect((item["unread"] as! Bool) == !title.hasSuffix("3"), "\(title)")
                }
                #expect(try await feeds(cli)[0]["unread"] as? Int == shown.filter { $0["unread"] as! Bool }.count)
            }
            server.setFaults(Faults())
            #expect(try await cli.run(subscribed ? ["pull", "--force"] : ["pull", "--feed", url]).status == 0)
            let hidden = Self.titles(try await cli.listedItems("--hidden"))
            #expect(hidden.count == 60 && Set(hidden).count == 60)
            #expect(try await cli.listedItems().count == 540)
        }
    }

    @Test func aViewsItemsAndCountAreThoseOfItsQuery() async throws {
        let cli = try CLI()
        try await withServer(items: 120, perPage: 20) { _, url in
            #expect(try await cli.run("add", url).status == 0)
            #expect(try await cli.run("mark", "read", "1", "2", "3").status == 0)
            let when = #"(title ~ "^item [0-9]*[05]$" or content ~ "Item 11\.") and age < 3650d"#
            #expect(try await cli.run("view", "add", "Fives", when).status == 0)
            #expect(try await cli.run("view", "add", "fives", "starred").status == 64, "one name once")
            let viewed = Self.titles(try await cli.listedItems("--view", "FIVES"))
            let expected = (1...120).reversed().filter { $0 % 5 == 0 || $0 == 11 }.map { "Item \($0)" }
            #expect(viewed == expected)
            let tested = try await cli.run("rule", "test", when)
            #expect(tested.stdout.hasPrefix("\(expected.count) stored items match"), "\(tested.stdout)")
            let unread = Self.titles(try await cli.listedItems("--view", "Fives", "--unread"))
            let views = try await cli.run("view", "list")
            #expect(views.stdout.contains("Fives  \(unread.count) unread"), "\(views.stdout)")
            #expect(unread.count == expected.count - 1, "numbers 1 to 3 are items 120 to 118, one of them a five")
            #expect(try await cli.run("view", "remove", "Fives").status == 0)
            #expect(try await cli.run("list", "--view", "Fives").status == 64)
        }
    }
}

/// A view of the items' own words keeps its items and its unread count: both follow every change.
@Suite(.timeLimit(.minutes(5))) struct KeptViewTests {
    @Test func aKeptViewsCountFollowsEveryChangeAndIsItsQuerysCount() async throws {
        let cli = try CLI()
        try await withServer(items: 60, perPage: 20) { server, url in
            // One made before any item (found as they arrive), one after (found among those stored).
            #expect(
                try await cli.run("view", "add", "Sevens", #"title ~ "7$" or content ~ "Item 1[0-9]\.""#).status == 0)
            #expect(try await cli.run("add", url).status == 0)
            #expect(try await cli.run("view", "add", "Twos", "title ~ '2$' and not author = x").status == 0)
            func check(_ what: String) async throws {
                let views = try await cli.run("view", "list").stdout
                for name in ["Sevens", "Twos"] {
                    let unread = try await cli.listedItems("--view", name, "--unread").count
                    #expect(views.contains("\(name)  \(unread) unread"), "\(what): \(views)")
                }
            }
            try await check("stored")
            #expect(try await cli.run("mark", "read", "1-25").status == 0)
            try await check("marked read")
            server.prepend(20)
            #expect(try await cli.run("pull", "--force").status == 0)
            try await check("arrived")
            #expect(try await cli.run("rule", "add", "hide", "title ~ '^item [12]'").status == 0)
            try await check("hidden")
            #expect(try await cli.run("rule", "remove", "1").status == 0)
            try await check("shown again")
            #expect(try await cli.run("gc", "--older-than", "1d").status == 0)
            try await check("read ones removed")
            #expect(try await cli.run("mark", "read", "--all").status == 0)
            try await check("all read")
            #expect(try await cli.run("mark", "unread", "30-70").status == 0)
            try await check("some unread again")
            #expect(try await cli.run("view", "list").stdout.contains("Sevens  0 unread") == false)
        }
    }
}

/// The condition language and its matcher, on their own.
@Suite struct ConditionTests {
    @Test func aHostilePatternOverAMegabyteOfTextIsBoundedInTime() throws {
        let text = String(repeating: "a", count: 1 << 20) + "!"
        for pattern in ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(a|a?)+$", "(.*a){20}"] {
            let start = ContinuousClock.now
            _ = Patterns.matches(pattern, text)
            let took = ContinuousClock.now - start
            // RE2 takes milliseconds; a backtracking engine would take longer than the universe.
            #expect(took < .seconds(2), "\(pattern) took \(took)")
        }
        #expect(Patterns.matches("(?-i)A", "a") == false && Patterns.matches("A", "a"))
        #expect(Patterns.problem("(a") != nil && Patterns.problem("(\\1)") != nil, "no backreferences")
    }

    @Test func swiftAndSQLAgreeOnEveryCondition() throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            for function in Patterns.functions + [Store.searchBody] { db.add(function: function) }
        }
        let queue = try DatabaseQueue(configuration: configuration)
        let now: Int64 = 1_767_225_600
        let subject = ConditionSubject(
            title: "Sponsored: Swift 6", content: "Fast 中文 code", author: "Ann Lee", link: "https://x.test/a",
            feedName: "Tech Bits", feedURL: "https://tech.test/feed", categories: ["Swift", "Linux"],
            time: now - 3 * 86400, unread: true, starred: false)
        let conditions = [
            "title ~ sponsored", "title ~ '(?-i)sponsored'", "author = 'ann lee'", "author = ann", "categories = linux",
            "categories ~ '^lin'", "feed ~ tech.test", "feed = 'tech bits'", "content ~ '中文'", "link ~ '^https:'",
            "age < 7d", "age > 2d and age < 4d", "date > 2025-12-01", "date < 2025-12-30", "unread and not starred",
            "read or starred", "not (title ~ swift or author ~ x)", "(title ~ a or author ~ z) and categories ~ ux$",
        ]
        let tableSQL = """
            CREATE TABLE feed (id INTEGER PRIMARY KEY, url TEXT, title TEXT, custom_title TEXT);
            CREATE TABLE item (id INTEGER PRIMARY KEY, feed_id INTEGER, title TEXT, content TEXT, summary TEXT,
                author TEXT, link TEXT, categories TEXT, timeline INTEGER, read INTEGER, starred INTEGER);
            INSERT INTO feed VALUES (1, 'https://tech.test/feed', 'Tech Bits', NULL);
            INSERT INTO item VALUES (1, 1, 'Sponsored: Swift 6', '<p>Fast 中文 <b>code</b></p>', NULL, 'Ann Lee',
                'https://x.test/a', 'Swift' || char(10) || 'Linux', \(now - 3 * 86400), 0, 0);
            """
        try queue.write { try $0.execute(sql: tableSQL) }
        for text in conditions {
            let condition = try Store.condition(text)
            let inSwift = condition.holds(for: subject, now: now, matches: { Patterns.matches($1, $2) })
            let (sql, arguments) = Store.sql(condition.resolved(now: now))
            let inSQL = try queue.read {
                try Bool.fetchOne($0, sql: "SELECT \(sql) FROM item", arguments: StatementArguments(arguments)) ?? false
            }
            #expect(inSwift == inSQL, "\(text): Swift \(inSwift), SQL \(inSQL)")
        }
        #expect(
            try Store.condition("title ~ sponsored").holds(
                for: subject, now: now, matches: { Patterns.matches($1, $2) }))
        #expect(
            try !Store.condition("author = ann").holds(for: subject, now: now, matches: { Patterns.matches($1, $2) }))
    }

    @Test func theGrammarsPrecedenceIsNotOverAndOverOr() throws {
        #expect(
            try Condition.parse("unread or starred and not title ~ x")
                == .or(.unread, .and(.starred, .not(.matches(.title, "x")))))
        #expect(
            try Condition.parse("(unread OR starred) AND age > 1w") == .and(.or(.unread, .starred), .olderThan(604_800))
        )
        #expect(try Condition.parse("tags = 'a b'") == .equals(.categories, "a b"))
        #expect(throws: ConditionError.self) { try Condition.parse(String(repeating: "(", count: 200) + "unread") }
    }
}
