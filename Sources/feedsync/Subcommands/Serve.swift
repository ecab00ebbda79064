import ArgumentParser
import FeedSyncImages
import FeedSyncKit
import FeedSyncServe
import FeedSyncSync
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a reading page on this machine; its scrolling steers the picture prefetch.",
        discussion: """
            Prints the page's address with its access token; every request needs that token. With \
            --pull-every, pulls the feeds that are due in the background, taking the pull lock only \
            while it pulls (a cron pull and serve never run at once, and neither fails because of \
            the other).
            """)

    @OptionGroup var homeOptions: HomeOptions

    @Option(help: ArgumentHelp("The port to listen on; 0 picks a free one.", valueName: "n"))
    var port = 0

    @Option(
        help: ArgumentHelp(
            "The address to listen on. Another than 127.0.0.1 is reachable from other machines.",
            valueName: "address"))
    var bind = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "Pull the feeds that are due this often (15m, 1h; minutes without a unit).", valueName: "duration"),
        transform: Interval.parse)
    var pullEvery: Double?

    @Flag(help: "Open the page with $BROWSER or xdg-open.")
    var open = false

    func validate() throws {
        try check(port, in: 0...65535, "--port")
        // Often is harmless to publishers: a pull asks only the feeds that are due.
        if let pullEvery { try check(pullEvery, in: 10...Schedule.maxInterval, "--pull-every (seconds)") }
        if bind.isEmpty || bind.utf8.count > 255 || bind.unicodeScalars.contains(where: SafeText.isUnsafe) {
            throw ValidationError("--bind must be an address such as 127.0.0.1")
        }
    }

    func run() async throws {
        let library = try homeOptions.open(.serving)
        var bytes = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &bytes)) }.joined()
        var settings = ReadingServer.Settings(token: token)
        settings.bind = bind
        settings.port = port
        let server = ReadingServer(library: library, settings: settings)
        let shown = bind == "0.0.0.0" || bind == "::" ? "127.0.0.1" : bind
        let opens = open
        let work = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await server.run { port in
                        let address = "http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/?token=\(token)"
                        try? Output.line(address)
                        if opens { Self.openInBrowser(address) }
                    }
                }
                if let pullEvery {
                    group.addTask { await Self.pullInBackground(home: library.home, every: pullEvery, server: server) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        if bind != "127.0.0.1" && bind != "localhost" && bind != "::1" {
            complain("warning: --bind \(bind) makes the page reachable from other machines; it still needs the token")
        }
        let interruption = Interruption { work.cancel() }
        defer { interruption.stop() }
        do {
            try await work.value
        } catch is CancellationError {
        } catch {
            complain("cannot serve on \(bind):\(port): \(error)")
            throw ExitCode(Exit.tempFail)
        }
    }

    /// Pulls the feeds that are due every `every` seconds. A feed whose pull got no answer at all
    /// (the network is gone) is asked again every 30 s, due or not, so a pull the lost network
    /// interrupted resumes soon after it returns; a server that answers with errors waits its
    /// feed's backoff. A round that finds a `feedsync pull` holding the lock is tried after 30 s.
    static func pullInBackground(home: DataHome, every: Double, server: ReadingServer) async {
        var offline: Set<Int64> = []
        while !Task.isCancelled {
            var wait = every
            if let writer = try? FeedSync(home: home, access: .writing) {
                var settings = FeedSync.PullSettings()
                settings.pictures = PrefetchOptions(
                    cacheBudget: (try? writer.cacheBudget(given: nil)) ?? FeedSync.defaultCacheSize)
                var feeds = (try? writer.feeds()) ?? []
                if !offline.isEmpty {
                    feeds = feeds.filter { offline.contains($0.id) }
                    settings.asking = .named
                }
                let reports = await writer.pull(feeds, settings: settings)
                if reports.contains(where: { ($0?.newItems ?? 0) > 0 }) { server.noteNewItems() }
                offline = Set(
                    zip(feeds, reports).compactMap { feed, report in
                        guard let report, report.error?.kind == .transient, !report.requests.isEmpty,
                            report.requests.allSatisfy({ $0.status == nil })
                        else { return nil }
                        return feed.id
                    })
                if !offline.isEmpty { wait = min(every, 30) }
            } else {
                wait = min(every, 30)
            }
            try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
        }
    }

    static func openInBrowser(_ address: String) {
        let environment = ProcessInfo.processInfo.environment
        let browser = environment["BROWSER"].flatMap { $0.isEmpty ? nil : $0 } ?? "xdg-open"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [browser, address]
        try? process.run()
    }
}
