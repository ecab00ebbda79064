import Foundation
import GRDB

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
    public init(id: Int64, file: String, bytes: Int64, mime: String) {
        self.id = id
        self.file = file
        self.bytes = bytes
        self.mime = mime
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

extension Store {
    static let allFeeds = "*"

    /// The position `list` recorded most recently, in whichever list it was.
    public func latestReadingPosition() throws(StoreError) -> ReadingPosition? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT scope, page, per_page FROM reading_position ORDER BY updated_at DESC LIMIT 1"
            )
            .map { row in
                let scope = row.text("scope") ?? Self.allFeeds
                // Clamped: the row is read by every pull, and a value from an older version or
                // another tool must not make each of them fail.
                let page = row.integer("page") ?? 1
                let perPage = row.integer("per_page") ?? ReadingPosition.start.perPage
                return ReadingPosition(
                    feedURL: scope == Self.allFeeds ? nil : scope,
                    page: page.clamped(to: ReadingPosition.pages),
                    perPage: perPage.clamped(to: ReadingPosition.perPages))
            }
        }
    }

    /// Pictures shown by rows `rows` of the list of `feedURL`, due for a download: not cached, and
    /// not waiting out a backoff. At most `limit` rows are read: the first ones, or with
    /// `backwards` the last ones, in reverse. One job per picture, at the first of them that shows it.
    public func duePictures(
        feedURL: String?, rows: Range<Int>, limit: Int = .max, backwards: Bool = false,
        now: Date = Date()
    ) throws(StoreError) -> [PictureJob] {
        try read { db in
            try Self.duePictures(db, feedURL: feedURL, rows: rows, limit: limit, backwards: backwards, now: now)
        }
    }

    /// The first `limit` due pictures from row `top` down to the end of the list of `feedURL`, or
    /// from `resume` instead when it is below `top` and still at its row (nothing landed above
    /// it). All in one snapshot, with the place just past the list's last row: a page committed
    /// later lands at or past that place, or moves it to another row.
    public func duePictures(
        feedURL: String?, from top: Int, resuming resume: PlaceAtRow?, limit: Int,
        now: Date = Date()
    ) throws(StoreError) -> (jobs: [PictureJob], end: PlaceAtRow?) {
        try read { db in
            let order = ListOrder(feedURL: feedURL)
            var from = top
            if let resume, resume.row > top, try Self.row(db, of: resume.place, in: order) == resume.row {
                from = resume.row
            }
            let jobs = try Self.duePictures(db, feedURL: feedURL, rows: from..<Int(Int32.max), limit: limit, now: now)
            // The list's last item: what lands later lands below it or moves it.
            let (_, segments) = try order.segments(db, from: .max, backwards: true)
            let end = try segments.next().flatMap { last -> PlaceAtRow? in
                let firstSeq: Int = last["first_seq"]
                let size: Int = last["size"]
                let place = ListPlace(feedID: last["feed_id"], band: last["band"], seq: firstSeq + size - 1)
                return try Self.row(db, of: place, in: order).map { PlaceAtRow(place: place, row: $0) }
            }
            return (jobs, end)
        }
    }

    /// Due pictures of the first `perPage` rows of each feed whose own list was never shown, feed
    /// by feed in the order they were added, each at its row in its feed's list. One statement for
    /// all feeds: each band's first row from the band sizes, then a seek per band.
    public func duePicturesOfUnviewedFeeds(perPage: Int, now: Date = Date()) throws(StoreError) -> [PictureJob] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH band AS (
                        SELECT feed_id, band, sum(size) OVER (PARTITION BY feed_id ORDER BY band) - size AS start
                        FROM band_size
                        WHERE feed_id IN (SELECT id FROM feed WHERE url NOT IN (SELECT scope FROM reading_position)))
                    SELECT item.picture_id, picture.url, item.feed_id, item.band, item.seq, band.start + item.seq
                    FROM band
                    JOIN item ON item.feed_id = band.feed_id AND item.band = band.band AND item.seq < ?1 - band.start
                    JOIN picture ON picture.id = item.picture_id
                    WHERE band.start < ?1 AND \(Self.pictureIsDue("?2"))
                    ORDER BY item.feed_id, item.band, item.seq
                    """, arguments: [perPage, now.timeIntervalSince1970])
            var seen = Set<Int64>()
            return rows.compactMap { row in
                let id: Int64 = row[0]
                guard seen.insert(id).inserted else { return nil }
                return PictureJob(
                    id: id, url: row.text("url") ?? "", row: row[5],
                    place: ListPlace(feedID: row[2], band: row[3], seq: row[4]))
            }
        }
    }

    /// The one test of whether a picture is due for a download: not cached, and not waiting out
    /// a backoff at the time bound to `now` (a parameter: "?", "?2").
    static func pictureIsDue(_ now: String) -> String {
        "picture.status != 'cached' AND coalesce(picture.next_attempt_at <= \(now), 1)"
    }

    static func duePictures(
        _ db: Database, feedURL: String?, rows: Range<Int>, limit: Int, backwards: Bool = false,
        now: Date
    ) throws -> [PictureJob] {
        // One read per band, the picture's state joined in and tested by SQLite: only due rows
        // reach Swift.
        let found = try listRows(
            db, ListOrder(feedURL: feedURL), positions: rows,
            columns: "item.picture_id, picture.url, item.feed_id, item.band",
            join: "JOIN picture ON picture.id = item.picture_id",
            filter: Self.pictureIsDue("?"),
            arguments: [now.timeIntervalSince1970], limit: limit, backwards: backwards)
        var seen = Set<Int64>()
        var jobs: [PictureJob] = []
        for (position, row) in found {
            let id: Int64 = row[1]
            guard seen.insert(id).inserted else { continue }
            jobs.append(
                PictureJob(
                    id: id, url: row.text("url") ?? "", row: position,
                    place: ListPlace(feedID: row[3], band: row[4], seq: row[0])))
        }
        return jobs
    }

    /// The picture of the item numbered `number` as a job, when it has one that is neither cached
    /// nor waiting out a backoff.
    public func duePicture(ofItem number: Int64) throws(StoreError) -> PictureJob? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT picture.id, picture.url, item.feed_id, item.band, item.seq FROM item
                    JOIN picture ON picture.id = item.picture_id
                    WHERE item.id = ? AND \(Self.pictureIsDue("?"))
                    """, arguments: [number, Date().timeIntervalSince1970]
            ).map { row in
                PictureJob(
                    id: row["id"], url: row.text("url") ?? "", row: 0,
                    place: ListPlace(feedID: row["feed_id"], band: row["band"], seq: row["seq"]))
            }
        }
    }

    /// Records downloaded pictures, all in one transaction. Call only once their files are
    /// complete, renamed into place and durable.
    public func markPicturesCached(_ pictures: [DownloadedPicture]) throws(StoreError) {
        try write { db in
            let update = try db.cachedStatement(
                sql: """
                    UPDATE picture SET status = 'cached', file = ?, bytes = ?, mime = ?, attempts = 0,
                        next_attempt_at = NULL, last_error = NULL, updated_at = ?
                    WHERE id = ?
                    """)
            let now = Date().timeIntervalSince1970
            for picture in pictures {
                try update.execute(arguments: [picture.file, picture.bytes, picture.mime, now, picture.id])
            }
        }
    }

    /// Records a failed download. A `permanent` failure shows as `failed`; a transient one stays
    /// `pending`. Either way it is not tried again before `retryAt`.
    public func markPictureFailed(id: Int64, error: String, permanent: Bool, retryAt: Date) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = ?, file = NULL, bytes = NULL, attempts = attempts + 1,
                        next_attempt_at = ?, last_error = ?, updated_at = ?
                    WHERE id = ?
                    """,
                arguments: [
                    permanent ? "failed" : "pending", retryAt.timeIntervalSince1970, error,
                    Date().timeIntervalSince1970, id,
                ])
        }
    }

    /// How many times the picture's download failed in a row.
    public func pictureAttempts(id: Int64) throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT attempts FROM picture WHERE id = ?", arguments: [id]) ?? 0 }
    }

    /// Every cached picture, each with the row of the list of `feedURL` that shows it nearest the
    /// reader: one inside `window` if any, else the one nearest the rows of the reading `page` (a
    /// picture shown by several rows is as near as its nearest).
    public func cachedPictures(feedURL: String?, page: Range<Int>, window: Range<Int>) throws(StoreError)
        -> [CachedPicture]
    {
        try read { db in
            let (filter, arguments): (String, StatementArguments) =
                feedURL.map { ("WHERE item.feed_id = (SELECT id FROM feed WHERE url = ?)", [$0]) } ?? ("", [])
            let order = ListOrder(feedURL: feedURL).itemOrder
            // The distance is PrefetchPlan.distance, 0 inside the window; with one min() in the
            // query, SQLite takes the bare `row` from the row that has it.
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT picture.id, picture.file, picture.bytes, nearest.row FROM picture
                    LEFT JOIN (
                        SELECT picture_id, row, min(CASE
                            WHEN row >= ? AND row < ? THEN 0
                            WHEN row < ? THEN ? - row
                            WHEN row >= ? THEN row - ? + 1
                            ELSE 0 END) AS distance
                        FROM (
                            SELECT picture_id, row_number() OVER (ORDER BY \(order)) - 1 AS row
                            FROM item \(filter)
                        ) GROUP BY picture_id
                    ) AS nearest ON nearest.picture_id = picture.id
                    WHERE picture.status = 'cached'
                    """,
                arguments: [
                    window.lowerBound, window.upperBound, page.lowerBound, page.lowerBound,
                    page.upperBound, page.upperBound,
                ] + arguments)
            return rows.map {
                CachedPicture(
                    id: $0["id"], file: $0.text("file") ?? "",
                    bytes: Int64($0.integer("bytes", in: 0...(1 << 40)) ?? 0),
                    row: $0.integer("row"))
            }
        }
    }

    /// Bytes and count of every cached picture.
    public func cachedTotals() throws(StoreError) -> CacheTotals {
        try read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT coalesce(sum(bytes), 0), count(*) FROM picture WHERE status = 'cached'")
            return CacheTotals(bytes: row?[0] ?? 0, count: row?[1] ?? 0)
        }
    }

    /// Forgets a cached file (evicted or gone): the picture is pending again.
    public func uncachePicture(id: Int64) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: "UPDATE picture SET status = 'pending', file = NULL, bytes = NULL, mime = NULL WHERE id = ?",
                arguments: [id])
        }
    }

    /// Deletes pictures no item uses any more; returns the files they had.
    public func deleteUnusedPictures() throws(StoreError) -> [String] {
        try write { db in try Self.deleteUnusedPictures(db) }
    }

    static func deleteUnusedPictures(_ db: Database) throws -> [String] {
        let unused = "FROM picture WHERE NOT EXISTS (SELECT 1 FROM item WHERE item.picture_id = picture.id)"
        let files = try String?.fetchAll(db, sql: "SELECT file \(unused)").compactMap { $0 }
        try db.execute(sql: "DELETE \(unused)")
        return files
    }

    /// The file of every cached picture, by the picture's id.
    public func cachedPictureFiles() throws(StoreError) -> [Int64: (file: String, bytes: Int64)] {
        try read { db in
            var files: [Int64: (String, Int64)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, file, bytes FROM picture WHERE status = 'cached'") {
                files[row[0]] = (row.text("file") ?? "", row["bytes"] ?? 0)
            }
            return files
        }
    }

    public func setting(_ name: String) throws(StoreError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE name = ?", arguments: [name]) }
    }

    public func setSetting(_ name: String, _ value: String) throws(StoreError) {
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO setting (name, value) VALUES (?, ?) "
                    + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                arguments: [name, value])
        }
    }
}

extension Comparable {
    /// The value, or the nearest bound of `range` when it lies outside.
    public func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
