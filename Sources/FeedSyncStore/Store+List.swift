import Foundation
import GRDB

extension Store {
    /// One page of the local list: a feed's items in the server's order, or with `feedURL` nil,
    /// every feed's, feed after feed in the order they were added.
    public func list(feedURL: String?, page: Int, perPage: Int) throws(StoreError) -> ListedPage {
        try read { db in
            let (filter, arguments) = Self.bandFilter(feedURL: feedURL)
            let total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM band_size \(filter)",
                                         arguments: arguments) ?? 0
            let offset = (page - 1) * perPage
            let rows = try Self.listRows(
                db, feedURL: feedURL, positions: offset..<offset + perPage,
                columns: "key, title, link, pic_url, coalesce(picture.status, 'none') AS status, picture.file, published",
                join: "LEFT JOIN picture ON picture.id = item.picture_id")
            let items = rows.enumerated().map { index, row in
                StoredItem(
                    key: row["key"], title: row["title"], link: row["link"], pictureURL: row["pic_url"],
                    imageStatus: row["status"], imagePath: row["file"], published: row["published"],
                    position: offset + index + 1)
            }
            let lastPull = try Double.fetchOne(
                db, sql: "SELECT max(last_pull_at) FROM feed \(feedURL == nil ? "" : "WHERE url = ?")",
                arguments: feedURL.map { [$0] } ?? [])
            return ListedPage(items: items, total: total, lastPullAt: lastPull.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// `columns` of the items at list positions `positions` (from 0) of the list of `feedURL`, in
    /// the list's order. The list is feed after feed, band after band, seq within a band, and a
    /// band's seq runs from 0 without holes: adding up band sizes finds the band and seq where the
    /// range starts, and each band's part is one seek in item's (feed_id, band, seq) index.
    /// `columnArguments` fill placeholders in `columns`, so the statement stays one cached statement.
    static func listRows(_ db: Database, feedURL: String?, positions: Range<Int>, columns: String,
                         columnArguments: StatementArguments = [], join: String = "") throws -> [Row] {
        let (filter, arguments) = bandFilter(feedURL: feedURL)
        let bands = try Row.fetchCursor(
            db, sql: "SELECT feed_id, band, size FROM band_size \(filter) ORDER BY feed_id, band", arguments: arguments)
        let part = try db.cachedStatement(sql: """
            SELECT \(columns) FROM item \(join)
            WHERE item.feed_id = ? AND item.band = ? AND item.seq >= ? ORDER BY item.seq LIMIT ?
            """)
        var rows: [Row] = []
        var bandStart = 0
        while rows.count < positions.count, let band = try bands.next() {
            let size: Int = band["size"]
            defer { bandStart += size }
            let first = positions.lowerBound + rows.count
            guard first < bandStart + size else { continue }
            rows += try Row.fetchAll(part, arguments: columnArguments + [
                band["feed_id"], band["band"], first - bandStart, positions.count - rows.count,
            ])
        }
        return rows
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
                arguments: [position.feedURL ?? Self.allFeeds, position.page, position.perPage,
                            Date().timeIntervalSince1970])
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
