import Foundation

/// A picture to download, with the first list row (0-based) that shows it and that row's place.
public struct PictureJob: Sendable, Equatable, Hashable {
    public var id: Int64
    public var url: String
    public var row: Int
    public var place: ListPlace
    public init(id: Int64, url: String, row: Int, place: ListPlace) {
        self.id = id
        self.url = url
        self.row = row
        self.place = place
    }
}

/// A cached picture file and the list row that shows it nearest the reader (`nil`: no row in that list).
public struct CachedPicture: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    public var row: Int?

    public init(
        id: Int64, file: String, bytes: Int64, row: Int? = nil
    ) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.row = row
    }
}

/// How many pictures are cached, in how many bytes.
public struct CacheTotals: Sendable, Equatable {
    public var bytes: Int64 = 0
    public var count = 0
    public init(bytes: Int64 = 0, count: Int = 0) {
        self.bytes = bytes
        self.count = count
    }

    /// A picture's bytes on average; 0 when none is cached.
    public var average: Int64 { count > 0 ? bytes / Int64(count) : 0 }

    public mutating func add(_ other: CacheTotals) {
        bytes += other.bytes
        count += other.count
    }
}

/// A picture file written for the store's row `id`, not yet recorded.
public struct DownloadedPicture: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    public var mime: String
    /// XXH3-64 of its bytes.
    public var hash: UInt64
    public init(id: Int64, file: String, bytes: Int64, mime: String, hash: UInt64 = 0) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.mime = mime
        self.hash = hash
    }
}

/// A picture the store records as cached: its file's name in the picture folder, and the byte
/// count and hash the file had when it was recorded, against which every read checks it.
public struct CachedFile: Sendable, Equatable {
    public var id: Int64
    public var file: String
    public var bytes: Int64
    /// XXH3-64 of the bytes; nil for a picture cached before hashes were kept (its size is checked).
    public var hash: UInt64?

    public init(id: Int64, file: String, bytes: Int64, hash: UInt64?) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.hash = hash
    }
}

/// Which pictures a pull downloads.
public enum PrefetchMode: String, Sendable, CaseIterable {
    /// The rows from one page before the reading position to `pagesAhead` pages after it.
    case window
    /// Every picture, nearest to the reading position first.
    case all
    case none
}

/// Whether the pictures inside the articles of the prefetch window are downloaded too, after
/// those rows' own pictures (`--article-pictures`).
public enum ArticlePicturesMode: String, Sendable, CaseIterable {
    case window
    case none
}

public struct PrefetchOptions: Sendable {
    public var mode: PrefetchMode
    public var articlePictures: ArticlePicturesMode
    public var pagesAhead: Int
    public var concurrency: Int
    public var maxBytes: Int
    /// The cache's byte budget; pictures farthest from the reader are evicted beyond it.
    public var cacheBudget: Int64

    public init(
        mode: PrefetchMode = .window, articlePictures: ArticlePicturesMode = .window, pagesAhead: Int = 5,
        concurrency: Int = 8, maxBytes: Int = 10 << 20, cacheBudget: Int64 = 1 << 30
    ) {
        self.mode = mode
        self.articlePictures = articlePictures
        self.pagesAhead = pagesAhead
        self.concurrency = concurrency
        self.maxBytes = maxBytes
        self.cacheBudget = cacheBudget
    }
}

/// What prefetch does, for `--verbose` and the progress line.
public enum PictureEvent: Sendable, Equatable {
    case planned(queued: Int, dropped: Int)
    /// A picture of an item of `feedID` (the first row that shows it) was stored.
    case cached(url: String, bytes: Int, feedID: Int64)
    case failed(url: String, reason: String, feedID: Int64)
    case evicted(count: Int, bytes: Int64)
    /// A picture could not be written for a local reason the user must fix (a symbolic link in
    /// the picture folder); the pull goes on and exits 74.
    case localFault(String)
}

/// What `collectGarbage` did.
public struct CacheGarbageReport: Sendable {
    public var temporaryFiles = 0
    public var unknownFiles = 0
    public var unusedPictures = 0
    /// Pictures whose file was gone, cut short or changed, now due again.
    public var forgotten = 0
    public var evicted = 0
    public var evictedBytes: Int64 = 0
    /// The task was cancelled partway: what is counted was done, the rest was not.
    public var interrupted = false

    public init() {}
}

/// What `check` found: where the folder and the store disagree.
public struct CacheCheck: Sendable {
    public var cached = 0
    /// Cached pictures whose file is not there.
    public var missing: [String] = []
    /// Cached pictures whose file is not the size recorded.
    public var partial: [String] = []
    /// Cached pictures whose file is the size recorded but not its bytes (their hash differs).
    public var damaged: [String] = []
    /// Files no picture names (temp files of running writers aside).
    public var unknown: [String] = []
    /// Temp files of processes that ended.
    public var leftovers: [String] = []

    public init() {}

    public var isClean: Bool {
        missing.isEmpty && partial.isEmpty && damaged.isEmpty && unknown.isEmpty && leftovers.isEmpty
    }
}

/// A picture's pixels, to show: 8-bit RGBA, rows top down.
public struct Pixels: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var rgba: [UInt8]
    public init(width: Int, height: Int, rgba: [UInt8]) {
        self.width = width
        self.height = height
        self.rgba = rgba
    }

    /// The pixel at (`x`, `y`): red, green, blue, alpha.
    public func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        let at = (y * width + x) * 4
        return (rgba[at], rgba[at + 1], rgba[at + 2], rgba[at + 3])
    }
}

/// Why a cached picture shows nothing.
public struct PictureFailure: Error, Sendable, Equatable {
    public var reason: String
    public init(reason: String) { self.reason = reason }
}
