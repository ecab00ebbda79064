import FeedSyncModel
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// What every request to the reading page passes first. A server on the loopback is reachable by
/// every local user and, through DNS rebinding, by any web page, so: the `Host` must be the address
/// served (or `localhost`), the token must come with the request (once in the address, which sets
/// an HttpOnly SameSite=Strict cookie, then in that cookie), and a call that changes something must
/// be a POST with a header only the page sets. Anything else is 403. Every answer carries a strict
/// Content-Security-Policy and `nosniff`.
final class Guard: Sendable {
    let token: String
    let bind: String
    /// The port bound, once known.
    let port: Mutex<Int>

    init(token: String, bind: String, port: Int) {
        self.token = token
        self.bind = bind
        self.port = Mutex(port)
    }

    /// The cookie's name holds the port: cookies are not kept apart by port, and two pages served
    /// at once must not take each other's.
    var cookie: String { "feedsync_token_\(port.withLock { $0 })" }
    /// Set by the page on every POST; a form or a plain cross-site request cannot set it.
    static let callHeader = HTTPField.Name("X-Feedsync")!

    func respond(
        to request: Request, context: BasicRequestContext,
        next: @Sendable (Request, BasicRequestContext) async throws -> Response
    ) async throws -> Response {
        var response: Response
        var fromAddress = false
        if let refusal = refusal(of: request, fromAddress: &fromAddress) {
            response = Response(
                status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: refusal + "\n")))
        } else {
            do {
                response = try await next(request, context)
            } catch let error as HTTPError {
                response = Response(
                    status: error.status, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: (error.body ?? "\(error.status.code)") + "\n")))
            } catch {
                response = Response(status: .internalServerError)
            }
        }
        if fromAddress {
            response.headers[.setCookie] = "\(cookie)=\(token); Path=/; HttpOnly; SameSite=Strict"
        }
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] =
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                + "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'"
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return response
    }

    /// Why the request is refused, or nil. `fromAddress`: the token came in the address.
    func refusal(of request: Request, fromAddress: inout Bool) -> String? {
        guard let host = request.head.authority?.lowercased(), accepts(host: host) else {
            return "forbidden: the Host header must name this server"
        }
        if let given = request.uri.queryParameters["token"].map(String.init), Self.same(given, token) {
            fromAddress = true
        } else if !cookies(request).contains(where: { Self.same($0, token) }) {
            return "forbidden: open the address feedsync serve printed, with its token"
        }
        switch request.method {
        case .get, .head: return nil
        case .post: return request.headers[Self.callHeader] == "1" ? nil : "forbidden: not a call from the page"
        default: return "forbidden: only GET and POST"
        }
    }

    /// A `Host` naming this server: the address bound or the loopback, with the port. Bound to
    /// every address (`0.0.0.0`, `::`), any address literal with the port: a DNS name, which a
    /// rebinding attack needs, never.
    func accepts(host: String) -> Bool {
        let port = self.port.withLock { $0 }
        guard host.hasSuffix(":\(port)") else { return false }
        let name = String(host.dropLast(":\(port)".count))
        let bound = bind.contains(":") && !bind.hasPrefix("[") ? "[\(bind)]" : bind.lowercased()
        if [bound, "127.0.0.1", "localhost", "[::1]"].contains(name) { return true }
        guard bind == "0.0.0.0" || bind == "::" else { return false }
        var address = in6_addr()
        if name.hasPrefix("["), name.hasSuffix("]") {
            return inet_pton(AF_INET6, String(name.dropFirst().dropLast()), &address) == 1
        }
        return inet_pton(AF_INET, name, &address) == 1
    }

    /// The values of our cookie in the request.
    func cookies(_ request: Request) -> [String] {
        request.headers[values: .cookie].flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 && parts[0] == cookie ? parts[1] : nil
        }
    }

    /// Compares in time that does not depend on where they differ.
    static func same(_ given: String, _ token: String) -> Bool {
        let a = Array(given.utf8)
        let b = Array(token.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
