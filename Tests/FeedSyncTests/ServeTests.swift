import FeedSyncDemoServer
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import Foundation
import Synchronization
import Testing

/// `feedsync serve` end to end: the built binary serving a pulled store, asked with curl (which
/// can send any Host header, cookie or method, as a hostile page or local user could).
@Suite struct ServeTests {
    /// A running `serve` and its address.
    struct Served {
        let process: RunningCLI
        let base: String
        let token: String

        /// curl's status code, headers and body for `path`.
        func curl(
            _ path: String, token: String? = nil, cookie: Bool = true, host: String? = nil, post: Bool = false,
            call: Bool = true
        ) async throws -> (status: Int, headers: String, body: String) {
            var arguments = ["-s", "-D", "-", "--max-time", "10"]
            let port = URL(string: base)!.port!
            if cookie { arguments += ["-b", "feedsync_token_\(port)=\(token ?? self.token)"] }
            if let host { arguments += ["-H", "Host: \(host)"] }
            if post { arguments += ["-X", "POST"] + (call ? ["-H", "X-Feedsync: 1"] : []) }
            let text = String(decoding: try await output(of: "/usr/bin/curl", arguments + [base + path]), as: UTF8.self)
            let parts = text.components(separatedBy: "\r\n\r\n")
            let head = parts.first ?? ""
            let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
    }

    /// `serve` started, once it says where it serves: within 30 s (beside the whole suite on two
    /// busy cores a start has taken more than 10). A serve that ends first, or says nothing by
    /// then, fails the test with what it said.
    func serve(_ cli: CLI, _ options: [String] = []) async throws -> Served {
        let process = try cli.start(["serve"] + options)
        let said = { (try? String(contentsOfFile: process.errPath, encoding: .utf8)) ?? "" }
        for _ in 0..<600 {
            let out = (try? String(contentsOfFile: process.outPath, encoding: .utf8)) ?? ""
            if let line = out.split(separator: "\n").first, let range = line.range(of: "/?token=") {
                return Served(
                    process: process, base: String(line[..<range.lowerBound]),
                    token: String(line[range.upperBound...]))
            }
            guard process.process.isRunning else {
                Issue.record("serve \(options) ended before it served: \(said())")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.kill9()
        Issue.record("serve \(options) did not say where it serves in 30 s: \(said())")
        throw CancellationError()
    }

    /// A free port below the range the kernel gives connections for their own end (32768–60999):
    /// a port from that range was taken by another test's connection between two runs of serve.
    static func portNoConnectionTakes() throws -> UInt16 {
        for _ in 0..<100 {
            if let free = try? OfflineTests.SilentServer(port: .random(in: 20_000..<32_000)) { return free.port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// `feedsync serve` becomes feedsync-serve, found beside it (the same process: what starts it
    /// can stop it), which hears SIGTERM and ends with 0; with no feedsync-serve beside it,
    /// feedsync says so in one sentence and exits 74.
    @Test func serveBecomesTheServerBesideItWhichEndsAtSIGTERM() async throws {
        let cli = try CLI()
        let served = try await serve(cli, ["--port", "0"])
        #expect(try await served.curl("/api/items").status == 200)
        let pid = served.process.process.processIdentifier
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(program.hasSuffix("/feedsync-serve"), "\(program)")
        kill(pid, SIGTERM)
        let ended = try await served.process.wait()
        #expect(ended.status == 0, "\(ended.stderr)")

        let alone = try TempDirectory()
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: alone.path + "/feedsync")
        // A child another test forks while the copy is written holds it open for writing until it
        // starts its own program: the copy cannot start meanwhile ("Text file busy").
        var copy: RunningCLI?
        for _ in 0..<100 where copy == nil {
            do {
                copy = try cli.start(["serve", "--port", "0"], executable: alone.path + "/feedsync")
            } catch let error as NSError
                where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY)
            {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let result = try await #require(copy).wait()
        let folder = URL(fileURLWithPath: alone.path).resolvingSymlinksInPath().path
        #expect(result.status == 74)
        #expect(
            result.stderr.hasPrefix("feedsync: cannot start \(folder)/feedsync-serve (No such file or directory)")
                && result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
    }

    @Test func thePagesAddressStaysGoodFromOneStartToTheNextUntilANewToken() async throws {
        let cli = try CLI()
        let port = String(try Self.portNoConnectionTakes())
        let first = try await serve(cli, ["--port", port])
        first.process.kill9()
        _ = try await first.process.wait()
        let second = try await serve(cli, ["--port", port])
        #expect(second.base == first.base && second.token == first.token, "the token kept in the data home")
        let kept = try FileManager.default.attributesOfItem(atPath: cli.home.path + "/serve.token")
        #expect((kept[.posixPermissions] as? Int) == 0o600, "only its owner reads it")
        second.process.kill9()
        _ = try await second.process.wait()
        let renewed = try await serve(cli, ["--port", port, "--new-token"])
        defer { renewed.process.kill9() }
        #expect(renewed.token != first.token && renewed.token.count == 32)
        #expect(try await renewed.curl("/api/items", token: first.token).status == 403, "the old token no more")
        #expect(try await renewed.curl("/api/items").status == 200)
    }

    @Test func theDefaultPortTakenAFreeOneIsUsedAndSaidSo() async throws {
        // Hold the default port (waiting out another serve that is ending, if need be).
        var holder: Int32 = -1
        for _ in 0..<100 where holder < 0 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(47070).bigEndian
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 && listen(fd, 4) == 0
                }
            }
            if bound {
                holder = fd
            } else {
                close(fd)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        // Not ours after 10 s: something else holds it, and it is taken all the same.
        defer { if holder >= 0 { close(holder) } }
        let cli = try CLI()
        let served = try await serve(cli)
        defer { served.process.kill9() }
        #expect(URL(string: served.base)?.port != 47070)
        let said = (try? String(contentsOfFile: served.process.errPath, encoding: .utf8)) ?? ""
        #expect(said.contains("port 47070 is taken; serving on another"), "\(said)")
        #expect(try await served.curl("/api/items").status == 200)
        // A port the user chose is not replaced: taken, it is the error, with the system's words.
        let chosen = try await cli.run("serve", "--port", "47070")
        #expect(
            chosen.status == 75 && chosen.stderr.contains("cannot serve on 127.0.0.1:47070")
                && chosen.stderr.contains("Address already in use"), "\(chosen)")
    }

    @Test func everyRouteIsForbiddenWithoutTheTokenOrFromAnotherHost() async throws {
        let cli = try CLI()
        try await withServer(items: 20, perPage: 10) { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "all").status == 0)
            let served = try await serve(cli)
            defer { served.process.kill9() }
            #expect(served.base.hasPrefix("http://127.0.0.1:") && served.token.count == 32)
            let routes = [
                "/", "/app.js", "/app.css", "/api/items", "/api/items/1", "/api/status", "/api/feeds", "/content/1",
                "/pictures/1", "/nowhere",
            ]
            for route in routes {
                #expect(try await served.curl(route, cookie: false).status == 403, "\(route) without the token")
                #expect(
                    try await served.curl(route, token: String(repeating: "0", count: 32)).status == 403, "\(route)")
                #expect(try await served.curl(route, host: "evil.example").status == 403, "\(route), Host evil.example")
                let host = URL(string: served.base)!.port.map { "evil.example:\($0)" }!
                #expect(try await served.curl(route, host: host).status == 403, "\(route), Host \(host)")
            }
            for route in ["/api/items/1/read", "/api/items/1/star", "/api/position?row=0&per_page=50"] {
                #expect(
                    try await served.curl(route, post: true, call: false).status == 403, "\(route) without X-Feedsync")
                #expect(
                    try await served.curl(route, cookie: false, post: true).status == 403, "\(route) without the token")
            }
            #expect(try await served.curl("/api/items", post: true).status == 404, "state changes only by POST routes")

            // The address's token sets the cookie; every answer carries the policy.
            let page = try await served.curl("/?token=\(served.token)", cookie: false)
            #expect(page.status == 200 && page.body.contains("<script src=\"/app.js\""))
            #expect(
                page.headers.contains(
                    "Set-Cookie: feedsync_token_\(URL(string: served.base)!.port!)=\(served.token); Path=/; HttpOnly; SameSite=Strict"
                ))
            for answer in [page, try await served.curl("/api/items"), try await served.curl("/nowhere", cookie: false)]
            {
                #expect(answer.headers.contains("default-src 'self'; script-src 'self';"), "\(answer.headers)")
                #expect(answer.headers.contains("frame-ancestors 'none'") && answer.headers.contains("nosniff"))
            }
            #expect(try await served.curl("/", host: "localhost:\(URL(string: served.base)!.port!)").status == 200)
        }
    }

    @Test func boundToEveryAddressItWarnsAndStillWantsTheToken() async throws {
        // --open hands the address to $BROWSER: here a script that writes it down.
        let folder = try TempDirectory()
        let browser = folder.path + "/browser"
        try "#!/bin/sh\necho \"$1\" > \(folder.path)/opened\n".write(toFile: browser, atomically: true, encoding: .utf8)
        chmod(browser, 0o755)
        let cli = try CLI(environment: ["BROWSER": browser])
        let served = try await serve(cli, ["--bind", "0.0.0.0", "--open"])
        defer { served.process.kill9() }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: folder.path + "/opened") {
            try await Task.sleep(for: .milliseconds(50))
        }
        // A file only its owner reads, not the token on a command line.
        let opened = try String(contentsOfFile: folder.path + "/opened", encoding: .utf8)
        #expect(opened == "file://\(cli.home.path)/open.html\n")
        let redirect = try String(contentsOfFile: cli.home.path + "/open.html", encoding: .utf8)
        #expect(redirect.contains("url=\(served.base)/?token=\(served.token)"))
        let mode = try FileManager.default.attributesOfItem(atPath: cli.home.path + "/open.html")[.posixPermissions]
        #expect(mode as? Int == 0o600)
        #expect(served.base.hasPrefix("http://127.0.0.1:"))
        #expect(try await served.curl("/", cookie: false).status == 403)
        #expect(try await served.curl("/").status == 200)
        // From another machine the Host is this one's address; a name (DNS rebinding) is refused.
        let port = URL(string: served.base)!.port!
        #expect(try await served.curl("/", host: "192.168.1.20:\(port)").status == 200)
        #expect(try await served.curl("/", host: "evil.example:\(port)").status == 403)
        #expect(try await served.curl("/", host: "192.168.1.20:\(port + 1)").status == 403)
        let warned = (try? String(contentsOfFile: served.process.errPath, encoding: .utf8)) ?? ""
        #expect(warned.contains("reachable from other machines; it still needs the token"), "\(warned)")
    }

    @Test func aPullTheLostNetworkInterruptedResumesWithin30SecondsOfItsReturn() async throws {
        let cli = try CLI(retryAttempts: 1)
        let first = DemoServer(items: 20, perPage: 10)
        try await first.start()
        let url = await first.feedURL
        #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
        await first.stop()
        try cli.execute("UPDATE feed SET due_at = 0")
        let served = try await serve(cli, ["--pull-every", "15m"])
        defer { served.process.kill9() }
        // The background pull finds no network: offline, it changes nothing on the feed.
        try await Task.sleep(for: .seconds(1))
        #expect(try await cli.openStore().feeds().first?.lastOutcome == .ok)
        let back = DemoServer(items: 25, perPage: 10, port: UInt16(URL(string: url)!.port!))
        try await back.start()
        let returned = Date()
        for _ in 0..<600 where try await cli.openStore().list(ListQuery(feedURL: nil), page: 1, perPage: 1).total < 25 {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await cli.openStore().list(ListQuery(feedURL: nil), page: 1, perPage: 1).total == 25)
        // The next round comes 30 s after the one that found no network; the rest is the pull, which
        // on a machine whose two cores the whole suite keeps busy took up to 18 s more.
        #expect(Date().timeIntervalSince(returned) < 60, "resumed within 30 s of the network's return (and a margin)")
        await back.stop()
    }

    /// Every writer of the picture folder at once for a minute: `serve --pull-every 10s` (its
    /// background pull prefetching), the page's fetches for rows in view and a reader jumping
    /// around, cron pulls and `gc` started again and again, over a tight cache budget and pictures
    /// that fail. Afterwards no row names a missing or partial file, no file is without a row,
    /// and the database is whole.
    @Test func everyPictureWriterAtOnceLeavesTheCacheAndTheStoreInAgreement() async throws {
        let cli = try CLI(retryAttempts: 1)
        try await withServer(items: 600, perPage: 20) { server, url async throws -> Void in
            var faults = Faults()
            faults.pictureLatency = 0.01
            for number in stride(from: 3, through: 600, by: 17) { faults.pictures[number] = .reset }
            for number in stride(from: 5, through: 600, by: 23) { faults.pictures[number] = .status(503) }
            for number in stride(from: 7, through: 600, by: 29) { faults.pictures[number] = .stall(0.5) }
            for number in stride(from: 11, through: 600, by: 31) { faults.pictures[number] = .html }
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url, "--images", "none", "--cache-size", "8K").status == 0)
            let served = try await serve(cli, ["--pull-every", "10s"])
            let minute = Date().addingTimeInterval(60)
            let cronDone = Mutex(false)
            // The page: a reader settling on rows here and there, fetching the pictures in view.
            let page = Task.detached {
                var rows = SplitMix(seed: 28)
                while !cronDone.withLock({ $0 }) {
                    let row = Int(rows.next() % 580)
                    _ = try? await served.curl("/api/position?row=\(row)&per_page=20", post: true)
                    for number in (600 - row - 10)...(600 - row) where number > 0 {
                        _ = try? await served.curl("/api/items/\(number)/picture", post: true)
                    }
                }
            }
            // Cron: pulls and gc, each started again as soon as it ends, for a minute and until a
            // pull got the lock. serve's background pull holds the lock for as long as it runs (on
            // a loaded machine, most of the minute): a pull or gc that finds it held exits 75 at
            // once, saying so, as the product promises; any other outcome is a failure.
            var cron: [(command: String, status: Int32, stderr: String)] = []
            let giveUp = Date().addingTimeInterval(300)
            while Date() < minute || !cron.contains(where: { $0.command == "pull" && $0.status == 0 }), Date() < giveUp
            {
                let command =
                    cron.count % 2 == 1
                    ? ["gc", "--cache-size", "8K"] : ["pull", "--force", "--images", "all", "--timeout", "10"]
                let result = try await cli.run(command)
                cron.append((command[0], result.status, result.stderr))
            }
            cronDone.withLock { $0 = true }
            await page.value
            try await Task.sleep(for: .seconds(1))
            kill(served.process.process.processIdentifier, SIGTERM)
            _ = try await served.process.wait()
            let unexpected = cron.filter {
                $0.status != 0 && !($0.status == 75 && $0.stderr.contains("another pull is running"))
            }
            #expect(unexpected.isEmpty, "\(unexpected.prefix(3))")
            #expect(
                cron.contains { $0.command == "pull" && $0.status == 0 }, "a cron pull got the lock between serve's")

            // serve, stopped mid-write, may leave temporary files, which the next writer sweeps
            // ("Who writes what"): one gc, as the next cron run would, then the check.
            #expect(try await cli.run("gc", "--cache-size", "8K").status == 0)
            let check = try await cli.run("gc", "--check")
            #expect(check.status == 0, "\(check)")
            #expect(
                check.stdout.contains(
                    "missing files 0, partial 0, damaged 0, unknown 0, temp files of ended processes 0"),
                "\(check.stdout)")
            #expect(try await cli.openStore().integrityCheck() == ["ok"])
            let cached = try await cli.listedItems().filter {
                ($0["image"] as? [String: Any])?["status"] as? String == "cached"
            }
            #expect(!cached.isEmpty, "pictures were cached")
        }
    }

    /// A cached picture cut short, overwritten or removed behind feedsync's back is never served:
    /// 404, and the page's fetch of a row in view brings it back. Reads take no lock: a picture
    /// is served while another process holds the folder's lock, as a pull recording a batch does.
    @Test func aDamagedPictureIs404AndFetchedAgainAndNoReadWaitsForABatch() async throws {
        let cli = try CLI()
        try await withServer(items: 10, perPage: 10) { _, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url).status == 0)
            let items = try await cli.listedItems()
            let numbers = items.map { $0["number"] as! Int }
            let paths = items.map { ($0["image"] as! [String: Any])["path"] as! String }
            let whole = try paths.map { try #require(FileManager.default.contents(atPath: $0)) }
            let served = try await serve(cli, ["--pull-every", "1h"])
            defer { served.process.kill9() }
            // Cut short, the same length of other bytes, removed.
            try whole[0].prefix(whole[0].count / 2).write(to: URL(fileURLWithPath: paths[0]))
            try Data(whole[1].map { $0 ^ 0x5A }).write(to: URL(fileURLWithPath: paths[1]))
            try FileManager.default.removeItem(atPath: paths[2])
            for index in 0..<3 {
                #expect(try await served.curl("/pictures/\(numbers[index])").status == 404, "damaged \(index)")
                // Still not served, unless serve's own pull round has fetched it again meanwhile.
                let still = try await served.curl("/pictures/\(numbers[index])")
                #expect(
                    still.status == 404
                        || (still.status == 200 && FileManager.default.contents(atPath: paths[index]) == whole[index]),
                    "and still")
                let fetched = try await served.curl("/api/items/\(numbers[index])/picture", post: true)
                #expect(fetched.body.contains("/pictures/\(numbers[index])"), "\(fetched)")
                let again = try await served.curl("/pictures/\(numbers[index])")
                #expect(again.status == 200 && Data(again.body.utf8).count > 0)
                #expect(FileManager.default.contents(atPath: paths[index]) == whole[index], "whole again")
            }
            // The folder's lock held by another process for five seconds: a picture is served while
            // it is held (the bound on the time leaves a loaded machine seconds for the request).
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            holder.arguments = [cli.home.path + "/pictures/.lock", "-c", "touch \(cli.home.path)/held; sleep 5"]
            try holder.run()
            while !FileManager.default.fileExists(atPath: cli.home.path + "/held") {
                try await Task.sleep(for: .milliseconds(10))
            }
            let start = Date()
            #expect(try await served.curl("/pictures/\(numbers[5])").status == 200)
            #expect(Date().timeIntervalSince(start) < 4, "the read waited for the lock")
            #expect(holder.isRunning, "the lock was still held")
            await ended(holder)
        }
    }

    @Test func theAPIListsTheStarredAViewAndNoHiddenItem() async throws {
        let cli = try CLI()
        try await withServer(items: 30, perPage: 30) { _, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            #expect(try await cli.run("rule", "add", "hide", #"title ~ "7$""#).status == 0)
            #expect(try await cli.run("rule", "add", "star", #"title ~ "^item 1.$""#).status == 0)
            #expect(try await cli.run("view", "add", "Twenties", #"title ~ "^item 2.$""#).status == 0)
            let served = try await serve(cli)
            defer { served.process.kill9() }
            func titles(_ query: String) async throws -> [String] {
                let body = try await served.curl("/api/items?page=1&per_page=50" + query).body
                let page = try json(RunResult(status: 0, stdout: body, stderr: ""))
                return (page["items"] as! [[String: Any]]).map { $0["title"] as! String }
            }
            let all = try await titles("")
            #expect(all.count == 27 && !all.contains("Item 7"))
            #expect(try await titles("&starred=1") == (10...19).reversed().filter { $0 != 17 }.map { "Item \($0)" })
            #expect(try await titles("&view=twenties") == (20...29).reversed().filter { $0 != 27 }.map { "Item \($0)" })
            #expect(try await served.curl("/api/items?view=nothing").status == 404)
            let feeds = try json(RunResult(status: 0, stdout: try await served.curl("/api/feeds").body, stderr: ""))
            #expect((feeds["feeds"] as! [[String: Any]])[0]["unread"] as? Int == 27)
            // A feed with no title of its own is named by its host, as NetNewsWire names it.
            let host = URL(string: url)!.host! + ":" + String(URL(string: url)!.port!)
            #expect((feeds["feeds"] as! [[String: Any]])[0]["title"] as? String == host)
            let views = feeds["views"] as! [[String: Any]]
            #expect(views.count == 1 && views[0]["name"] as? String == "Twenties" && views[0]["unread"] as? Int == 9)
        }
    }

    @Test func theAPIListsOpensMarksAndRecordsWhereTheReaderStopped() async throws {
        let cli = try CLI()
        try await withServer(items: 400, perPage: 50) { server, url async throws -> Void in
            var faults = Faults()
            faults.pictureURLs[399] = "http://127.0.0.1:1/elsewhere.png"
            server.setFaults(faults)
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            #expect(try await cli.run("list", "--page", "1", "--per-page", "5", "--record-position").status == 0)
            let served = try await serve(cli)
            defer { served.process.kill9() }
            let page = try json(
                RunResult(status: 0, stdout: try await served.curl("/api/items?page=3&per_page=10").body, stderr: ""))
            #expect(page["total"] as? Int == 400)
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.map { $0["position"] as? Int } == (21...30).map { $0 })
            let listed = try await cli.listedItems()
            #expect(items.map { $0["id"] as? String } == listed[20..<30].map { $0["id"] as? String })
            #expect(items.allSatisfy { $0["picture"] is NSNull }, "nothing cached yet")

            let number = try #require(items[0]["number"] as? Int)
            #expect(try await served.curl("/api/items/\(number)/read", post: true).status == 200)
            #expect(try await cli.listedItems()[20]["unread"] as? Bool == false)
            #expect(try await served.curl("/api/items/\(number)/read?read=0", post: true).status == 200)
            #expect(try await cli.listedItems()[20]["unread"] as? Bool == true)
            #expect(try await served.curl("/api/items/999999/read", post: true).status == 404)
            #expect(try await served.curl("/api/items/\(number)/star", post: true).status == 200)
            #expect(try await cli.listedItems("--starred").map { $0["number"] as? Int } == [number])
            #expect(try await served.curl("/api/items/\(number)/star?starred=0", post: true).status == 200)
            #expect(try await cli.listedItems("--starred").isEmpty)
            #expect(try await served.curl("/api/items/999999/star", post: true).status == 404)

            // Where the scroll settled: row 300 of 50 a page is page 7.
            #expect(try await served.curl("/api/position?row=300&per_page=50", post: true).status == 200)
            #expect(
                try await cli.openStore().latestReadingPosition() == ReadingPosition(feedURL: nil, page: 7, perPage: 50)
            )
            #expect(try await served.curl("/api/position?row=-1&per_page=50", post: true).status == 400)
            let content = try await served.curl("/content/2")
            #expect(content.headers.contains("default-src 'none'; img-src 'self'"), "\(content.headers)")
            #expect(!content.body.contains("127.0.0.1:1"), "no remote picture: \(content.body)")
        }
    }
}

@Suite struct SafeHTMLTests {
    func clean(_ html: String, cached: [String: String] = [:]) throws -> String {
        try SafeHTML.clean(html, base: "https://example.com/post/", picture: { _, url in url.flatMap { cached[$0] } })
    }

    @Test func whatRunsStylesEmbedsOrSubmitsIsGone() throws {
        let html = """
            <p onclick="alert(1)" style="color:red" class="x">Hello <b>there</b><script>alert(1)</script></p>
            <iframe src="https://evil.example/"></iframe><style>p{}</style><form action="/x"><input name=a></form>
            <a href="javascript:alert(1)">js</a> <a href="/relative">rel</a> <a href="mailto:a@b.c">mail</a>
            <img src="x" onerror="alert(1)"><img src="https://cdn.example/a.png" alt="A"><svg><script>1</script></svg>
            <object data="x"></object><embed src="x"><table><tr><td colspan="2" onmouseover="x">cell</td></tr></table>
            """
        let out = try clean(html, cached: ["https://cdn.example/a.png": "/pictures/7"])
        for gone in [
            "script", "onclick", "onerror", "style", "class=\"x\"", "iframe", "form", "input", "javascript:", "svg",
            "object", "embed", "evil.example", "alert", "onmouseover",
        ] {
            #expect(!out.contains(gone), "\(gone) in \(out)")
        }
        #expect(out.contains("<p>Hello <b>there</b></p>"), "\(out)")
        #expect(out.contains("<a>js</a>"))
        #expect(
            out.contains(
                "<a href=\"https://example.com/relative\" target=\"_blank\" rel=\"noopener noreferrer\">rel</a>"))
        #expect(out.contains("href=\"mailto:a@b.c\""))
        #expect(out.contains("<span class=\"missing-picture\">[picture]</span>"), "a picture not cached: a placeholder")
        #expect(out.contains("<img src=\"/pictures/7\" loading=\"lazy\" alt=\"A\">"), "\(out)")
        #expect(out.contains("<td colspan=\"2\">cell</td>"))
    }

    @Test func aQuoteWithACombiningMarkStillEndsNoAttribute() throws {
        let out = try clean("<abbr title=\"&quot;&#x301; onmouseover=alert(1) x\">a</abbr>")
        #expect(out == "<abbr title=\"&quot;\u{301} onmouseover=alert(1) x\">a</abbr>", "\(out)")
    }

    @Test func textIsTextAndMarkupInAttributesStaysInThem() throws {
        let out = try clean(#"<p title='"><script>x</script>'>&lt;img src=x onerror=alert(1)&gt;</p>"#)
        #expect(out == #"<p title="&quot;&gt;&lt;script&gt;x&lt;/script&gt;">&lt;img src=x onerror=alert(1)&gt;</p>"#)
    }
}
