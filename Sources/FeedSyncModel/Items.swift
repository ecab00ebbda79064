import Foundation

/// Where an item's picture is: what `list` and `status` show.
public enum PictureStatus: String, Sendable, CaseIterable {
    /// The item has no picture.
    case none
    /// Not downloaded yet (or failed for a reason that may pass; tried again later).
    case pending
    case cached
    /// Missing or unusable at its server; tried again after days.
    case failed
}

/// A stored item, as `list` shows it.
public struct StoredItem: Sendable, Equatable {
    /// The item's number: the same across pulls, what `show`, `open` and `mark` take.
    public var number: Int64
    public var key: String
    public var title: String
    public var link: String?
    public var pictureURL: String?
    public var imageStatus: PictureStatus
    /// Its picture's file, when the store says it is cached (`PictureCache` checks it when read).
    public var image: CachedFile?
    public var published: String?
    /// 1-based rank in the list being shown.
    public var position: Int
    public var read: Bool
    public var starred: Bool = false
    /// The name of the item's feed (`Feed.name`).
    public var feedName: String
    /// The files it carries (a podcast's episode), in its feed's order.
    public var enclosures: [FeedEnclosure] = []
    /// Who wrote it and its categories, as its feed or server said.
    public var author: String?
    public var categories: [String] = []
    /// Its cached picture's file, checked as every read is (`FeedSync.readerPage`); nil otherwise.
    public var picturePath: String?
    /// Where it sits in the list it was read from, to read on from (`Store.rows`).
    public var listKey: ListKey?

    public init(
        number: Int64, key: String, title: String, link: String? = nil, pictureURL: String? = nil,
        imageStatus: PictureStatus, image: CachedFile? = nil, published: String? = nil, position: Int, read: Bool,
        starred: Bool = false, feedName: String, enclosures: [FeedEnclosure] = []
    ) {
        self.number = number
        self.key = key
        self.title = title
        self.link = link
        self.pictureURL = pictureURL
        self.imageStatus = imageStatus
        self.image = image
        self.published = published
        self.position = position
        self.read = read
        self.starred = starred
        self.feedName = feedName
        self.enclosures = enclosures
    }
}

/// A page of the local list.
public struct ListedPage: Sendable {
    public var items: [StoredItem]
    public var total: Int
    public var lastPullAt: Date?

    public init(
        items: [StoredItem], total: Int, lastPullAt: Date? = nil
    ) {
        self.items = items
        self.total = total
        self.lastPullAt = lastPullAt
    }
}

/// What `list` shows: one feed's items in the server's order, or (`feedURL` nil) every feed's as
/// one timeline, newest first; with any filter, only the items that pass all of them.
public struct ListQuery: Sendable, Equatable {
    public var feedURL: String?
    /// Only feeds in this folder or a folder inside it.
    public var folder: String?
    public var unread = false
    public var starred: Bool = false
    /// An FTS5 query (`SearchText.query`).
    public var search: String?
    /// Only items whose timeline time is at or after this.
    public var since: Date?
    /// Only items this condition matches (a saved view's), its ages resolved to times.
    public var condition: Condition?
    /// Only the items rules hid, which every other list leaves out.
    public var hidden = false

    public init(
        feedURL: String? = nil, folder: String? = nil, unread: Bool = false, search: String? = nil,
        since: Date? = nil, starred: Bool = false, condition: Condition? = nil, hidden: Bool = false
    ) {
        self.condition = condition
        self.hidden = hidden
        self.starred = starred
        self.feedURL = feedURL
        self.folder = folder
        self.unread = unread
        self.search = search
        self.since = since
    }

    /// Whether a filter leaves out items: such a list is not one the picture window follows.
    public var isFiltered: Bool {
        folder != nil || unread || starred || search != nil || since != nil || condition != nil || hidden
    }
}

/// Where an item sits for good: its feed, band and seq. Its row number in a list grows as pages
/// land in bands above it; its place never changes.
public struct ListPlace: Sendable, Equatable, Hashable {
    public var feedID: Int64
    public var band: Int
    public var seq: Int
    public init(feedID: Int64, band: Int, seq: Int) {
        self.feedID = feedID
        self.band = band
        self.seq = seq
    }
}

/// Where an item sits in a list's order: its place and its time in the timeline. The list's
/// next rows are those after it, whatever landed above it since.
public struct ListKey: Sendable, Equatable, Hashable {
    public var timeline: Int64
    public var place: ListPlace
    public init(timeline: Int64, place: ListPlace) {
        self.timeline = timeline
        self.place = place
    }
}

/// A place and the row it was at when it was read.
public struct PlaceAtRow: Sendable, Equatable {
    public var place: ListPlace
    public var row: Int
    public init(place: ListPlace, row: Int) {
        self.place = place
        self.row = row
    }
}

/// The page the reader was shown last, in the list of `feedURL` (nil: all feeds).
public struct ReadingPosition: Sendable, Equatable {
    public var feedURL: String?
    public var page: Int
    public var perPage: Int
    public init(feedURL: String?, page: Int, perPage: Int) {
        self.feedURL = feedURL
        self.page = page
        self.perPage = perPage
    }

    /// Where a reader who never ran `list` is: page 1 of all feeds, `list`'s default page size.
    public static let start = ReadingPosition(feedURL: nil, page: 1, perPage: 20)

    /// The pages and page sizes a position may have: every row number they make fits an Int32,
    /// so the arithmetic on rows never overflows, whatever a store edited by hand holds.
    public static let pages = 1...4_000_000
    public static let perPages = 1...500

    /// The rows (0-based) of the reading page.
    public var rows: Range<Int> {
        let first = (page - 1) * perPage
        return first..<first + perPage
    }
}

/// One item whole, as `show` shows it.
public struct ItemDetail: Sendable {
    public var item: StoredItem
    public var summary: String?
    /// What is shown of the item (HTML): the article extracted from its page when one is stored,
    /// else the content the feed gave, if any.
    public var content: String?
    /// Where `content` comes from: `feed` or `page`.
    public var contentSource: String = "feed"
    /// Why the item's page gave no article, when it did not.
    public var articleError: String?
    /// The pictures the content shows, in its order.
    public var pictures: [ArticlePicture]

    public init(
        item: StoredItem, summary: String? = nil, content: String? = nil,
        contentSource: String = "feed", articleError: String? = nil, pictures: [ArticlePicture]
    ) {
        self.item = item
        self.summary = summary
        self.content = content
        self.contentSource = contentSource
        self.articleError = articleError
        self.pictures = pictures
    }
}

/// A picture inside an item's content, and where its copy is.
public struct ArticlePicture: Sendable, Equatable {
    /// Its place among the item's content pictures (0-based).
    public var position: Int
    /// The reference as the content writes it (`ContentPicture.source`).
    public var source: String
    public var url: String
    public var status: PictureStatus
    /// The cached file, when the store says it is cached (`PictureCache` checks it when read).
    public var cached: CachedFile?
    /// That file's path, checked as every read is (`FeedSync.readerItem`); nil otherwise.
    public var path: String?

    public init(
        position: Int, source: String, url: String, status: PictureStatus, cached: CachedFile? = nil
    ) {
        self.position = position
        self.source = source
        self.url = url
        self.status = status
        self.cached = cached
    }
}

/// A file an item carries for the reader to play or keep (a podcast's episode, a video, a PDF):
/// RSS's `<enclosure>`, Atom's `rel="enclosure"` link, Media RSS's sound or video
/// `media:content`, JSON Feed's `attachments`. An item's picture enclosure is its picture instead.
public struct FeedEnclosure: Sendable, Equatable {
    /// An absolute http(s) URL within `FeedLimits.urlBytes`.
    public var url: String
    /// Its media type, lowercased (`audio/mpeg`), when given and well-formed.
    public var type: String?
    /// Bytes, when given (a feed's 0 means unknown).
    public var length: Int64?
    /// Seconds of sound or video, when given.
    public var duration: Int?

    public init(url: String, type: String? = nil, length: Int64? = nil, duration: Int? = nil) {
        self.url = url
        self.type = type
        self.length = length
        self.duration = duration
    }

    /// Whether it is sound or video (a player can play it): by its type, else its extension.
    public var isSoundOrVideo: Bool { Self.isSoundOrVideo(type: type, url: url) }

    /// Whether a file is sound or video: by its type, else by its file's extension.
    public static func isSoundOrVideo(type: String?, url: String) -> Bool {
        if let type = type?.lowercased(), !type.isEmpty {
            return type.hasPrefix("audio/") || type.hasPrefix("video/")
        }
        guard let path = url.lowercased().split(separator: "?").first else { return false }
        return [
            ".mp3", ".m4a", ".m4b", ".aac", ".ogg", ".oga", ".opus", ".flac", ".wav", ".mp4", ".m4v", ".mov", ".webm",
        ]
        .contains { path.hasSuffix($0) }
    }

    /// Lengths a feed may give: up to a tebibyte.
    public static let lengths: ClosedRange<Int64> = 1...(1 << 40)
    /// Durations a feed may give: up to ten days.
    public static let durations = 0...864_000

}

/// A feed an OPML file lists.
public struct Subscription: Sendable, Equatable {
    public var url: String
    public var title: String?
    public var siteURL: String?
    /// The folders around it, outermost first, joined by "/"; nil at the top.
    public var folder: String?
    /// The line of its outline, for messages.
    public var line: Int

    public init(url: String, title: String?, siteURL: String?, folder: String?, line: Int) {
        self.url = url
        self.title = title
        self.siteURL = siteURL
        self.folder = folder
        self.line = line
    }
}

/// One block of the text.
public struct TextBlock: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case paragraph
        /// `<h1>` to `<h6>`: its level.
        case heading(Int)
        /// A list item's first block, with its marker (`• `, `3. `); a later block of the same
        /// item is a paragraph as deep as it.
        case item(String)
        /// Preformatted: its lines as written.
        case code
    }
    public var kind: Kind
    /// A `\n` inside is a line break the content asked for.
    public var text: String
    /// Quotes (`<blockquote>`) around it.
    public var quoted = 0
    /// Lists around it.
    public var lists = 0
    /// Which list it is in (the innermost, counted from 1 in the text's order; 0: none): the
    /// items of one list are one run.
    public var list = 0

    public init(_ kind: Kind, _ text: String, quoted: Int = 0, lists: Int = 0, list: Int = 0) {
        (self.kind, self.text, self.quoted, self.lists, self.list) = (kind, text, quoted, lists, list)
    }
}

public struct RenderedText: Sendable, Equatable {
    public init(blocks: [TextBlock], links: [String]) {
        self.blocks = blocks
        self.links = links
    }

    public init(paragraphs: [String], links: [String]) {
        self.init(blocks: paragraphs.map { TextBlock(.paragraph, $0) }, links: links)
    }

    public var blocks: [TextBlock]
    /// The blocks' texts in order, an item's with its marker.
    public var paragraphs: [String] {
        blocks.map { block in
            if case .item(let marker) = block.kind { marker + block.text } else { block.text }
        }
    }
    /// The links, reference `[n]` at index n - 1: absolute http, https or mailto URLs.
    public var links: [String]
    /// The links as the list after the text: `[1] https://…`.
    public var references: [String] { links.enumerated().map { "[\($0.offset + 1)] \($0.element)" } }
    /// The content's pictures where they come: the block each is in (a picture after the last
    /// block is in none: `block == blocks.count`), and its reference as the content writes it
    /// (`ArticlePicture.source`).
    public var pictures: [Picture] = []

    public struct Picture: Sendable, Equatable {
        public var block: Int
        public var source: String
        public init(block: Int, source: String) {
            self.block = block
            self.source = source
        }
    }
}
