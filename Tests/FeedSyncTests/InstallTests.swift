import FeedSyncModel
import Foundation
import Testing

/// What is around the program: the man page kept in the repository, the install step, the
/// systemd units.
@Suite struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Every subcommand of `feedsync --help`, with the long options of its own help.
    func commands(_ cli: CLI) async throws -> [(name: String, options: Set<String>)] {
        let help = try await cli.run("--help").stdout
        let names = help.components(separatedBy: "SUBCOMMANDS:")[1].split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }
        var commands: [(String, Set<String>)] = []
        for name in names where name != "help" && name != "See" {
            // The options are the lines of OPTIONS that start with one, --help and --version aside.
            let text = try await cli.run(name, "--help").stdout
            let section = text.components(separatedBy: "OPTIONS:").dropFirst().joined()
            let options = section.split(separator: "\n").compactMap { line -> String? in
                guard
                    let first = line.split(whereSeparator: { $0 == " " || $0 == "," }).first(where: {
                        $0.hasPrefix("--")
                    })
                else { return nil }
                return String(first.dropFirst(2))
            }.filter { $0 != "help" && $0 != "version" }
            commands.append((name, Set(options)))
        }
        return commands
    }

    @Test func theManPageHasEveryCommandAndOption() async throws {
        let cli = try CLI()
        let page = try String(contentsOfFile: Self.root + "/man/feedsync.1", encoding: .utf8)
        let commands = try await commands(cli)
        #expect(commands.count >= 13)
        // Each exit code, not mdoc's generic sentence.
        #expect(
            !page.contains(".Ex -std")
                && ["0", "64", "65", "74", "75", "77"].allSatisfy { page.contains("\n.It \($0)\n") })
        for (name, options) in commands {
            // The first is the command's: `account`'s subcommands (add, list, remove) follow it.
            let sections = page.components(separatedBy: "\n.It Em \(name)\n")
            #expect(sections.count >= 2, "man/feedsync.1 lacks \(name): run scripts/man")
            guard sections.count >= 2 else { continue }
            let section = sections[1].components(separatedBy: "\n.It Em ")[0]
            for option in options {
                // `Fl -page`, or after its short name, `Fl p , -page`.
                #expect(
                    section.contains("Fl -\(option)") || section.contains(" , -\(option)"),
                    "man/feedsync.1 lacks \(name) --\(option): run scripts/man")
            }
        }
    }

    @Test func installPutsTheBinaryManPageCompletionsAndUnitsInThePrefix() async throws {
        let prefix = try TempDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.root + "/scripts/install")
        process.arguments = ["--prefix", prefix.path, "--binary", CLI.binary]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        await ended(process)
        #expect(process.terminationStatus == 0)
        for file in [
            "bin/feedsync", "bin/feedsync-serve", "bin/feedsync-read", "share/man/man1/feedsync.1",
            "share/bash-completion/completions/feedsync",
            "share/zsh/site-functions/_feedsync", "share/fish/vendor_completions.d/feedsync.fish",
        ] {
            let size = (try? FileManager.default.attributesOfItem(atPath: prefix.path + "/" + file))?[.size] as? Int
            #expect((size ?? 0) > 0, "\(file)")
        }
        let bash = try String(
            contentsOfFile: prefix.path + "/share/bash-completion/completions/feedsync", encoding: .utf8)
        #expect(bash.contains("---completion remove -- positional@0"), "remove completes feeds")
        #expect(bash.contains("---completion read -- --feed"), "read is completed, its --feed with feeds")
        // bash offers twelve feeds in their numbers' order (it would sort 1, 10, 11, 12, 2, …).
        let cli = try CLI()
        let outlines = (1...12).map { "<outline text=\"Feed \($0)\" xmlUrl=\"https://f\($0).example/rss\"/>" }
        let opml = cli.home.path + "/feeds.opml"
        try Data("<opml version=\"2.0\"><body>\(outlines.joined())</body></opml>".utf8).write(
            to: URL(fileURLWithPath: opml))
        #expect(try await cli.run("import", opml).status == 0)
        let offered = try await output(
            of: "/bin/bash",
            [
                "-c",
                #"source "$1"; compopt() { echo "compopt $*"; }; COMP_WORDS=("$2" remove --home "$3" ""); COMP_CWORD=4; "#
                    + #"COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _feedsync "$2" "" "$3"; "#
                    + #"printf '%s\n' "${COMPREPLY[@]}""#,
                "bash", prefix.path + "/share/bash-completion/completions/feedsync", prefix.path + "/bin/feedsync",
                cli.home.path,
            ])
        let lines = String(decoding: offered, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == ["compopt -o nosort"] + (1...12).map(String.init) + (1...12).map { "Feed \($0)" }, "\(lines)")
        let units = prefix.path + "/share/systemd/user"
        let service = try String(contentsOfFile: units + "/feedsync-pull.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(prefix.path)/bin/feedsync pull --quiet"))
        let serve = try String(contentsOfFile: units + "/feedsync-serve.service", encoding: .utf8)
        #expect(serve.contains("ExecStart=\(prefix.path)/bin/feedsync serve --pull-every 15m"))

        // systemd checks the units as it would load them, where it is installed.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else { return }
        let verify = Process()
        verify.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        verify.arguments = [
            "verify", "--man=no", units + "/feedsync-pull.service", units + "/feedsync-pull.timer",
            units + "/feedsync-serve.service",
        ]
        verify.currentDirectoryURL = URL(fileURLWithPath: units)
        let errors = Pipe()
        verify.standardError = errors
        try verify.run()
        let said = String(decoding: readAll(errors.fileHandleForReading), as: UTF8.self)
        await ended(verify)
        #expect(verify.terminationStatus == 0 && said.isEmpty, "\(said)")
    }
}
