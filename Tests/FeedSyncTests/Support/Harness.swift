import FeedSyncDemoServer
import FeedSyncModel
import Foundation
import GRDB
import Synchronization
import Testing

@testable import FeedSyncStore

/// A fresh temp folder, removed when the test is done with it.
final class TempDirectory: Sendable {
    let path: String

    /// A new folder in `parent` (the temporary folder by default).
    init(in parent: String = NSTemporaryDirectory()) throws {
        let template = parent + "feedsync-test-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The JSON object a command printed.
func json(_ result: RunResult) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
}

/// The feeds of `feeds --json`.
func feeds(_ cli: CLI) async throws -> [[String: Any]] {
    try json(try await cli.run("feeds", "--json"))["feeds"] as! [[String: Any]]
}

/// `pull --json`'s report of the one account it synced, the pull exiting `status`.
func pulledAccount(_ cli: CLI, expect status: Int32 = 0) async throws -> [String: Any] {
    let pull = try await cli.run("pull", "--json")
    try #require(pull.status == status, "\(pull.stderr)")
    let accounts = try #require(try json(pull)["accounts"] as? [[String: Any]])
    return try #require(accounts.first)
}

/// The operations an account's report names, in the order they were answered.
func operations(_ report: [String: Any]) -> [String] {
    (report["requests"] as? [[String: Any]] ?? []).compactMap { $0["operation"] as? String }
}

/// What a run of the built binary printed and how it exited.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the real `feedsync` binary against a data home in a temp folder.
final class CLI: Sendable {
    let home: TempDirectory
    /// The binary's working folder and `HOME`: nothing may ever be written there.
    let outside: TempDirectory
    /// Short retries so fault tests don't wait seconds per attempt.
    let environment: [String: String]
    /// Every process started: those still running when the test lets its CLI go are killed.
    private let started = Mutex<[Process]>([])

    static var binary: String {
        let testExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        // swift test runs the test bundle from the same folder as the built products.
        return testExecutable.deletingLastPathComponent().appendingPathComponent("feedsync").path
    }

    /// `homeIn`: the folder the data home is made in (the temporary folder by default).
    init(retryAttempts: Int = 4, environment extra: [String: String] = [:], homeIn: String? = nil) throws {
        home = try homeIn.map { try TempDirectory(in: $0) } ?? TempDirectory()
        outside = try TempDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDSYNC_HOME"] = home.path
        environment["HOME"] = outside.path
        environment["FEEDSYNC_RETRY_BASE_DELAY"] = "0.05"
        environment["FEEDSYNC_RETRY_ATTEMPTS"] = String(retryAttempts)
        self.environment = environment.merging(extra) { $1 }
    }

    var databasePath: String { home.path + "/feedsync.sqlite" }

    private func track(_ process: Process) {
        started.withLock { $0 = $0.filter(\.isRunning) + [process] }
    }

    /// A test that ends, by an expectation, a thrown error or a time limit, leaves no `serve` or
    /// pull of its own running.
    deinit {
        for process in started.withLock({ $0 }) where process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Starts the binary; the returned process can be waited for or killed. `input`: a file for
    /// its standard input. With `terminalColumns`,
    /// its standard output is a terminal that wide (a pseudo-terminal `script` makes; what it
    /// prints arrives with CR LF line ends).
    func start(
        _ arguments: [String], terminalColumns: Int? = nil, input: String? = nil, executable: String = CLI.binary
    ) throws -> RunningCLI {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        if let terminalColumns {
            let command = ([Self.binary] + arguments).map {
                "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
            }
            // `exec`: the shell script starts becomes the command, whose signals a test sends
            // (dash, /bin/sh when SHELL is unset, as in CI, would otherwise stay its parent).
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", "exec " + command.joined(separator: " "), "/dev/null"]
            process.environment?["COLUMNS"] = String(terminalColumns)
        }
        process.currentDirectoryURL = URL(fileURLWithPath: outside.path)
        let id = UUID().uuidString
        let outPath = home.path + "/.out-\(id)"
        let errPath = home.path + "/.err-\(id)"
        for path in [outPath, errPath] {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        let handles = [FileHandle(forWritingAtPath: outPath), FileHandle(forWritingAtPath: errPath)]
        let inputHandle = input.flatMap { FileHandle(forReadingAtPath: $0) }
        (process.standardOutput, process.standardError) = (handles[0], handles[1])
        if let inputHandle { process.standardInput = inputHandle }
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        try process.run()
        // The child has its own copies. Foundation keeps these for the Process's life, which
        // outlasts the test: left open, two descriptors a run added up to thousands over the
        // suite, and on a machine whose limit is 1 024 the suite's own sockets began to fail.
        for handle in handles + [inputHandle] { try? handle?.close() }
        track(process)
        return RunningCLI(process: process, exited: exited.stream, outPath: outPath, errPath: errPath)
    }

    /// Runs the binary to completion, without blocking a thread of the cooperative pool (the
    /// test's feed server runs there).
    func run(_ arguments: String...) async throws -> RunResult {
        try await start(arguments).wait()
    }

    func run(_ arguments: [String]) async throws -> RunResult {
        try await start(arguments).wait()
    }

    /// Runs the binary through `wrapper` (such as `faketime -f TIME`), which is given the binary
    /// and `arguments` after its own.
    func run(wrappedBy wrapper: [String], _ arguments: [String]) async throws -> RunResult {
        try await start(Array(wrapper.dropFirst()) + [Self.binary] + arguments, executable: wrapper[0]).wait()
    }

    /// Changes the store behind the binary's back, as another program could.
    /// Runs `sql` on the store as another program would, but with the functions the search
    /// index's triggers call (which the sqlite3 shell lacks: it cannot change an item's text).
    func execute(_ sql: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.add(function: Store.searchTitle)
            db.add(function: Store.searchBody)
        }
        try DatabaseQueue(path: databasePath, configuration: configuration).writeWithoutTransaction {
            try $0.execute(sql: sql)
        }
    }

    /// Every item of `list --json`, page after page, parsed.
    func listedItems(_ extra: String...) async throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        for page in 1... {
            let result = try await start(["list", "--json", "--per-page", "500", "--page", String(page)] + extra).wait()
            #expect(result.status == 0, "list failed: \(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
            let pageItems = object["items"] as! [[String: Any]]
            items += pageItems
            if pageItems.count < 500 { break }
        }
        return items
    }

    /// The ids `list` shows, in order.
    func listedKeys() async throws -> [String] {
        try await listedItems().map { $0["id"] as! String }
    }

    func openStore() throws -> Store {
        try Store(path: databasePath)
    }
}

struct RunningCLI: @unchecked Sendable {
    let process: Process
    let exited: AsyncStream<Int32>
    let outPath: String
    let errPath: String

    func wait() async throws -> RunResult {
        var status: Int32 = -1
        for await value in exited { status = value }
        return RunResult(
            status: status,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
    }
}

/// A started demo server, stopped when the test is done.
func withServer<T>(
    items: Int = 95, perPage: Int = 10, _ body: (DemoServer, String) async throws -> T
) async throws -> T {
    let server = DemoServer(items: items, perPage: perPage)
    try await server.start()
    let url = await server.feedURL
    do {
        let result = try await body(server, url)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

extension DemoServer {
    /// Pages of the feed requested so far, in order (304s included).
    var requestedPages: [Int] {
        feedRequests.compactMap(\.page)
    }

    /// Requests for pages of the feed, pictures left out.
    var feedRequests: [LoggedRequest] {
        requests.filter(\.isFeed)
    }

    /// Paths of picture requests, in order.
    var pictureRequests: [String] {
        requests.filter { $0.path.hasPrefix("/pictures/") }.map(\.path)
    }
}

/// Everything `handle` gives until its end, read again when a signal interrupts a read (a child
/// process ending is one), where `readDataToEndOfFile` traps.
func readAll(_ handle: FileHandle) -> Data { readAll(handle.fileDescriptor) }

/// What `executable` with `arguments` writes to its standard output (its standard error goes to
/// /dev/null), run to its end through `posix_spawn`: Foundation's `Process.run` can crash when
/// other threads open and close descriptors while it starts a child (it reads /proc/self/fd,
/// swift-corelibs-foundation PR 5472), and a test that runs curl thousands of times met it.
/// It waits on a thread of its own, as `CLI.run` does, never on one of the cooperative pool's,
/// where the test's feed server runs: two tests waiting there at once on two cores held up every
/// feed server in the process, and a request serve made to one waited until curl gave up.
func output(of executable: String, _ arguments: [String]) async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try blockingOutput(of: executable, arguments) }) }.start()
    }
}

/// Waits for `process` to end on a thread of its own, for the reason `output(of:)` gives. It
/// looks every few milliseconds: Foundation's `waitUntilExit` spins a run loop that, on a thread
/// with nothing else to run, returns at once, and would keep a core busy until the child ends.
func ended(_ process: Process) async {
    await withCheckedContinuation { continuation in
        Thread {
            while process.isRunning { usleep(5_000) }
            continuation.resume()
        }.start()
    }
}

private func blockingOutput(of executable: String, _ arguments: [String]) throws -> Data {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // the child gets only its dup2
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    close(ends[1])
    guard spawned == 0 else {
        close(ends[0])
        throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
    }
    let data = readAll(ends[0])
    close(ends[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    return data
}

func readAll(_ descriptor: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}

/// A task executor of one thread of its own, for test work that holds its thread for long (a
/// store of a million items written): the cooperative pool, two threads here, stays free for the
/// in-process demo servers other tests are asking meanwhile, and the thread runs at the lowest
/// priority (niceness 19, Linux's niceness being a thread's), so tests that time what they see
/// come first.
final class OwnThread: TaskExecutor, @unchecked Sendable {
    static let shared = OwnThread()
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        Thread { [self] in
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}
