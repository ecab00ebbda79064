import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import Testing

/// The test harness itself: a run leaves no process and no temporary home behind, however it ends.
@Suite struct HarnessTests {
    /// Runs only inside `killingTheRunnerOrItsWrapperLeavesNoProcessOfTheProject`'s child run
    /// (`FEEDSYNC_TEST_ORPHANS` names a file): starts a `serve` and a pull that hangs, writes
    /// their numbers and this runner's, then waits to be killed.
    @Test func startsProcessesAndWaitsToBeKilled() async throws {
        guard let marker = ProcessInfo.processInfo.environment["FEEDSYNC_TEST_ORPHANS"] else { return }
        let cli = try CLI()
        let silent = try OfflineTests.SilentServer()
        let served = try cli.start(["serve"])
        let pulling = try cli.start(["pull", "--feed", "http://127.0.0.1:\(silent.port)/feed", "--timeout", "600"])
        let numbers = [getpid(), served.process.processIdentifier, pulling.process.processIdentifier]
        try Data((numbers.map(String.init) + [cli.home.path]).joined(separator: "\n").utf8)
            .write(to: URL(fileURLWithPath: marker))
        try await Task.sleep(for: .seconds(600))
        withExtendedLifetime(silent) {}
    }

    /// The cause of a suite that failed on machines allowing 1 024 descriptors: every run of the
    /// binary left the test process holding its two output files.
    @Test func runningTheBinaryLeavesNoDescriptorOfItsOutputOpen() async throws {
        let cli = try CLI()
        for _ in 0..<5 { _ = try await cli.run("feeds") }
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }
        #expect(!open.contains { $0.hasPrefix(cli.home.path) }, "\(open.filter { $0.hasPrefix(cli.home.path) })")
    }

    enum Victim: String, CaseIterable, Sendable {
        /// The test runner, as when it crashes.
        case runner
        /// `scripts/in-own-group` itself, which cannot catch SIGKILL.
        case wrapper
    }

    @Test(arguments: Victim.allCases)
    func killingTheRunnerOrItsWrapperLeavesNoProcessOfTheProject(_ victim: Victim) async throws {
        let folder = try TempDirectory()
        let marker = folder.path + "/numbers"
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let wrapper = Process()
        wrapper.executableURL = URL(fileURLWithPath: InstallTests.root + "/scripts/in-own-group")
        wrapper.arguments = [
            runner, "--testing-library", "swift-testing", "--filter", "HarnessTests/startsProcessesAndWaitsToBeKilled",
        ]
        wrapper.environment = ProcessInfo.processInfo.environment.merging(["FEEDSYNC_TEST_ORPHANS": marker]) { $1 }
        wrapper.standardOutput = FileHandle.nullDevice
        wrapper.standardError = FileHandle.nullDevice
        try wrapper.run()
        var lines: [String] = []
        for _ in 0..<600 where lines.count < 4 {
            try await Task.sleep(for: .milliseconds(100))
            lines = ((try? String(contentsOfFile: marker, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
        }
        try #require(lines.count == 4, "the child run started its processes")
        let numbers = lines.prefix(3).compactMap { Int32($0) }
        let home = lines[3]
        #expect(numbers.allSatisfy(Self.isAlive) && FileManager.default.fileExists(atPath: home))

        kill(victim == .runner ? numbers[0] : wrapper.processIdentifier, SIGKILL)
        // The wrapper's own cleanup, or its watcher's within a second or two. (Foundation hears of
        // the wrapper's end only once every process holding its descriptors has gone: polled.)
        let watched = numbers + [wrapper.processIdentifier]
        for _ in 0..<100 where watched.contains(where: Self.isAlive) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(!numbers.contains(where: Self.isAlive), "\(numbers.filter(Self.isAlive)) still running")
        #expect(Self.processes(withHome: home).isEmpty, "no process of that run's data home is left")
        for _ in 0..<50 where FileManager.default.fileExists(atPath: home) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!FileManager.default.fileExists(atPath: home), "the run's temporary folder is removed")
    }

    /// Running, and not a zombie waiting for a parent that was killed.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    /// Processes whose environment names `home` as their data home.
    static func processes(withHome home: String) -> [Int32] {
        let wanted = Data("FEEDSYNC_HOME=\(home)\0".utf8)
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return pids.filter { pid in
            isAlive(pid) && FileManager.default.contents(atPath: "/proc/\(pid)/environ")?.range(of: wanted) != nil
        }
    }
}
