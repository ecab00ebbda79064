// GoogleReaderServer: a Google Reader API server of our own on 127.0.0.1 for the tests and the
// benchmarks, answering as FreshRSS 1.25 does in ../shared/greader/ (its recordings), with a
// dialect switch for each documented difference of Miniflux, The Old Reader and BazQux.

import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

public final class GoogleReaderServer: Sendable {
    /// Whose answers the server gives: FreshRSS's, or another server's documented differences.
    public enum Dialect: Sendable {
        /// Continuation: the decimal id of a full page's last item; the Authorization header on
        /// every request (`T` optional, a wrong one refused); `output=json` needed by the lists;
        /// of several `a=` in one edit-tag only the last taken.
        case freshRSS
        /// Continuation: an offset; streams newest published first (not newest stored);
        /// `stream/contents` answers `[]`; `output=json` needed by every stream and list; a POST is
        /// authenticated by its `T`, not the header; a 16-character id is read as hex.
        case miniflux
        /// Item ids are 24-digit ObjectIds, in `stream/items/ids` too, and a page holds at most
        /// 1 000 of them.
        case oldReader
        /// A bare hex item id (not the long form) is a 500.
        case bazQux
        /// Every request, the log-in's too, names a registered application (`AppId`, `AppKey`
        /// headers), else a 403 `AppId required!`.
        case inoreader
    }

    public struct Item: Sendable {
        public var number: Int
        public var feed: Int
        public var title: String
        public var read = false
        public var starred = false
        /// Its date, in seconds (default: a minute after the item before).
        public var published: Int?

        var date: Int { published ?? 1_790_000_000 + (number - GoogleReaderServer.firstNumber) * 60 }
    }

    struct State: Sendable {
        var items: [Item] = []  // oldest first
        /// The next item's number: the time it is stored, as FreshRSS's (never one used before).
        var next = GoogleReaderServer.firstNumber + 1
        var feeds: [Int: (title: String, url: String, label: String?)] = [:]
        var auth: String
        var log: [String] = []
        /// Feeds quickadd subscribes to, by URL: their title and how many items they bring.
        var subscribable: [String: (title: String, items: Int)] = [:]

        mutating func store(_ item: Item) {
            var item = item
            item.number = next
            next += 1
            items.append(item)
        }
    }

    public let dialect: Dialect
    public let user: String
    public let password: String
    /// The application Inoreader's dialect wants named.
    public static let app = (id: "1000001234", key: "feedsync-test-app-key")
    /// The path the API's calls follow (FreshRSS's `/api/greader.php`; Miniflux's and Inoreader's
    /// are the root).
    public let basePath: String
    let state: Mutex<State>
    let server: Mutex<HTTPServer?> = Mutex(nil)
    let runner: Mutex<Task<Void, any Error>?> = Mutex(nil)
    let port: Mutex<UInt16> = Mutex(0)
    static let firstNumber = 1_796_162_308_500_000
    static let long = "tag:google.com,2005:reader/item/"

    /// `items` over `feeds` feeds (item n in feed n mod feeds), feed f in label f mod `labels`
    /// (none when 0).
    public init(
        dialect: Dialect = .freshRSS, feeds: Int = 4, labels: Int = 2, items: Int = 100, user: String = "reader",
        password: String = "api-password"
    ) {
        self.dialect = dialect
        self.user = user
        self.password = password
        basePath = dialect == .miniflux || dialect == .inoreader ? "" : "/api/greader.php"
        var state = State(auth: user + "/" + String(repeating: "5f3a", count: 10))
        for feed in 1...max(feeds, 1) {
            state.feeds[feed] = (
                "Feed \(feed)", "http://feeds.example/\(feed).xml",
                labels > 0 ? "Label \((feed - 1) % labels + 1)" : nil
            )
        }
        state.items = (1...max(items, 1)).prefix(items).map { n in
            Item(number: Self.firstNumber + n, feed: (n - 1) % max(feeds, 1) + 1, title: "Item \(n)")
        }
        state.next += items
        self.state = Mutex(state)
    }

    public var baseURL: String { "http://127.0.0.1:\(port.withLock { $0 })\(basePath)" }
    /// Every request so far, as `METHOD call` (the path after `reader/api/0/`), with the query.
    public var log: [String] { state.withLock { $0.log } }
    public var items: [Item] { state.withLock { $0.items } }
    /// The `Auth` a log-in gives now, and the action token made from it (FreshRSS's: its 40 hex
    /// digits and 17 `Z`).
    public var auth: String { state.withLock { $0.auth } }
    public var token: String { String(auth.split(separator: "/").last ?? "") + String(repeating: "Z", count: 17) }

    public func start(port wanted: UInt16 = 0) async throws {
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: wanted), timeout: 60, logger: .disabled)
        await server.appendRoute("*") { [self] request in try await self.answer(request) }
        self.server.withLock { $0 = server }
        runner.withLock { $0 = Task { try await server.run() } }
        try await server.waitUntilListening(timeout: 10)
        if case .ip4(_, let port) = await server.listeningAddress {
            self.port.withLock { $0 = port }
            DemoServer.disableNagle(listeningOn: port)
        }
    }

    /// Stops listening (the network gone); `start(port:)` again with the same port brings it back.
    public func stop() async {
        let server = self.server.withLock { $0 }
        await server?.stop(timeout: 1)
        runner.withLock { $0?.cancel() }
    }

    /// Items new on the server, each in feed `feed`, dated `published` (seconds) if given.
    public func add(_ count: Int, feed: Int = 1, published: Int? = nil) {
        state.withLock { state in
            for n in 1...count { state.store(Item(number: 0, feed: feed, title: "New \(n)", published: published)) }
        }
    }

    /// Marks made by another device.
    public func mark(_ numbers: Set<Int>, read: Bool? = nil, starred: Bool? = nil) {
        state.withLock { state in
            for index in state.items.indices where numbers.contains(state.items[index].number) {
                if let read { state.items[index].read = read }
                if let starred { state.items[index].starred = starred }
            }
        }
    }

    /// The server forgets every `Auth` it gave: the next request needs a new log-in.
    public func forgetSessions() {
        let digits = (0..<40).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
        state.withLock { $0.auth = user + "/" + digits }
    }

    /// quickadd of `url` subscribes to a feed titled `title` with `items` items.
    public func offer(_ url: String, title: String, items: Int) {
        state.withLock { $0.subscribable[url] = (title, items) }
    }

    public var feedTitles: [String] { state.withLock { $0.feeds.values.map(\.title).sorted() } }

    // MARK: Answers

    func answer(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try await request.bodyData
        var path = request.path
        if path.hasPrefix("/pictures/"), let n = Int(path.dropFirst(10).dropLast(4)) {
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "image/png"], body: DemoServer.png(seed: n))
        }
        if path.hasPrefix("/articles/"), let n = Int(path.dropFirst(10)) { return Self.article(n) }
        guard path.hasPrefix(basePath) else { return Self.text(.notFound, "Not found") }
        path.removeFirst(basePath.count)
        if dialect == .inoreader,
            request.headers[HTTPHeader("AppId")] != Self.app.id || request.headers[HTTPHeader("AppKey")] != Self.app.key
        {
            return Self.text(.forbidden, "AppId required!")
        }
        let query = Self.pairs(request.query.map { ($0.name, $0.value) })
        let form = request.method == .POST ? Self.pairs(Self.decoded(String(decoding: body, as: UTF8.self))) : [:]
        let call = path.hasPrefix("/reader/api/0/") ? String(path.dropFirst(14)) : String(path.dropFirst())
        state.withLock {
            $0.log.append(
                "\(request.method.rawValue) \(call)"
                    + query.filter { $0.key != "output" }.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value[0])" }
                    .joined())
        }
        if call == "accounts/ClientLogin" {
            let (user, password) = (form["Email"]?.first ?? query["Email"]?.first, form["Passwd"]?.first)
            guard user == self.user, password == self.password else {
                return Self.text(.unauthorized, "Unauthorized!", badToken: true)
            }
            let auth = state.withLock { $0.auth }
            return Self.text(.ok, "SID=\(auth)\nLSID=null\nAuth=\(auth)\n")
        }
        let (auth, token) = (self.auth, self.token)
        let header = request.headers[HTTPHeader("Authorization")]
        if dialect == .miniflux, request.method == .POST {
            guard form["T"]?.first == token else { return Self.text(.unauthorized, "Unauthorized!", badToken: true) }
        } else {
            guard header == "GoogleLogin auth=" + auth else {
                return Self.text(.unauthorized, "Unauthorized!", badToken: true)
            }
            if let sent = form["T"]?.first, sent != token, sent != "x" {
                return Self.text(.unauthorized, "Unauthorized!", badToken: true)
            }
        }
        let json = query["output"]?.first == "json"
        let needsJSON: Set<String> =
            dialect == .miniflux
            ? ["stream/items/ids", "stream/items/contents", "tag/list", "subscription/list"]
            : ["subscription/list", "tag/list", "unread-count"]
        if needsJSON.contains(call), !json {
            return dialect == .miniflux
                ? Self.json(["error_message": "output only as json supported"], status: .badRequest)
                : Self.text(HTTPStatusCode(501, phrase: "Not Implemented"), "Not Implemented!")
        }
        let parameters = query.merging(form) { $0 + $1 }
        switch call {
        case "token": return Self.text(.ok, token)
        case "user-info": return Self.json(["userId": "1", "userName": user])
        case "subscription/list": return Self.json(["subscriptions": subscriptions()])
        case "tag/list": return Self.json(["tags": tags()])
        case "stream/items/ids": return itemIDs(parameters)
        case "stream/items/contents":
            guard let numbers = numbers(parameters["i"] ?? []) else { return Self.text(.internalServerError, "Error") }
            return Self.json(["id": "user/-/state/com.google/reading-list", "items": contents(numbers)])
        case "edit-tag":
            guard let numbers = numbers(parameters["i"] ?? []) else { return Self.text(.internalServerError, "Error") }
            edit(numbers, add: parameters["a"] ?? [], remove: parameters["r"] ?? [])
            return Self.text(.ok, "OK")
        case "subscription/quickadd": return quickadd(parameters["quickadd"]?.first ?? "")
        case "mark-all-as-read":
            let marked = markAllRead(
                parameters["s"]?.first ?? "", upTo: parameters["ts"]?.first.flatMap { Int($0) } ?? Int.max)
            return marked ? Self.text(.ok, "OK") : Self.text(.badRequest, "Bad Request!")
        case "subscription/edit": return edit(subscription: parameters)
        default:
            if call.hasPrefix("stream/contents"), dialect == .miniflux { return Self.text(.ok, "[]") }
            return Self.text(.badRequest, "Bad Request!")
        }
    }

    func subscriptions() -> [[String: Any]] {
        state.withLock { state in
            state.feeds.keys.sorted().map { id in
                let feed = state.feeds[id]!
                var entry: [String: Any] = [
                    "id": stream(id), "title": feed.title, "url": feed.url, "htmlUrl": "http://feeds.example/",
                ]
                entry["categories"] = feed.label.map { [["id": "user/-/label/" + $0, "label": $0]] } ?? []
                return entry
            }
        }
    }

    func tags() -> [[String: Any]] {
        let labels = state.withLock { state in Set(state.feeds.values.compactMap(\.label)) }
        return [["id": "user/-/state/com.google/starred"]] + labels.sorted().map { ["id": "user/-/label/" + $0] }
    }

    func stream(_ feed: Int) -> String {
        dialect == .oldReader ? "feed/" + Self.hex(0xFEED_0000 + feed, width: 24) : "feed/\(feed)"
    }

    /// An item's id in the long form.
    func long(_ number: Int) -> String {
        Self.long + Self.hex(number, width: dialect == .oldReader ? 24 : 16)
    }

    /// stream/items/ids: newest first (`r=o` oldest), filtered by `s`, `xt`, `it`, `ot`, a page of
    /// `n` after the continuation `c`.
    static func hex(_ number: Int, width: Int) -> String {
        let digits = String(number, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    func itemIDs(_ parameters: [String: [String]]) -> HTTPResponse {
        let stream = parameters["s"]?.first ?? ""
        // The Old Reader gives at most 1 000 ids a page, Miniflux 10 000, FreshRSS as many as asked.
        let most = [Dialect.oldReader: 1000, .miniflux: 10_000][dialect] ?? Int.max
        let n = min(max(parameters["n"]?.first.flatMap { Int($0) } ?? 20, 1), most)
        var items = state.withLock { $0.items }
        if dialect == .miniflux { items.sort { ($0.date, $0.number) < ($1.date, $1.number) } }
        var selected = items.reversed().filter { item in
            switch stream {
            case "user/-/state/com.google/reading-list": true
            case "user/-/state/com.google/starred": item.starred
            case "user/-/state/com.google/read": true  // FreshRSS: not supported as a stream, all answered
            default: stream == self.stream(item.feed)
            }
        }
        if parameters["xt"]?.first == "user/-/state/com.google/read" { selected = selected.filter { !$0.read } }
        if parameters["it"]?.first == "user/-/state/com.google/read" { selected = selected.filter { $0.read } }
        if let ot = parameters["ot"]?.first.flatMap({ Int($0) }) {
            selected = selected.filter { $0.number / 1_000_000 >= ot }
        }
        if parameters["r"]?.first == "o" { selected.reverse() }
        var start = 0
        if let c = parameters["c"]?.first {
            if dialect == .miniflux {
                start = Int(c) ?? 0
            } else if let after = Int(c), let index = selected.firstIndex(where: { $0.number == after }) {
                start = index + 1
            }
        }
        let page = Array(selected.dropFirst(start).prefix(n))
        var answer: [String: Any] = [
            "itemRefs": page.map { item in
                ["id": dialect == .oldReader ? Self.hex(item.number, width: 24) : String(item.number)]
            }
        ]
        // FreshRSS asks one more after a continuation and drops it: at least n - 1 items then
        // carry a continuation (its recording 18), so a short page is no end.
        let full = dialect == .freshRSS && parameters["c"] != nil ? n - 1 : n
        if page.count >= full, let last = page.last {
            answer["continuation"] = dialect == .miniflux ? String(start + n) : String(last.number)
        }
        return Self.json(answer)
    }

    /// Item numbers from ids in any form the dialect reads; nil for one it refuses.
    func numbers(_ ids: [String]) -> [Int]? {
        var numbers: [Int] = []
        for id in ids {
            let digits = id.hasPrefix(Self.long) ? String(id.dropFirst(Self.long.count)) : id
            let hex: Bool
            if id.hasPrefix(Self.long) || dialect == .oldReader {
                hex = true
            } else if dialect == .bazQux {
                guard digits.allSatisfy(\.isNumber) else { return nil }
                hex = false
            } else if dialect == .miniflux {
                hex = digits.count == 16
            } else {
                hex = digits.hasPrefix("0") || !digits.allSatisfy(\.isNumber)
            }
            guard let number = Int(digits, radix: hex ? 16 : 10) else { continue }
            numbers.append(number)
        }
        return numbers
    }

    func contents(_ numbers: [Int]) -> [[String: Any]] {
        let wanted = Set(numbers)
        let (items, feeds) = state.withLock { ($0.items, $0.feeds) }
        return items.reversed().filter { wanted.contains($0.number) }.map { item in
            let feed = feeds[item.feed]
            let n = item.number - Self.firstNumber
            var categories = ["user/-/state/com.google/reading-list"]
            if item.read { categories.append("user/-/state/com.google/read") }
            if item.starred { categories.append("user/-/state/com.google/starred") }
            if let label = feed?.label { categories.append("user/-/label/" + label) }
            return [
                "id": long(item.number), "crawlTimeMsec": String(item.number / 1000),
                "timestampUsec": String(item.number), "published": item.date,
                "title": item.title, "author": "Author \(item.feed)",
                "canonical": [["href": "\(root)/articles/\(n)"]], "alternate": [["href": "\(root)/articles/\(n)"]],
                "categories": categories, "origin": ["streamId": stream(item.feed), "title": feed?.title ?? ""],
                "summary": [
                    "content":
                        "<p>Body of \(item.title).</p><img src=\"\(root)/pictures/\(n).png\">"
                ],
            ]
        }
    }

    /// The address the server's own pages (articles, pictures) are under.
    var root: String { "http://127.0.0.1:\(port.withLock { $0 })" }

    /// Item n's page: its whole article, as a site would show it.
    static func article(_ n: Int) -> HTTPResponse {
        let paragraphs = (1...5).map { k in
            "<p>Paragraph \(k) of the whole article \(n), told at length with details and quotes that the item's "
                + "summary leaves out, sentence after sentence, so that a reader has something to read.</p>"
        }
        let html = """
            <!doctype html><html lang="en"><head><title>Article \(n)</title></head><body>
            <nav><a href="/">Home</a></nav><article><h1>Article \(n)</h1>\(paragraphs.joined())</article></body></html>
            """
        return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(html.utf8))
    }

    func edit(_ numbers: [Int], add: [String], remove: [String]) {
        // FreshRSS takes only the last a= and the last r=.
        let (add, remove) = dialect == .freshRSS ? (Array(add.suffix(1)), Array(remove.suffix(1))) : (add, remove)
        let wanted = Set(numbers)
        state.withLock { state in
            for index in state.items.indices where wanted.contains(state.items[index].number) {
                for tag in add {
                    if tag.hasSuffix("/state/com.google/read") { state.items[index].read = true }
                    if tag.hasSuffix("/state/com.google/starred") { state.items[index].starred = true }
                }
                for tag in remove {
                    if tag.hasSuffix("/state/com.google/read") { state.items[index].read = false }
                    if tag.hasSuffix("/state/com.google/starred") { state.items[index].starred = false }
                }
            }
        }
    }

    /// The stream's items stored up to `upTo` (their number: FreshRSS's timestampUsec) marked read;
    /// false for a stream the server does not have.
    func markAllRead(_ stream: String, upTo: Int) -> Bool {
        state.withLock { state in
            let labels = Set(state.feeds.values.compactMap { $0.label.map { "user/-/label/" + $0 } })
            guard
                stream == "user/-/state/com.google/reading-list" || labels.contains(stream)
                    || state.feeds.keys.contains(where: { self.stream($0) == stream })
            else { return false }
            for index in state.items.indices where state.items[index].number <= upTo {
                let item = state.items[index]
                let label = state.feeds[item.feed]?.label.map { "user/-/label/" + $0 }
                if stream == "user/-/state/com.google/reading-list" || stream == self.stream(item.feed)
                    || stream == label
                {
                    state.items[index].read = true
                }
            }
            return true
        }
    }

    /// Unsubscribes from feed `feed` as another device would.
    public func unsubscribe(feed: Int) {
        state.withLock { state in
            state.feeds[feed] = nil
            state.items.removeAll { $0.feed == feed }
        }
    }

    func quickadd(_ url: String) -> HTTPResponse {
        let added: Int? = state.withLock { state in
            guard let offered = state.subscribable[url] else { return nil }
            let id = (state.feeds.keys.max() ?? 0) + 1
            state.feeds[id] = (offered.title, url, nil)
            for n in 0..<offered.items { state.store(Item(number: 0, feed: id, title: "\(offered.title) \(n + 1)")) }
            return id
        }
        guard let added else {
            return Self.json([
                "numResults": 0, "error": "cURL error 22: The requested URL returned error: 404 [\(url)]",
            ])
        }
        return Self.json(["numResults": 1, "query": url, "streamId": stream(added), "streamName": url])
    }

    func edit(subscription parameters: [String: [String]]) -> HTTPResponse {
        guard parameters["ac"]?.first == "unsubscribe", let s = parameters["s"]?.first else {
            return Self.text(.badRequest, "Bad Request!")
        }
        let removed = state.withLock { state -> Bool in
            guard let id = state.feeds.keys.first(where: { stream($0) == s }) else { return false }
            state.feeds[id] = nil
            state.items.removeAll { $0.feed == id }
            return true
        }
        return removed ? Self.text(.ok, "OK") : Self.text(.badRequest, "Bad Request!")
    }

    // MARK: Encoding

    static func pairs(_ list: [(String, String)]) -> [String: [String]] {
        var pairs: [String: [String]] = [:]
        for (name, value) in list { pairs[name, default: []].append(value) }
        return pairs
    }

    static func decoded(_ form: String) -> [(String, String)] {
        form.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
        }
    }

    /// FreshRSS sends its JSON and texts as text/html.
    static func json(_ object: Any, status: HTTPStatusCode = .ok) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return HTTPResponse(statusCode: status, headers: [.contentType: "text/html; charset=UTF-8"], body: data)
    }

    static func text(_ status: HTTPStatusCode, _ text: String, badToken: Bool = false) -> HTTPResponse {
        var headers: HTTPHeaders = [.contentType: "text/plain; charset=UTF-8"]
        if badToken { headers[HTTPHeader("Google-Bad-Token")] = "true" }
        return HTTPResponse(statusCode: status, headers: headers, body: Data(text.utf8))
    }
}
