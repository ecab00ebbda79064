import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

// The switches for the faults a real server has, the formats, and what the server logs of each request.

/// Faults the server can be told to produce; change them at any time while it runs.
public struct Faults: Sendable {
    /// How a failing page fails.
    public enum Failure: Sendable, Equatable {
        /// An HTTP status with an empty body, and `Retry-After` when given.
        case status(Int, retryAfter: String? = nil)
        /// `Content-Length` promises the whole page, half is sent, the connection closes.
        case truncate
        /// Half the page is sent chunked, then the connection is dropped without the last chunk.
        case reset
        /// A 200 with a third of the page: not valid JSON, or XML cut off mid-element.
        case malformed
        /// Nothing is sent for this many seconds, then the page.
        case stall(Double)
    }

    /// Added before every response.
    public var latency: Double = 0
    /// The next feed requests fail these ways, one each in turn, whatever page they ask for.
    public var next: [Failure] = []
    /// The next request for each of these pages fails this way, once.
    public var once: [Int: Failure] = [:]
    /// Every request for a page at or after `page` fails this way (a network lost mid-pull).
    public var fromPage: (page: Int, failure: Failure)? = nil
    /// `has_more` is always true; pages past the end repeat the last page.
    public var endless = false
    /// The server ignores `If-None-Match` (some do) and always sends the page.
    public var ignoreValidators = false
    /// WordPress's `X-WP-Total` and `X-WP-TotalPages` count this many items that no longer exist
    /// (a stale cache in front of the site), so the last page seems to have a successor.
    public var staleWordPressTotals = 0
    /// Titles carry terminal escape sequences, control characters and bidi overrides.
    public var hostileTitles = false
    /// Headers added to every feed page that is answered: `Cache-Control`, `Expires`, `Last-Modified`,
    /// `Retry-After`. A 304 gets the caching ones (`Cache-Control`, `Expires`, `Date`, `Vary`).
    public var feedHeaders: [String: String] = [:]
    /// The RSS channel's `<ttl>` (minutes), `<skipHours>` and `<skipDays>`.
    public var ttl: Int?
    public var skipHours: [Int] = []
    public var skipDays: [String] = []

    /// How a picture fails.
    public enum PictureFault: Sendable, Equatable {
        /// An HTML page with status 200 and `Content-Type: image/png`.
        case html
        case status(Int)
        /// A valid image start followed by `bytes` in all, with or without `Content-Length`.
        case oversize(bytes: Int, contentLength: Bool)
        /// Nothing is sent for this many seconds.
        case stall(Double)
        /// Half the picture, then the connection is dropped.
        case reset
        /// 302 to this URL.
        case redirect(String)
        /// 302 to itself, forever.
        case redirectLoop
        /// `header`, then random bytes (seeded by the picture's number) to `bytes` in all: a file
        /// that starts like a picture and is none.
        case noise(header: Data, bytes: Int)
    }

    /// Added before every picture response.
    public var pictureLatency: Double = 0
    /// Faults by picture number (`/pictures/N.png`).
    public var pictures: [Int: PictureFault] = [:]
    /// Item `n`'s `picUrl` replaced by this exact string.
    public var pictureURLs: [Int: String] = [:]
    /// Pictures inside each item's content (HTML in every format that has content), item `n`'s
    /// k-th (from 0) at `/pictures/(articlePicture(n, k)).png`.
    public var articlePictures = 0

    /// How an item's page (`/items/N`, its link) fails.
    public enum ArticleFault: Sendable, Equatable {
        case status(Int)
        /// A 200 that is a picture, not a page.
        case notHTML
        /// A page of this many bytes.
        case oversize(Int)
        /// A page of links with no article in it.
        case noArticle
        /// Nothing is sent for this many seconds, then the page.
        case stall(Double)
    }

    /// Faults by item number (`/items/N`, the page each item links to).
    public var articles: [Int: ArticleFault] = [:]

    /// The number of item `n`'s k-th picture inside the article on its page.
    public static func pagePicture(_ n: Int, _ k: Int) -> Int { 2_000_000 + n * 2 + k }

    /// The number of item `n`'s k-th picture inside its content.
    public static func articlePicture(_ n: Int, _ k: Int) -> Int { 1_000_000 + n * 24 + k }

    /// Fixed answers, by path and query (`/doc/a?page=2`, else `/doc/a`): a document served
    /// exactly as given, headers included, for tests of what a hostile server may send.
    public var documents: [String: Document] = [:]

    /// A fixed answer.
    public struct Document: Sendable, Equatable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }
        public init(status: Int = 200, headers: [String: String] = [:], _ text: String) {
            self.init(status: status, headers: headers, body: Data(text.utf8))
        }
    }

    public init() {}
}

/// The formats the server speaks, each at its own path, all with the same items and pages.
public enum DemoFormat: String, Sendable, CaseIterable {
    /// `/feed?page=N`: `{"page", "total", "has_more", "items"}`.
    case pagedJSON = "paged-json"
    /// `/jsonfeed`: JSON Feed 1.1, `next_url` to the next page (relative).
    case jsonFeed = "jsonfeed"
    /// `/rss`: RSS 2.0, `<atom:link rel="next">`; pictures by enclosure, media:content or an <img>.
    case rss
    /// `/atom`: Atom with RFC 5005 `rel="prev-archive"` links; pictures by `rel="enclosure"`.
    case atom
    /// `/wp-json/wp/v2/posts`: WordPress REST, `X-WP-Total`, `Link`, 400 past the last page.
    case wordpress

    public var path: String {
        switch self {
        case .pagedJSON: "/feed"
        case .jsonFeed: "/jsonfeed"
        case .rss: "/rss"
        case .atom: "/atom"
        case .wordpress: "/wp-json/wp/v2/posts"
        }
    }
}

/// One request the server answered, for tests to assert on.
public struct LoggedRequest: Sendable {
    public var path: String
    /// A request for a page of the feed, in any format.
    public var isFeed: Bool
    public var page: Int?
    public var ifNoneMatch: String?
    /// The request's headers, names in lower case.
    public var headers: [String: String] = [:]
    /// The client's port: one per connection.
    public var clientPort: UInt16?
    public var status: Int
    /// The body's length, when it was sent whole (not streamed).
    public var bytes: Int?
    /// When the request arrived, and when it was answered (after any latency).
    public var receivedAt: Date
    public var at: Date
}
