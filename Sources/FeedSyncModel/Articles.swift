import Foundation

/// A picture in an item's content.
public struct ContentPicture: Sendable, Equatable {
    /// The reference as the content writes it (the chosen `src` or `srcset` candidate), entities
    /// decoded and trimmed: how the reading page finds the picture again in the same content.
    public var source: String
    /// Its absolute http(s) URL.
    public var url: String

    public init(source: String, url: String) {
        self.source = source
        self.url = url
    }
}

/// The article of a web page, as a reader view shows it: its content (HTML, as the page wrote it,
/// less what is not the article) and what the page says of it.
public struct ExtractedArticle: Sendable, Equatable {
    public var title: String?
    public var byline: String?
    /// ISO 8601 UTC, when the page says.
    public var published: String?
    public var lang: String?
    public var excerpt: String?
    public var siteName: String?
    /// The article's HTML (not yet made safe: `SafeHTML` does that where it is shown or stored).
    public var content: String
    /// `content` made safe (`SafeHTML`, each picture at its absolute URL), written from the
    /// extractor's tree rather than read again from `content` (unless `content` was cut); only
    /// when `extract` is asked for it.
    public var safeContent: String?
    /// The article as plain text, paragraphs apart.
    public var text: String
    /// Whether the page reads as an article at all (paragraphs of some length outside what looks
    /// like clutter): a front page or a video page does not, though something was extracted.
    public var readerable: Bool

    public init(
        title: String? = nil, byline: String? = nil, published: String? = nil, lang: String? = nil,
        excerpt: String? = nil, siteName: String? = nil, content: String, safeContent: String? = nil, text: String,
        readerable: Bool
    ) {
        self.title = title
        self.byline = byline
        self.published = published
        self.lang = lang
        self.excerpt = excerpt
        self.siteName = siteName
        self.content = content
        self.safeContent = safeContent
        self.text = text
        self.readerable = readerable
    }
}

/// An item whose page a pull fetches for its article (`Migrations/0014_articles.sql`).
public struct ArticleJob: Sendable, Equatable {
    public var itemID: Int64
    public var link: String
    /// Failures so far (for the next backoff).
    public var attempts: Int

    public init(
        itemID: Int64, link: String, attempts: Int
    ) {
        self.itemID = itemID
        self.link = link
        self.attempts = attempts
    }
}

/// What one item's page gave.
public struct ArticleOutcome: Sendable {
    public enum Result: Sendable {
        /// Its article, sanitised, and the pictures in it.
        case stored(html: String, title: String?, byline: String?, pictures: [ContentPicture])
        /// Why there is none: tried again after `retryAt` (nil: not while the link stays the same).
        case failed(error: String, attempts: Int, retryAt: Date?)
    }
    public var itemID: Int64
    public var link: String
    public var result: Result

    public init(itemID: Int64, link: String, result: Result) {
        self.itemID = itemID
        self.link = link
        self.result = result
    }

    /// Why there is no article; nil when it was stored.
    public var failure: String? {
        if case .failed(let error, _, _) = result { error } else { nil }
    }
}

/// How far a feed's articles are.
public struct ArticleCounts: Sendable, Equatable {
    public var stored = 0
    public var failed = 0
    /// Items with no article yet whose page a pull will fetch.
    public var waiting = 0
    public init() {}
}
