import FeedSyncModel
import Foundation
import Testing

/// A user of its own on the machine's one Tiny Tiny RSS (`scripts/ttrss`, started on first use),
/// with a `CLI` whose environment holds the user's password (`FEEDSYNC_PASSWORD`, as a cron job
/// would) and nothing else of it.
struct TinyTinyRSSUser {
    static let script = InstallTests.root + "/scripts/ttrss"

    let name: String
    let password: String
    /// The part of the password no other text holds, to look for it however it is escaped.
    let passwordMark: String
    /// The server's address, as a user types it (feedsync finds `api/` from it).
    let url: String
    let cli: CLI

    init() async throws {
        name = "u" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        passwordMark = String(UUID().uuidString.prefix(8))
        password = "pw \(passwordMark) ' \" ;"
        cli = try CLI(
            retryAttempts: 2,
            environment: ["FEEDSYNC_PASSWORD": password, "FEEDSYNC_TTRSS_PASSWORD": password])
        let started = try await Self.script(cli, ["start"])
        url = String(started.trimmingCharacters(in: .whitespacesAndNewlines).dropLast("api/".count))
        _ = try await Self.script(cli, ["user", name])
    }

    /// Runs `scripts/ttrss` with `input`; its standard output.
    @discardableResult
    static func script(_ cli: CLI, _ arguments: [String], input: String? = nil) async throws -> String {
        var inputPath: String?
        if let input {
            inputPath = cli.home.path + "/.in-\(UUID().uuidString)"
            try Data(input.utf8).write(to: URL(fileURLWithPath: inputPath!))
        }
        defer { inputPath.map { try? FileManager.default.removeItem(atPath: $0) } }
        let run = try await cli.start(arguments, input: inputPath, executable: script).wait()
        try #require(run.status == 0, "scripts/ttrss \(arguments.joined(separator: " ")): \(run.stderr)")
        return run.stdout
    }

    /// Runs SQL in the server's database; the rows it printed (psql's unaligned output).
    @discardableResult
    func sql(_ sql: String) async throws -> String {
        try await Self.script(cli, ["sql"], input: sql)
    }

    /// One API request as this user from another device (its own session).
    @discardableResult
    func api(_ request: [String: Any]) async throws -> [String: Any] {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let answer = try await Self.script(cli, ["api", name], input: body)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
        try #require(object["status"] as? Int == 0, "\(answer)")
        return object
    }

    /// A web server of the test's own on the same tt-rss, to stop and start again as if the
    /// server went away (`closeDoor`, `openDoor(port:)`) while the others go on answering.
    func openDoor(port: Int? = nil) async throws -> (url: String, port: Int) {
        let api = try await Self.script(cli, ["door"] + (port.map { [String($0)] } ?? []))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let port = try #require(URLComponents(string: api)?.port)
        return (String(api.dropLast("api/".count)), port)
    }

    func closeDoor(port: Int) async throws { try await Self.script(cli, ["close", String(port)]) }

    /// Feeds `feeds` (each in the category its entry names, or none) and `count` articles spread
    /// over them in turn, article n published n minutes after 2026-01-01, all unread
    /// (`scripts/ttrss seed`, which the bench's account uses too).
    func seed(feeds: [(title: String, category: String?)], articles count: Int) async throws {
        let named = feeds.map { feed in feed.category.map { feed.title + "/" + $0 } ?? feed.title }
        try await Self.script(cli, ["seed", name, String(count)] + named)
    }

    /// The server's id of the article seeded as number `n`.
    func articleID(_ n: Int) async throws -> Int64 {
        let text = try await sql("SELECT id FROM ttrss_entries WHERE guid = '\(name)-\(n)';")
        return try #require(Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// The ids of this user's articles whose `column` (unread, marked) is true.
    func articles(where column: String) async throws -> Set<Int64> {
        let text = try await sql(
            "SELECT ref_id FROM ttrss_user_entries WHERE \(column) AND owner_uid = (SELECT id FROM ttrss_users WHERE login = '\(name)');"
        )
        return Set(text.split(separator: "\n").compactMap { Int64($0) })
    }
}
