import ArgumentParser
import FeedSyncDemoServer
import Foundation

/// Serves a generated paged JSON feed on 127.0.0.1 until stopped; prints the feed URL first.
@main
struct DemoServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync-demo-server",
        abstract: "Serve a demo paged JSON feed with pictures on 127.0.0.1.")

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port: UInt16 = 0
    @Option(help: "Items in the feed.")
    var items = 200
    @Option(help: "Items per page.")
    var perPage = 20
    @Option(help: "Milliseconds added to every response.")
    var latencyMs = 0
    @Option(help: "Write the feed URL to this file once listening (for scripts).")
    var urlFile: String?

    func run() async throws {
        let server = DemoServer(items: items, perPage: perPage, port: port)
        var faults = Faults()
        faults.latency = Double(latencyMs) / 1000
        server.setFaults(faults)
        try await server.start()
        let url = await server.feedURL
        print(url)
        fflush(nil)
        if let urlFile { try url.write(toFile: urlFile, atomically: true, encoding: .utf8) }
        while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
    }
}
