import Foundation
import GRDB

extension Store {
    /// One page of the local list: a feed's items in the server's order, or with `feedURL` nil,
    /// every feed's, feed after feed in the order they were added.
    public func list(feedURL: String?, page: Int, perPage: Int) throws(StoreError) -> ListedPage {
        try read { db in
            let (filter, arguments) = Self.bandFilter(feedURL: feedURL)
            let total =
                try Int.fetchOne(
                    db, sql: "SELECT coalesce(sum(size), 0) FROM band_size \(filter)",
                    arguments: arguments) ?? 0
            let offset = (page - 1) * perPage
            let rows = try Self.listRows(
                db, feedURL: feedURL, positions: offset..<offset + perPage,
                columns: """
                    item.id, key, item.title, link, pic_url, coalesce(picture.status, 'none') AS status,
                    picture.file, published, read, coalesce(feed.custom_title, feed.title, feed.url) AS feed_name
                    """,
                join: "LEFT JOIN picture ON picture.id = item.picture_id JOIN feed ON feed.id = item.feed_id")
            let items = rows.map { position, row in
                StoredItem(
                    number: row["id"], key: row.text("key") ?? "", title: row.text("title") ?? "",
                    link: row.text("link"), pictureURL: row.text("pic_url"),
                    imageStatus: row.text("status").flatMap(PictureStatus.init(rawValue:)) ?? .none,
                    imagePath: row.text("file"), published: row.text("published"),
                    position: position + 1, read: row.integer("read") == 1, feedName: row.text("feed_name") ?? "")
            }
            let lastPull = try Double.fetchOne(
                db, sql: "SELECT max(last_pull_at) FROM feed \(feedURL == nil ? "" : "WHERE url = ?")",
                arguments: feedURL.map { [$0] } ?? [])
            return ListedPage(items: items, total: total, lastPullAt: lastPull.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// `columns` of the items at list positions `positions` (from 0) of the list of `feedURL` that
    /// pass `filter`, each with its position: the first `limit` in the list's order, or with
    /// `backwards`, the last `limit` in reverse order. The list is feed after feed, band after
    /// band, seq within a band, and a band's seq runs from 0 without holes: adding up band sizes
    /// finds the band and seq where the range starts, and each band's part is one seek in item's
    /// (feed_id, band, seq) index. `filter` runs inside SQLite, so rows it drops never reach Swift.
    /// `arguments` fill placeholders in `columns`, then in `filter`, so the statement stays one
    /// cached statement.
    static func listRows(
        _ db: Database, feedURL: String?, positions: Range<Int>, columns: String,
        join: String = "", filter: String = "1", arguments: StatementArguments = [],
        limit: Int = .max, backwards: Bool = false
    ) throws -> [(position: Int, row: Row)] {
        let (bandFilter, bandArguments) = bandFilter(feedURL: feedURL)
        let bands = try Row.fetchCursor(
            db, sql: "SELECT feed_id, band, size FROM band_size \(bandFilter) ORDER BY feed_id, band",
            arguments: bandArguments)
        let part = try db.cachedStatement(
            sql: """
                SELECT item.seq, \(columns) FROM item \(join)
                WHERE (\(filter)) AND item.feed_id = ? AND item.band = ? AND item.seq >= ? AND item.seq < ?
                ORDER BY item.seq \(backwards ? "DESC" : "") LIMIT ?
                """)
        var rows: [(position: Int, row: Row)] = []
        func read(feedID: Int64, band: Int64, start: Int, seqs: Range<Int>) throws {
            rows += try Row.fetchAll(
                part,
                arguments: arguments + [
                    feedID, band, seqs.lowerBound, seqs.upperBound, limit - rows.count,
                ]
            ).map { (start + $0[0], $0) }
        }
        var later: [(feedID: Int64, band: Int64, start: Int, seqs: Range<Int>)] = []  // read backwards
        var bandStart = 0
        while bandStart < positions.upperBound, rows.count < limit, let band = try bands.next() {
            let size = band.integer("size", in: 0...Int(Int32.max)) ?? 0
            defer { bandStart += size }
            let first = max(0, positions.lowerBound - bandStart)
            let end = min(size, positions.upperBound - bandStart)
            guard first < end else { continue }
            if backwards {
                later.append((band["feed_id"], band["band"], bandStart, first..<end))
            } else {
                try read(feedID: band["feed_id"], band: band["band"], start: bandStart, seqs: first..<end)
            }
        }
        for part in later.reversed() where rows.count < limit {
            try read(feedID: part.feedID, band: part.band, start: part.start, seqs: part.seqs)
        }
        return rows
    }

    /// The row (0-based) that `place` is at now in the list of `feedURL`.
    static func row(_ db: Database, of place: ListPlace, feedURL: String?) throws -> Int {
        let (filter, arguments) = bandFilter(feedURL: feedURL)
        let above =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum(size), 0) FROM band_size \(filter.isEmpty ? "WHERE" : filter + " AND")
                        (band_size.feed_id, band_size.band) < (?, ?)
                    """, arguments: arguments + [place.feedID, place.band]) ?? 0
        return above + place.seq
    }

    /// Remembers the page the reader was shown, in the list of one feed or of all feeds. The page
    /// already remembered last is not written again: paging back and forth over one page stays a
    /// read, with no WAL to start and sync, no checkpoint when the store closes.
    public func setReadingPosition(_ position: ReadingPosition) throws(StoreError) {
        guard try latestReadingPosition() != position else { return }
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO reading_position (scope, page, per_page, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (scope) DO UPDATE SET page = excluded.page, per_page = excluded.per_page,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    position.feedURL ?? Self.allFeeds, position.page, position.perPage,
                    Date().timeIntervalSince1970,
                ])
        }
    }

    /// The `WHERE` clause and its arguments that keep the items of the list of `feedURL`
    /// (every item when nil).
    static func itemFilter(feedURL: String?) -> (sql: String, arguments: StatementArguments) {
        guard let feedURL else { return ("", []) }
        return ("WHERE item.feed_id = (SELECT id FROM feed WHERE url = ?)", [feedURL])
    }

    /// The `WHERE` clause and its arguments that keep the bands of the list of `feedURL` (every
    /// band when nil).
    static func bandFilter(feedURL: String?) -> (sql: String, arguments: StatementArguments) {
        guard let feedURL else { return ("", []) }
        return ("WHERE band_size.feed_id = (SELECT id FROM feed WHERE url = ?)", [feedURL])
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

/// A place and the row it was at when it was read.
public struct PlaceAtRow: Sendable, Equatable {
    public var place: ListPlace
    public var row: Int
    public init(place: ListPlace, row: Int) {
        self.place = place
        self.row = row
    }
}
