import FeedSyncModel
import Foundation
import Testing

/// `scripts/bench --check` on tiny sizes (`--quick`) and the debug build, so the check cannot rot:
/// every scenario runs and is held to its target, and a feedsync too slow for one is named.
/// (The quick targets are looser, and the table says so: these runs test the bench, not the speed.)
@Suite(.serialized) struct BenchTests {
    static let bench = InstallTests.root + "/scripts/bench"
    static let bin = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path

    @Test func theQuickBenchRunsEveryScenarioAndMeetsItsQuickTargets() async throws {
        let cli = try CLI()
        let run = try await cli.start(
            ["--quick", "--check", "--no-build", "--bin=\(Self.bin)"], executable: Self.bench
        )
        .wait()
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")
        #expect(run.stderr.contains("scripts/bench --check: all"), "\(run.stderr.suffix(1000))")
        let rows = run.stdout.split(separator: "\n").filter { $0.hasPrefix("| P") || $0.hasPrefix("| H") }
        for scenario in [
            "P1 ", "P1A ", "P1 at the end", "P2 ", "P3 ", "P4 ", "P5 ", "P6 ", "P7 ", "P8 ", "P9 ", "P10 ", "P11 ",
            "P12 ", "P13 ", "P14 ", "P15 ", "P16 ", "H1 ",
        ] {
            #expect(rows.contains { $0.hasPrefix("| " + scenario) }, "no row for \(scenario)")
        }
        #expect(rows.allSatisfy { $0.contains("(--quick)") }, "each row says its target is the quick one")
    }

    @Test func aFeedsyncTooSlowForItsTargetFailsTheCheckNamed() async throws {
        let cli = try CLI()
        // The same binaries, every feedsync command started 0.7 s late: `list` misses P5's target.
        let slow = cli.home.path + "/slow"
        try FileManager.default.createDirectory(atPath: slow, withIntermediateDirectories: false)
        try Data("#!/bin/sh\nsleep 0.7\nexec \(CLI.binary) \"$@\"\n".utf8)
            .write(to: URL(fileURLWithPath: slow + "/feedsync"))
        chmod(slow + "/feedsync", 0o755)
        try FileManager.default.createSymbolicLink(
            atPath: slow + "/feedsync-demo-server", withDestinationPath: Self.bin + "/feedsync-demo-server")
        let run = try await cli.start(
            ["--quick", "--check", "--no-build", "--bin=\(slow)", "P5"], executable: Self.bench
        )
        .wait()
        #expect(run.status == 1, "\(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("missed P5: P5 list --page 1 "), "\(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("target adds ≤ 500.0 ms to the floor"), "the target printed is the one checked")
        #expect(run.stderr.contains("scripts/bench --check: 2 of 7 targets missed"), "\(run.stderr.suffix(500))")
    }
}
