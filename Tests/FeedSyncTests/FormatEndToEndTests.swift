import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import Foundation
import Testing

/// The built binary against the demo server speaking each format, several pages deep.
@Suite(.serialized) struct FormatEndToEndTests {
    static let linkedAndWordPress: [DemoFormat] = [.jsonFeed, .rss, .atom, .wordpress]

    @Test(arguments: linkedAndWordPress)
    func backfillsThenFetchesOnlyTheNewHeadThenOneConditionalRequest(_ format: DemoFormat) async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(format)
            let pull = try await cli.run("pull", "--feed", url)
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try await cli.listedKeys() == server.expectedKeys)
            #expect(server.requestedPages == Array(1...10), "every page once")
            let status = try await cli.run("status")
            #expect(
                status.stdout.contains("format:        \(format.rawValue) (found in its documents)"), "\(status.stdout)"
            )
            #expect(status.stdout.contains("backfill:      complete"))

            // Pictures from every carrier the format has, relative ones resolved: the window is cached.
            let json = try await cli.run("list", "--json")
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
            let images = (object["items"] as! [[String: Any]]).compactMap { $0["image"] as? [String: Any] }
            #expect(images.count == 20 && images.allSatisfy { $0["status"] as? String == "cached" }, "\(images)")

            server.prepend(15)
            server.clearLog()
            let head = try await cli.run("pull", "--force")
            #expect(head.status == 0, "\(head.stderr)")
            #expect(server.requestedPages == [1, 2], "the new head only")
            #expect(try await cli.listedKeys() == server.expectedKeys)

            server.clearLog()
            #expect(try await cli.run("pull", "--force").status == 0)
            #expect(server.feedRequests.map(\.status) == [304])
        }
    }

    @Test(arguments: linkedAndWordPress)
    func killedMidBackfillResumesFromTheSavedPlace(_ format: DemoFormat) async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(format)
            var faults = Faults()
            faults.latency = 0.1
            server.setFaults(faults)
            let running = try cli.start(["pull", "--feed", url, "--images", "none"])
            var stored = 0
            for _ in 0..<200 where stored < 30 {
                try await Task.sleep(nanoseconds: 50_000_000)
                stored =
                    (try? await cli.openStore().list(ListQuery(feedURL: nil), page: 1, perPage: 1).total) ?? 0
            }
            running.kill9()
            let killed = try await running.wait()
            #expect(
                running.process.terminationReason == .uncaughtSignal, "the pull was still running: \(killed.stderr)")
            let kept = try await cli.listedKeys()
            #expect(kept.count >= 30 && kept.count < 95, "killed mid-backfill")
            #expect(kept == Array(server.expectedKeys.prefix(kept.count)))

            // The killed pull's last request is still being answered (the server adds 0.1 s): let it finish.
            try await Task.sleep(nanoseconds: 500_000_000)
            server.setFaults(Faults())
            server.clearLog()
            let resumed = try await cli.run("pull", "--force")
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(try await cli.listedKeys() == server.expectedKeys)
            let committed = kept.count / 10
            #expect(
                server.requestedPages == [1] + Array((committed + 1)...10),
                "the head check, then on from the saved place")
            #expect(server.feedRequests.first?.status == 304)
        }
    }

    @Test func libcurlAndLibxml2AreLoadedOnlyByThePullsThatUseThem() async throws {
        // Both are opened on first use (Sources/CCurl, LibXML2.swift): with what they bring (TLS,
        // Kerberos, ICU, zlib, liblzma) they cost every start milliseconds. ld.so names each
        // library it loads, at start or by dlopen, under LD_DEBUG=files.
        let cli = try CLI(environment: ["LD_DEBUG": "files"])
        try await withServer { server, _ async throws -> Void in
            let json = try await cli.run("pull", "--feed", await server.feedURL(.jsonFeed), "--images", "none")
            #expect(json.status == 0)
            #expect(json.stderr.contains("libcurl.so.4") && !json.stderr.contains("libxml2"))
            let rss = try await cli.run("pull", "--feed", await server.feedURL(.rss), "--images", "none")
            #expect(rss.status == 0)
            #expect(rss.stderr.contains("libxml2.so.2"))
            let list = try await cli.run("list")
            #expect(list.status == 0)
            #expect(!list.stderr.contains("libcurl") && !list.stderr.contains("libxml2"), "\(list.stderr)")
        }
    }

    @Test func aMalformedRSSPageKeepsWhatCanBeReadAndStatusSaysWhere() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(.rss)
            var faults = Faults()
            faults.once = [3: .malformed]  // a third of the page: cut mid-element, its link to page 4 included
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", url, "--verbose")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.stderr.contains("/rss?page=3: not well-formed at line"), "\(pull.stderr)")
            // Every other page whole, and of page 3 the items read whole before the cut.
            let keys = try await cli.listedKeys()
            let expected = server.expectedKeys
            let page3 = Set(expected[20..<30])
            #expect(keys.filter { !page3.contains($0) } == expected.filter { !page3.contains($0) })
            let read = keys.filter(page3.contains)
            #expect(!read.isEmpty && read.count < 10 && read == Array(expected[20..<(20 + read.count)]), "\(read)")
            let status = try await cli.run("status")
            #expect(
                status.stdout.contains("malformed:     http://") && status.stdout.contains("/rss?page=3: line"),
                "\(status.stdout)")
        }
    }

    @Test func aRefusedSavedLinkRestartsTheBackfillFromTheHead() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(.atom)
            #expect(try await cli.run("pull", "--feed", url, "--max-pages", "2").status == 0)
            var faults = Faults()
            faults.once = [3: .status(410)]
            server.setFaults(faults)
            server.clearLog()
            let pull = try await cli.run("pull", "--verbose")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(
                pull.stderr.contains("answered 410 to a saved link; starting again from the head"), "\(pull.stderr)")
            #expect(server.feedRequests.map(\.status) == [304, 410] + Array(repeating: 200, count: 10))
            #expect(try await cli.listedKeys() == server.expectedKeys)
        }
    }

    @Test func wordPressAnsweringInvalidPageNumberEndsTheBackfill() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            var faults = Faults()
            faults.staleWordPressTotals = 15  // 110 items claimed: an eleventh page that does not exist
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", await server.feedURL(.wordpress))
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(server.feedRequests.map(\.status) == Array(repeating: 200, count: 10) + [400])
            #expect(try await cli.listedKeys() == server.expectedKeys)
            #expect(try await cli.run("status").stdout.contains("backfill:      complete"))
        }
    }

    @Test func aChosenFormatIsRememberedUntilAutoIsChosen() async throws {
        let cli = try CLI()
        try await withServer { server, _ async throws -> Void in
            let url = await server.feedURL(.rss)
            // A feed new to this pull whose first pull fails for good is not kept…
            let first = try await cli.run("pull", "--feed", url, "--format", "jsonfeed")
            #expect(first.status == 65 && first.stderr.hasSuffix("; nothing was subscribed\n"), "\(first.stderr)")
            #expect(try await cli.run("feeds").stdout.hasPrefix("no feeds subscribed"))
            // …one subscribed before keeps the format chosen for it.
            #expect(try await cli.run("pull", "--feed", url, "--max-pages", "1").status == 0)
            let wrong = try await cli.run("pull", "--feed", url, "--format", "jsonfeed")
            #expect(wrong.status == 65)
            #expect(
                wrong.stderr.contains("the document is XML, not jsonfeed as chosen with --format"), "\(wrong.stderr)")
            let again = try await cli.run("pull", "--force")
            #expect(again.status == 65, "the choice is remembered")
            #expect(try await cli.run("status").stdout.contains("format:        jsonfeed (chosen with --format)"))

            let auto = try await cli.run("pull", "--feed", url, "--format", "auto")
            #expect(auto.status == 0, "\(auto.stderr)")
            #expect(try await cli.run("status").stdout.contains("format:        rss (found in its documents)"))
            #expect(try await cli.listedKeys() == server.expectedKeys)

            let usage = try await cli.run("pull", "--format", "rss")
            #expect(usage.status == 64 && usage.stderr.contains("--format needs --feed"), "\(usage.stderr)")
            let unknown = try await cli.run("pull", "--feed", url, "--format", "opml")
            #expect(unknown.status == 64, "\(unknown.stderr)")
        }
    }

    @Test(arguments: [DemoFormat.rss, .pagedJSON, .jsonFeed])
    func aDocumentTooLongForMemoryIsReadFromDiskInParts(format: DemoFormat) async throws {
        let cli = try CLI()
        // One page of 20 000 items is 4.4 (JSON Feed) to 5.4 MB (RSS): past the 4 MiB kept in memory.
        try await withServer(items: 20_000, perPage: 20_000) { server, _ async throws -> Void in
            let url = await server.feedURL(format)
            let pull = try await cli.run("pull", "--feed", url, "--images", "none", "--timeout", "120")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(server.feedRequests.first?.bytes ?? 0 > 4 << 20)
            let stored = try await cli.openStore().list(ListQuery(feedURL: nil), page: 1, perPage: 20_000)
            #expect(stored.total == 20_000)
            #expect(stored.items.map(\.key) == server.expectedKeys)
            let left = try FileManager.default.contentsOfDirectory(atPath: cli.home.path).filter {
                $0.hasSuffix(".part")
            }
            #expect(left == [], "the file is removed")
            #expect(try await cli.openStore().feed(url: url)?.cursor.backfillDone == true)
        }
    }

    @Test func aLongDocumentBrokenPartWayKeepsWhatWasReadBeforeTheDamage() async throws {
        let cli = try CLI()
        // A third of 48 000 items is about 4.3 MB: read from disk in parts of 250 until the cut.
        try await withServer(items: 48_000, perPage: 48_000) { server, _ async throws -> Void in
            let url = await server.feedURL(.rss)
            var faults = Faults()
            faults.next = [.malformed]
            server.setFaults(faults)
            let pull = try await cli.run("pull", "--feed", url, "--images", "none", "--verbose", "--timeout", "120")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.stderr.contains("not well-formed at line"), "\(pull.stderr)")
            #expect(server.feedRequests.first?.bytes ?? 0 > 4 << 20)
            let stored = try await cli.openStore().list(ListQuery(feedURL: nil), page: 1, perPage: 48_000).items.map(
                \.key)
            #expect(stored.count >= 15_000 && stored.count < 17_000, "\(stored.count)")
            #expect(stored == Array(server.expectedKeys.prefix(stored.count)))
            #expect(try await cli.openStore().feed(url: url)?.malformed?.contains("line") == true)
        }
    }
}
