import FeedSyncDemoServer
import FeedSyncModel
import FeedSyncStore
import Foundation
import Testing

/// What the use cases moving into the library mended: every pull honours the retry settings,
/// `serve`'s too, and a failure a pull meets in several of its parts is said once.
@Suite(.serialized) struct OneFaceTests {
    @Test func serveHonoursTheRetrySettingsAsPullDoes() async throws {
        // Two attempts, 0.05 s apart (the harness's base delay): `pull`'s and `add`'s, and now serve's.
        let cli = try CLI(retryAttempts: 2)
        try await withServer(items: 10, perPage: 10) { server, url async throws -> Void in
            #expect(try await cli.run("pull", "--feed", url, "--images", "none").status == 0)
            try cli.execute("UPDATE feed SET due_at = 0")
            var faults = Faults()
            faults.next = Array(repeating: .status(503), count: 6)
            server.setFaults(faults)
            server.clearLog()
            let served = try await ServeTests().serve(cli, ["--pull-every", "15m"])
            defer { served.process.kill9() }
            for _ in 0..<300 where server.feedRequests.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
            // With serve's own defaults (five attempts, a second apart and doubling), a third would
            // come within these three seconds.
            try await Task.sleep(for: .seconds(3))
            #expect(server.feedRequests.count == 2, "\(server.feedRequests.map(\.path))")
            for _ in 0..<100 where try await cli.openStore().feeds().first?.lastOutcome != .transient {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await cli.openStore().feeds().first?.lastOutcome == .transient)
        }
    }

    /// Runs `mount` or `umount` with `arguments`; whether it succeeded.
    static func mount(_ tool: String, _ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/" + tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aPullOnAFullFileSystemSaysOneSentenceAndExits74() async throws {
        let folder = try TempDirectory()
        let home = folder.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Room for the store and its first pages, not for every picture: the disk fills while the
        // pictures are fetched and recorded, and the feed's pages go on committing.
        try #require(try Self.mount("mount", ["-t", "tmpfs", "-o", "size=1200k", "tmpfs", home]))
        defer { _ = try? Self.mount("umount", ["-l", home]) }
        let cli = try CLI(environment: ["FEEDSYNC_HOME": home])
        let server = DemoServer(items: 300, perPage: 50, pictureBytes: 20_000)
        try await server.start()
        let pulled = try await cli.run("pull", "--feed", await server.feedURL(.rss), "--images", "all")
        await server.stop()
        #expect(pulled.status == 74, "\(pulled)")
        let said = pulled.stderr.split(separator: "\n")
        #expect(said.count == 1 && said[0].contains("database or disk is full"), "one sentence: \(said)")
    }
}
