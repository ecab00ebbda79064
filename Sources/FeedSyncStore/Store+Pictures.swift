internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// The picture rows: which pictures are due, in which order, what became of each, what the cache holds.

extension Store {
    /// Pictures shown by rows `rows` of the list of `feedURL`, due for a download: not cached, and
    /// not waiting out a backoff. At most `limit` rows are read: the first ones, or with
    /// `backwards` the last ones, in reverse. One job per picture, at the first of them that shows it.
    public func duePictures(
        feedURL: String?, rows: Range<Int>, limit: Int = .max, backwards: Bool = false
    ) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            try Self.duePictures(db, feedURL: feedURL, rows: rows, limit: limit, backwards: backwards, now: clock.now())
        }
    }

    /// The first `limit` due pictures from row `top` down to the end of the list of `feedURL`, or
    /// from `resume` instead when it is below `top` and still at its row (nothing landed above
    /// it). All in one snapshot, with the place just past the list's last row: a page committed
    /// later lands at or past that place, or moves it to another row.
    public func duePictures(
        feedURL: String?, from top: Int, resuming resume: PlaceAtRow?, limit: Int
    ) async throws(StoreError) -> (jobs: [PictureJob], end: PlaceAtRow?) {
        try await read { db in
            let order = ListOrder(feedURL: feedURL)
            var from = top
            if let resume, resume.row > top, try Self.row(db, of: resume.place, in: order) == resume.row {
                from = resume.row
            }
            let jobs = try Self.duePictures(
                db, feedURL: feedURL, rows: from..<Int(Int32.max), limit: limit, now: clock.now())
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

    /// The first `limit` due pictures of the feeds other than the one of `feedURL`, feed by feed
    /// in the order they were added, each feed's in its list's order, at no row of that list
    /// (`row` is `far`): what `--images all` fetches once the reader's own list has all its own.
    public func duePictures(outside feedURL: String, far: Int, limit: Int) async throws(StoreError)
        -> [PictureJob]
    {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT item.seq, item.picture_id, picture.url, item.feed_id, item.band FROM item
                    JOIN picture ON picture.id = item.picture_id
                    WHERE item.feed_id IS NOT (SELECT id FROM feed WHERE url = ?) AND item.hidden = 0
                        AND \(Self.pictureIsDue("?"))
                    ORDER BY item.feed_id, item.band, item.seq LIMIT ?
                    """, arguments: [feedURL, clock.now().timeIntervalSince1970, limit])
            return Self.pictureJobs(rows.map { (position: far, row: $0) })
        }
    }

    /// Due pictures of the first `perPage` rows of each feed whose own list was never shown, feed
    /// by feed in the order they were added, each at its row in its feed's list. One statement for
    /// all feeds: each band's first row from the band sizes, then a seek per band.
    public func duePicturesOfUnviewedFeeds(perPage: Int) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH band AS (
                        SELECT feed_id, band, sum(size) OVER (PARTITION BY feed_id ORDER BY band) - size AS start
                        FROM band_size
                        WHERE feed_id IN (SELECT id FROM feed WHERE url NOT IN (SELECT scope FROM reading_position)))
                    SELECT item.seq, item.picture_id, picture.url, item.feed_id, item.band, band.start + item.seq
                    FROM band
                    JOIN item ON item.feed_id = band.feed_id AND item.band = band.band AND item.seq < ?1 - band.start
                        AND item.seq >= 0
                    JOIN picture ON picture.id = item.picture_id
                    WHERE band.start < ?1 AND \(Self.pictureIsDue("?2"))
                    ORDER BY item.feed_id, item.band, item.seq
                    """, arguments: [perPage, clock.now().timeIntervalSince1970])
            return Self.pictureJobs(rows.map { (position: $0[5] as Int, row: $0) })
        }
    }

    /// The picture of the item numbered `number` as a job, when it has one that is neither cached
    /// nor waiting out a backoff.
    public func duePicture(ofItem number: Int64) async throws(StoreError) -> PictureJob? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT picture.id, picture.url, item.feed_id, item.band, item.seq FROM item
                    JOIN picture ON picture.id = item.picture_id
                    WHERE item.id = ? AND \(Self.pictureIsDue("?"))
                    """, arguments: [number, clock.now().timeIntervalSince1970]
            ).map { PictureJob(row: $0, at: 0) }
        }
    }

    /// The first `limit` due pictures inside the content of the items at `rows` of the list of
    /// `feedURL`, row by row, each item's in the content's order; from `resume` instead of the
    /// first row when it is inside `rows` and still at its row (a later plan need not step again
    /// over the rows whose pictures the last one found cached).
    public func dueArticlePictures(
        feedURL: String?, rows: Range<Int>, resuming resume: PlaceAtRow? = nil, limit: Int
    ) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            var from = rows.lowerBound
            if let resume, rows.contains(resume.row),
                try Self.row(db, of: resume.place, in: ListOrder(feedURL: feedURL)) == resume.row
            {
                from = resume.row
            }
            return try Self.dueArticlePictures(
                db, feedURL: feedURL, rows: from..<rows.upperBound, limit: limit, now: clock.now())
        }
    }

    /// The due pictures inside the content of the item numbered `number`, in the content's order.
    public func dueArticlePictures(ofItem number: Int64) async throws(StoreError) -> [PictureJob] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT picture.id, picture.url, item.feed_id, item.band, item.seq FROM item
                    JOIN item_content_picture AS shown ON shown.item_id = item.id
                    JOIN picture ON picture.id = shown.picture_id
                    WHERE item.id = ? AND \(Self.pictureIsDue("?"))
                    ORDER BY shown.position
                    """, arguments: [number, clock.now().timeIntervalSince1970]
            ).map { PictureJob(row: $0, at: 0) }
        }
    }

    /// Records downloaded pictures, all in one transaction, with their byte counts and hashes.
    /// Call only once their files are whole and under their names.
    public func markPicturesCached(_ pictures: [DownloadedPicture]) async throws(StoreError) {
        try await write { db in
            let update = try db.cachedStatement(
                sql: """
                    UPDATE picture SET status = 'cached', file = ?, bytes = ?, hash = ?, mime = ?, attempts = 0,
                        next_attempt_at = NULL, last_error = NULL, updated_at = ?
                    WHERE id = ?
                    """)
            let now = clock.now().timeIntervalSince1970
            for picture in pictures {
                try update.execute(arguments: [
                    picture.file, picture.bytes, Int64(bitPattern: picture.hash), picture.mime, now, picture.id,
                ])
            }
        }
    }

    /// Records a failed download. A `permanent` failure shows as `failed`; a transient one stays
    /// `pending`. Either way it is not tried again before `retryAt`. A picture another download
    /// cached meanwhile stays cached.
    public func markPictureFailed(id: Int64, error: String, permanent: Bool, retryAt: Date) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = ?, file = NULL, bytes = NULL, attempts = attempts + 1,
                        next_attempt_at = ?, last_error = ?, updated_at = ?
                    WHERE id = ? AND status != 'cached'
                    """,
                arguments: [
                    permanent ? "failed" : "pending", retryAt.timeIntervalSince1970, error,
                    clock.now().timeIntervalSince1970, id,
                ])
        }
    }

    /// How many times the picture's download failed in a row.
    public func pictureAttempts(id: Int64) async throws(StoreError) -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT attempts FROM picture WHERE id = ?", arguments: [id]) ?? 0
        }
    }

    /// Every cached picture, each with the row of the list of `feedURL` that shows it nearest the
    /// reader: one inside `window` if any, else the one nearest the rows of the reading `page` (a
    /// picture shown by several rows is as near as its nearest).
    public func cachedPictures(feedURL: String?, page: Range<Int>, window: Range<Int>) async throws(StoreError)
        -> [CachedPicture]
    {
        try await read { db in
            let (filter, arguments): (String, StatementArguments) =
                feedURL.map { ("WHERE item.hidden = 0 AND item.feed_id = (SELECT id FROM feed WHERE url = ?)", [$0]) }
                ?? ("WHERE item.hidden = 0", [])
            let order = ListOrder(feedURL: feedURL).itemOrder
            // The distance is PrefetchPlan.distance, 0 inside the window; with one min() in the
            // query, SQLite takes the bare `row` from the row that has it.
            // A picture is shown by a row as its thumbnail or inside its content.
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH ranked AS MATERIALIZED (
                        SELECT id, picture_id, row_number() OVER (ORDER BY \(order)) - 1 AS row FROM item \(filter)
                    ), shown AS (
                        SELECT picture_id, row FROM ranked WHERE picture_id IS NOT NULL
                        UNION ALL
                        SELECT inside.picture_id, ranked.row FROM item_content_picture AS inside
                        JOIN ranked ON ranked.id = inside.item_id
                    )
                    SELECT picture.id, picture.file, picture.bytes, nearest.row FROM picture
                    LEFT JOIN (
                        SELECT picture_id, row, min(CASE
                            WHEN row >= ? AND row < ? THEN 0
                            WHEN row < ? THEN ? - row
                            WHEN row >= ? THEN row - ? + 1
                            ELSE 0 END) AS distance
                        FROM shown GROUP BY picture_id
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
    public func cachedTotals() async throws(StoreError) -> CacheTotals {
        try await read { db in
            // Kept by the picture table's triggers (Migrations/0015).
            let row = try Row.fetchOne(db, sql: "SELECT bytes, count FROM cache_total")
            return CacheTotals(bytes: row?[0] ?? 0, count: row?[1] ?? 0)
        }
    }

    /// Forgets a cached file (evicted, gone or damaged): the picture is pending again, and due
    /// at once.
    public func uncachePicture(id: Int64) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE picture SET status = 'pending', file = NULL, bytes = NULL, hash = NULL, mime = NULL,
                        next_attempt_at = NULL
                    WHERE id = ?
                    """,
                arguments: [id])
        }
    }

    /// Records the hash of a picture cached before hashes were kept, if it is still that file.
    public func setPictureHash(_ hash: UInt64, of picture: CachedFile) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE picture SET hash = ? WHERE id = ? AND status = 'cached' AND file = ? AND hash IS NULL",
                arguments: [Int64(bitPattern: hash), picture.id, picture.file])
        }
    }

    /// Deletes pictures no item uses any more; returns the files they had.
    public func deleteUnusedPictures() async throws(StoreError) -> [String] {
        try await write { db in try Self.deleteUnusedPictures(db) }
    }

    /// Every cached picture's file (of the pictures `ids` only, when given).
    public func cachedPictureFiles(ids: [Int64]? = nil) async throws(StoreError) -> [CachedFile] {
        try await read { db in
            let only = ids.map { "AND id IN (\(Array(repeating: "?", count: $0.count).joined(separator: ",")))" } ?? ""
            return try Row.fetchAll(
                db, sql: "SELECT id, file, bytes, hash FROM picture WHERE status = 'cached' \(only)",
                arguments: StatementArguments(ids ?? [])
            ).compactMap { CachedFile.from($0) }
        }
    }
}
