import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import Foundation
import Testing

@testable import FeedSyncPull
@testable import FeedSyncStore

/// Issue 20 end to end: which requests a pull makes, with which headers, and what it remembers of
/// what servers said, asserted on the demo server's request log.
@Suite struct MannersTests {
    /// A small RSS document with one item.
    static func rss(_ channel: String = "", item: String = "one") -> String {
        """
        <?xml version="1.0"?><rss version="2.0"><channel><title>t</title>\(channel)
        <item><guid>\(item)</guid><title>Item \(item)</title></item></channel></rss>
        """
    }

    static func document(_ headers: [String: String] = [:], status: Int = 200, _ text: String = rss())
        -> Faults.Document
    {
        Faults.Document(status: status, headers: ["Content-Type": "application/rss+xml"].merging(headers) { $1 }, text)
    }

    /// The feed numbered `number` in `status --json`.
    func status(_ cli: CLI, _ number: Int = 0) async throws -> [String: Any] {
        let feeds = try json(try await cli.run("status", "--json"))["feeds"] as! [[String: Any]]
        return feeds[number]
    }

    /// Seconds from now until the feed's `due_at`.
    func dueIn(_ feed: [String: Any]) throws -> Double {
        let text = try #require(feed["due_at"] as? String)
        return Double(try #require(FeedDate.parse(text))) - Date().timeIntervalSince1970
    }

    @Test func aPlainPullAsksOnlyTheFeedsThatAreDueAndSaysWhyItSkipsTheOthers() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let base = await server.baseURL
            var faults = Faults()
            faults.ttl = 60
            faults.documents["/doc/cached"] = Self.document(["Cache-Control": "public, max-age=600, s-maxage=7200"])
            faults.documents["/doc/plain"] = Self.document()
            server.setFaults(faults)
            let rss = await server.feedURL(.rss)
            let feeds = [rss, base + "/doc/cached", base + "/doc/plain"]
            let first = try await cli.run(["pull", "--images", "none"] + feeds.flatMap { ["--feed", $0] })
            #expect(first.status == 0, "\(first.stderr)")

            let reasons = try await (0..<3).asyncMap { try await status(cli, $0)["due_reason"] as? String }
            #expect(reasons == ["ttl 60 min", "max-age 2 h", "minimum interval 15 min"])
            // Each due a quarter of its wait early, at most 5 minutes (the timer's tolerance).
            #expect(abs(try dueIn(try await status(cli, 0)) - 3300) < 60)
            #expect(abs(try dueIn(try await status(cli, 1)) - 6900) < 60)
            #expect(abs(try dueIn(try await status(cli, 2)) - 675) < 60)
            #expect(try await cli.run("status").stdout.contains("next pull:     the first pull from "))

            // Nothing is due: on a terminal one line says so; on a pipe or with --quiet, nothing.
            let told = try await cli.start(["pull"], terminalColumns: 200).wait()
            #expect(told.status == 0)
            // After the progress line of the pictures it fetched, cleared.
            let line = String(told.stdout.components(separatedBy: "\u{1B}[K").last ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                line.hasPrefix("nothing to pull: none of the 3 feeds is due yet; the first, ")
                    && line.hasSuffix("; feedsync pull --force asks now") && !line.contains("\n"), "\(told.stdout)")
            #expect(line.contains(", from "), "names the earliest due time: \(line)")
            #expect(try await cli.run("pull").stdout.isEmpty)
            #expect(try await cli.start(["pull", "--quiet"], terminalColumns: 200).wait().stdout.isEmpty)

            // Nothing is due: no request at all, and --verbose says why for each feed.
            server.clearLog()
            let idle = try await cli.run("pull", "--verbose")
            #expect(idle.status == 0 && server.feedRequests.isEmpty, "\(server.feedRequests.map(\.path))")
            #expect(idle.stderr.contains("\(rss): skipped, due "), "\(idle.stderr)")
            #expect(idle.stderr.contains(", ttl 60 min\n") && idle.stderr.contains(", max-age 2 h\n"), "\(idle.stderr)")

            // Once one is due, a plain pull asks that one only, conditionally.
            try cli.execute("UPDATE feed SET due_at = 0 WHERE url = '\(base)/doc/plain'")
            let due = try await cli.run("pull")
            #expect(due.status == 0)
            #expect(server.feedRequests.map(\.path) == ["/doc/plain"])

            // --feed asks a feed that is not due.
            server.clearLog()
            #expect(try await cli.run("pull", "--feed", rss, "--images", "none").status == 0)
            #expect(server.feedRequests.map(\.path) == ["/rss"])
        }
    }

    @Test func expiresIsCountedFromTheServersDateAndADayIsTheLongestWait() async throws {
        let cli = try CLI()
        try await withServer { server, url async throws -> Void in
            let base = await server.baseURL
            // The server's clock is a year behind; Expires is three hours after its Date.
            let date = Date().addingTimeInterval(-365 * 86_400)
            var faults = Faults()
            faults.feedHeaders = [
                "Date": DemoServer.rfc822(date), "Expires": DemoServer.rfc822(date.addingTimeInterval(3 * 3600)),
            ]
            faults.documents["/doc/week"] = Self.document(["Cache-Control": "max-age=604800"])
            faults.documents["/doc/past"] = Self.document(["Expires": "0", "Cache-Control": "no-cache"])
            server.setFaults(faults)
            for feed in [url, base + "/doc/week", base + "/doc/past"] {
                let pull = try await cli.run("pull", "--feed", feed, "--min-interval", "5m", "--images", "none")
                #expect(pull.status == 0)
            }
            let expires = try await status(cli, 0)
            #expect(expires["due_reason"] as? String == "Expires in 3 h")
            #expect(abs(try dueIn(expires) - (3 * 3600 - 300)) < 60)
            let week = try await status(cli, 1)
            #expect(week["due_reason"] as? String == "max-age 168 h, at most a day")
            #expect(abs(try dueIn(week) - (86_400 - 300)) < 60)
            let past = try await status(cli, 2)
            #expect(past["due_reason"] as? String == "minimum interval 5 min")
            #expect(abs(try dueIn(past) - 225) < 60)
        }
    }

    @Test func skipHoursMovesTheDueTimeToTheFirstHourTheFeedAllows() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            // The hour (UTC) the feed falls due in (the minimum interval, early by the timer's
            // tolerance), and the next, are skipped.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let end = Date().addingTimeInterval(900 - Schedule.tolerance(of: 900))
            let hour = calendar.component(.hour, from: end)
            var faults = Faults()
            faults.skipHours = [hour, (hour + 1) % 24]
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", await server.feedURL(.rss), "--images", "none").status == 0)
            let feed = try await status(cli)
            let expected = calendar.dateInterval(of: .hour, for: end)!.end.addingTimeInterval(3600)
            #expect(feed["due_at"] as? String == FeedDate.format(Int64(expected.timeIntervalSince1970)))
            #expect(feed["due_reason"] as? String == "minimum interval 15 min, then skipHours")
        }
    }

    @Test func failuresPushTheFeedOutExponentiallyAndASuccessResetsThem() async throws {
        let cli = try CLI(retryAttempts: 1)
        try await withServer { server, url async throws -> Void in
            var faults = Faults()
            faults.next = [.status(500), .status(404)]
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url).status == 75)
            var feed = try await status(cli)
            #expect(feed["failures"] as? Int == 1 && feed["due_reason"] as? String == "1 failure, waits 15 min")
            #expect(abs(try dueIn(feed) - 675) < 60)
            #expect(try await cli.run("pull", "--feed", url).status == 65)
            feed = try await status(cli)
            #expect(feed["due_reason"] as? String == "2 failures in a row, waits 30 min")
            #expect(abs(try dueIn(feed) - 1500) < 60)
            #expect(try await cli.run("status").stdout.contains("failures:      2 in a row"))

            // A plain pull leaves it alone; a 429 is the server's load, not a failure.
            server.clearLog()
            #expect(try await cli.run("pull").status == 0)
            #expect(server.requests.isEmpty)
            faults.next = [.status(429)]
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url).status == 75)
            feed = try await status(cli)
            #expect(feed["failures"] as? Int == 2)
            #expect(feed["due_reason"] as? String == "429 Too Many Requests, waits 15 min")

            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            feed = try await status(cli)
            #expect(feed["failures"] as? Int == 0 && feed["due_reason"] as? String == "minimum interval 15 min")
        }
        // A connection refused is no answer. The only feed's host, the only host of the run: the
        // machine is offline, as far as the run can tell, and nothing changes.
        let refused = try await cli.run("pull", "--force")
        #expect(refused.status == 75)
        #expect(refused.stderr.contains("did not answer (refused; 1 feed)"), "\(refused.stderr)")
        var feed = try await status(cli)
        #expect(feed["failures"] as? Int == 0 && feed["unanswered"] as? Int == 0)
        // With a server that answers in the same run, it is the host's failure: counted apart, due
        // at once the first three times.
        try await withServer { _, other async throws -> Void in
            let both = try await cli.run("pull", "--force", "--feed", other, "--images", "none")
            #expect(both.status == 0, "a feed named is answered for: \(both.stderr)")
            let all = try await cli.run("pull", "--force", "--images", "none")
            #expect(all.status == 75)
            #expect(all.stderr.contains("the place is saved, the next pull continues from it"), "\(all.stderr)")
            feed = try await status(cli)
            #expect(
                feed["failures"] as? Int == 0 && feed["unanswered"] as? Int == 1 && feed["due_now"] as? Bool == true)
            #expect(try await cli.run("status").stdout.contains("next pull:     at the next pull (no answer once;"))
            try cli.execute("UPDATE feed SET unanswered = 9 WHERE id = 1")
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 75, "asked: it is due")
            feed = try await status(cli)
            #expect(
                feed["unanswered"] as? Int == 10
                    && feed["due_reason"] as? String == "no answer 10 times in a row, waits 16 h")
            #expect(feed["due_now"] as? Bool == false)
        }
    }

    @Test func aRetryAfterDateHoldsEvenANamedFeedUntilForced() async throws {
        let cli = try CLI(retryAttempts: 1)
        try await withServer { server, url async throws -> Void in
            var faults = Faults()
            faults.next = [.status(503, retryAfter: DemoServer.rfc822(Date().addingTimeInterval(7200)))]
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url).status == 75)
            let feed = try await status(cli)
            #expect(feed["due_reason"] as? String == "Retry-After 2 h")
            server.clearLog()
            let named = try await cli.run("pull", "--feed", url, "--verbose")
            #expect(named.status == 0 && server.requests.isEmpty)
            #expect(named.stderr.contains("the server asked to wait until"), "\(named.stderr)")
            #expect(try await cli.run("pull", "--force", "--images", "none").status == 0)
            #expect(server.requests.first?.path == "/feed")
        }
    }

    @Test func aPermanentRedirectSeenOnTwoPullsInARowMovesTheFeed() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let base = await server.baseURL
            var faults = Faults()
            faults.documents["/doc/new"] = Self.document()
            faults.documents["/doc/old"] = Self.document(["Location": "/doc/new"], status: 301)
            faults.documents["/doc/wobbly"] = Self.document(["Location": "/doc/new"], status: 308)
            faults.documents["/doc/temporary"] = Self.document(["Location": "/doc/new"], status: 302)
            server.setFaults(faults)
            let feeds = ["/doc/old", "/doc/wobbly", "/doc/temporary"].map { base + $0 }
            let pull = ["pull", "--force"] + feeds.flatMap { ["--feed", $0] }
            #expect(try await cli.run(pull).status == 0)
            #expect(try await status(cli)["redirect_url"] as? String == base + "/doc/new")
            #expect(try await cli.run("status").stdout.contains("redirected:    permanently to \(base)/doc/new"))

            // The 308 passes (the document is served in place) before it is seen twice.
            faults.documents["/doc/wobbly"] = Self.document()
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--force").status == 0)
            let moved = try await status(cli)
            #expect(moved["url"] as? String == base + "/doc/new" && moved["moved_from"] as? String == feeds[0])
            #expect(try await status(cli, 1)["url"] as? String == feeds[1])
            #expect(try await status(cli, 2)["url"] as? String == feeds[2], "a 302 is not permanent")
            #expect(try await cli.run("status").stdout.contains("moved:         from \(feeds[0])"))

            // From now on the feed is asked where it moved.
            server.clearLog()
            #expect(try await cli.run("pull", "--feed", base + "/doc/new").status == 0)
            #expect(server.requests.map(\.path) == ["/doc/new"])
        }
    }

    @Test func aFeedThatIsGoneIsNotAskedAgainAndRemoveClearsIt() async throws {
        let cli = try CLI()
        try await withServer { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            var faults = Faults()
            faults.next = [.status(410)]
            server.setFaults(faults)
            let gone = try await cli.run("pull", "--feed", url)
            #expect(gone.status == 0, "the publisher's decision: \(gone.stderr)")
            #expect(try await status(cli)["gone_at"] as? String != nil)
            #expect(try await cli.run("status").stdout.contains("gone:          the server answered 410 Gone"))
            #expect(try await cli.run("feeds").stdout.contains("gone (410), not asked again"))
            #expect(try await cli.listedKeys() == server.expectedKeys, "its items stay")
            server.clearLog()
            for pull in [["pull"], ["pull", "--feed", url], ["pull", "--force"]] {
                #expect(try await cli.run(pull).status == 0)
            }
            #expect(server.requests.isEmpty)
            #expect(try await cli.run("remove", "--yes", "1").status == 0)
            #expect(try await feeds(cli).isEmpty)
        }
    }

    @Test func validatorsAreSentExactlyAsGivenAndAnUnchangedBodyIsNotReadAgain() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let base = await server.baseURL
            let modified = "Tue, 01 Dec 2026 10:00:00 GMT"
            var faults = Faults()
            faults.documents["/doc/both"] = Self.document(["ETag": "W/\"a\"", "Last-Modified": modified])
            faults.documents["/doc/date"] = Self.document(["Last-Modified": "yesterday-ish"])
            faults.documents["/doc/none"] = Self.document()
            server.setFaults(faults)
            let feeds = ["/doc/both", "/doc/date", "/doc/none"].map { base + $0 }
            let pull = ["pull", "--force", "--verbose"]
            #expect(try await cli.run(["pull"] + feeds.flatMap { ["--feed", $0] }).status == 0)
            #expect(server.requests.allSatisfy { $0.headers["if-none-match"] == nil })
            #expect(server.requests.allSatisfy { $0.headers["if-modified-since"] == nil })

            // The same body under a new ETag: not read again, and the new ETag is kept.
            faults.documents["/doc/both"]?.headers["ETag"] = "\"b\""
            server.setFaults(faults)
            server.clearLog()
            let second = try await cli.run(pull)
            let sent = Dictionary(uniqueKeysWithValues: server.requests.map { ($0.path, $0.headers) })
            #expect(sent["/doc/both"]?["if-none-match"] == "W/\"a\"")
            #expect(sent["/doc/both"]?["if-modified-since"] == modified)
            #expect(sent["/doc/date"]?["if-none-match"] == nil)
            #expect(sent["/doc/date"]?["if-modified-since"] == "yesterday-ish", "never a date of ours")
            #expect(sent["/doc/none"]?["if-none-match"] == nil && sent["/doc/none"]?["if-modified-since"] == nil)
            #expect(second.stderr.contains("\(feeds[0]): the same document as last time"), "\(second.stderr)")
            #expect(!second.stderr.contains("page 1"), "nothing parsed or stored: \(second.stderr)")

            server.clearLog()
            #expect(try await cli.run(pull).status == 0)
            #expect(server.requests.first { $0.path == "/doc/both" }?.headers["if-none-match"] == "\"b\"")

            // A changed body is read.
            faults.documents["/doc/both"] = Self.document(["ETag": "\"c\""], Self.rss(item: "two"))
            server.setFaults(faults)
            let changed = try json(try await cli.run("pull", "--force", "--json", "--feed", feeds[0]))
            let report = (changed["feeds"] as! [[String: Any]])[0]
            #expect(report["new_items"] as? Int == 1)
        }
    }

    @Test func aHostGetsAtMostTwoConnectionsAndEveryRequestSaysWhoAsks() async throws {
        try await withServer(items: 60, perPage: 60) { server, url async throws -> Void in
            var faults = Faults()
            faults.pictureLatency = 0.2
            server.setFaults(faults)
            let cli = try CLI()
            let pull = ["pull", "--feed", url, "--images", "all", "--image-concurrency", "8"]
            #expect(try await cli.run(pull).status == 0)
            #expect(server.pictureRequests.count == 60)
            #expect(server.peakConcurrentRequests == 2)
            #expect(Set(server.requests.compactMap(\.clientPort)).count <= 2)
            let feed = try #require(server.feedRequests.first)
            #expect(feed.headers["user-agent"] == "feedsync/\(FeedSyncVersion.string) (+\(FeedSyncVersion.projectURL))")
            #expect(feed.headers["accept"]?.contains("application/rss+xml") == true)
            #expect(feed.headers["accept"]?.contains("application/feed+json") == true)
            let encodings = Set(
                (feed.headers["accept-encoding"] ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
            #expect(encodings.isSuperset(of: ["gzip", "deflate"]), "\(encodings)")

            // --per-host lets more through.
            let other = try CLI()
            server.clearLog()
            #expect(try await other.run(pull + ["--per-host", "6"]).status == 0)
            #expect(server.peakConcurrentRequests > 2)
        }
    }

    @Test func pullJSONReportsEachFeedAndEachSkippedOne() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 10) { server, url async throws -> Void in
            let base = await server.baseURL
            var faults = Faults()
            faults.documents["/doc/a"] = Self.document()
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", base + "/doc/a").status == 0)
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            server.prepend(3)
            faults.next = [.status(503)]
            server.setFaults(faults)
            try cli.execute("UPDATE feed SET due_at = 0 WHERE url = '\(url)'")
            let run = try json(try await cli.run("pull", "--json", "--images", "none"))
            #expect(run["requests"] as? Int == 2)
            let feeds = try #require(run["feeds"] as? [[String: Any]])
            #expect(feeds.count == 1)
            let feed = feeds[0]
            #expect(feed["url"] as? String == url && feed["number"] as? Int == 2 && feed["outcome"] as? String == "ok")
            let requests = try #require(feed["requests"] as? [[String: Any]])
            #expect(requests.map { $0["status"] as? Int } == [503, 200])
            #expect((feed["bytes"] as? Int ?? 0) > 0 && feed["new_items"] as? Int == 3)
            #expect(feed["refreshed_items"] as? Int == 7)
            #expect(feed["due_reason"] as? String == "minimum interval 15 min" && feed["next_due_at"] is String)
            let skipped = try #require(run["skipped"] as? [[String: Any]])
            #expect(skipped.count == 1 && skipped[0]["reason"] as? String == "not_due")
            #expect(skipped[0]["url"] as? String == base + "/doc/a" && skipped[0]["until"] is String)
        }
    }
}

/// The rules of `Schedule`, on their own.
@Suite struct ScheduleTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)  // Wednesday 2026-11-18 11:06:40 UTC
    let schedule = Schedule()

    @Test func theLargestWaitWinsAndIsNamed() {
        let due = schedule.afterSuccess(
            now: now, headers: ["cache-control": "max-age=1200", "retry-after": "1800"],
            document: FeedSchedule(ttlMinutes: 25, updateSeconds: 600))
        #expect(due.reason == "Retry-After 30 min" && due.at == now.addingTimeInterval(1800))
        #expect(
            schedule.afterSuccess(now: now, headers: [:], document: FeedSchedule(updateSeconds: 3600)).reason
                == "sy:updatePeriod 60 min")
        #expect(Schedule(minInterval: 0).afterSuccess(now: now, headers: [:], document: FeedSchedule()).at == now)
    }

    @Test func badHeadersAreNoAnswer() {
        for value in ["max-age=-5", "max-age=abc", "max-age", "private", String(repeating: "x", count: 2000)] {
            #expect(Schedule.maxAge(value) == nil, "\(value)")
        }
        #expect(Schedule.maxAge("max-age=\"60\", s-maxage=30") == 60)
        #expect(Schedule.maxAge("max-age=99999999999999999999") == 1e9)
        #expect(Schedule.expires(["expires": "Thu, 01 Jan 1970 00:00:00 GMT"], now: now) == nil)
    }

    @Test func skipDaysMoveTheDueTimeToTheNextAllowedDay() {
        // Wednesday and Thursday skipped: Friday 00:00 UTC.
        let due = schedule.afterSuccess(
            now: now, headers: [:], document: FeedSchedule(skipDays: 1 << 3 | 1 << 4))
        #expect(due.reason == "minimum interval 15 min, then skipDays")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: due.at)
        #expect(parts.weekday == 6 && parts.hour == 0 && parts.minute == 0, "\(parts)")
        // Every hour skipped would mean never: not obeyed.
        let never = schedule.afterSuccess(now: now, headers: [:], document: FeedSchedule(skipHours: (1 << 24) - 1))
        #expect(never.at == now.addingTimeInterval(900 - 225))
    }

    @Test func failuresDoubleFromAQuarterOfAnHourToADay() {
        let waits = (1...9).map {
            schedule.afterFailure(now: now, failures: $0, retryAfter: nil).at.timeIntervalSince(now)
        }
        // Each a quarter early, at most 5 minutes: a timer's next run in the slot asks again.
        #expect(waits == [675, 1500, 3300, 6900, 14_100, 28_500, 57_300, 86_100, 86_100])
        #expect(
            schedule.afterFailure(now: now, failures: 9, retryAfter: nil).reason == "9 failures in a row, waits 24 h")
        let retryAfter = schedule.afterFailure(now: now, failures: 1, retryAfter: 9000)
        #expect(retryAfter.reason == "Retry-After 2 h 30 min" && retryAfter.at == now.addingTimeInterval(9000))
    }

    @Test func noAnswerLeavesTheFeedDueThreeTimesThenBacksOff() {
        let waits = (1...6).map { schedule.afterNoAnswer(now: now, unanswered: $0) }
        #expect(waits.map { $0.at.timeIntervalSince(now) } == [0, 0, 0, 675, 1500, 3300])
        #expect(waits[0].reason == "no answer once; asked again at the next pull")
        #expect(waits[2].reason == "no answer 3 times in a row; asked again at the next pull")
        #expect(waits[3].reason == "no answer 4 times in a row, waits 15 min")
    }

    @Test func aDueTimeIsEarlyByAQuarterOfItsWaitAtMostFiveMinutesButNeverForARetryAfter() {
        #expect(Schedule.tolerance(of: 900) == 225 && Schedule.tolerance(of: 3600) == 300)
        #expect(Schedule.tolerance(of: 60) == 15, "a short --min-interval stays nearly exact")
        let hourly = schedule.afterSuccess(now: now, headers: ["cache-control": "max-age=3600"], document: .init())
        #expect(hourly.at == now.addingTimeInterval(3300) && hourly.reason == "max-age 60 min")
        let asked = schedule.afterSuccess(now: now, headers: ["retry-after": "3600"], document: .init())
        #expect(asked.at == now.addingTimeInterval(3600), "never before a Retry-After")
        let busy = schedule.afterTooManyRequests(now: now, retryAfter: 1200)
        #expect(busy.at == now.addingTimeInterval(1200))
        #expect(schedule.afterTooManyRequests(now: now, retryAfter: nil).at == now.addingTimeInterval(675))
    }

    /// The shipped timer: a run every 15 minutes, each up to 2 minutes late (RandomizedDelaySec)
    /// and up to a minute more (AccuracySec). With the due times above, a 15-minute feed is asked
    /// at every run and an hourly one at every fourth, whatever the delays.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func theTimersRunsAskEveryFeedWhenItsWaitIsOver(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let runs = (0..<64).map { now.addingTimeInterval(Double($0) * 900 + Double(random.next() % 181)) }
        for (wait, every) in [(900.0, 1), (3600.0, 4)] {
            var feed = Feed(id: 1, url: "http://a/", format: nil, formatChosen: false, cursor: FeedCursor())
            var asked: [Int] = []
            for (index, run) in runs.enumerated() where Schedule.skip(feed, asking: .due, now: run) == nil {
                asked.append(index)
                let headers = wait > 900 ? ["cache-control": "max-age=\(Int(wait))"] : [:]
                feed.dueAt = schedule.afterSuccess(now: run, headers: headers, document: .init()).at
                // Never sooner than the server allows by more than the tolerance.
                #expect(feed.dueAt! >= run.addingTimeInterval(wait - Schedule.tolerance(of: wait)))
            }
            #expect(asked == Array(stride(from: 0, to: 64, by: every)), "wait \(wait), seed \(seed)")
        }
    }

    @Test func whoIsSkipped() {
        var feed = Feed(id: 1, url: "http://a/", format: nil, formatChosen: false, cursor: FeedCursor())
        #expect(Schedule.skip(feed, asking: .due, now: now) == nil, "never pulled: due")
        feed.dueAt = now.addingTimeInterval(60)
        feed.dueReason = "ttl 1 min"
        #expect(Schedule.skip(feed, asking: .due, now: now) == .notDue(feed.dueAt!, "ttl 1 min"))
        #expect(Schedule.skip(feed, asking: .named, now: now) == nil)
        feed.nextRetryAt = now.addingTimeInterval(60)
        #expect(Schedule.skip(feed, asking: .named, now: now) == .retryAfter(feed.nextRetryAt!))
        #expect(Schedule.skip(feed, asking: .forced, now: now) == nil)
        feed.goneAt = now
        #expect(Schedule.skip(feed, asking: .forced, now: now) == .gone(now))
    }

    @Test(arguments: [
        (
            """
            <rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><ttl> 90 </ttl>
            <skipHours><hour>0</hour><hour>24</hour><hour>23</hour><hour>25</hour><hour>x</hour></skipHours>
            <skipDays><day>Saturday</day><day>sunday</day><day>Someday</day></skipDays>
            <sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>
            <item><title>a</title><ttl>5</ttl></item></channel></rss>
            """,
            FeedSchedule(ttlMinutes: 90, updateSeconds: 21_600, skipHours: 1 | 1 << 23, skipDays: 1 | 1 << 6)
        ),
        (
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
             xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>t</title>
            <sy:updatePeriod>hourly</sy:updatePeriod></channel><item><title>a</title></item></rdf:RDF>
            """,
            FeedSchedule(updateSeconds: 3600)
        ),
        (
            """
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">
            <sy:updateFrequency>2</sy:updateFrequency><ttl>5</ttl><entry><id>a</id><title>a</title></entry></feed>
            """,
            FeedSchedule(updateSeconds: 43_200)
        ),
        (
            """
            <rss version="2.0"><channel><ttl>-1</ttl><ttl>60</ttl><ttl>5</ttl><item><title>a</title></item></channel></rss>
            """,
            FeedSchedule(ttlMinutes: 60)
        ),
    ])
    func documentsSayTheirSchedule(document: String, expected: FeedSchedule) throws {
        let (_, page) = try FeedDocument.decode(
            Data(document.utf8), format: nil, context: DocumentContext(url: "http://a/"))
        #expect(page.schedule == expected)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var values: [T] = []
        for element in self { values.append(try await transform(element)) }
        return values
    }
}
