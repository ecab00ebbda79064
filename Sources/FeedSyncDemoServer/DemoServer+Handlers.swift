import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

// What the demo server answers: a feed's page in each format, a picture, an item's page, a
// fixed document, a redirect, the bytes a test asks for; each as the faults switched on say.

extension DemoServer {
    func feedPage(_ request: HTTPRequest, format: DemoFormat) async throws -> HTTPResponse {
        let received = Date()
        let page = request.query["page"].flatMap(Int.init) ?? 1
        let ifNoneMatch = request.headers[HTTPHeader("If-None-Match")]
        let (snapshot, failure) = state.withLock { state -> (State, Faults.Failure?) in
            var failure: Faults.Failure? = nil
            if !state.faults.next.isEmpty {
                failure = state.faults.next.removeFirst()
            } else if let once = state.faults.once.removeValue(forKey: page) {
                failure = once
            } else if let from = state.faults.fromPage, page >= from.page {
                failure = from.failure
            }
            return (state, failure)
        }
        if snapshot.faults.latency > 0 { try await Task.sleep(nanoseconds: UInt64(snapshot.faults.latency * 1e9)) }

        var served = snapshot
        if format == .wordpress {
            // The server's page size is the most this site hands out; WordPress's default is 10.
            served.perPage = min(served.perPage, request.query["per_page"].flatMap(Int.init) ?? 10)
        }
        let document = Self.document(format, page: page, state: served, baseURL: await baseURL)
        let body = document.body
        let contentType = document.contentType
        let etag = "\"\(format.rawValue)-n\(snapshot.itemCount)-p\(page)\(snapshot.faults.endless ? "-e" : "")\""
        var response: HTTPResponse
        var bytes: Int?
        switch failure {
        case .status(let code, let retryAfter)?:
            var headers: HTTPHeaders = [:]
            if let retryAfter { headers[HTTPHeader("Retry-After")] = retryAfter }
            response = HTTPResponse(statusCode: HTTPStatusCode(code, phrase: "Injected"), headers: headers)
        case .truncate?:
            let half = body.prefix(body.count / 2)
            response = HTTPResponse(
                statusCode: .ok,
                headers: [.contentType: contentType, .contentLength: String(body.count)] as HTTPHeaders,
                body: HTTPBodySequence(from: StreamedBytes(half, thenFail: true), count: body.count))
        case .reset?:
            response = HTTPResponse(
                statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders,
                body: HTTPBodySequence(from: StreamedBytes(body.prefix(body.count / 2), thenFail: true)))
        case .malformed?:
            bytes = body.count / 3
            response = HTTPResponse(
                statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders, body: Data(body.prefix(bytes!)))
        case .stall(let seconds)?:
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            bytes = body.count
            response = HTTPResponse(statusCode: .ok, headers: [.contentType: contentType] as HTTPHeaders, body: body)
        case nil:
            if ifNoneMatch == etag, !snapshot.faults.ignoreValidators {
                // With the caching headers a 200 would have had, as RFC 9110 (15.4.5) asks.
                var headers: HTTPHeaders = [HTTPHeader("ETag"): etag]
                for (name, value) in snapshot.faults.feedHeaders
                where ["cache-control", "expires", "date", "vary"].contains(name.lowercased()) {
                    headers[HTTPHeader(name)] = value
                }
                response = HTTPResponse(statusCode: .notModified, headers: headers)
            } else {
                var headers: HTTPHeaders = [.contentType: contentType, HTTPHeader("ETag"): etag]
                for (name, value) in document.headers + snapshot.faults.feedHeaders.map({ ($0, $1) }) {
                    headers[HTTPHeader(name)] = value
                }
                bytes = body.count
                response = HTTPResponse(
                    statusCode: HTTPStatusCode(document.status, phrase: "Feed"), headers: headers, body: body)
            }
        }
        let (headers, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: true, page: page, ifNoneMatch: ifNoneMatch, headers: headers, clientPort: port,
            status: response.statusCode.code, bytes: bytes, receivedAt: received, at: Date())
        record(logged)
        return response
    }

    func picture(_ request: HTTPRequest) async throws -> HTTPResponse {
        let name = request.path.split(separator: "/").last.map(String.init) ?? ""
        let number = name.hasSuffix(".png") ? Int(name.dropLast(4)) : nil
        let (faults, size) = state.withLock { ($0.faults, $0.pictureBytes) }
        let (sent, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: false, page: nil, ifNoneMatch: nil, headers: sent, clientPort: port,
            status: number == nil ? 404 : 200, bytes: nil, receivedAt: Date(), at: Date())
        record(logged)
        guard let number, request.path == "/pictures/\(name)" else { return HTTPResponse(statusCode: .notFound) }
        if faults.pictureLatency > 0 { try await Task.sleep(nanoseconds: UInt64(faults.pictureLatency * 1e9)) }
        let png = Self.png(seed: number, bytes: size)
        let headers: HTTPHeaders = [.contentType: "image/png"]
        switch faults.pictures[number] {
        case nil:
            return HTTPResponse(statusCode: .ok, headers: headers, body: png)
        case .html?:
            return HTTPResponse(
                statusCode: .ok, headers: headers, body: Data("<!doctype html><html><body>Not found</body></html>".utf8)
            )
        case .status(let code)?:
            return HTTPResponse(statusCode: HTTPStatusCode(code, phrase: "Injected"), headers: headers)
        case .noise(let header, let count)?:
            var random = SplitMix(seed: UInt64(number))
            var body = header
            body.reserveCapacity(count)
            while body.count < count { withUnsafeBytes(of: random.next()) { body.append(contentsOf: $0) } }
            return HTTPResponse(statusCode: .ok, headers: headers, body: body.prefix(count))
        case .oversize(let count, let contentLength)?:
            let body = png + Data(repeating: 0, count: max(0, count - png.count))
            return HTTPResponse(
                statusCode: .ok, headers: headers,
                body: contentLength ? HTTPBodySequence(data: body) : HTTPBodySequence(from: StreamedBytes(body)))
        case .stall(let seconds)?:
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return HTTPResponse(statusCode: .ok, headers: headers, body: png)
        case .reset?:
            return HTTPResponse(
                statusCode: .ok, headers: headers,
                body: HTTPBodySequence(from: StreamedBytes(png.prefix(png.count / 2), thenFail: true), count: png.count)
            )
        case .redirect(let target)?:
            return HTTPResponse(statusCode: .found, headers: [.location: target] as HTTPHeaders)
        case .redirectLoop?:
            return HTTPResponse(statusCode: .found, headers: [.location: request.path] as HTTPHeaders)
        }
    }

    /// Item n's page: menus, share bar and comments around an article of five paragraphs with two
    /// pictures inside, as news sites write them (or its fault).
    func article(_ request: HTTPRequest) async throws -> HTTPResponse {
        let number = request.path.split(separator: "/").last.flatMap { Int($0) }
        let fault = number.flatMap { n in state.withLock { $0.faults.articles[n] } }
        let (sent, port) = Self.logged(request)
        let status: Int
        switch fault {
        case .status(let code)?: status = code
        case _ where number == nil: status = 404
        default: status = 200
        }
        record(
            LoggedRequest(
                path: request.path, isFeed: false, page: nil, ifNoneMatch: nil, headers: sent, clientPort: port,
                status: status, bytes: nil, receivedAt: Date(), at: Date()))
        guard let number, status == 200 else { return HTTPResponse(statusCode: HTTPStatusCode(status, phrase: "")) }
        if case .stall(let seconds)? = fault { try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
        if case .notHTML? = fault {
            return HTTPResponse(
                statusCode: .ok, headers: [.contentType: "image/png"], body: Self.png(seed: number, bytes: 2000))
        }
        let base = await baseURL
        let paragraphs = (1...5).map { k in
            "<p>Paragraph \(k) of the article of item \(number): the whole story, told at length, with commas, "
                + "details and quotes, as the feed's summary never tells it; it goes on for a while, sentence "
                + "after sentence, so that a reader on the train has something to read.</p>"
        }
        let pictures = (0..<2).map { k in
            "<figure><img src=\"\(base)/pictures/\(Faults.pagePicture(number, k)).png\" alt=\"picture \(k)\">"
                + "<figcaption>Picture \(k) of item \(number)</figcaption></figure>"
        }
        var body: String
        if case .noArticle? = fault {
            body = (1...40).map { "<li><a href=\"/items/\($0)\">Story \($0)</a></li>" }.joined()
            body = "<ul>\(body)</ul>"
        } else {
            body = """
                <nav class="menu"><a href="/">Home</a> <a href="/news">News</a></nav>
                <article><h1>Item \(number)</h1>\(paragraphs[0])\(pictures[0])\(paragraphs[1...2].joined())\
                \(pictures[1])\(paragraphs[3...].joined())</article>
                <div class="share-bar"><a href="/share">Share</a></div>
                <section id="comments"><p>A comment on item \(number), long enough to be scored by a reader view.</p></section>
                """
        }
        var html =
            "<!doctype html><html lang=\"en\"><head><title>Item \(number) | Demo</title></head><body>\(body)</body></html>"
        if case .oversize(let bytes)? = fault {
            html += "<!--" + String(repeating: "x", count: max(0, bytes - html.utf8.count)) + "-->"
        }
        return HTTPResponse(
            statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(html.utf8))
    }

    /// A document of `Faults.documents`, or 404.
    func document(_ request: HTTPRequest) -> HTTPResponse {
        let documents = state.withLock { $0.faults.documents }
        let query = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let found = documents[request.path + (query.isEmpty ? "" : "?" + query)] ?? documents[request.path]
        let (sent, port) = Self.logged(request)
        let logged = LoggedRequest(
            path: request.path, isFeed: true, page: request.query["page"].flatMap(Int.init),
            ifNoneMatch: sent["if-none-match"], headers: sent, clientPort: port, status: found?.status ?? 404,
            bytes: found?.body.count, receivedAt: Date(), at: Date())
        record(logged)
        guard let found else { return HTTPResponse(statusCode: .notFound) }
        var headers: HTTPHeaders = [:]
        for (name, value) in found.headers { headers[HTTPHeader(name)] = value }
        return HTTPResponse(
            statusCode: HTTPStatusCode(found.status, phrase: "Document"), headers: headers, body: found.body)
    }

    /// `/redirect?to=URL` answers 302 to URL; `/redirect?loop=1` redirects to itself forever.
    static func redirect(_ request: HTTPRequest) -> HTTPResponse {
        let target = request.query["loop"] != nil ? "/redirect?loop=1" : (request.query["to"] ?? "/")
        return HTTPResponse(statusCode: .found, headers: [.location: target] as HTTPHeaders)
    }

    /// `/bytes?count=N` sends N bytes; with `&chunked=1` without a Content-Length.
    static func bytes(_ request: HTTPRequest) -> HTTPResponse {
        let count = request.query["count"].flatMap(Int.init) ?? 0
        let data = Data(repeating: 0x61, count: count)
        let headers: HTTPHeaders = [.contentType: "application/octet-stream"]
        if request.query["chunked"] != nil {
            return HTTPResponse(statusCode: .ok, headers: headers, body: HTTPBodySequence(from: StreamedBytes(data)))
        }
        return HTTPResponse(statusCode: .ok, headers: headers, body: data)
    }

    /// A JSON string literal.
    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    /// A PNG a browser can show, one pixel of a colour of its own, followed by bytes that differ
    /// per picture (decoders stop at its end chunk), `bytes` long (at least the PNG's 72).
    public static func png(seed: Int, bytes size: Int = 289) -> Data {
        var value = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            value = value &* 6_364_136_223_846_793_005 &+ 1
            return UInt8(truncatingIfNeeded: value >> 56)
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        // One scanline: filter 0 and an RGB pixel, in a stored (uncompressed) deflate block.
        let scanline: [UInt8] = [0, next(), next(), next()]
        let adler = scanline.reduce((UInt32(1), UInt32(0))) { sums, byte in
            let a = (sums.0 + UInt32(byte)) % 65_521
            return (a, (sums.1 + a) % 65_521)
        }
        let deflated: [UInt8] = [0x78, 0x01, 0x01, 4, 0, 0xFB, 0xFF] + scanline + bigEndian(adler.1 << 16 | adler.0)
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])
        bytes += chunk("IDAT", deflated)
        bytes += chunk("IEND", [])
        while bytes.count < size { bytes.append(next()) }
        return Data(bytes)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 as PNG's chunks carry it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}
