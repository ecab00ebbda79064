// FeedSyncServe: the reading page (`feedsync serve`). Its public API: ReadingServer (this file),
// an HTTP server on the loopback over the same Kit calls the command line makes, serving the page
// embedded from Page/ and a small JSON API whose items have `list --json`'s shape; Guard (every
// request passes it first); PageToken (the page's token and opener in the data home).

import FeedSyncKit
import FeedSyncModel
import FeedSyncPage
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The server behind the reading page.
public final class ReadingServer: Sendable {
    public struct Settings: Sendable {
        /// The address to listen on: 127.0.0.1 unless the user chose another.
        public var bind = "127.0.0.1"
        /// 0: any free port.
        public var port = 0
        /// What every request must carry (in the address once, then in a cookie).
        public var token: String

        public init(token: String) {
            self.token = token
        }
    }

    let library: FeedSync
    let settings: Settings

    public init(library: FeedSync, settings: Settings) async {
        self.library = library
        self.settings = settings
    }

    /// Serves until the task is cancelled; `listening` hears the port once it is bound.
    ///
    /// HummingbirdCore's server with our responder, not Hummingbird's `Application`: that always
    /// runs a one-second timer for the `Date` header, which woke an idle `serve` several times a
    /// second (BENCHMARKS.md, P10). The header is optional; none is sent.
    public func run(listening: @escaping @Sendable (Int) -> Void) async throws {
        let guarded = Guard(token: settings.token, bind: settings.bind, port: settings.port)
        let responder = makeRouter().buildResponder()
        let logger = Logger(label: "feedsync.serve", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try HTTPServerBuilder.http1().buildServer(
            configuration: ServerConfiguration(address: .hostname(settings.bind, port: settings.port)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            responder: { request, writer, channel in
                let context = BasicRequestContext(source: .init(channel: channel, logger: logger))
                let response = try await guarded.respond(to: request, context: context, next: responder.respond)
                try await writer.write(response: response.head, body: response.body)
            },
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                guarded.port.withLock { $0 = bound }
                listening(bound)
            })
        do {
            try await server.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw PortTaken(bindError: error)
        }
    }

    /// The address's port is another socket's: the caller may choose another.
    public struct PortTaken: Error, CustomStringConvertible {
        let bindError: IOError
        public var description: String { "\(bindError)" }
    }

    // MARK: Routes

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        for file in embeddedPage {
            let path = file.name == "index.html" ? "/" : "/" + file.name
            let type = Self.types[(file.name as NSString).pathExtension] ?? "application/octet-stream"
            let body = ByteBuffer(string: file.text)
            router.get(RouterPath(path)) { _, _ in
                Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: body))
            }
        }
        router.get("/api/items") { request, _ in try await self.items(request) }
        router.get("/api/items/{number}") { _, context in
            try await self.item(try context.parameters.require("number", as: Int64.self))
        }
        router.post("/api/items/{number}/read") { request, context in
            try await self.mark(
                try context.parameters.require("number", as: Int64.self),
                read: request.uri.queryParameters["read"] != "0")
        }
        router.post("/api/items/{number}/star") { request, context in
            try await self.star(
                try context.parameters.require("number", as: Int64.self),
                starred: request.uri.queryParameters["starred"] != "0")
        }
        router.post("/api/position") { request, _ in try await self.position(request) }
        router.post("/api/items/{number}/picture") { _, context in
            let number = try context.parameters.require("number", as: Int64.self)
            let cached = await self.library.fetchPicture(ofItem: number)
            return Self.json("{\"picture\": \(JSON.string(cached ? "/pictures/\(number)" : nil))}")
        }
        router.get("/api/status") { request, _ in try await self.status(request) }
        router.get("/api/feeds") { _, _ in try await self.feeds() }
        router.get("/content/{number}") { _, context in
            try await self.content(try context.parameters.require("number", as: Int64.self))
        }
        router.get("/pictures/{number}") { _, context in
            try await self.picture(try context.parameters.require("number", as: Int64.self))
        }
        router.get("/pictures/{number}/{position}") { _, context in
            try await self.picture(
                try context.parameters.require("number", as: Int64.self),
                inside: try context.parameters.require("position", as: Int.self))
        }
        // The pictures of an article being opened, fetched now: how many came.
        router.post("/api/items/{number}/pictures") { _, context in
            let number = try context.parameters.require("number", as: Int64.self)
            return Self.json("{\"fetched\": \(await self.library.fetchArticlePictures(ofItem: number))}")
        }
        return router
    }

    /// An item's enclosures as links, with a player (asking for nothing until played) for sound
    /// and video, and the origins those players play from, for the frame's `media-src`: only
    /// origins made of a web scheme, a host of letters, digits, dots, dashes (or an IPv6
    /// address) and a port reach the policy; a file from any other has its link alone.
    static func enclosures(_ files: [FeedEnclosure]) -> (html: String, origins: [String]) {
        var origins: [String] = []
        var html = ""
        for file in files {
            let name = URLComponents(string: file.url)?.path.split(separator: "/").last.map(String.init) ?? file.url
            let about = Words.about(file)
            html +=
                "<p class=\"enclosure\"><a href=\"\(SafeHTML.text(file.url))\" target=\"_blank\" "
                + "rel=\"noopener noreferrer\">\(SafeHTML.text(name.removingPercentEncoding ?? name))</a>"
                + (about.isEmpty ? "" : " · " + SafeHTML.text(about)) + "</p>"
            guard file.isSoundOrVideo, let origin = origin(of: file.url) else { continue }
            let video = file.type?.hasPrefix("video/") == true
            html +=
                "<\(video ? "video" : "audio") controls preload=\"none\" src=\"\(SafeHTML.text(file.url))\">"
                + "</\(video ? "video" : "audio")>"
            if !origins.contains(origin) { origins.append(origin) }
        }
        return (html.isEmpty ? "" : "<section class=\"enclosures\">\(html)</section>", origins)
    }

    /// `scheme://host:port` of an http(s) URL, when every part is one a policy can hold as it is.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.percentEncodedHost, !host.isEmpty,
            host.utf8.allSatisfy({ byte in
                (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte) || ".-:[]".utf8.contains(byte)
            })
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed.lowercased())" + (components.port.map { ":\($0)" } ?? "")
    }

    /// `list --json`'s fields of an item, and where its cached picture is (null: none cached).
    static func fields(_ item: StoredItem, position: Int?) -> String {
        ItemJSON.fields(item, path: nil, position: position)
            + ", \"picture\": \(JSON.string(item.imageStatus == .cached ? "/pictures/\(item.number)" : nil))"
    }

    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]

    /// `/api/items?page=N&per_page=M[&feed=ID][&unread=1][&search=TEXT]`: a page of the list, as
    /// `list --json` has it, each item with the address of its cached picture.
    func items(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let page = query["page"].flatMap { Int($0) } ?? 1
        let perPage = query["per_page"].flatMap { Int($0) } ?? 50
        guard FeedCursor.pages.contains(page), ReadingPosition.perPages.contains(perPage) else {
            throw HTTPError(
                .badRequest, message: "page from 1, per_page from 1 to \(ReadingPosition.perPages.upperBound)")
        }
        let listQuery = try await listQuery(request)
        let listed = try await stored { try await library.list(listQuery, page: page, perPage: perPage) }
        let items = listed.items.map { item in
            "{" + Self.fields(item, position: item.position) + "}"
        }
        return Self.json(
            "{\"page\": \(page), \"per_page\": \(perPage), \"total\": \(listed.total), "
                + "\"items\": [\(items.joined(separator: ", "))]}")
    }

    func listQuery(_ request: Request) async throws -> ListQuery {
        let query = request.uri.queryParameters
        var list = ListQuery(feedURL: nil)
        if let feed = query["feed"], !feed.isEmpty {
            guard let number = Int64(feed),
                let found = try await stored({ try await library.feeds() }).first(where: { $0.id == number })
            else { throw HTTPError(.notFound, message: "no such feed") }
            list.feedURL = found.url
        }
        list.unread = query["unread"] == "1"
        list.starred = query["starred"] == "1"
        if let search = query["search"].map(String.init), !search.isEmpty {
            // As `list --search` reads it: words as prefixes, nothing in it FTS5 syntax.
            guard search.utf8.count <= 1000, let words = ListQuery.words(search) else {
                throw HTTPError(.badRequest, message: "search for words of at most 1000 bytes")
            }
            list.search = words
        }
        if let view = query["view"].map(String.init), !view.isEmpty {
            guard view.unicodeScalars.count <= 200 else {
                throw HTTPError(.badRequest, message: "a view's name is at most 200 characters")
            }
            do {
                list = try await library.query(list, inView: view)
            } catch let error as SyncError {
                throw HTTPError(.notFound, message: error.message)
            }
        }
        return list
    }

    /// One item: its list fields, its text in words and where its sanitised content is.
    func item(_ number: Int64) async throws -> Response {
        guard let detail = try await stored({ try await library.item(number: number) }) else {
            throw HTTPError(.notFound, message: "no such item")
        }
        let item = detail.item
        return Self.json(
            "{" + Self.fields(item, position: nil) + ", \"content\": \"/content/\(number)\"}")
    }

    func star(_ number: Int64, starred: Bool) async throws -> Response {
        let unknown = try await stored { try await library.star([number], starred: starred) }
        guard unknown.isEmpty else { throw HTTPError(.notFound, message: "no such item") }
        return Self.json("{\"number\": \(number), \"starred\": \(starred)}")
    }

    func mark(_ number: Int64, read: Bool) async throws -> Response {
        let unknown = try await stored { try await library.mark([number], read: read) }
        guard unknown.isEmpty else { throw HTTPError(.notFound, message: "no such item") }
        return Self.json("{\"number\": \(number), \"unread\": \(!read)}")
    }

    /// `POST /api/position?row=N&per_page=M[&feed=ID]`: where the reader's scrolling settled, as
    /// the reading position every pull's prefetch follows.
    func position(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        guard let row = query["row"].flatMap({ Int($0) }), FeedCursor.totals.contains(row),
            let perPage = query["per_page"].flatMap({ Int($0) }), ReadingPosition.perPages.contains(perPage)
        else {
            throw HTTPError(
                .badRequest, message: "row from 0, per_page from 1 to \(ReadingPosition.perPages.upperBound)")
        }
        let list = try await listQuery(request)
        // Filtered views have no place a pull's prefetch could follow.
        guard
            let position = try await stored({
                try await library.recordReadingPosition(in: list, row: row, perPage: perPage)
            })
        else { return Self.json("{\"recorded\": false}") }
        return Self.json("{\"recorded\": true, \"page\": \(position.page)}")
    }

    /// What the page polls: the all-feeds total, and with `anchor=N` the row item N is at now in
    /// the timeline, so the page can keep the rows it shows where they are when items arrive.
    func status(_ request: Request) async throws -> Response {
        let total = try await stored { try await library.list(ListQuery(feedURL: nil), page: 1, perPage: 1).total }
        let anchor = request.uri.queryParameters["anchor"].flatMap { Int64($0) }
        var row: Int?
        if let anchor { row = try await stored { try await library.timelineRow(ofItem: anchor) } }
        return Self.json("{\"total\": \(total), \"row\": \(JSON.number(row))}")
    }

    func feeds() async throws -> Response {
        let feeds = try await stored { try await library.feedSummaries() }.map { summary in
            "{\"number\": \(summary.feed.id), \"title\": \(JSON.string(summary.feed.name)), "
                + "\"folder\": \(JSON.string(summary.feed.folder)), \"unread\": \(summary.unread)}"
        }
        let views = try await stored { try await library.views(counting: true) }.map { view in
            "{\"name\": \(JSON.string(view.name)), \"unread\": \(view.unread ?? 0)}"
        }
        return Self.json(
            "{\"feeds\": [\(feeds.joined(separator: ", "))], \"views\": [\(views.joined(separator: ", "))]}")
    }

    /// The item's content as a page of its own, for a sandboxed frame: sanitised, pictures from
    /// the cache or placeholders, links to new tabs.
    func content(_ number: Int64) async throws -> Response {
        guard let detail = try await stored({ try await library.item(number: number) }) else {
            throw HTTPError(.notFound, message: "no such item")
        }
        let item = detail.item
        let own = item.imageStatus == .cached ? item.pictureURL : nil
        // The article's pictures by the reference the content writes, as the pull found them.
        let inside = Dictionary(
            detail.pictures.filter { $0.status == .cached }.map { ($0.source, "/pictures/\(number)/\($0.position)") },
            uniquingKeysWith: { first, _ in first })
        let html =
            (try? SafeHTML.clean(
                detail.content ?? detail.summary.map(SafeHTML.text) ?? "", base: item.link,
                picture: { source, url in url != nil && url == own ? "/pictures/\(number)" : inside[source] })) ?? ""
        let summary =
            detail.summaryBesideArticle.map { "<p class=\"summary\"><em>\(SafeHTML.text($0))</em></p><hr>" } ?? ""
        let (files, origins) = Self.enclosures(item.enclosures)
        let page = """
            <!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/content.css">\
            </head><body>\(files)\(summary)\(html)</body></html>
            """
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        // Framed by the reading page only; nothing but its pictures and its style load, and the
        // sound and video of its enclosures' servers, when the reader plays them.
        headers[.contentSecurityPolicy] =
            "default-src 'none'; img-src 'self'; style-src 'self'; frame-ancestors 'self'; base-uri 'none'; "
            + "form-action 'none'" + (origins.isEmpty ? "" : "; media-src " + origins.joined(separator: " "))
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// An item's picture from the cache, by the item's number only (and, for a picture inside its
    /// article, its place there): its type is the one checked when it was cached (its file's
    /// extension). One that fails the cache's check is a 404, and due again.
    func picture(_ number: Int64, inside position: Int? = nil) async throws -> Response {
        let picture = try await stored({ try await library.picture(ofItem: number, inside: position) })
        guard let picture else {
            throw HTTPError(.notFound, message: "no cached picture")
        }
        return Response(
            status: .ok, headers: [.contentType: picture.type, .cacheControl: "private, max-age=86400"],
            body: .init(byteBuffer: ByteBuffer(bytes: picture.data)))
    }

    static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func stored<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.internalServerError, message: "the store could not be read")
        }
    }
}
