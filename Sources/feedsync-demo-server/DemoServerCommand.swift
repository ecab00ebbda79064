import ArgumentParser
import FeedSyncDemoServer
import Foundation

/// Serves a generated feed in every format on 127.0.0.1 until stopped, or with --google-reader a
/// Google Reader API account (user `reader`, password `api-password`); prints its URL first.
@main
struct DemoServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync-demo-server",
        abstract: "Serve a demo feed with pictures on 127.0.0.1, in every format feedsync reads.")

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port: UInt16 = 0
    @Option(help: "Items in the feed.")
    var items = 200
    @Option(help: "Items per page.")
    var perPage = 20
    @Option(help: "Bytes in each picture.")
    var pictureBytes = 289
    @Option(help: "Pictures inside each item's content.")
    var articlePictures = 0
    @Option(help: "Milliseconds added to every response, pages and pictures.")
    var latencyMs = 0
    @Option(help: "Which format's URL to print: \(DemoFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: DemoFormat = .pagedJSON
    @Option(help: "Write the feed URL to this file once listening (for scripts).")
    var urlFile: String?
    @Option(help: "Append the path of every request to this file, a line each (for tests).")
    var log: String?
    @Flag(
        help: ArgumentHelp(
            "Serve a Google Reader API account holding --items items over --feeds feeds instead (with --port, "
                + "--url-file and --dialect; no faults, no log)."))
    var googleReader = false
    @Option(help: "With --google-reader: the feeds, in two labels.")
    var feeds = 50
    @Option(help: "With --google-reader: whose answers: freshrss, miniflux, oldreader, bazqux, inoreader.")
    var dialect = "freshrss"

    func run() async throws {
        if googleReader {
            let dialects: [String: GoogleReaderServer.Dialect] = [
                "freshrss": .freshRSS, "miniflux": .miniflux, "oldreader": .oldReader, "bazqux": .bazQux,
                "inoreader": .inoreader,
            ]
            guard let chosen = dialects[dialect] else { throw ValidationError("no dialect is \(dialect)") }
            let server = GoogleReaderServer(dialect: chosen, feeds: feeds, labels: 2, items: items)
            try await server.start(port: port)
            print(server.baseURL)
            fflush(nil)
            if let urlFile { try server.baseURL.write(toFile: urlFile, atomically: true, encoding: .utf8) }
            while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
        }
        let server = DemoServer(items: items, perPage: perPage, pictureBytes: pictureBytes, port: port)
        var faults = Faults()
        faults.latency = Double(latencyMs) / 1000
        faults.pictureLatency = faults.latency
        faults.articlePictures = articlePictures
        server.setFaults(faults)
        if let log { try server.logRequests(to: log) }
        try await server.start()
        let url = await server.feedURL(format)
        print(url)
        fflush(nil)
        if let urlFile { try url.write(toFile: urlFile, atomically: true, encoding: .utf8) }
        while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
    }
}

extension DemoFormat: ExpressibleByArgument {}
