import FeedSyncModel
import Foundation
import Testing

/// docs/architecture.md lists every concurrency primitive the sources use, file by file, with why
/// it is there. This reads the sources for each kind and fails when a file uses one the list does
/// not give it, or the list gives one the file no longer uses: the list cannot go stale.
@Suite struct ConcurrencyInventoryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each kind, as the list names it, and how it is written in Swift.
    static let kinds: [(name: String, pattern: String)] = [
        ("Mutex", #"\bMutex\s*[<(]"#),
        ("Atomic", #"\bAtomic\s*<"#),
        ("NSLock", #"\bNS(Recursive)?Lock\("#),
        ("NSCondition", #"\bNSCondition(Lock)?\("#),
        ("DispatchQueue", #"\bDispatchQueue\("#),
        ("DispatchSemaphore", #"\bDispatchSemaphore\("#),
        ("DispatchSource", #"\bDispatchSource\.make"#),
        ("EventLoopGroup", #"EventLoopGroup\b"#),
        ("Process", #"\bProcess\(\)"#),
        ("cancellation handler", #"\bwithTaskCancellationHandler\b"#),
        // A disposition set (`signal(SIGPIPE, SIG_IGN)`, `signal(number, SIG_DFL)`), not a call named so.
        ("signal handler", #"(?<![A-Za-z_.])(signal\([A-Za-z]+, SIG_[A-Z]+\)|sigaction\()"#),
        ("Thread", #"(?<![A-Za-z.])Thread(\.detachNewThread)?\s*[{(]"#),
        ("Task", #"(?<![A-Za-z.])Task(\.detached)?\s*[{(]"#),
        ("AsyncStream", #"\bAsync(Throwing)?Stream\b"#),
        ("continuation", #"\bwith(Checked|Unsafe)(Throwing)?Continuation\b"#),
        ("flock", #"\bflock\("#),
        ("actor", #"\bactor\s+[A-Z]"#),
        ("@unchecked Sendable", #"@unchecked\s+Sendable"#),
        ("nonisolated(unsafe)", #"nonisolated\(unsafe\)"#),
    ]

    /// The kinds each Swift file under Sources uses, by path from Sources (comment lines aside).
    static func used() throws -> [String: Set<String>] {
        let sources = root.appendingPathComponent("Sources")
        var used: [String: Set<String>] = [:]
        let expressions = try kinds.map { ($0.name, try NSRegularExpression(pattern: $0.pattern)) }
        for case let url as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(sources.path.count + 1))
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                let code = String(line).trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for (name, expression) in expressions
                where expression.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                    used[path, default: []].insert(name)
                }
            }
        }
        return used
    }

    /// The list: the table after the line `<!-- concurrency primitives -->`, one row per file,
    /// its first cell the file (from Sources), its second the kinds, comma-separated, its third
    /// why they are there: a row without a reason fails.
    static func listed() throws -> [String: Set<String>] {
        let doc = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let table = try #require(doc.components(separatedBy: "<!-- concurrency primitives -->").dropFirst().first)
        var listed: [String: Set<String>] = [:]
        for line in table.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.first?.hasPrefix("`") == true else { continue }  // the header and its rule
            #expect(
                cells.count == 3 && cells.allSatisfy { !$0.isEmpty },
                "docs/architecture.md's row for \(cells.first ?? "") needs its file, its kinds and why: \(line)")
            guard cells.count >= 2 else { continue }
            let kinds = cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces.union(["`"])) }
            listed[cells[0].trimmingCharacters(in: ["`"]), default: []].formUnion(kinds)
        }
        return listed
    }

    @Test func everyPrimitiveTheSourcesUseIsListedWithItsFileAndNoOther() throws {
        let used = try Self.used()
        let listed = try Self.listed()
        #expect(!used.isEmpty && !listed.isEmpty)
        for file in Set(used.keys).union(listed.keys).sorted() {
            let missing = used[file, default: []].subtracting(listed[file, default: []])
            let stale = listed[file, default: []].subtracting(used[file, default: []])
            #expect(missing.isEmpty, "\(file) uses \(missing.sorted()), which docs/architecture.md does not list")
            #expect(stale.isEmpty, "docs/architecture.md lists \(stale.sorted()) for \(file), which no longer uses it")
        }
        let known = Set(Self.kinds.map(\.name))
        #expect(listed.values.allSatisfy { $0.isSubset(of: known) }, "a kind the test does not know")
    }

    /// The picture cache has one owner, reached through `FeedSync`: the executable and the reading
    /// page's server name none of its working parts (only option and report values).
    @Test func theExecutableAndTheServerReachThePictureCacheOnlyThroughKit() throws {
        let parts = ["PictureCache(", "PictureFolder", "PicturePrefetcher", "PrefetchRun", "fetchNow", "CacheBudget"]
        for folder in ["Sources/feedsync", "Sources/FeedSyncServe"] {
            let base = Self.root.appendingPathComponent(folder)
            for case let url as URL in FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)!
            where url.pathExtension == "swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                for part in parts { #expect(!text.contains(part), "\(url.lastPathComponent) uses \(part)") }
            }
        }
    }
}
