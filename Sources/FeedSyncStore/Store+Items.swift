import Foundation
import GRDB

extension Store {
    /// For those of `keys` already stored in the feed, the band each one sits in.
    public func bands(feedID: Int64, keys: [String]) throws(StoreError) -> [String: Int] {
        try read { db in
            var found: [String: Int] = [:]
            let statement = try db.cachedStatement(sql: "SELECT band FROM item WHERE feed_id = ? AND key = ?")
            for key in keys {
                if let band = try Int.fetchOne(statement, arguments: [feedID, key]) { found[key] = band }
            }
            return found
        }
    }

    /// The highest band in use (the lowest number), or `nil` when the feed has no items.
    public func topBand(feedID: Int64) throws(StoreError) -> Int? {
        try read { db in try Int.fetchOne(db, sql: "SELECT min(band) FROM item WHERE feed_id = ?", arguments: [feedID]) }
    }

    /// Writes a page's items and the cursor that follows them in one transaction: a process killed
    /// at any instant leaves either both or neither.
    public func commit(_ page: PageCommit) throws(StoreError) {
        try write { db in
            let now = Date().timeIntervalSince1970
            var seq = try Int.fetchOne(
                db, sql: "SELECT max(seq) FROM item WHERE feed_id = ? AND band = ?",
                arguments: [page.feedID, page.band]) ?? -1
            // New and known items go through the same upsert: a known key keeps its place (band,
            // seq) and only its content is refreshed. Items sharing a picture URL share its row.
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO item (feed_id, key, band, seq, title, link, pic_url, picture_id, published, summary,
                                  stored_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feed_id, key) DO UPDATE SET
                    title = excluded.title, link = excluded.link, published = excluded.published,
                    summary = excluded.summary, pic_url = excluded.pic_url, picture_id = excluded.picture_id
                """)
            for item in page.newItems + page.updatedItems {
                seq += 1
                let pictureID = try item.pictureURL.map { url in try Self.pictureID(db, url: url) }
                try upsert.execute(arguments: [
                    page.feedID, item.key, page.band, seq, item.title, item.link, item.pictureURL, pictureID,
                    item.published, item.summary, now,
                ])
            }
            let cursor = page.cursor
            try db.execute(
                sql: """
                    UPDATE feed SET etag = ?, last_modified = ?, remote_total = ?, per_page = ?,
                        backfill_page = ?, backfill_url = ?, backfill_total = ?, backfill_done = ?,
                        gap_band = ?, gap_page = ?, gap_total = ?, gap_url = ?
                    WHERE id = ?
                    """,
                arguments: [
                    cursor.etag, cursor.lastModified, cursor.remoteTotal, cursor.perPage,
                    cursor.backfillPage, cursor.backfillURL, cursor.backfillTotal, cursor.backfillDone,
                    cursor.gap?.band, cursor.gap?.page, cursor.gap?.total, cursor.gap?.url, page.feedID,
                ])
        }
    }

    /// The picture row for `url`, created pending if new.
    static func pictureID(_ db: Database, url: String) throws -> Int64 {
        try db.cachedStatement(sql: "INSERT INTO picture (url) VALUES (?) ON CONFLICT (url) DO NOTHING")
            .execute(arguments: [url])
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM picture WHERE url = ?"), arguments: [url])!
    }
}
